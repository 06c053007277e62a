// Tests of the frame-joining VFS (frame_vfs.h): below it, a counting VFS
// that records every write reaching the files; over it, SQLite in WAL mode.
// What reaches the disk must be what plain SQLite reads and recovers; a
// frame's header never goes down alone; a held header is written before any
// other use of the file.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "store/sqlite/frame_vfs.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

constexpr int kPageSize = 4096;
constexpr int kFrameHeader = 24;

// ---- a VFS that counts the writes to WAL files, over the default one ----

struct CountedWrite {
  bool wal;
  int amount;
  sqlite3_int64 offset;
};
std::mutex g_mu;
std::vector<CountedWrite> g_writes;

struct CountFile {
  sqlite3_file file;
  sqlite3_file* real;
  bool wal;
};
sqlite3_vfs* g_default = nullptr;
sqlite3_io_methods g_count_methods;

int CountWrite(sqlite3_file* file, const void* buffer, int amount, sqlite3_int64 offset) {
  auto* f = reinterpret_cast<CountFile*>(file);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_writes.push_back({f->wal, amount, offset});
  }
  return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
}

// Every other method forwards: a copy of the real file's table with xWrite
// replaced, pointed at the real file by the thunks below.
#define FORWARD(name, ...) reinterpret_cast<CountFile*>(file)->real->pMethods->name(reinterpret_cast<CountFile*>(file)->real, ##__VA_ARGS__)
int CountClose(sqlite3_file* file) { return FORWARD(xClose); }
int CountRead(sqlite3_file* file, void* b, int n, sqlite3_int64 o) { return FORWARD(xRead, b, n, o); }
int CountTruncate(sqlite3_file* file, sqlite3_int64 s) { return FORWARD(xTruncate, s); }
int CountSync(sqlite3_file* file, int flags) { return FORWARD(xSync, flags); }
int CountFileSize(sqlite3_file* file, sqlite3_int64* s) { return FORWARD(xFileSize, s); }
int CountLock(sqlite3_file* file, int l) { return FORWARD(xLock, l); }
int CountUnlock(sqlite3_file* file, int l) { return FORWARD(xUnlock, l); }
int CountCheckReservedLock(sqlite3_file* file, int* out) { return FORWARD(xCheckReservedLock, out); }
int CountFileControl(sqlite3_file* file, int op, void* arg) { return FORWARD(xFileControl, op, arg); }
int CountSectorSize(sqlite3_file* file) { return FORWARD(xSectorSize); }
int CountDeviceCharacteristics(sqlite3_file* file) { return FORWARD(xDeviceCharacteristics); }
int CountShmMap(sqlite3_file* file, int r, int s, int e, void volatile** out) { return FORWARD(xShmMap, r, s, e, out); }
int CountShmLock(sqlite3_file* file, int o, int n, int flags) { return FORWARD(xShmLock, o, n, flags); }
void CountShmBarrier(sqlite3_file* file) { FORWARD(xShmBarrier); }
int CountShmUnmap(sqlite3_file* file, int d) { return FORWARD(xShmUnmap, d); }
#undef FORWARD

int CountOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* f = reinterpret_cast<CountFile*>(file);
  std::memset(f, 0, sizeof(CountFile));
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  const int rc = g_default->xOpen(g_default, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  f->wal = (flags & SQLITE_OPEN_WAL) != 0;
  f->file.pMethods = &g_count_methods;
  return SQLITE_OK;
}

// Registers "count-writes" once: the default VFS with CountOpen.
void RegisterCountingVfs() {
  static sqlite3_vfs vfs;
  static std::once_flag once;
  std::call_once(once, [] {
    g_default = sqlite3_vfs_find(nullptr);
    g_count_methods = sqlite3_io_methods{2,           CountClose,    CountRead,        CountWrite,
                                         CountTruncate, CountSync,   CountFileSize,    CountLock,
                                         CountUnlock, CountCheckReservedLock, CountFileControl, CountSectorSize,
                                         CountDeviceCharacteristics, CountShmMap, CountShmLock, CountShmBarrier,
                                         CountShmUnmap, nullptr, nullptr};
    vfs = *g_default;
    vfs.zName = "count-writes";
    vfs.szOsFile = static_cast<int>(sizeof(CountFile)) + g_default->szOsFile;
    vfs.xOpen = CountOpen;
    vfs.pNext = nullptr;
    ASSERT_EQ(sqlite3_vfs_register(&vfs, 0), SQLITE_OK);
  });
}

