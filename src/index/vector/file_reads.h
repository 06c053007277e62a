// FileReads: many small reads of scattered pieces of one file, made
// together.
//
// A short-lived process's query reads a few hundred scattered pieces of the
// vector index file (ids, metadata, rows; exact_index.h, "rent or buy"):
// one pread each costs a system call each, which on a virtual machine is
// several microseconds. FileReads submits them all to an io_uring in one
// system call (the kernel copies cached pages without waking a thread),
// and falls back to one pread each where io_uring is missing or refused
// (an old kernel, a container's seccomp filter, kernel.io_uring_disabled),
// and for any piece the ring answered short or with an error.
//
// Not thread-safe: one FileReads per thread (ExactVectorIndex keeps one
// behind a mutex). Move-only; the ring (set up on the first Run, once) is
// closed with it.
#ifndef MSP_INDEX_VECTOR_FILE_READS_H_
#define MSP_INDEX_VECTOR_FILE_READS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/file_io.h"
#include "util/owned_fd.h"

namespace msp {

class FileReads {
 public:
  // `use_ring` false: pread only (what the fallback does; for tests).
  explicit FileReads(bool use_ring = true) : use_ring_(use_ring) {}
  ~FileReads();
  FileReads(const FileReads&) = delete;
  FileReads& operator=(const FileReads&) = delete;

  // Queues a read of `bytes` at `offset` of the file into `out`, which must
  // stay valid until Run returns.
  void Add(uint64_t offset, void* out, size_t bytes) { pieces_.push_back(Piece{offset, out, bytes}); }
  size_t queued() const { return pieces_.size(); }

  // Reads every queued piece from `fd` and forgets them. False when a piece
  // could not be read whole (past the end, an I/O error); what the pieces
  // hold is then unspecified.
  bool Run(int fd);

  // True once a Run has used the ring (for tests and measurements).
  bool used_ring() const { return ring_used_; }

 private:
  struct Piece {
    uint64_t offset;
    void* out;
    size_t bytes;
  };
  struct Ring;

  // Submits pieces_[begin, end) to the ring and waits for them; marks in
  // `done` each piece read whole. False when the ring failed as a whole.
  bool RunRing(int fd, size_t begin, size_t end, std::vector<char>& done);
  bool SetUpRing();

  const bool use_ring_;
  bool ring_tried_ = false;
  bool ring_used_ = false;
  Ring* ring_ = nullptr;  // owned; null until set up (or when it cannot be)
  std::vector<Piece> pieces_;
};

}  // namespace msp

#endif  // MSP_INDEX_VECTOR_FILE_READS_H_
