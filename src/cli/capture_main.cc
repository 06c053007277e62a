// `msp-capture`: the lean UserPromptSubmit hook (docs/coding-agents.md). It
// spools the prompt and starts `msp prompts import` from the msp next to it
// (or on PATH); it loads no engine and no libgit2, so it starts fast.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/capture_command.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "capture") args.erase(args.begin());
  std::string msp = "msp";
  const std::string self = msp::SelfExecutable();
  if (!self.empty()) {
    std::error_code ec;
    const std::filesystem::path sibling = std::filesystem::path(self).parent_path() / "msp";
    if (std::filesystem::exists(sibling, ec)) msp = sibling.string();
  }
  return msp::RunCaptureCommand(args, std::cin, msp, /*lean=*/true);
}
