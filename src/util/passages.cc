// Passages of a long text (util/passages.h).
#include "util/passages.h"

#include "util/text.h"

namespace msp {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Where the piece [begin, begin + max_bytes) ends: see SplitPassages.
size_t CutPoint(std::string_view text, size_t begin, size_t max_bytes) {
  const size_t limit = begin + max_bytes;  // < text.size()
  const size_t half = begin + max_bytes / 2;
  // A sentence end: ".", "!" or "?" followed by white space, or a line break.
  for (size_t i = limit; i > half; --i) {
    const char c = text[i - 1];
    if (c == '\n') return i;
    if ((c == '.' || c == '!' || c == '?') && IsAsciiSpace(text[i])) return i;
  }
  for (size_t i = limit; i > begin; --i) {
    if (IsAsciiSpace(text[i - 1])) return i;
  }
  size_t i = limit;
  while (i > begin && IsContinuation(text[i])) --i;
  return i > begin ? i : limit;  // a piece of continuation bytes only: cut anyway
}

}  // namespace

size_t Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  size_t i = max_bytes;
  while (i > 0 && IsContinuation(text[i])) --i;
  return i;
}

std::vector<TextSpan> SplitPassages(std::string_view text, size_t max_bytes) {
  std::vector<TextSpan> out;
  if (max_bytes == 0 || text.size() <= max_bytes) return out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.size() - begin <= max_bytes ? text.size() : CutPoint(text, begin, max_bytes);
    // White space after the cut goes with this piece, as far as it fits.
    while (end < text.size() && end - begin < max_bytes && IsAsciiSpace(text[end])) ++end;
    out.push_back(TextSpan{begin, end});
    begin = end;
  }
  return out;
}

}  // namespace msp
