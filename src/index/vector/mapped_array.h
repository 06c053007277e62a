// MappedArray<T>: a growable array of trivially copyable T in its own
// memory mapping, which can start as a copy-on-write view of a file section.
//
// The vector index keeps every per-slot array in one of these so that a
// process opening a persisted index maps the file instead of reading it:
// pages are read from the page cache only when touched, and a page the
// process changes becomes its own (MAP_PRIVATE); the file is never written
// through the mapping. Growth reserves address space ahead (the first growth
// after a file mapping does not copy); beyond it, the array moves to a
// mapping twice the size.
//
// Reading through the mapping costs a page fault the first time a page is
// touched, which on some machines (virtual machines whose page tables the
// hypervisor shadows) is tens of microseconds against about two for a
// pread() of the same bytes. A process that has read only a few hundred
// scattered elements so far can therefore read them with pread() instead:
// Read() and At() do so when asked for elements the file still holds
// unchanged (the file descriptor it was mapped from must stay open
// meanwhile). A change through operator[], back() or Mutable() marks the
// pages it touches, whose elements are read from memory from then on, so
// a process that replayed a few changes over the file still reads the
// rest with pread(); data(), begin() and end() (which can change anything)
// and more than kMaxDirtyPages marked pages end file reads for good. What
// they return is therefore always the array's content.
//
// Not thread-safe; the index guards it with its own lock. Move-only.
#ifndef MSP_INDEX_VECTOR_MAPPED_ARRAY_H_
#define MSP_INDEX_VECTOR_MAPPED_ARRAY_H_

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "index/vector/file_reads.h"
#include "util/owned_fd.h"

namespace msp {

inline size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

template <typename T>
class MappedArray {
  static_assert(std::is_trivially_copyable_v<T>, "MappedArray holds trivially copyable values only");

 public:
  MappedArray() = default;
  ~MappedArray() { Release(); }
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;
  MappedArray(MappedArray&& o) noexcept { Take(o); }
  MappedArray& operator=(MappedArray&& o) noexcept {
    if (this != &o) {
      Release();
      Take(o);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return Touched(data_); }
  const T* data() const { return data_; }
  T* begin() { return Touched(data_); }
  T* end() { return Touched(data_ + size_); }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return *Mutable(i, 1); }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return *Mutable(size_ - 1, 1); }
  // Elements i .. i + n - 1, to change. REQUIRES: i + n <= size().
  T* Mutable(size_t i, size_t n) {
    MarkDirty(i, n);
    return data_ + i;
  }

  // Elements i .. i + n - 1: read with pread() into `scratch` (room for n)
  // when `from_file` and the array is still the file's unchanged view, else
  // where they lie in memory. REQUIRES: i + n <= size().
  const T* Read(size_t i, size_t n, T* scratch, bool from_file) const {
    if (from_file && InFile(i, n) &&
        ReadFileAt(fd_, file_offset_ + i * sizeof(T), scratch, n * sizeof(T))) {
      return scratch;
    }
    return data_ + i;
  }
  // As Read(), but a read from the file is queued on `reads` (made when
  // it runs; `scratch` must stay valid until then) rather than made now.
  // Returns where the elements are, or will be once `reads` has run.
  const T* Queue(size_t i, size_t n, T* scratch, FileReads& reads) const {
    if (!InFile(i, n)) return data_ + i;
    reads.Add(file_offset_ + i * sizeof(T), scratch, n * sizeof(T));
    return scratch;
  }
  // Element i, as Read() reads it. REQUIRES: i < size().
  T At(size_t i, bool from_file) const {
    if (!from_file || file_count_ == 0) return data_[i];
    T v;
    return *Read(i, 1, &v, true);
  }
  // Maps the pages of elements i .. i + n - 1 into the page tables now,
  // rather than one page fault at a time as reads first touch them:
  // madvise(MADV_POPULATE_READ), or a read of each page where the kernel
  // lacks it (before Linux 5.14). Reads the file's pages in from disk when
  // they are not cached; changes nothing. REQUIRES: i + n <= size().
  void Prefault(size_t i, size_t n) const {
    if (n == 0) return;
    const size_t page = PageSize();
    const auto from = reinterpret_cast<uintptr_t>(data_ + i) / page * page;
    const auto to = reinterpret_cast<uintptr_t>(data_ + i + n);
    if (madvise(reinterpret_cast<void*>(from), to - from, kPopulateRead) == 0) return;
    // Any other failure (a file cut short under the mapping: EFAULT) is
    // left for the reads that come to it.
    if (errno != EINVAL) return;
    for (uintptr_t at = from; at < to; at += page) {
      (void)*reinterpret_cast<const volatile char*>(at);  // data_ is page-aligned: `from` is in the array
    }
  }

  // True while Read() can read from the file (the array was mapped from
  // one and has not changed wholesale since).
  bool file_view() const { return file_count_ > 0; }
  // True when Read() would read elements i .. i + n - 1 from the file.
  bool InFile(size_t i, size_t n) const {
    if (n == 0 || i + n > file_count_) return false;
    if (dirty_.empty()) return true;
    const size_t first = i * sizeof(T) / PageSize(), last = ((i + n) * sizeof(T) - 1) / PageSize();
    auto it = std::lower_bound(dirty_.begin(), dirty_.end(), first);
    return it == dirty_.end() || *it > last;
  }

