// The `msp` program: hands argv to the command line (cli.cc).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "util/huge_heap.h"

int main(int argc, char** argv) {
  // Before anything else allocates: the heap's first 16 MB on huge pages
  // (util/huge_heap.h) unless MSP_HUGE_PAGES, a boolean spelled as the
  // settings' are, says false.
  if (const char* huge = std::getenv("MSP_HUGE_PAGES"); huge == nullptr) {
    msp::BackHeapWithHugePages(size_t{16} << 20);
  } else {
    const std::string_view t(huge);
    if (t == "true" || t == "1" || t == "yes" || t == "on") {
      msp::BackHeapWithHugePages(size_t{16} << 20);
    } else if (t != "false" && t != "0" && t != "no" && t != "off") {
      std::fprintf(stderr, "msp: environment variable MSP_HUGE_PAGES must be a boolean (true or false), got '%s'\n",
                   huge);
      return 2;
    }
  }
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return msp::RunCli(args, std::cin, std::cout, std::cerr);
}
