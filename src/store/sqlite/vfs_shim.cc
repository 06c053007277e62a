// The forwarding half of msp's VFSes over another VFS (see vfs_shim.h).
#include "store/sqlite/vfs_shim.h"

#include <cstring>

namespace msp {
namespace {

sqlite3_vfs* Below(sqlite3_vfs* v) { return ShimOf(v)->base; }

int ShimDelete(sqlite3_vfs* v, const char* name, int sync_dir) { return Below(v)->xDelete(Below(v), name, sync_dir); }
int ShimAccess(sqlite3_vfs* v, const char* name, int flags, int* out) {
  return Below(v)->xAccess(Below(v), name, flags, out);
}
int ShimFullPathname(sqlite3_vfs* v, const char* name, int size, char* out) {
  return Below(v)->xFullPathname(Below(v), name, size, out);
}
void* ShimDlOpen(sqlite3_vfs* v, const char* name) { return Below(v)->xDlOpen(Below(v), name); }
void ShimDlError(sqlite3_vfs* v, int size, char* out) { Below(v)->xDlError(Below(v), size, out); }
void (*ShimDlSym(sqlite3_vfs* v, void* handle, const char* symbol))(void) {
  return Below(v)->xDlSym(Below(v), handle, symbol);
}
void ShimDlClose(sqlite3_vfs* v, void* handle) { Below(v)->xDlClose(Below(v), handle); }
int ShimRandomness(sqlite3_vfs* v, int size, char* out) { return Below(v)->xRandomness(Below(v), size, out); }
int ShimSleep(sqlite3_vfs* v, int micros) { return Below(v)->xSleep(Below(v), micros); }
int ShimCurrentTime(sqlite3_vfs* v, double* out) { return Below(v)->xCurrentTime(Below(v), out); }
int ShimGetLastError(sqlite3_vfs* v, int size, char* out) { return Below(v)->xGetLastError(Below(v), size, out); }
int ShimCurrentTimeInt64(sqlite3_vfs* v, sqlite3_int64* out) { return Below(v)->xCurrentTimeInt64(Below(v), out); }

}  // namespace

void InitShimVfs(ShimVfs* self, int file_bytes, ShimOpen open) {
  sqlite3_vfs& v = self->vfs;
  std::memset(&v, 0, sizeof(v));
  v.iVersion = 2;
  v.szOsFile = file_bytes + self->base->szOsFile;
  v.mxPathname = self->base->mxPathname;
  v.zName = self->name.c_str();
  v.pAppData = self;
  v.xOpen = open;
  v.xDelete = ShimDelete;
  v.xAccess = ShimAccess;
  v.xFullPathname = ShimFullPathname;
  v.xDlOpen = ShimDlOpen;
  v.xDlError = ShimDlError;
  v.xDlSym = ShimDlSym;
  v.xDlClose = ShimDlClose;
  v.xRandomness = ShimRandomness;
  v.xSleep = ShimSleep;
  v.xCurrentTime = ShimCurrentTime;
  v.xGetLastError = ShimGetLastError;
  v.xCurrentTimeInt64 = ShimCurrentTimeInt64;
}

}  // namespace msp
