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

// Whether any of the 8 bytes of `w` needs an escape (a control character,
// '"' or '\\'): the classic word-at-a-time tests, exact for "any byte".
bool WordNeedsEscape(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t x) { return ((x - kOnes) & ~x & kHigh) != 0; };
  const bool below_space = ((w - kOnes * 0x20) & ~w & kHigh) != 0;
  return below_space || has_zero(w ^ (kOnes * '"')) || has_zero(w ^ (kOnes * '\\'));
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  if (!IsValidUtf8(s)) {
    out += DumpJson(nlohmann::json(std::string(s)));
    return;
  }
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    // Skip 8 plain bytes at a time.
    while (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (WordNeedsEscape(w)) break;
      i += 8;
    }
    if (i == s.size()) break;
    const char e = kJsonEscapes[static_cast<unsigned char>(s[i])];
    if (e == 0) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    out += '\\';
    if (e != 'u') {
      out += e;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    const auto c = static_cast<unsigned char>(s[i]);
    out += "u00";
    out += kHex[c >> 4];
    out += kHex[c & 0x0F];
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

}  // namespace msp
