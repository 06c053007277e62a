// The embedder factory and the shared dot product.
#include "embed/embedder.h"

#include <string>

#include "embed/hashing/hashing_embedder.h"

namespace msp {

namespace {
constexpr int kMinDimension = 8;
constexpr int kMaxDimension = 4096;
}  // namespace

Result<std::unique_ptr<Embedder>> MakeEmbedder(const EmbedderOptions& options) {
  if (options.dimension < kMinDimension || options.dimension > kMaxDimension) {
    return Status::InvalidArgument("embedder dimension " + std::to_string(options.dimension) +
                                   " is out of range; use " + std::to_string(kMinDimension) +
                                   ".." + std::to_string(kMaxDimension));
  }
  if (options.provider == "hashing") {
    return std::unique_ptr<Embedder>(std::make_unique<HashingEmbedder>(options.dimension));
  }
  return Status::InvalidArgument("unknown embedder provider '" + options.provider +
                                 "'; available providers: hashing");
}

// Four groups of four independent lanes: each lane is its own running sum,
// so g++ -O2 turns each group into one SIMD register (SLP vectorisation)
// without reassociating float additions (no -ffast-math needed), and four
// accumulators hide the add latency. The lanes are folded once at the end.
float Dot(const float* a, const float* b, size_t n) {
  float s0[4] = {}, s1[4] = {}, s2[4] = {}, s3[4] = {};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (size_t j = 0; j < 4; ++j) s0[j] += a[i + j] * b[i + j];
    for (size_t j = 0; j < 4; ++j) s1[j] += a[i + 4 + j] * b[i + 4 + j];
    for (size_t j = 0; j < 4; ++j) s2[j] += a[i + 8 + j] * b[i + 8 + j];
    for (size_t j = 0; j < 4; ++j) s3[j] += a[i + 12 + j] * b[i + 12 + j];
  }
  float sum = 0.0f;
  for (size_t j = 0; j < 4; ++j) sum += (s0[j] + s1[j]) + (s2[j] + s3[j]);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace msp
