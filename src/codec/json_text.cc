// JSON text written directly (see json_text.h).
#include "codec/json_text.h"

#include <array>
#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "util/utf8.h"

namespace msp {
namespace {

// For each byte: 0 when it stands for itself in a JSON string, else the
// letter of its short escape (\b \t \n \f \r \" \\), or 'u' for \u00xx.
constexpr std::array<char, 256> MakeJsonEscapes() {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<size_t>(c)] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}
constexpr std::array<char, 256> kJsonEscapes = MakeJsonEscapes();

// Whether any of the 8 bytes of `w` needs a look: a control character, '"',
// '\\' or a byte of a multi-byte character (the classic word-at-a-time
// tests, exact for "any byte").
bool WordNeedsLook(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t x) { return ((x - kOnes) & ~x & kHigh) != 0; };
  const bool below_space = ((w - kOnes * 0x20) & ~w & kHigh) != 0;
  return (w & kHigh) != 0 || below_space || has_zero(w ^ (kOnes * '"')) || has_zero(w ^ (kOnes * '\\'));
}

// The length of the well-formed character (IsValidUtf8's rules) that starts
// with byte s[i] >= 0x80, or 0 when none does.
size_t CharacterBytes(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const size_t len = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || i + len > s.size() || !IsValidUtf8(s.substr(i, len))) return 0;
  return len;
}

}  // namespace

void AppendJsonStringContent(std::string& out, std::string_view s) {
  const size_t start = out.size();
  size_t run = 0;  // start of the bytes not yet appended
  size_t i = 0;
  while (i < s.size()) {
    // Skip 8 plain ASCII bytes at a time.
    while (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (WordNeedsLook(w)) break;
      i += 8;
    }
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = CharacterBytes(s, i);
      if (len == 0) {  // not UTF-8: nlohmann writes it (U+FFFD for each bad sequence)
        out.resize(start);
        const std::string dumped = DumpJson(nlohmann::json(std::string(s)));
        out.append(dumped, 1, dumped.size() - 2);  // without the quotes
        return;
      }
      i += len;
      continue;
    }
    const char e = kJsonEscapes[c];
    ++i;
    if (e == 0) continue;
    out.append(s.data() + run, i - 1 - run);
    run = i;
    if (e != 'u') {
      const char escape[2] = {'\\', e};
      out.append(escape, 2);
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    const char escape[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0x0F]};
    out.append(escape, 6);
  }
  out.append(s.data() + run, s.size() - run);
}

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  AppendJsonStringContent(out, s);
  out += '"';
}

}  // namespace msp
