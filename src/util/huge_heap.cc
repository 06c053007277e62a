// BackHeapWithHugePages (huge_heap.h).
#include "util/huge_heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace msp {

size_t BackHeapWithHugePages(size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
#if defined(__SANITIZE_ADDRESS__)
  return 0;  // AddressSanitizer's allocator: not glibc's heap
#endif
  if (bytes < 2 * kHuge || bytes > (size_t{30} << 20)) return 0;
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
