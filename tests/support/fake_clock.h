// FakeClock: the Clock (msp/memory.h) tests hand to an engine instead of the
// system clock, so that time moves only when a test moves it.
//
// Thread-safe: NowMs, Advance and Set may be called from any thread.
#ifndef MSP_TESTS_SUPPORT_FAKE_CLOCK_H_
#define MSP_TESTS_SUPPORT_FAKE_CLOCK_H_

#include <atomic>

#include "msp/memory.h"
#include "msp/types.h"

namespace msp::testing {

class FakeClock final : public Clock {
 public:
  // Starts at `start`. With `tick` > 0 every NowMs() moves the clock on by
  // `tick` after reading it (so two reads never return the same time);
  // with 0 it stands still between Advance and Set calls.
  explicit FakeClock(TimeMs start, TimeMs tick = 0) : now_(start), tick_(tick) {}

  TimeMs NowMs() const override { return tick_ == 0 ? now_.load() : now_.fetch_add(tick_); }
  void Advance(TimeMs by) { now_ += by; }
  void Set(TimeMs to) { now_ = to; }

 private:
  mutable std::atomic<TimeMs> now_;
  const TimeMs tick_;
};

}  // namespace msp::testing

#endif  // MSP_TESTS_SUPPORT_FAKE_CLOCK_H_
