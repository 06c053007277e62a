// Whole reads and writes at an offset of a file descriptor: pread / pwrite
// again after a short transfer or EINTR, until every byte has moved.
#ifndef MSP_UTIL_FILE_IO_H_
#define MSP_UTIL_FILE_IO_H_

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace msp {

// Reads `bytes` at `offset` of `fd` into `out`. False on an error or end of
// file (what `out` holds is then unspecified).
inline bool ReadFileAt(int fd, uint64_t offset, void* out, size_t bytes) {
  char* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = pread(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// Writes `bytes` of `data` at `offset` of `fd`. False on an error.
inline bool WriteFileAt(int fd, uint64_t offset, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    offset += static_cast<uint64_t>(n);
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace msp

#endif  // MSP_UTIL_FILE_IO_H_
