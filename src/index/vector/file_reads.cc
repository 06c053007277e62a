// FileReads (file_reads.h): the io_uring is driven with its two system
// calls and the kernel's own header (no liburing): one submission queue
// entry per piece (IORING_OP_READ), one io_uring_enter that submits them
// and waits for their completions.
#include "index/vector/file_reads.h"

#include <errno.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace msp {
namespace {

// A ring position shared with the kernel.
unsigned LoadAcquire(const unsigned* p) { return std::atomic_ref<const unsigned>(*p).load(std::memory_order_acquire); }
void StoreRelease(unsigned* p, unsigned v) { std::atomic_ref<unsigned>(*p).store(v, std::memory_order_release); }

}  // namespace

struct FileReads::Ring {
  static constexpr unsigned kEntries = 256;

  ~Ring() {
    if (sq != MAP_FAILED) munmap(sq, sq_bytes);
    if (cq != MAP_FAILED) munmap(cq, cq_bytes);
    if (sqes != MAP_FAILED) munmap(sqes, sqes_bytes);
  }

  OwnedFd fd;
  void* sq = MAP_FAILED;
  void* cq = MAP_FAILED;
  void* sqes = MAP_FAILED;
  size_t sq_bytes = 0, cq_bytes = 0, sqes_bytes = 0;
  unsigned entries = 0;
  unsigned *sq_tail = nullptr, *sq_mask = nullptr, *sq_array = nullptr;
  unsigned *cq_head = nullptr, *cq_tail = nullptr, *cq_mask = nullptr;
  io_uring_cqe* cqes = nullptr;
};

FileReads::~FileReads() { delete ring_; }

bool FileReads::SetUpRing() {
  if (ring_tried_) return ring_ != nullptr;
  ring_tried_ = true;
  if (!use_ring_) return false;
  io_uring_params params;
  std::memset(&params, 0, sizeof params);
  const long fd = syscall(__NR_io_uring_setup, Ring::kEntries, &params);
  if (fd < 0) return false;  // no io_uring here: pread
  auto ring = new Ring;
  ring->fd = OwnedFd(static_cast<int>(fd));
  ring->entries = params.sq_entries;
  ring->sq_bytes = params.sq_off.array + params.sq_entries * sizeof(unsigned);
  ring->cq_bytes = params.cq_off.cqes + params.cq_entries * sizeof(io_uring_cqe);
  ring->sqes_bytes = params.sq_entries * sizeof(io_uring_sqe);
  auto map = [&](size_t bytes, off_t what) {
    return mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring->fd.get(), what);
  };
  ring->sq = map(ring->sq_bytes, IORING_OFF_SQ_RING);
  ring->cq = map(ring->cq_bytes, IORING_OFF_CQ_RING);
  ring->sqes = map(ring->sqes_bytes, IORING_OFF_SQES);
  if (ring->sq == MAP_FAILED || ring->cq == MAP_FAILED || ring->sqes == MAP_FAILED) {
    delete ring;
    return false;
  }
  char* sq = static_cast<char*>(ring->sq);
  char* cq = static_cast<char*>(ring->cq);
  ring->sq_tail = reinterpret_cast<unsigned*>(sq + params.sq_off.tail);
  ring->sq_mask = reinterpret_cast<unsigned*>(sq + params.sq_off.ring_mask);
  ring->sq_array = reinterpret_cast<unsigned*>(sq + params.sq_off.array);
  ring->cq_head = reinterpret_cast<unsigned*>(cq + params.cq_off.head);
  ring->cq_tail = reinterpret_cast<unsigned*>(cq + params.cq_off.tail);
  ring->cq_mask = reinterpret_cast<unsigned*>(cq + params.cq_off.ring_mask);
  ring->cqes = reinterpret_cast<io_uring_cqe*>(cq + params.cq_off.cqes);
  ring_ = ring;
  return true;
}

bool FileReads::RunRing(int fd, size_t begin, size_t end, std::vector<char>& done) {
  Ring& r = *ring_;
  const unsigned n = static_cast<unsigned>(end - begin);
  const unsigned tail = *r.sq_tail;  // only this process writes the tail
  auto* sqes = static_cast<io_uring_sqe*>(r.sqes);
  for (unsigned i = 0; i < n; ++i) {
    const Piece& piece = pieces_[begin + i];
    const unsigned at = (tail + i) & *r.sq_mask;
    io_uring_sqe& e = sqes[at];
    std::memset(&e, 0, sizeof e);
    e.opcode = IORING_OP_READ;
    e.fd = fd;
    e.off = piece.offset;
    e.addr = reinterpret_cast<uint64_t>(piece.out);
    e.len = static_cast<uint32_t>(piece.bytes);
    e.user_data = begin + i;
    r.sq_array[at] = at;
  }
  StoreRelease(r.sq_tail, tail + n);
  unsigned submitted = 0, completed = 0;
  while (completed < n) {
    const long got = syscall(__NR_io_uring_enter, r.fd.get(), n - submitted, 1, IORING_ENTER_GETEVENTS, nullptr, 0);
    if (got < 0 && errno != EINTR && errno != EAGAIN && errno != EBUSY) {
      // Nothing submitted: nothing can still write into the pieces, and the
      // entries left in the queue go with the ring.
      if (submitted == 0) return false;
      continue;  // reads in flight finish; wait for them
    }
    if (got > 0) submitted += static_cast<unsigned>(got);
    unsigned head = *r.cq_head;
    const unsigned cq_tail = LoadAcquire(r.cq_tail);
    for (; head != cq_tail; ++head) {
      const io_uring_cqe& c = r.cqes[head & *r.cq_mask];
      const size_t index = static_cast<size_t>(c.user_data);
      if (index >= begin && index < end && c.res >= 0 && static_cast<size_t>(c.res) == pieces_[index].bytes) {
        done[index] = 1;
      }
      ++completed;
    }
    StoreRelease(r.cq_head, head);
  }
  return true;
}

bool FileReads::Run(int fd) {
  std::vector<char> done(pieces_.size(), 0);
  if (pieces_.size() > 1 && SetUpRing()) {
    for (size_t begin = 0; begin < pieces_.size();) {
      const size_t end = std::min(pieces_.size(), begin + ring_->entries);
      if (!RunRing(fd, begin, end, done)) {
        delete ring_;  // broken: pread from now on
        ring_ = nullptr;
        break;
      }
      ring_used_ = true;
      begin = end;
    }
  }
  bool ok = true;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    if (!done[i]) ok = ReadFileAt(fd, pieces_[i].offset, pieces_[i].out, pieces_[i].bytes) && ok;
  }
  pieces_.clear();
  return ok;
}

}  // namespace msp
