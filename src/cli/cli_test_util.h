// Test helper for the command-line tests: runs `msp ARGS` in-process and
// captures its exit code and output.
#ifndef MSP_CLI_CLI_TEST_UTIL_H_
#define MSP_CLI_CLI_TEST_UTIL_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace msp {

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs the command line `args` (without the program name) with `input` on
// standard input.
inline CliRun RunCliCapture(const std::vector<std::string>& args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out, err;
  CliRun r;
  r.code = RunCli(args, in, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace msp

#endif  // MSP_CLI_CLI_TEST_UTIL_H_
