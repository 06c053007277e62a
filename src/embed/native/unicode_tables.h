// The Unicode data of the WordPiece tokenizer (wordpiece.h), generated from
// Python's unicodedata by make_unicode_tables.py into unicode_tables.cc.
#ifndef MSP_EMBED_NATIVE_UNICODE_TABLES_H_
#define MSP_EMBED_NATIVE_UNICODE_TABLES_H_

#include <cstddef>
#include <cstdint>

namespace msp::native {

// What the tokenizer needs to know of a code point; kOther when no range
// holds it.
enum class CharClass : uint8_t {
  kOther = 0,
  kControl = 1,     // category C* except tab, newline, return: removed
  kSpace = 2,       // space, tab, newline, return, Zs: a separator
  kPunct = 3,       // P* and every ASCII symbol: a token of its own
  kMark = 4,        // Mn: removed when accents are stripped
  kSeparator = 5,   // Zl, Zp: kept by the cleaning, split at like a space
};

struct CharRange {
  uint32_t first;
  uint32_t last;
  uint8_t klass;  // a CharClass
};

// A code point and what it maps to: pool[offset, offset + length).
struct CharMapping {
  uint32_t code_point;
  uint32_t offset;
  uint32_t length;
};

// Sorted, disjoint.
extern const CharRange kCharRanges[];
extern const size_t kCharRangeCount;
// str.lower()'s final sigma rule: klass 1 = cased, 2 = case-ignorable
// (skipped when looking for a cased neighbour). Sorted, disjoint.
extern const CharRange kSigmaRanges[];
extern const size_t kSigmaRangeCount;
// str.lower() where it differs from the code point itself, sorted.
extern const CharMapping kLower[];
extern const size_t kLowerCount;
extern const uint32_t kLowerPool[];
// The full canonical decomposition where it differs (Hangul syllables
// excluded), sorted.
extern const CharMapping kNfd[];
extern const size_t kNfdCount;
extern const uint32_t kNfdPool[];

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_UNICODE_TABLES_H_
