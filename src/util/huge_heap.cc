// BackHeapWithHugePages (huge_heap.h).
#include "util/huge_heap.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <system_error>

#include "util/text.h"

namespace msp {

size_t FreeHugeBlocks(std::string_view text) {
  constexpr unsigned kHugeOrder = 9;  // 2 MB of 4 KB pages
  size_t blocks = 0;
  bool any_zone = false;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    // "Node 0, zone   Normal   14013  16531 ...": free blocks of order 0, 1, ...
    const size_t zone = line.find("zone");
    if (zone == std::string_view::npos) continue;
    line = TrimAsciiSpace(line.substr(zone + 4));
    line.remove_prefix(std::min(line.find(' '), line.size()));  // the zone's name
    any_zone = true;
    for (unsigned order = 0;; ++order) {
      line = TrimAsciiSpace(line);
      size_t count = 0;
      const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), count);
      if (error != std::errc()) break;  // the line's end, or not a count
      line.remove_prefix(static_cast<size_t>(end - line.data()));
      if (order >= kHugeOrder && order - kHugeOrder < 32) blocks += count << (order - kHugeOrder);
    }
  }
  return any_zone ? blocks : std::numeric_limits<size_t>::max();
}

namespace {

// The free 2 MB blocks the kernel has now (SIZE_MAX when unknown).
size_t FreeHugeBlocksNow() {
  const int fd = ::open("/proc/buddyinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::numeric_limits<size_t>::max();
  // One read: the file is a few lines a zone (a longer one cut short only
  // counts fewer blocks).
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return FreeHugeBlocks(std::string_view(buf, n > 0 ? static_cast<size_t>(n) : 0));
}

}  // namespace

size_t BackHeapWithHugePages(size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
#if defined(__SANITIZE_ADDRESS__)
  return 0;  // AddressSanitizer's allocator: not glibc's heap
#endif
  if (bytes < 2 * kHuge || bytes > (size_t{30} << 20)) return 0;
  if (FreeHugeBlocksNow() < bytes / kHuge) return 0;
  // A freed top is kept (a short-lived process gives nothing back).
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes + (64 << 20)));
  // One block the heap's top cannot hold, taken from the heap (below
  // glibc's largest mmap threshold): glibc moves the break past it. Only
  // its header, below the old break, and the top's header after it are
  // written; freed, it returns to the top untouched.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  void* const before = sbrk(0);
  char* volatile block = static_cast<char*>(std::malloc(bytes));  // volatile: not optimised away
  const uintptr_t end = reinterpret_cast<uintptr_t>(block) + bytes;
  std::free(block);
  // From now on blocks of up to 4 MB come from the heap too (glibc gives
  // larger ones than 128 KB their own mapping, of small pages).
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  void* const after = sbrk(0);
  // Only when the block was carved from the main heap's top, where the
  // break moved past it (not some other allocator's or mapping's memory).
  const auto start = reinterpret_cast<uintptr_t>(block);
  if (block == nullptr || before == reinterpret_cast<void*>(-1) || after == reinterpret_cast<void*>(-1) ||
      start >= reinterpret_cast<uintptr_t>(before) || end > reinterpret_cast<uintptr_t>(after)) {
    return 0;
  }
  // The whole 2 MB blocks between the old break and the block's end (the
  // page past it holds the top's header: already touched, so small pages).
  const uintptr_t from = (reinterpret_cast<uintptr_t>(before) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t to = end & ~(kHuge - 1);
  if (to <= from) return 0;
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) != 0) return 0;
  // The top chunk (it starts where the block did) reaches below `from`: a
  // block kept for good fills it up to there, so that what is allocated
  // next lies in the advised blocks (its own pages are never touched).
  constexpr uintptr_t kChunkHeader = 2 * sizeof(size_t);
  const uintptr_t top = start - kChunkHeader;
  if (top + 2 * kChunkHeader < from) {
    void* volatile filler = std::malloc(from - top - kChunkHeader);
    (void)filler;
  }
  return to - from;
}

}  // namespace msp
