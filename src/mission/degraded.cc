// Degraded-mode scoring and the event rate (see msp/digest.h, degraded.h).
#include "mission/degraded.h"

#include <algorithm>

namespace msp {

namespace {
constexpr double kForcedAlpha = 0.5;
}  // namespace

double CriticalityWeight(Criticality c) {
  switch (c) {
    case Criticality::kLow: return 0.25;
    case Criticality::kNormal: return 0.5;
    case Criticality::kHigh: return 0.75;
    case Criticality::kCritical: return 1.0;
  }
  return 0.5;
}

double DegradedAlpha(double rate_per_min, double capacity_per_min) {
  if (!(capacity_per_min > 0.0)) return 0.0;
  return std::min(1.0, std::max(0.0, (rate_per_min - capacity_per_min) / capacity_per_min));
}

double DegradedScore(double alpha, Criticality c, double similarity) {
  return alpha * CriticalityWeight(c) + (1.0 - alpha) * similarity;
}

namespace {

int64_t CountInWindow(const std::vector<TimeMs>& times, TimeMs now, int window_min) {
  if (window_min <= 0) return 0;
  const TimeMs start = now - static_cast<TimeMs>(window_min) * 60000;
  return std::count_if(times.begin(), times.end(), [&](TimeMs t) { return t > start && t <= now; });
}

}  // namespace

double EventRatePerMin(const std::vector<TimeMs>& times, TimeMs now, int window_min) {
  if (window_min <= 0) return 0.0;
  return static_cast<double>(CountInWindow(times, now, window_min)) / window_min;
}

LoadState LoadFrom(const std::vector<TimeMs>& times, TimeMs now, const MissionOptions& options) {
  LoadState s;
  s.window_min = options.rate_window_min;
  s.capacity_per_min = options.capacity_events_per_min;
  s.rate_per_min = EventRatePerMin(times, now, options.rate_window_min);
  s.events_in_window = CountInWindow(times, now, options.rate_window_min);
  s.alpha = DegradedAlpha(s.rate_per_min, s.capacity_per_min);
  // Set by hand: "normal" never ranks by criticality, "degraded" always
  // does, with at least half the weight.
  s.mode = options.degraded_mode;
  if (s.mode == "normal") s.alpha = 0.0;
  if (s.mode == "degraded") s.alpha = std::max(s.alpha, kForcedAlpha);
  s.degraded = s.alpha > 0.0;
  return s;
}

}  // namespace msp
