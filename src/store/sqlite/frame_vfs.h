// One write a WAL frame: an SQLite VFS over another (the default one, or the
// encrypting one) that joins each WAL frame's header and page into a single
// write of the file below.
//
// SQLite writes a frame as two writes: its 24-byte header, then the page
// right after it. Each is a system call (a pwrite, with the file system's
// per-write work), so a commit of N pages made 2N of them; at 17 pages an
// artifact write that was 34 pwrites a commit. Here a 24-byte write to a WAL
// is held, and the next write, when it starts where the header ends, goes
// down as one write of both; anything else on the file first writes the held
// header alone (another write, a read, a sync, a truncate, a lock, a file
// control, shared memory, close). SQLite writes nothing else between a
// frame's header and its page and touches the WAL index only after, so a
// reader — in this process or another — never looks for a header still
// held, and what reaches the disk, and in which order, is what SQLite wrote.
//
// Thread-safety: registered once per base VFS and process; each open file is
// used by one connection at a time, as SQLite's own.
#ifndef MSP_STORE_SQLITE_FRAME_VFS_H_
#define MSP_STORE_SQLITE_FRAME_VFS_H_

#include <string>

#include "msp/status.h"

namespace msp {

// The name of the joining VFS over the VFS named `base` ("": SQLite's
// default), registered on first use (not as the default).
Result<std::string> JoinedFramesVfsName(const std::string& base);

}  // namespace msp

#endif  // MSP_STORE_SQLITE_FRAME_VFS_H_
