// Tests for MappedArray's file reads after changes: only the pages a change
// touched are read from memory, the rest still from the file, and what a
// read returns is always the array's content (checked against a plain
// vector through random changes).
#include "index/vector/mapped_array.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_util.h"
#include "util/file_io.h"
#include "util/owned_fd.h"

namespace msp {
namespace {

class MappedArrayFileTest : public ::testing::Test {
 protected:
  // A file of `n` uint32 values (i * 7), padded to a page, mapped.
  void Map(size_t n) {
    values_.resize(n);
    for (size_t i = 0; i < n; ++i) values_[i] = static_cast<uint32_t>(i * 7);
    const std::string path = tmp_.path() + "/array";
    OwnedFd w(open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600));
    ASSERT_GE(w.get(), 0);
    ASSERT_TRUE(WriteFileAt(w.get(), 0, values_.data(), n * sizeof(uint32_t)));
    const size_t padded = (n * sizeof(uint32_t) + PageSize() - 1) / PageSize() * PageSize();
    ASSERT_EQ(ftruncate(w.get(), static_cast<off_t>(std::max(padded, PageSize()))), 0);
    fd_ = OwnedFd(open(path.c_str(), O_RDONLY));
    ASSERT_GE(fd_.get(), 0);
    ASSERT_TRUE(array_.MapFile(fd_.get(), 0, n));
  }
  // Whether element i is read from the file, and that it reads its value.
  bool FromFile(size_t i) {
    uint32_t scratch = 0xdeadbeef;
    const uint32_t* p = std::as_const(array_).Read(i, 1, &scratch, /*from_file=*/true);
    EXPECT_EQ(*p, values_[i]) << i;
    return p == &scratch;
  }

