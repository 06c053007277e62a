// Fuzz target: the JSON and JSONL import of records (msp import, POST
// /v1/import): the whole input as one record, then each line as one, as
// ImportJsonl reads them (codec/memory_json.h, MemoryFromJsonText).
#include "codec/memory_json.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = msp::fuzz::Text(data, size);
  (void)msp::MemoryFromJsonText(text, "fuzz input");
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto record = msp::MemoryFromJsonText(text.substr(start, end - start), "fuzz line");
    if (record.ok()) (void)msp::MemoryToJson(*record, /*with_embedding=*/true).dump();
    start = end + 1;
  }
  return 0;
}