std::vector<CountedWrite> TakeWrites() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<CountedWrite> out;
  out.swap(g_writes);
  return out;
}

sqlite3* Open(const std::string& path, const char* vfs) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs), SQLITE_OK);
  return db;
}

void Exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "") << "\n" << sql;
}

int64_t Scalar(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  int64_t v = -1;
  if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

std::string Text(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
  std::string v;
  if (sqlite3_step(s) == SQLITE_ROW) v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return v;
}

// Commits `n` transactions of a few rows each (several pages a commit: the
// table and its index).
void WriteRows(sqlite3* db, int first, int n) {
  for (int t = first; t < first + n; ++t) {
    std::string sql = "BEGIN;";
    for (int i = 0; i < 5; ++i) {
      sql += "INSERT INTO r(k, v) VALUES('k" + std::to_string(t) + "-" + std::to_string(i) + "', '" +
             std::string(300, static_cast<char>('a' + (t + i) % 26)) + "');";
    }
    Exec(db, sql + "COMMIT;");
  }
}

// Each frame goes down as one write of header and page; the log SQLite
// reads (another connection, through the plain VFS) and recovers (a copy of
// the files taken while the writer is open, never checkpointed) is whole.
TEST(FrameVfsTest, EachFrameIsOneWriteAndPlainSqliteReadsAndRecoversTheLog) {
  RegisterCountingVfs();
  auto joined = JoinedFramesVfsName("count-writes");
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  // The same name again: registered once.
  auto again = JoinedFramesVfsName("count-writes");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *joined);
  EXPECT_FALSE(JoinedFramesVfsName("no-such-vfs").ok());

  testing::TempDir dir("frame_vfs");
  const std::string path = dir.path() + "/t.db";
  sqlite3* db = Open(path, joined->c_str());
  ASSERT_NE(db, nullptr);
  Exec(db, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; PRAGMA synchronous=NORMAL;"
           "CREATE TABLE r(k TEXT PRIMARY KEY, v TEXT);");
  (void)TakeWrites();
  WriteRows(db, 0, 40);
  const std::vector<CountedWrite> writes = TakeWrites();
  int frames = 0;
  for (const CountedWrite& w : writes) {
    if (!w.wal) continue;
    EXPECT_NE(w.amount, kFrameHeader) << "a frame header written alone at " << w.offset;
    if (w.amount == kFrameHeader + kPageSize) ++frames;
  }
  EXPECT_GE(frames, 40 * 2) << "at least two pages a commit, each one write";

  // Another connection, through SQLite's own VFS, reads every commit.
  sqlite3* plain = Open(path, nullptr);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(Scalar(plain, "SELECT count(*) FROM r"), 200);
  EXPECT_EQ(Text(plain, "SELECT v FROM r WHERE k = 'k39-4'"), std::string(300, static_cast<char>('a' + 43 % 26)));
  sqlite3_close(plain);

  // The files as a kill -9 would leave them: recovered by plain SQLite.
  const std::string copy = dir.path() + "/copy.db";
  std::filesystem::copy_file(path, copy);
  std::filesystem::copy_file(path + "-wal", copy + "-wal");
  sqlite3* recovered = Open(copy, nullptr);
  ASSERT_NE(recovered, nullptr);
  EXPECT_EQ(Text(recovered, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(Scalar(recovered, "SELECT count(*) FROM r"), 200);
  sqlite3_close(recovered);

  // A checkpoint through the joining VFS, then more commits: the same.
  Exec(db, "PRAGMA wal_checkpoint(TRUNCATE);");
  WriteRows(db, 40, 10);
  sqlite3_close(db);
  sqlite3* reopened = Open(path, nullptr);
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(Text(reopened, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(Scalar(reopened, "SELECT count(*) FROM r"), 250);
  sqlite3_close(reopened);
}

// The file methods themselves, on a file opened as a WAL: a held header is
// written before a read, before a write elsewhere, and at close.
TEST(FrameVfsTest, AHeldHeaderIsWrittenBeforeAnyOtherUseOfTheFile) {
  auto name = JoinedFramesVfsName("");
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  sqlite3_vfs* vfs = sqlite3_vfs_find(name->c_str());
  ASSERT_NE(vfs, nullptr);
  testing::TempDir dir("frame_vfs");
  const std::string path = dir.path() + "/x.db-wal";
  // The unix VFS takes a WAL's mode from its database file, and reads a name
  // as SQLite makes them (followed by more NULs).
  std::fclose(std::fopen((dir.path() + "/x.db").c_str(), "wb"));
  std::string file_name = path;
  file_name.append(4, '\0');
  std::vector<char> storage(static_cast<size_t>(vfs->szOsFile));
  auto* file = reinterpret_cast<sqlite3_file*>(storage.data());
  int out_flags = 0;
  ASSERT_EQ(vfs->xOpen(vfs, file_name.c_str(), file,
                       SQLITE_OPEN_WAL | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &out_flags),
            SQLITE_OK);
  const sqlite3_io_methods* m = file->pMethods;
  ASSERT_NE(m, nullptr);
  const std::string header_a(kFrameHeader, 'A'), header_b(kFrameHeader, 'B'), header_c(kFrameHeader, 'C');
  const std::string page(kPageSize, 'p'), elsewhere(10, 'e');
  // Held, then read: the read sees it.
  ASSERT_EQ(m->xWrite(file, header_a.data(), kFrameHeader, 32), SQLITE_OK);
  std::string back(kFrameHeader, '\0');
  ASSERT_EQ(m->xRead(file, back.data(), kFrameHeader, 32), SQLITE_OK);
  EXPECT_EQ(back, header_a);
  // Held, then a write that does not continue it: both land where written.
  ASSERT_EQ(m->xWrite(file, header_b.data(), kFrameHeader, 32 + kFrameHeader + kPageSize), SQLITE_OK);
  ASSERT_EQ(m->xWrite(file, elsewhere.data(), 10, 8000), SQLITE_OK);
  // Held, then its page: one write.
  ASSERT_EQ(m->xWrite(file, header_c.data(), kFrameHeader, 20000), SQLITE_OK);
  ASSERT_EQ(m->xWrite(file, page.data(), kPageSize, 20000 + kFrameHeader), SQLITE_OK);
  // Held at close: written.
  ASSERT_EQ(m->xWrite(file, header_a.data(), kFrameHeader, 30000), SQLITE_OK);
  sqlite3_int64 size = 0;
  ASSERT_EQ(m->xFileSize(file, &size), SQLITE_OK);  // flushes the held header first
  EXPECT_EQ(size, 30000 + kFrameHeader);
  ASSERT_EQ(m->xWrite(file, header_b.data(), kFrameHeader, 40000), SQLITE_OK);
  ASSERT_EQ(m->xClose(file), SQLITE_OK);

  std::string bytes;
  {
    std::FILE* in = std::fopen(path.c_str(), "rb");
    ASSERT_NE(in, nullptr);
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), in)) > 0) bytes.append(buf, n);
    std::fclose(in);
  }
  ASSERT_EQ(bytes.size(), static_cast<size_t>(40000 + kFrameHeader));
  EXPECT_EQ(bytes.substr(32, kFrameHeader), header_a);
  EXPECT_EQ(bytes.substr(32 + kFrameHeader + kPageSize, kFrameHeader), header_b);
  EXPECT_EQ(bytes.substr(8000, 10), elsewhere);
  EXPECT_EQ(bytes.substr(20000, kFrameHeader), header_c);
  EXPECT_EQ(bytes.substr(20000 + kFrameHeader, kPageSize), page);
  EXPECT_EQ(bytes.substr(30000, kFrameHeader), header_a);
  EXPECT_EQ(bytes.substr(40000, kFrameHeader), header_b);
}

}  // namespace
}  // namespace msp
