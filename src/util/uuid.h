// Record ids: UUID version 7 (time-ordered, random tail).
#ifndef MSP_UTIL_UUID_H_
#define MSP_UTIL_UUID_H_

#include <string>
#include <string_view>

#include "msp/types.h"

namespace msp {

// A new UUIDv7 for time `now`, lowercase canonical form. Thread-safe.
std::string NewUuid(TimeMs now);
// True for a canonical lowercase or uppercase 8-4-4-4-12 hex UUID.
bool IsUuid(std::string_view s);

}  // namespace msp

#endif  // MSP_UTIL_UUID_H_