  // Ends file reads for good: every element is read from memory from then
  // on, and Mutable() marks nothing (so threads may call it on disjoint
  // elements at once).
  void EndFileView() { EndFileReads(); }

  // Marked pages past which file reads end (the set is searched on every
  // read).
  static constexpr size_t kMaxDirtyPages = 4096;

  // New elements are zero bytes. Throws std::bad_alloc when no memory can be
  // mapped (as std::vector would).
  void resize(size_t n) {
    // Growing adds elements past the file's (file_count_ <= size_);
    // shrinking drops some of them.
    file_count_ = std::min(file_count_, n);
    if (n > capacity_) Grow(n);
    if (n > size_) std::memset(static_cast<void*>(data_ + size_), 0, (n - size_) * sizeof(T));
    size_ = n;
  }
  void push_back(const T& v) {
    if (size_ == capacity_) Grow(size_ + 1);
    data_[size_++] = v;
  }
  void pop_back() {
    --size_;
    file_count_ = std::min(file_count_, size_);
  }
  void clear() { Release(); }

  // Replaces the contents with `count` elements read from `fd` at `offset`,
  // mapped copy-on-write when `offset` is a multiple of the page size (else
  // copied). REQUIRES: the file holds every byte up to the end of the page
  // that holds the section's last byte (the index file is padded to a page).
  // False (contents unchanged) when the mapping fails.
  bool MapFile(int fd, uint64_t offset, size_t count) {
    const size_t bytes = count * sizeof(T);
    const size_t page = PageSize();
    const size_t file_span = RoundUp(bytes, page);
    // Room to grow by an eighth (at least a page) before anything moves.
    const size_t reserve = RoundUp(std::max(bytes + bytes / 8, bytes + page), page);
    void* base = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return false;
    if (file_span > 0) {
      bool ok = false;
      if (offset % page == 0) {
        ok = mmap(base, file_span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
                  static_cast<off_t>(offset)) != MAP_FAILED;
      } else {
        ok = ReadFileAt(fd, offset, base, bytes);
      }
      if (!ok) {
        munmap(base, reserve);
        return false;
      }
    }
    Release();
    data_ = static_cast<T*>(base);
    size_ = count;
    capacity_ = reserve / sizeof(T);
    mapped_bytes_ = reserve;
    if (offset % page == 0) {  // a copy read once gains nothing from file reads
      fd_ = fd;
      file_offset_ = offset;
      file_count_ = count;
    }
    return true;
  }

 private:
#ifdef MADV_POPULATE_READ
  static constexpr int kPopulateRead = MADV_POPULATE_READ;
#else
  static constexpr int kPopulateRead = 22;  // Linux 5.14's value; older kernels refuse it (EINVAL)
#endif

  static size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

  // Called by every accessor that can change an element: the array may no
  // longer equal the file from then on.
  void EndFileReads() {
    file_count_ = 0;
    dirty_.clear();
  }
  T* Touched(T* p) {
    EndFileReads();
    return p;
  }
  // Elements i .. i + n - 1 may change: their pages are read from memory.
  void MarkDirty(size_t i, size_t n) {
    if (n == 0 || i >= file_count_) return;
    const size_t first = i * sizeof(T) / PageSize(), last = ((i + n) * sizeof(T) - 1) / PageSize();
    if (!dirty_.empty() && dirty_.back() == first && first == last) return;  // the common repeat
    for (size_t p = first; p <= last; ++p) {
      auto it = std::lower_bound(dirty_.begin(), dirty_.end(), p);
      if (it == dirty_.end() || *it != p) dirty_.insert(it, p);
    }
    if (dirty_.size() > kMaxDirtyPages) EndFileReads();
  }

  void Grow(size_t need) {
    const size_t want = std::max({need, capacity_ * 2, PageSize() / sizeof(T) + 1});
    const size_t bytes = RoundUp(want * sizeof(T), PageSize());
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const size_t keep = size_;
    if (keep > 0) std::memcpy(p, static_cast<const void*>(data_), keep * sizeof(T));
    Release();
    data_ = static_cast<T*>(p);
    size_ = keep;
    capacity_ = bytes / sizeof(T);
    mapped_bytes_ = bytes;
  }

  void Release() {
    if (data_ != nullptr) munmap(static_cast<void*>(data_), mapped_bytes_);
    data_ = nullptr;
    size_ = capacity_ = mapped_bytes_ = 0;
    file_count_ = 0;
    dirty_.clear();
    fd_ = -1;
  }

  void Take(MappedArray& o) {
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    mapped_bytes_ = std::exchange(o.mapped_bytes_, 0);
    fd_ = std::exchange(o.fd_, -1);
    file_offset_ = std::exchange(o.file_offset_, 0);
    file_count_ = std::exchange(o.file_count_, 0);
    dirty_ = std::move(o.dirty_);
    o.dirty_.clear();
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t mapped_bytes_ = 0;
  // The file the array was mapped from, while it still equals it:
  // file_count_ elements at file_offset_ (0: not, or no longer, the file's).
  int fd_ = -1;
  uint64_t file_offset_ = 0;
  size_t file_count_ = 0;
  std::vector<size_t> dirty_;  // sorted: pages (of the array) changed since it was mapped
};

}  // namespace msp

#endif  // MSP_INDEX_VECTOR_MAPPED_ARRAY_H_
