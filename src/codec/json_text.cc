// JSON text written directly (see json_text.h).
#include "codec/json_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

// The position of the first byte at or after `i` that needs a look (as
// above), or s.size(). JSON text inside a string has a quote every few
// bytes: sixteen bytes are tested at once where SSE2 is (every x86-64).
size_t NextLook(std::string_view s, size_t i) {
#ifdef __SSE2__
  const __m128i below_space = _mm_set1_epi8(0x1F);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (i + 16 <= s.size()) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    // max(v, 0x1F) == 0x1F exactly for bytes up to 0x1F; the sign bit
    // marks the bytes from 0x80.
    const __m128i look = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(v, below_space), below_space), _mm_cmpeq_epi8(v, quote)),
        _mm_or_si128(_mm_cmpeq_epi8(v, backslash), v));
    const int mask = _mm_movemask_epi8(look);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    i += 16;
  }
#endif
  while (i + 8 <= s.size()) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (WordNeedsLook(w)) break;
    i += 8;
  }
  return i;
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
    i = NextLook(s, i);  // plain ASCII skipped many bytes at a time
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = CharacterBytes(s, i);
      if (len == 0) {  // not UTF-8: nlohmann writes it (U+FFFD for each bad sequence)
        out.resize(start);
        const std::string dumped =
            nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

void AppendJson(std::string& out, const nlohmann::json& j) {
  using value_t = nlohmann::json::value_t;
  switch (j.type()) {
    case value_t::object: {
      const auto& members = j.get_ref<const nlohmann::json::object_t&>();
      if (members.empty()) {
        out += "{}";
        return;
      }
      char separator = '{';
      for (const auto& [key, value] : members) {
        out += separator;
        separator = ',';
        AppendJsonString(out, key);
        out += ':';
        AppendJson(out, value);
      }
      out += '}';
      return;
    }
    case value_t::array: {
      const auto& elements = j.get_ref<const nlohmann::json::array_t&>();
      if (elements.empty()) {
        out += "[]";
        return;
      }
      char separator = '[';
      for (const nlohmann::json& e : elements) {
        out += separator;
        separator = ',';
        AppendJson(out, e);
      }
      out += ']';
      return;
    }
    case value_t::string:
      AppendJsonString(out, j.get_ref<const std::string&>());
      return;
    case value_t::boolean:
      out += j.get<bool>() ? "true" : "false";
      return;
    case value_t::null:
      out += "null";
      return;
    case value_t::number_integer:
      AppendJsonNumber(out, j.get<int64_t>());
      return;
    case value_t::number_unsigned: {
      char digits[24];
      out.append(digits, std::to_chars(digits, digits + sizeof digits, j.get<uint64_t>()).ptr);
      return;
    }
    case value_t::number_float:
      AppendJsonNumber(out, j.get<double>());
      return;
    default:  // binary, discarded: as nlohmann writes them
      out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
  }
}

void AppendJsonNumber(std::string& out, int64_t n) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
}

void AppendJsonNumber(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  // nlohmann's own conversion (Grisu2, "1.0" for whole numbers, "1e+20"
  // past 15 digits), as its serializer calls it for a double.
  char digits[64];
  out.append(digits, nlohmann::detail::to_chars(digits, digits + sizeof digits, x));
}

}  // namespace msp
