// Fuzz target: an architecture decision record in Markdown as the ADR
// importer reads it (mission/adr.h, ParseAdr), under a numbered file name
// and, from the input's first line, a file name of its own.
#include "fuzz/fuzz_util.h"
#include "mission/adr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = msp::fuzz::Text(data, size);
  (void)msp::ParseAdr("0042-fuzzed-decision.md", text);
  const std::string_view first_line = text.substr(0, std::min(text.find('\n'), text.size()));
  (void)msp::AdrNumberOfFileName(first_line);
  return 0;
}
