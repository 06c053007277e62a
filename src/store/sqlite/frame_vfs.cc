// One write a WAL frame (see frame_vfs.h).
#include "store/sqlite/frame_vfs.h"

#include <sqlite3.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace msp {
namespace {

// A WAL frame's header; the WAL's own header (32 bytes at offset 0) is never
// held.
constexpr int kFrameHeaderBytes = 24;
constexpr sqlite3_int64 kWalOwnHeaderBytes = 32;

struct JoinVfs {
  sqlite3_vfs vfs;
  sqlite3_vfs* base = nullptr;
  std::string name;
};

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

int JoinRead(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xRead(f->real, buffer, amount, offset);
}
int JoinTruncate(sqlite3_file* file, sqlite3_int64 size) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xTruncate(f->real, size);
}
int JoinSync(sqlite3_file* file, int flags) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xSync(f->real, flags);
}
int JoinFileSize(sqlite3_file* file, sqlite3_int64* size) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xFileSize(f->real, size);
}
int JoinLock(sqlite3_file* file, int lock) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xLock(f->real, lock);
}
int JoinUnlock(sqlite3_file* file, int lock) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xUnlock(f->real, lock);
}
int JoinCheckReservedLock(sqlite3_file* file, int* out) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xCheckReservedLock(f->real, out);
}
int JoinFileControl(sqlite3_file* file, int op, void* arg) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xFileControl(f->real, op, arg);
}
int JoinSectorSize(sqlite3_file* file) { return RealOf(AsJoin(file))->xSectorSize(AsJoin(file)->real); }
int JoinDeviceCharacteristics(sqlite3_file* file) {
  return RealOf(AsJoin(file))->xDeviceCharacteristics(AsJoin(file)->real);
}
int JoinShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xShmMap(f->real, region, size, extend, out);
}
int JoinShmLock(sqlite3_file* file, int offset, int n, int flags) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xShmLock(f->real, offset, n, flags);
}
void JoinShmBarrier(sqlite3_file* file) {
  JoinFile* f = AsJoin(file);
  (void)FlushHeld(f);  // nothing is held here: SQLite's barriers come between whole frames
  RealOf(f)->xShmBarrier(f->real);
}
int JoinShmUnmap(sqlite3_file* file, int delete_flag) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xShmUnmap(f->real, delete_flag);
}
int JoinFetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xFetch(f->real, offset, amount, out);
}
int JoinUnfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  JoinFile* f = AsJoin(file);
  const int rc = FlushHeld(f);
  return rc != SQLITE_OK ? rc : RealOf(f)->xUnfetch(f->real, offset, page);
}

// Two tables: a file offers no more than the base's file does (the
// encrypting VFS's are version 2: no memory-mapped reads of its pages).
const sqlite3_io_methods kJoinMethods2 = {
    2,         JoinClose,        JoinRead,        JoinWrite,        JoinTruncate,         JoinSync,
    JoinFileSize, JoinLock,      JoinUnlock,      JoinCheckReservedLock, JoinFileControl, JoinSectorSize,
    JoinDeviceCharacteristics, JoinShmMap, JoinShmLock, JoinShmBarrier, JoinShmUnmap,    nullptr,
    nullptr,
};
const sqlite3_io_methods kJoinMethods3 = {
    3,         JoinClose,        JoinRead,        JoinWrite,        JoinTruncate,         JoinSync,
    JoinFileSize, JoinLock,      JoinUnlock,      JoinCheckReservedLock, JoinFileControl, JoinSectorSize,
    JoinDeviceCharacteristics, JoinShmMap, JoinShmLock, JoinShmBarrier, JoinShmUnmap,    JoinFetch,
    JoinUnfetch,
};

JoinVfs* JoinOf(sqlite3_vfs* vfs) { return static_cast<JoinVfs*>(vfs->pAppData); }
sqlite3_vfs* BaseOf(sqlite3_vfs* vfs) { return JoinOf(vfs)->base; }

int JoinOpen(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  JoinFile* f = AsJoin(file);
  std::memset(f, 0, sizeof(JoinFile));
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  const int rc = BaseOf(vfs)->xOpen(BaseOf(vfs), name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) return rc;  // pMethods stays null: SQLite does not close it
  f->wal = (flags & SQLITE_OPEN_WAL) != 0;
  if (f->wal) f->joined = new std::vector<unsigned char>();
  f->file.pMethods = f->real->pMethods->iVersion >= 3 ? &kJoinMethods3 : &kJoinMethods2;
  return SQLITE_OK;
}

