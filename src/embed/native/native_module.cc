// The entry point of libmsp_native_embed.so (native_module.h).
#include "embed/native/native_module.h"

#include "embed/native/gemm.h"
#include "embed/native/native_embedder.h"

extern "C" __attribute__((visibility("default"))) const msp::native::NativeEmbedModuleV1* msp_native_embed_v1() {
  using namespace msp::native;
  static const NativeEmbedModuleV1 table{
      2,
      [](const std::string& model_dir, int threads, const std::string& pooling,
         const std::string& quantize) -> msp::Result<std::unique_ptr<msp::Embedder>> {
        NativeOptions options;
        options.model_dir = model_dir;
        options.threads = threads;
        options.pooling = pooling;
        options.quantize = quantize;
        auto e = NativeEmbedder::Open(options);
        if (!e.ok()) return e.status();
        return std::unique_ptr<msp::Embedder>(std::move(*e));
      },
      &LinearBackend,
  };
  return &table;
}
