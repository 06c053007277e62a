// Fuzz target: a Markdown document as `msp ingest` extracts it
// (ingest/formats.h, ReadMarkdown: the text, its title and headings).
#include "fuzz/fuzz_util.h"
#include "ingest/formats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)msp::ReadMarkdown(msp::fuzz::Text(data, size));
  return 0;
}