  testing::TempDir tmp_{"mapped_array_test"};
  OwnedFd fd_;
  MappedArray<uint32_t> array_;
  std::vector<uint32_t> values_;  // what the array holds
};

TEST_F(MappedArrayFileTest, AChangeTakesOnlyItsPageOffTheFile) {
  const size_t per_page = PageSize() / sizeof(uint32_t);
  Map(4 * per_page);
  EXPECT_TRUE(FromFile(0));
  EXPECT_TRUE(FromFile(3 * per_page + 5));
  array_[per_page + 3] = values_[per_page + 3] = 99;  // page 1
  EXPECT_FALSE(FromFile(per_page + 3));
  EXPECT_FALSE(FromFile(per_page));  // the same page
  EXPECT_TRUE(FromFile(per_page - 1));
  EXPECT_TRUE(FromFile(2 * per_page));
  // A read spanning a changed page is not read from the file.
  std::vector<uint32_t> scratch(2 * per_page);
  EXPECT_NE(std::as_const(array_).Read(per_page / 2, per_page, scratch.data(), true), scratch.data());
  EXPECT_EQ(std::as_const(array_).Read(2 * per_page, 2 * per_page, scratch.data(), true), scratch.data());
  // Appending keeps the file's elements; the new ones are in memory.
  array_.push_back(5);
  values_.push_back(5);
  EXPECT_TRUE(FromFile(0));
  EXPECT_FALSE(FromFile(4 * per_page));
  uint32_t* row = array_.Mutable(2 * per_page, 3);
  row[2] = values_[2 * per_page + 2] = 1234;
  EXPECT_FALSE(FromFile(2 * per_page + 2));
  EXPECT_TRUE(FromFile(3 * per_page));
  // Shrinking below the file's end: the dropped elements' place is no
  // longer the file's, even once it is filled again.
  array_.resize(3 * per_page + 1);
  values_.resize(3 * per_page + 1);
  array_.pop_back();
  values_.pop_back();
  array_.push_back(77);
  values_.push_back(77);
  EXPECT_FALSE(FromFile(3 * per_page));
  EXPECT_TRUE(FromFile(0));
  // data() can change anything: no file reads from then on.
  array_.data()[0] = values_[0] = 1;
  EXPECT_FALSE(FromFile(0));
  EXPECT_FALSE(FromFile(2 * per_page - 1));
  EXPECT_FALSE(array_.file_view());
}

TEST_F(MappedArrayFileTest, ManyChangedPagesEndFileReads) {
  const size_t per_page = PageSize() / sizeof(uint32_t);
  const size_t pages = MappedArray<uint32_t>::kMaxDirtyPages + 2;
  Map(pages * per_page);
  for (size_t p = 0; p < MappedArray<uint32_t>::kMaxDirtyPages; ++p) array_[p * per_page] = values_[p * per_page] = 1;
  EXPECT_TRUE(FromFile((pages - 1) * per_page));
  array_[(pages - 2) * per_page] = values_[(pages - 2) * per_page] = 2;
  EXPECT_FALSE(array_.file_view());
  EXPECT_FALSE(FromFile((pages - 1) * per_page));
}

TEST_F(MappedArrayFileTest, ReadsAlwaysReturnTheContentThroughRandomChanges) {
  const size_t per_page = PageSize() / sizeof(uint32_t);
  Map(256 * per_page + 100);
  std::mt19937 rng(11);
  size_t from_file = 0;
  for (int step = 0; step < 3000; ++step) {
    const size_t n = values_.size();
    switch (std::uniform_int_distribution<int>(0, 39)(rng)) {
      case 0:
        array_.push_back(static_cast<uint32_t>(step));
        values_.push_back(static_cast<uint32_t>(step));
        break;
      case 1:
        if (n > 1) {
          array_.pop_back();
          values_.pop_back();
        }
        break;
      case 2: {
        const size_t i = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
        array_[i] = values_[i] = static_cast<uint32_t>(step);
        break;
      }
      case 3: {
        const size_t i = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
        const size_t len = std::min<size_t>(n - i, 10);
        uint32_t* p = array_.Mutable(i, len);
        for (size_t k = 0; k < len; ++k) p[k] = values_[i + k] = static_cast<uint32_t>(step + k);
        break;
      }
      default: {
        const size_t i = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
        const size_t len = std::min<size_t>(n - i, std::uniform_int_distribution<size_t>(1, 300)(rng));
        std::vector<uint32_t> scratch(len);
        const uint32_t* p = std::as_const(array_).Read(i, len, scratch.data(), true);
        from_file += p == scratch.data();
        for (size_t k = 0; k < len; ++k) ASSERT_EQ(p[k], values_[i + k]) << "step " << step << " at " << i + k;
      }
    }
  }
  EXPECT_GT(from_file, 100u);  // the file was still read after all those changes
}

// The resident set of the mapping that starts at `addr` (its "Rss:" line in
// /proc/self/smaps), in kB; -1 when there is no such mapping.
long RssOfMappingAt(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const auto want = reinterpret_cast<uintptr_t>(addr);
  bool in = false;
  for (std::string line; std::getline(smaps, line);) {
    const size_t dash = line.find('-');
    if (dash != std::string::npos && dash > 0 && line.find(' ') > dash &&
        std::isxdigit(static_cast<unsigned char>(line[0]))) {
      in = std::stoull(line.substr(0, dash), nullptr, 16) == want;
      continue;
    }
    if (in && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

TEST_F(MappedArrayFileTest, PrefaultMapsThePagesAndChangesNothing) {
  const size_t per_page = PageSize() / sizeof(uint32_t);
  Map(256 * per_page);
  const long page_kb = static_cast<long>(PageSize() / 1024);
  ASSERT_EQ(RssOfMappingAt(std::as_const(array_).data()), 0);  // nothing touched yet
  array_.Prefault(3 * per_page + 1, 10 * per_page);  // 11 pages: 3 .. 13
  // Those, and no more than the kernel's fault-around brings along (it
  // maps the cached pages of an aligned 64 KB window at a time).
  const long some = RssOfMappingAt(std::as_const(array_).data());
  EXPECT_GE(some, 11 * page_kb);
  EXPECT_LE(some, 64 * page_kb);
  array_.Prefault(0, array_.size());
  EXPECT_EQ(RssOfMappingAt(std::as_const(array_).data()), 256 * page_kb);
  // Still the file's view, read from it, and equal to it.
  EXPECT_TRUE(array_.file_view());
  for (size_t i = 0; i < array_.size(); i += 97) EXPECT_TRUE(FromFile(i));
  for (size_t i = 0; i < array_.size(); ++i) ASSERT_EQ(std::as_const(array_)[i], values_[i]) << i;
}

}  // namespace
}  // namespace msp
