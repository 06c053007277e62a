// Fuzz target: a safetensors file as the native embedder reads a model's
// weights (embed/native/safetensors.h): the header checked against the
// bytes, then every tensor it lists fetched as F32 (read in place, or F16 /
// BF16 converted), which must stay inside the input.
#include <cstring>
#include <vector>

#include "embed/native/safetensors.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy 8-byte aligned, as a mapping is; the fetches read it.
  std::vector<uint64_t> aligned((size + 7) / 8);
  if (size > 0) std::memcpy(aligned.data(), data, size);
  auto file = msp::native::SafeTensorsFile::FromBytes(aligned.data(), size, "fuzzed.safetensors");
  if (!file.ok()) return 0;
  double sum = 0;
  for (const auto& [name, shape] : (*file)->Tensors()) {
    auto t = (*file)->Float32(name, shape);
    if (!t.ok()) continue;
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    for (size_t i = 0; i < count; ++i) sum += (*t)[i];
  }
  (void)sum;
  return 0;
}
