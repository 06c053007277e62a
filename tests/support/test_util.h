// Test support shared by every test program: scratch directories, a
// substring check and assertions on Status / Result.
#ifndef MSP_TESTS_SUPPORT_TEST_UTIL_H_
#define MSP_TESTS_SUPPORT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "msp/status.h"

namespace msp::testing {

// A new empty directory under $MSP_TEST_TMP (or /tmp) named <prefix>-XXXXXX;
// empty on failure.
std::string MakeTestDir(std::string_view prefix);

// Removes `dir` and everything below it; errors are ignored.
void RemoveTestDir(const std::string& dir);

// The bytes of the file at `path` ("" when it cannot be read).
std::string ReadWholeFile(const std::string& path);

// Overwrites `bytes` bytes of the file at `path` from `offset` with a fixed
// pattern (a garbled file for tests of damage); false when it cannot.
bool GarbleFile(const std::string& path, size_t offset, size_t bytes);

// True when `part` occurs in `s` (for assertions on messages and output).
inline bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A scratch directory removed when the object goes away.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix) : path_(MakeTestDir(prefix)) {}
  ~TempDir() { RemoveTestDir(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  bool ok() const { return !path_.empty(); }

 private:
  std::string path_;
};

}  // namespace msp::testing

#define ASSERT_OK(expr)                                                  \
  do {                                                                   \
    const ::msp::Status assert_ok_status_ = (expr);                      \
    ASSERT_TRUE(assert_ok_status_.ok()) << assert_ok_status_.ToString(); \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(MSP_CONCAT_(assert_result_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)  \
  auto tmp = (expr);                                \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString(); \
  lhs = std::move(tmp).value()

#endif  // MSP_TESTS_SUPPORT_TEST_UTIL_H_
