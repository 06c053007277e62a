// OpenNativeEmbedder: the native embedder (native_embedder.h) through its
// module, libmsp_native_embed.so, loaded on first use so that no other
// process maps it or the compute library it links.
#ifndef MSP_EMBED_NATIVE_NATIVE_LOADER_H_
#define MSP_EMBED_NATIVE_NATIVE_LOADER_H_

#include <memory>
#include <string>

#include "embed/embedder.h"
#include "msp/status.h"

namespace msp {

// FailedPrecondition when the module cannot be loaded (naming where it was
// looked for); else NativeEmbedder::Open's result. `threads` 0: one per
// CPU core, at most 8. `quantize`: "none" or "int8" (embedder.quantize).
Result<std::unique_ptr<Embedder>> OpenNativeEmbedder(const std::string& model_dir, int threads,
                                                     const std::string& pooling, const std::string& quantize = "none");

// The module's compute backend ("openblas" or "blocked"); "" when the module
// cannot be loaded.
std::string NativeEmbedderBackend();

}  // namespace msp

#endif  // MSP_EMBED_NATIVE_NATIVE_LOADER_H_
