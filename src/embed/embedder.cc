// The factory of the built-in embedders (and of the native one, through its
// module). (The dot product is in dot.cc;
// provider/embedder_factory.h opens every embedder by name.)
#include "embed/embedder.h"

#include <string>

#include "embed/hashing/hashing_embedder.h"
#include "embed/native/native_loader.h"
#include "embed/static/static_embedder.h"

namespace msp {

namespace {
constexpr int kMinDimension = 8;
constexpr int kMaxDimension = 4096;
}  // namespace

Result<std::unique_ptr<Embedder>> MakeEmbedder(const EmbedderOptions& options) {
  if (options.provider == EmbedderProvider::kNative) {
    return OpenNativeEmbedder(options.model, options.threads, options.pooling, options.quantize);
  }
  if (options.provider == EmbedderProvider::kStatic) {
    MSP_ASSIGN_OR_RETURN(std::string path, FindWordVectors(options.vectors_path));
    MSP_ASSIGN_OR_RETURN(std::shared_ptr<const WordVectors> table, WordVectors::Load(path));
    return std::unique_ptr<Embedder>(std::make_unique<StaticEmbedder>(std::move(table)));
  }
  if (options.dimension < kMinDimension || options.dimension > kMaxDimension) {
    return Status::InvalidArgument("embedder dimension " + std::to_string(options.dimension) +
                                   " is out of range; use " + std::to_string(kMinDimension) +
                                   ".." + std::to_string(kMaxDimension));
  }
  if (options.provider == EmbedderProvider::kOpenai) {
    return Status::InvalidArgument(
        "embedder provider 'openai' needs the network: open it with OpenEmbedder "
        "(provider/embedder_factory.h); MakeEmbedder makes the built-in embedders only (hashing, static, native)");
  }
  return std::unique_ptr<Embedder>(std::make_unique<HashingEmbedder>(options.dimension));
}

}  // namespace msp
