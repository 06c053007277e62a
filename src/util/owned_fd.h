// OwnedFd: a POSIX file descriptor that closes itself.
//
// Whoever holds one owns the descriptor: it is closed when the OwnedFd goes
// out of scope or is assigned another one. Move-only; not thread-safe (like
// an int). reset() closes early; release() hands the descriptor back.
#ifndef MSP_UTIL_OWNED_FD_H_
#define MSP_UTIL_OWNED_FD_H_

#include <unistd.h>

#include <utility>

namespace msp {

class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd() { reset(); }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  OwnedFd(OwnedFd&& o) noexcept : fd_(o.release()) {}
  OwnedFd& operator=(OwnedFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes the descriptor now (nothing when there is none).
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // The descriptor, which the caller now owns.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

}  // namespace msp

#endif  // MSP_UTIL_OWNED_FD_H_
