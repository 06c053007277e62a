// Fencing stored text for a model's context (see fence.h).
#include "util/fence.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace msp {
namespace {

enum class CharClass { kOrdinary, kLineBreak, kInvisible, kControl, kSpace };

// The code point at s[i] and its length in bytes; an invalid byte is
// returned as itself (length 1), so nothing is lost.
uint32_t Decode(std::string_view s, size_t i, size_t* len) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) {
    *len = 1;
    return b;
  }
  uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) {
      *len = 1;
      return b;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  *len = n;
  return cp;
}

CharClass Classify(uint32_t cp) {
  if (cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
    return CharClass::kLineBreak;
  }
  if (cp == '\t' || cp == ' ') return CharClass::kSpace;
  if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) return CharClass::kControl;
  if (cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
      (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF || cp == 0x180E) {
    return CharClass::kInvisible;
  }
  return CharClass::kOrdinary;
}

void TrimTrailingSpace(std::string* s) {
  while (!s->empty() && (s->back() == ' ' || s->back() == '\t')) s->pop_back();
}

}  // namespace

bool IsTrustedSource(std::string_view source, const std::vector<std::string>& trusted_sources) {
  return std::find(trusted_sources.begin(), trusted_sources.end(), source) != trusted_sources.end();
}

std::string_view ShortId(std::string_view id) { return id.size() <= 8 ? id : id.substr(id.size() - 8); }

std::string FenceLabelText(const FenceLabel& label) {
  std::string out = "[" + FenceLine(label.kind);
  if (!label.source.empty()) out += " · from " + FenceLine(label.source);
  out += label.trusted ? " · trusted" : " · untrusted";
  if (!label.id.empty()) out += " · id " + FenceLine(label.id);
  out += "]";
  return out;
}

std::string FenceBody(std::string_view text, std::string_view gutter) {
  std::string out;
  out.reserve(text.size() + 8);
  size_t pending_breaks = 0;  // line breaks not yet written (trailing ones are dropped)
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    const uint32_t cp = Decode(text, i, &len);
    const CharClass c = Classify(cp);
    if (c == CharClass::kLineBreak) {
      if (cp == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++len;  // CRLF: one break
      ++pending_breaks;
      i += len;
      continue;
    }
    if (c == CharClass::kInvisible) {
      i += len;
      continue;
    }
    for (; pending_breaks > 0; --pending_breaks) {
      TrimTrailingSpace(&out);
      out += '\n';
      out += gutter;
    }
    if (c == CharClass::kControl) {
      out += ' ';
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  TrimTrailingSpace(&out);
  return out;
}

std::string FenceLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    const uint32_t cp = Decode(text, i, &len);
    const CharClass c = Classify(cp);
    if (c == CharClass::kInvisible) {
      i += len;
      continue;
    }
    if (c == CharClass::kLineBreak || c == CharClass::kSpace || c == CharClass::kControl) {
      space = !out.empty();
      i += len;
      continue;
    }
    if (space) out += ' ';
    space = false;
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string EscapeJsonLineSeparators(std::string json_text) {
  // The three characters start with 0xE2 or 0xC2: memchr finds the next of
  // each (a search answer is ~10 KB of text with none of them).
  const char* p = json_text.data();
  const size_t n = json_text.size();
  auto next = [p, n](size_t from, char c) {
    const void* at = from < n ? std::memchr(p + from, c, n - from) : nullptr;
    return at ? static_cast<size_t>(static_cast<const char*>(at) - p) : n;
  };
  size_t e2 = next(0, '\xE2');
  size_t c2 = next(0, '\xC2');
  if (e2 == n && c2 == n) return json_text;
  std::string out;
  out.reserve(n + 32);
  size_t run = 0;  // start of the bytes not yet copied
  while (e2 < n || c2 < n) {
    const size_t i = std::min(e2, c2);
    const std::string_view rest(p + i, n - i);
    std::string_view escape;
    size_t bytes = 0;
    if (rest.starts_with("\xE2\x80\xA8")) {  // U+2028
      escape = "\\u2028";
      bytes = 3;
    } else if (rest.starts_with("\xE2\x80\xA9")) {  // U+2029
      escape = "\\u2029";
      bytes = 3;
    } else if (rest.starts_with("\xC2\x85")) {  // U+0085 (NEL)
      escape = "\\u0085";
      bytes = 2;
    }
    if (bytes > 0) {
      out.append(p + run, i - run);
      out += escape;
      run = i + bytes;
    }
    if (i == e2) {
      e2 = next(i + 1, '\xE2');
    } else {
      c2 = next(i + 1, '\xC2');
    }
  }
  out.append(p + run, n - run);
  return out;
}

}  // namespace msp
