// The fitted calibration curve (core/calibration.h).
#include "core/calibration.h"

#include <algorithm>
#include <cmath>

namespace msp {
namespace {

// logit = kBias + kRelative x relative + kMatch x match + kRank x ln(1 +
// rank), fitted by bench/calibrate.py on `locomo_eval --features-out`
// (conversations 0-4; bench/README.md, "Calibrated scores").
constexpr double kBias = -4.4974;
constexpr double kRelative = 1.8606;
constexpr double kMatch = 4.8165;
constexpr double kRank = -0.3930;

}  // namespace

double CalibratedScore(double relative, double match, size_t rank) {
  const double r = std::clamp(relative, 0.0, 1.0);
  const double m = std::clamp(match, 0.0, 1.0);
  return 1.0 / (1.0 + std::exp(-(kBias + kRelative * r + kMatch * m + kRank * std::log1p(static_cast<double>(rank)))));
}

}  // namespace msp
