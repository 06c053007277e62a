// One write a WAL frame (see frame_vfs.h).
#include "store/sqlite/frame_vfs.h"

#include <sqlite3.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/sqlite/vfs_shim.h"

namespace msp {
namespace {

// A WAL frame's header; the WAL's own header (32 bytes at offset 0) is never
// held.
constexpr int kFrameHeaderBytes = 24;
constexpr sqlite3_int64 kWalOwnHeaderBytes = 32;

struct JoinFile {
  sqlite3_file file;  // pMethods: ours
  sqlite3_file* real;  // the base VFS's file, right after this struct
  bool wal;
  bool held;  // header holds a frame header not yet written, at held_at
  sqlite3_int64 held_at;
  unsigned char header[kFrameHeaderBytes];
  std::vector<unsigned char>* joined;  // WAL only: header and page, written as one
};

JoinFile* AsJoin(sqlite3_file* f) { return reinterpret_cast<JoinFile*>(f); }
const sqlite3_io_methods* RealOf(JoinFile* f) { return f->real->pMethods; }

// Writes a held header alone. Every method but a write that continues it
// calls this first.
int FlushHeld(JoinFile* f) {
  if (!f->held) return SQLITE_OK;
  f->held = false;
  return RealOf(f)->xWrite(f->real, f->header, kFrameHeaderBytes, f->held_at);
}

int JoinClose(sqlite3_file* file) {
  JoinFile* f = AsJoin(file);
  const int flushed = FlushHeld(f);
  const int rc = RealOf(f)->xClose(f->real);
  delete f->joined;
  f->joined = nullptr;
  return flushed != SQLITE_OK ? flushed : rc;
}

int JoinWrite(sqlite3_file* file, const void* buffer, int amount, sqlite3_int64 offset) {
  JoinFile* f = AsJoin(file);
  if (f->held && offset == f->held_at + kFrameHeaderBytes) {
    // The page after its header: one write of both.
    std::vector<unsigned char>& joined = *f->joined;
    joined.resize(static_cast<size_t>(kFrameHeaderBytes) + static_cast<size_t>(amount));
    std::memcpy(joined.data(), f->header, kFrameHeaderBytes);
    std::memcpy(joined.data() + kFrameHeaderBytes, buffer, static_cast<size_t>(amount));
    f->held = false;
    return RealOf(f)->xWrite(f->real, joined.data(), kFrameHeaderBytes + amount, f->held_at);
  }
  const int rc = FlushHeld(f);
  if (rc != SQLITE_OK) return rc;
  if (f->wal && amount == kFrameHeaderBytes && offset >= kWalOwnHeaderBytes) {
    std::memcpy(f->header, buffer, kFrameHeaderBytes);
    f->held = true;
    f->held_at = offset;
    return SQLITE_OK;
  }
  return RealOf(f)->xWrite(f->real, buffer, amount, offset);
}

// The rest: a held header first, then the base file's own method.
template <auto Method, typename... Args>
int FlushThen(sqlite3_file* file, Args... args) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : (RealOf(f)->*Method)(f->real, args...);
}
int JoinRead(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  return FlushThen<&sqlite3_io_methods::xRead>(file, buffer, amount, offset);
}
int JoinTruncate(sqlite3_file* file, sqlite3_int64 size) {
  return FlushThen<&sqlite3_io_methods::xTruncate>(file, size);
}
int JoinSync(sqlite3_file* file, int flags) { return FlushThen<&sqlite3_io_methods::xSync>(file, flags); }
int JoinFileSize(sqlite3_file* file, sqlite3_int64* size) {
  return FlushThen<&sqlite3_io_methods::xFileSize>(file, size);
}
int JoinLock(sqlite3_file* file, int lock) { return FlushThen<&sqlite3_io_methods::xLock>(file, lock); }
int JoinUnlock(sqlite3_file* file, int lock) { return FlushThen<&sqlite3_io_methods::xUnlock>(file, lock); }
int JoinCheckReservedLock(sqlite3_file* file, int* out) {
  return FlushThen<&sqlite3_io_methods::xCheckReservedLock>(file, out);
}
int JoinFileControl(sqlite3_file* file, int op, void* arg) {
  return FlushThen<&sqlite3_io_methods::xFileControl>(file, op, arg);
}
int JoinShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  return FlushThen<&sqlite3_io_methods::xShmMap>(file, region, size, extend, out);
}
int JoinShmLock(sqlite3_file* file, int offset, int n, int flags) {
  return FlushThen<&sqlite3_io_methods::xShmLock>(file, offset, n, flags);
}
int JoinShmUnmap(sqlite3_file* file, int delete_flag) {
  return FlushThen<&sqlite3_io_methods::xShmUnmap>(file, delete_flag);
}
int JoinFetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  return FlushThen<&sqlite3_io_methods::xFetch>(file, offset, amount, out);
}
int JoinUnfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  return FlushThen<&sqlite3_io_methods::xUnfetch>(file, offset, page);
}
void JoinShmBarrier(sqlite3_file* file) {
  JoinFile* f = AsJoin(file);
  (void)FlushHeld(f);  // nothing is held here: SQLite's barriers come between whole frames
  RealOf(f)->xShmBarrier(f->real);
}
// No I/O: nothing to write first.
int JoinSectorSize(sqlite3_file* file) { return RealOf(AsJoin(file))->xSectorSize(AsJoin(file)->real); }
int JoinDeviceCharacteristics(sqlite3_file* file) {
  return RealOf(AsJoin(file))->xDeviceCharacteristics(AsJoin(file)->real);
}

