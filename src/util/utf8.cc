// UTF-8 validation (RFC 3629), counting and decoding.
#include "util/utf8.h"

namespace msp {

bool IsValidUtf8(std::string_view s, size_t* bad_offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  auto fail = [&](size_t at) {
    if (bad_offset) *bad_offset = at;
    return false;
  };
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return fail(i);
    }
    if (i + len > n) return fail(i);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return fail(i);
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return fail(i);
    }
    i += len;
  }
  return true;
}

std::string EscapeInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    size_t bad = 0;
    if (IsValidUtf8(s, &bad)) {
      out.append(s);
      break;
    }
    out.append(s.substr(0, bad));
    static constexpr char kHex[] = "0123456789ABCDEF";
    const auto byte = static_cast<unsigned char>(s[bad]);
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xF];
    s.remove_prefix(bad + 1);
  }
  return out;
}

size_t Utf8Chars(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string_view Utf8PrefixChars(std::string_view s, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars) return s.substr(0, i);
    ++chars;
  }
  return s;
}

std::string_view Utf8PrefixBytes(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

std::string CapUtf8Chars(std::string_view text, size_t max_chars) {
  const size_t total = Utf8Chars(text);
  if (total <= max_chars) return std::string(text);
  return std::string(Utf8PrefixChars(text, max_chars)) + "… [" + std::to_string(total - max_chars) +
         " more characters]";
}

uint32_t NextCodePoint(std::string_view s, size_t* i) {
  const unsigned char c = static_cast<unsigned char>(s[*i]);
  int extra = 0;
  uint32_t cp = c;
  if (c >= 0xF0) {
    cp = c & 0x07;
    extra = 3;
  } else if (c >= 0xE0) {
    cp = c & 0x0F;
    extra = 2;
  } else if (c >= 0xC0) {
    cp = c & 0x1F;
    extra = 1;
  }
  ++*i;
  for (int k = 0; k < extra && *i < s.size(); ++k, ++*i) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[*i]) & 0x3F);
  }
  return cp;
}

}  // namespace msp
