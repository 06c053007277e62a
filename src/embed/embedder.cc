// The embedder factory. (The dot product is in dot.cc.)
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

}  // namespace msp
