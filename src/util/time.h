// ISO 8601 time for JSON and the command line; all times are UTC ms.
#ifndef MSP_UTIL_TIME_H_
#define MSP_UTIL_TIME_H_

#include <string>
#include <string_view>

#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// "2026-11-30T10:00:00.123Z" (milliseconds always shown).
std::string FormatIso8601(TimeMs t);
// Accepts "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS[.fff]]" with "Z" or "+HH:MM"
// (or no zone: UTC). Rejects anything else with a message naming the input.
Result<TimeMs> ParseIso8601(std::string_view s);

constexpr TimeMs kMsPerDay = 86400LL * 1000;

// Now, in UTC ms (the system clock). Code whose tests must control time takes
// a Clock (msp/memory.h) instead.
TimeMs WallClockMs();

}  // namespace msp

#endif  // MSP_UTIL_TIME_H_
