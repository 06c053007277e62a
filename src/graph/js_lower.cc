// JsLower (see js_lower.h): a decode, map and encode over generated tables.
#include "graph/js_lower.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace msp::graph {
namespace {

struct CodePointPair {
  char32_t first;
  char32_t second;
};

#include "graph/js_lower_table.inc"

constexpr char32_t kCapitalSigma = 0x3A3;
constexpr char32_t kInvalid = 0xFFFFFFFF;  // a byte that does not start valid UTF-8

bool InRanges(std::span<const CodePointPair> ranges, char32_t c) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                             [](char32_t v, const CodePointPair& r) { return v < r.first; });
  return it != ranges.begin() && c <= std::prev(it)->second;
}

bool IsCased(char32_t c) { return InRanges(kCasedRanges, c); }
bool IsCaseIgnorable(char32_t c) { return InRanges(kCaseIgnorableRanges, c); }

char32_t SimpleLower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  const std::span<const CodePointPair> map(kLowerMap);
  auto it = std::lower_bound(map.begin(), map.end(), c,
                             [](const CodePointPair& p, char32_t v) { return p.first < v; });
  return it != map.end() && it->first == c ? it->second : c;
}

// The code point at s[*i] (advancing *i), or kInvalid for one bad byte.
char32_t Decode(std::string_view s, size_t* i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c0 = b(*i);
  if (c0 < 0x80) {
    ++*i;
    return c0;
  }
  int n = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((c0 & 0xE0) == 0xC0) {
    n = 1, cp = c0 & 0x1F, min = 0x80;
  } else if ((c0 & 0xF0) == 0xE0) {
    n = 2, cp = c0 & 0x0F, min = 0x800;
  } else if ((c0 & 0xF8) == 0xF0) {
    n = 3, cp = c0 & 0x07, min = 0x10000;
  } else {
    ++*i;
    return kInvalid;
  }
  if (*i + static_cast<size_t>(n) >= s.size()) {
    ++*i;
    return kInvalid;
  }
  for (int k = 1; k <= n; ++k) {
    const unsigned char ck = b(*i + k);
    if ((ck & 0xC0) != 0x80) {
      ++*i;
      return kInvalid;
    }
    cp = (cp << 6) | (ck & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++*i;
    return kInvalid;
  }
  *i += n + 1;
  return cp;
}

void Encode(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Whether, looking from `at` in direction `step` (-1 or +1), the first code
// point that is not case-ignorable is cased (ICU's isFollowedByCasedLetter:
// a code point both cased and case-ignorable counts as ignorable).
bool CasedLetterBeside(const std::vector<char32_t>& cps, size_t at, int step) {
  for (ptrdiff_t k = static_cast<ptrdiff_t>(at) + step; k >= 0 && k < static_cast<ptrdiff_t>(cps.size()); k += step) {
    const char32_t c = cps[static_cast<size_t>(k)];
    if (c == kInvalid) return false;
    if (IsCaseIgnorable(c)) continue;
    return IsCased(c);
  }
  return false;
}

}  // namespace

std::string JsLower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    for (char c : s) out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
    return out;
  }
  std::vector<char32_t> cps;
  std::vector<unsigned char> bad;  // the byte of each kInvalid, in order
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    const char32_t c = Decode(s, &i);
    if (c == kInvalid) bad.push_back(static_cast<unsigned char>(s[at]));
    cps.push_back(c);
  }
  size_t next_bad = 0;
  for (size_t k = 0; k < cps.size(); ++k) {
    const char32_t c = cps[k];
    if (c == kInvalid) {
      out.push_back(static_cast<char>(bad[next_bad++]));
    } else if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE: i + COMBINING DOT ABOVE
      Encode(0x69, &out);
      Encode(0x307, &out);
    } else if (c == kCapitalSigma) {
      const bool final = CasedLetterBeside(cps, k, -1) && !CasedLetterBeside(cps, k, +1);
      Encode(final ? 0x3C2 : 0x3C3, &out);
    } else {
      Encode(SimpleLower(c), &out);
    }
  }
  return out;
}

}  // namespace msp::graph