// Two tables: a file offers no more than the base's file does (a version-2
// base has no memory-mapped reads).
const sqlite3_io_methods kJoinMethods2 = {2,
                                          JoinClose,
                                          JoinRead,
                                          JoinWrite,
                                          JoinTruncate,
                                          JoinSync,
                                          JoinFileSize,
                                          JoinLock,
                                          JoinUnlock,
                                          JoinCheckReservedLock,
                                          JoinFileControl,
                                          JoinSectorSize,
                                          JoinDeviceCharacteristics,
                                          JoinShmMap,
                                          JoinShmLock,
                                          JoinShmBarrier,
                                          JoinShmUnmap,
                                          nullptr,
                                          nullptr};
const sqlite3_io_methods kJoinMethods3 = [] {
  sqlite3_io_methods m = kJoinMethods2;
  m.iVersion = 3;
  m.xFetch = JoinFetch;
  m.xUnfetch = JoinUnfetch;
  return m;
}();

int JoinOpen(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  JoinFile* f = AsJoin(file);
  std::memset(f, 0, sizeof(JoinFile));
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  sqlite3_vfs* base = ShimOf(vfs)->base;
  const int rc = base->xOpen(base, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) return rc;  // pMethods stays null: SQLite does not close it
  f->wal = (flags & SQLITE_OPEN_WAL) != 0;
  if (f->wal) f->joined = new std::vector<unsigned char>();
  f->file.pMethods = f->real->pMethods->iVersion >= 3 ? &kJoinMethods3 : &kJoinMethods2;
  return SQLITE_OK;
}

}  // namespace

Result<std::string> JoinedFramesVfsName(const std::string& base_name) {
  static std::mutex mu;
  static auto* registered = new std::map<std::string, std::unique_ptr<ShimVfs>>();  // lives with the process
  std::lock_guard<std::mutex> lock(mu);
  auto it = registered->find(base_name);
  if (it != registered->end()) return it->second->name;
  sqlite3_vfs* base = sqlite3_vfs_find(base_name.empty() ? nullptr : base_name.c_str());
  if (base == nullptr) return Status::Internal("sqlite: no VFS named '" + base_name + "' to join WAL frames over");
  if (base->iVersion < 2) return Status::Internal("sqlite: the VFS '" + std::string(base->zName) + "' is too old");
  auto self = std::make_unique<ShimVfs>();
  self->base = base;
  self->name = "msp-joined-frames-" + std::string(base->zName);
  InitShimVfs(self.get(), static_cast<int>(sizeof(JoinFile)), JoinOpen);
  const int rc = sqlite3_vfs_register(&self->vfs, /*makeDflt=*/0);
  if (rc != SQLITE_OK) {
    return Status::Internal(std::string("sqlite: cannot register the frame-joining VFS: ") + sqlite3_errstr(rc));
  }
  std::string name = self->name;
  registered->emplace(base_name, std::move(self));
  return name;
}

}  // namespace msp
