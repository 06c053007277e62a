// Passages: a long text cut into consecutive pieces of about a given size,
// at sentence or word ends, never inside a UTF-8 character. The lexical index
// holds a long record as its passages (one document each, with the byte
// offsets), a hit shows the passage that matched, and an import may split an
// oversized record at the same cuts.
#ifndef MSP_UTIL_PASSAGES_H_
#define MSP_UTIL_PASSAGES_H_

#include <cstddef>
#include <string_view>
#include <vector>

namespace msp {

// The passage size when retrieval.passage_bytes is 0, measured on LoCoMo's
// tuning half with its long-record variant (bench/README.md, "Long records
// as passages").
inline constexpr size_t kDefaultPassageBytes = 256;

// [begin, end): byte offsets into the text.
struct TextSpan {
  size_t begin = 0;
  size_t end = 0;
  bool operator==(const TextSpan&) const = default;
};

// The passages of `text` for pieces of at most `max_bytes` (> 0): empty when
// the whole text fits (text.size() <= max_bytes). Otherwise spans that
// cover the text in order without gaps or overlap, each 1..max_bytes bytes.
// A cut is made at the last sentence end (". ", "! ", "? ", a line break)
// in the second half of the piece, else at its last white space, else at
// the last character boundary; white space after a cut goes with the piece
// before it.
std::vector<TextSpan> SplitPassages(std::string_view text, size_t max_bytes);

// The longest prefix of `text` of at most `max_bytes` bytes that ends at a
// character boundary (a cut never splits a UTF-8 sequence).
size_t Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace msp

#endif  // MSP_UTIL_PASSAGES_H_
