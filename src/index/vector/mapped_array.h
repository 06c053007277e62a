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
// Not thread-safe; the index guards it with its own lock. Move-only.
#ifndef MSP_INDEX_VECTOR_MAPPED_ARRAY_H_
#define MSP_INDEX_VECTOR_MAPPED_ARRAY_H_

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

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
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }

  // New elements are zero bytes. Throws std::bad_alloc when no memory can be
  // mapped (as std::vector would).
  void resize(size_t n) {
    if (n > capacity_) Grow(n);
    if (n > size_) std::memset(static_cast<void*>(data_ + size_), 0, (n - size_) * sizeof(T));
    size_ = n;
  }
  void push_back(const T& v) {
    if (size_ == capacity_) Grow(size_ + 1);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
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
        ok = ReadAll(fd, offset, base, bytes);
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
    return true;
  }

 private:
  static size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

  static bool ReadAll(int fd, uint64_t offset, void* out, size_t bytes) {
    char* p = static_cast<char*>(out);
    while (bytes > 0) {
      const ssize_t n = pread(fd, p, bytes, static_cast<off_t>(offset));
      if (n <= 0) return false;
      p += n;
      offset += static_cast<uint64_t>(n);
      bytes -= static_cast<size_t>(n);
    }
    return true;
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
  }

  void Take(MappedArray& o) {
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    mapped_bytes_ = std::exchange(o.mapped_bytes_, 0);
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t mapped_bytes_ = 0;
};

}  // namespace msp

#endif  // MSP_INDEX_VECTOR_MAPPED_ARRAY_H_
