// The interface of the module libmsp_native_embed.so: the native embedder
// (native_embedder.h) and the compute library it links, loaded only by a
// process that opens embedder.provider = "native" (native_loader.h).
#ifndef MSP_EMBED_NATIVE_NATIVE_MODULE_H_
#define MSP_EMBED_NATIVE_NATIVE_MODULE_H_

#include <memory>
#include <string>

#include "embed/embedder.h"
#include "msp/status.h"

namespace msp::native {

struct NativeEmbedModuleV1 {
  int version;  // 2 (1 had no `quantize`)
  // NativeEmbedder::Open with these options.
  Result<std::unique_ptr<Embedder>> (*open)(const std::string& model_dir, int threads, const std::string& pooling,
                                            const std::string& quantize);
  // gemm.h's LinearBackend().
  const char* (*backend)();
};

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_NATIVE_MODULE_H_