int JoinDelete(sqlite3_vfs* v, const char* name, int sync_dir) { return BaseOf(v)->xDelete(BaseOf(v), name, sync_dir); }
int JoinAccess(sqlite3_vfs* v, const char* name, int flags, int* out) {
  return BaseOf(v)->xAccess(BaseOf(v), name, flags, out);
}
int JoinFullPathname(sqlite3_vfs* v, const char* name, int size, char* out) {
  return BaseOf(v)->xFullPathname(BaseOf(v), name, size, out);
}
void* JoinDlOpen(sqlite3_vfs* v, const char* name) { return BaseOf(v)->xDlOpen(BaseOf(v), name); }
void JoinDlError(sqlite3_vfs* v, int size, char* out) { BaseOf(v)->xDlError(BaseOf(v), size, out); }
void (*JoinDlSym(sqlite3_vfs* v, void* handle, const char* symbol))(void) {
  return BaseOf(v)->xDlSym(BaseOf(v), handle, symbol);
}
void JoinDlClose(sqlite3_vfs* v, void* handle) { BaseOf(v)->xDlClose(BaseOf(v), handle); }
int JoinRandomness(sqlite3_vfs* v, int size, char* out) { return BaseOf(v)->xRandomness(BaseOf(v), size, out); }
int JoinSleep(sqlite3_vfs* v, int micros) { return BaseOf(v)->xSleep(BaseOf(v), micros); }
int JoinCurrentTime(sqlite3_vfs* v, double* out) { return BaseOf(v)->xCurrentTime(BaseOf(v), out); }
int JoinGetLastError(sqlite3_vfs* v, int size, char* out) { return BaseOf(v)->xGetLastError(BaseOf(v), size, out); }
int JoinCurrentTimeInt64(sqlite3_vfs* v, sqlite3_int64* out) {
  return BaseOf(v)->xCurrentTimeInt64(BaseOf(v), out);
}

}  // namespace

Result<std::string> JoinedFramesVfsName(const std::string& base_name) {
  static std::mutex mu;
  static auto* registered = new std::map<std::string, std::unique_ptr<JoinVfs>>();  // lives with the process
  std::lock_guard<std::mutex> lock(mu);
  auto it = registered->find(base_name);
  if (it != registered->end()) return it->second->name;
  sqlite3_vfs* base = sqlite3_vfs_find(base_name.empty() ? nullptr : base_name.c_str());
  if (base == nullptr) return Status::Internal("sqlite: no VFS named '" + base_name + "' to join WAL frames over");
  if (base->iVersion < 2) return Status::Internal("sqlite: the VFS '" + std::string(base->zName) + "' is too old");
  auto self = std::make_unique<JoinVfs>();
  self->base = base;
  self->name = "msp-joined-frames-" + std::string(base->zName);
  sqlite3_vfs& v = self->vfs;
  std::memset(&v, 0, sizeof(v));
  v.iVersion = 2;
  v.szOsFile = static_cast<int>(sizeof(JoinFile)) + base->szOsFile;
  v.mxPathname = base->mxPathname;
  v.zName = self->name.c_str();
  v.pAppData = self.get();
  v.xOpen = JoinOpen;
  v.xDelete = JoinDelete;
  v.xAccess = JoinAccess;
  v.xFullPathname = JoinFullPathname;
  v.xDlOpen = JoinDlOpen;
  v.xDlError = JoinDlError;
  v.xDlSym = JoinDlSym;
  v.xDlClose = JoinDlClose;
  v.xRandomness = JoinRandomness;
  v.xSleep = JoinSleep;
  v.xCurrentTime = JoinCurrentTime;
  v.xGetLastError = JoinGetLastError;
  v.xCurrentTimeInt64 = JoinCurrentTimeInt64;
  const int rc = sqlite3_vfs_register(&v, /*makeDflt=*/0);
  if (rc != SQLITE_OK) {
    return Status::Internal(std::string("sqlite: cannot register the frame-joining VFS: ") + sqlite3_errstr(rc));
  }
  std::string name = self->name;
  registered->emplace(base_name, std::move(self));
  return name;
}

}  // namespace msp
