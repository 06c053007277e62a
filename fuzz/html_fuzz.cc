// Fuzz target: a HTML document as `msp ingest` extracts it
// (ingest/formats.h, ReadHtml: the text, its title and headings).
#include "fuzz/fuzz_util.h"
#include "ingest/formats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)msp::ReadHtml(msp::fuzz::Text(data, size));
  return 0;
}
