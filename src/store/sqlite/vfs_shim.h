// What msp's SQLite VFSes that sit over another VFS share (the encrypting
// one, encrypted_vfs.h; the frame-joining one, frame_vfs.h): the VFS record,
// and the methods that only forward to the VFS below — all but xOpen, which
// each wraps the files with its own.
//
// Thread-safety: a ShimVfs is filled once, before it is registered, and
// lives until the process ends.
#ifndef MSP_STORE_SQLITE_VFS_SHIM_H_
#define MSP_STORE_SQLITE_VFS_SHIM_H_

#include <sqlite3.h>

#include <string>

namespace msp {

struct ShimVfs {
  sqlite3_vfs vfs;  // vfs.pAppData points back here
  sqlite3_vfs* base = nullptr;
  std::string name;
};

using ShimOpen = int (*)(sqlite3_vfs*, sqlite3_filename, sqlite3_file*, int, int*);

// Fills self->vfs: a version-2 VFS named self->name over self->base (both
// set first), whose files take `file_bytes` more than the base's, opened
// by `open`; every other method forwards to the base.
void InitShimVfs(ShimVfs* self, int file_bytes, ShimOpen open);

// The ShimVfs behind a VFS InitShimVfs filled.
inline ShimVfs* ShimOf(sqlite3_vfs* vfs) { return static_cast<ShimVfs*>(vfs->pAppData); }

}  // namespace msp

#endif  // MSP_STORE_SQLITE_VFS_SHIM_H_
