// The `msp` program: hands argv to the command line (cli.cc).
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "util/huge_heap.h"

int main(int argc, char** argv) {
  // Before anything else allocates: the heap's first 16 MB on huge pages
  // (util/huge_heap.h); MSP_HUGE_PAGES=0 keeps glibc's defaults.
  if (const char* huge = std::getenv("MSP_HUGE_PAGES"); huge == nullptr || std::string_view(huge) != "0") {
    msp::BackHeapWithHugePages(size_t{16} << 20);
  }
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return msp::RunCli(args, std::cin, std::cout, std::cerr);
}
