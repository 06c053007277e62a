// Degraded mode (seed 003): the event rate over a sliding window, and the
// load state that decides how a query ranks. The scoring functions
// themselves are public (msp/digest.h).
#ifndef MSP_MISSION_DEGRADED_H_
#define MSP_MISSION_DEGRADED_H_

#include <vector>

#include "msp/digest.h"
#include "msp/types.h"

namespace msp {

// Events per minute: the number of `times` in (now - window, now], divided
// by the window in minutes. window_min <= 0 gives 0.
double EventRatePerMin(const std::vector<TimeMs>& times, TimeMs now, int window_min);

// The load state for events at `times` under `options`: alpha from the
// rate, unless options.degraded_mode sets it by hand ("normal": 0,
// "degraded": at least 0.5).
LoadState LoadFrom(const std::vector<TimeMs>& times, TimeMs now, const MissionOptions& options);

}  // namespace msp

#endif  // MSP_MISSION_DEGRADED_H_
