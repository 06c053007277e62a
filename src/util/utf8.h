// UTF-8 validation for every text that enters msp.
#ifndef MSP_UTIL_UTF8_H_
#define MSP_UTIL_UTF8_H_

#include <cstddef>
#include <string_view>

namespace msp {

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF).
// On false, *bad_offset (if given) is the byte offset of the first bad byte.
bool IsValidUtf8(std::string_view s, size_t* bad_offset = nullptr);

}  // namespace msp

#endif  // MSP_UTIL_UTF8_H_
