// BackHeapWithHugePages: the heap of a process grown at once and backed by
// transparent huge pages where the kernel gives them on request.
//
// On a virtual machine whose hypervisor shadows the page tables, each 4 KB
// page a process touches for the first time costs a page fault of 10-20
// microseconds (bench/README.md, "Session 33"): a short-lived msp process
// that opens a store touches a few hundred heap pages, milliseconds in all.
// A 2 MB huge page costs one fault (~0.2 ms, most of it zeroing). The kernel
// gives huge pages to a region it was advised to (MADV_HUGEPAGE) when
// transparent_hugepage/enabled is `madvise` or `always`; with `never`, or
// without a free huge page, the pages stay 4 KB: nothing else changes.
#ifndef MSP_UTIL_HUGE_HEAP_H_
#define MSP_UTIL_HUGE_HEAP_H_

#include <cstddef>
#include <string_view>

namespace msp {

// Grows glibc's main heap by `bytes` of address space (none of it touched)
// and advises huge pages for the whole 2 MB blocks of it; allocations of up
// to 4 MB come from the heap from then on, and freed memory is kept rather
// than given back (a short-lived process). Nothing is done when the kernel
// has fewer free 2 MB blocks than that (/proc/buddyinfo): a fault on an
// advised page may then wait for the kernel to compact memory, which costs
// more than the small pages' faults. Call once, early in main, before
// threads start. Returns the bytes advised (0 where nothing was).
size_t BackHeapWithHugePages(size_t bytes);

// The free blocks of 2 MB or more /proc/buddyinfo's text lists, in 2 MB
// blocks (a free 4 MB block counts 2), over every zone; SIZE_MAX when the
// text lists no zone (unreadable: no limit known).
size_t FreeHugeBlocks(std::string_view buddyinfo);

}  // namespace msp

#endif  // MSP_UTIL_HUGE_HEAP_H_
