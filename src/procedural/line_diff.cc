// Line diff by the classic dynamic-programming LCS over lines.
#include "procedural/line_diff.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace msp {
namespace {

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) nl = s.size();
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

constexpr size_t kMaxLines = 4000;

}  // namespace

std::string LineDiff(std::string_view a, std::string_view b) {
  const std::vector<std::string_view> x = SplitLines(a);
  const std::vector<std::string_view> y = SplitLines(b);
  std::string out;
  auto emit = [&](const char* prefix, std::string_view line) {
    out += prefix;
    out += line;
    out += '\n';
  };
  if (x.size() > kMaxLines || y.size() > kMaxLines) {
    for (auto l : x) emit("- ", l);
    for (auto l : y) emit("+ ", l);
    return out;
  }
  const size_t n = x.size();
  const size_t m = y.size();
  // lcs[i][j]: LCS length of x[i..] and y[j..].
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      at(i, j) = x[i] == y[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  size_t i = 0;
  size_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] == y[j]) {
      emit("  ", x[i]);
      ++i;
      ++j;
    } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
      emit("- ", x[i++]);
    } else {
      emit("+ ", y[j++]);
    }
  }
  return out;
}

}  // namespace msp
