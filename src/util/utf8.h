// UTF-8 for every text that enters msp: validation, counting and decoding.
#ifndef MSP_UTIL_UTF8_H_
#define MSP_UTIL_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace msp {

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF).
// On false, *bad_offset (if given) is the byte offset of the first bad byte.
bool IsValidUtf8(std::string_view s, size_t* bad_offset = nullptr);

// `s` with each byte that is not part of well-formed UTF-8 written as \xNN,
// so a message quoting untrusted bytes (a parser's "last read") stays valid
// UTF-8 and can be sent as JSON.
std::string EscapeInvalidUtf8(std::string_view s);

// Characters (code points) in valid UTF-8 `s`.
size_t Utf8Chars(std::string_view s);

// The longest prefix of `s` with at most `max_chars` characters (code
// points), never ending inside one.
std::string_view Utf8PrefixChars(std::string_view s, size_t max_chars);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end
// inside a character.
std::string_view Utf8PrefixBytes(std::string_view s, size_t max_bytes);

// `text` cut to at most `max_chars` characters (code points, never inside
// one) with "… [N more characters]" appended when cut.
std::string CapUtf8Chars(std::string_view text, size_t max_chars);

// Decodes the code point at s[*i] and advances *i past it.
// REQUIRES: `s` is valid UTF-8 and *i < s.size() is the start of a character.
uint32_t NextCodePoint(std::string_view s, size_t* i);

}  // namespace msp

#endif  // MSP_UTIL_UTF8_H_
