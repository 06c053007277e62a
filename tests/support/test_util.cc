// Scratch directories for tests.
#include "tests/support/test_util.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace msp::testing {

std::string MakeTestDir(std::string_view prefix) {
  const char* root = std::getenv("MSP_TEST_TMP");
  const std::filesystem::path base = root != nullptr && *root != '\0' ? root : "/tmp";
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  std::string pattern = (base / (std::string(prefix) + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) return std::string();
  return pattern;
}

void RemoveTestDir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace msp::testing
