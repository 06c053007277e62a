// `msp demo`: replays seed 000's end-to-end example (day 1: a Python package
// will not install on Windows 11; day 14: "the same script fails again") on
// the embedded default, printing each phase of the cycle.
#ifndef MSP_CLI_DEMO_H_
#define MSP_CLI_DEMO_H_

#include <iosfwd>

#include "msp/options.h"

namespace msp {

// Runs the demo against a fresh data directory options.store.data_dir (it
// must not hold an msp store yet, or it is emptied first when it is a demo
// directory made by an earlier run). Returns a process exit code.
int RunDemo(const Options& options, std::ostream& out, std::ostream& err);

}  // namespace msp

#endif  // MSP_CLI_DEMO_H_
