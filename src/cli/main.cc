// The `msp` program: hands argv to the command line (cli.cc).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/resident_start.h"
#include "util/huge_heap.h"
#include "util/text.h"

int main(int argc, char** argv) {
  // Before anything else allocates: the heap's first 16 MB on huge pages
  // (util/huge_heap.h) unless MSP_HUGE_PAGES, a boolean spelled as the
  // settings' are, says false.
  const char* huge = std::getenv("MSP_HUGE_PAGES");
  const std::optional<bool> on = huge == nullptr ? std::optional<bool>(true) : msp::BooleanWord(huge);
  if (!on) {
    std::fprintf(stderr, "msp: environment variable MSP_HUGE_PAGES must be a boolean (true or false), got '%s'\n",
                 huge);
    return 2;
  }
  if (*on) msp::BackHeapWithHugePages(size_t{16} << 20);
  // The program a command starts as a resident server (resident_start.h):
  // this one.
  msp::SetResidentProgram("/proc/self/exe");
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return msp::RunCli(args, std::cin, std::cout, std::cerr);
}
