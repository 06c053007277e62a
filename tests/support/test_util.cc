// Scratch directories and file helpers for tests.
#include "tests/support/test_util.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

bool GarbleFile(const std::string& path, size_t offset, size_t bytes) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  if (!f) return false;
  f.seekp(static_cast<std::streamoff>(offset));
  for (size_t i = 0; i < bytes; ++i) f.put(static_cast<char>((i * 131 + 7) & 0xff));
  return static_cast<bool>(f);
}

}  // namespace msp::testing
