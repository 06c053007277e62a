// Fuzz target: the JSON payload Claude Code hooks send on standard input
// (coding/capture.h): ParseHookInput, then the captured prompt (its working
// tree lookup skipped: the cwd is cleared).
#include "coding/capture.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto input = msp::ParseHookInput(msp::fuzz::Text(data, size));
  if (input.ok()) {
    input->cwd.clear();
    (void)msp::PromptFromHook(*input, 1);
  }
  return 0;
}
