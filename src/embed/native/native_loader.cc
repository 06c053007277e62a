// OpenNativeEmbedder (native_loader.h): loads libmsp_native_embed.so once.
#include "embed/native/native_loader.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "embed/native/native_module.h"
#include "util/module.h"

#ifndef MSP_NATIVE_EMBED_MODULE_BUILD_PATH
#define MSP_NATIVE_EMBED_MODULE_BUILD_PATH ""
#endif

namespace msp {
namespace {

Result<const native::NativeEmbedModuleV1*> NativeModule() {
  static std::once_flag once;
  static Result<const native::NativeEmbedModuleV1*> loaded = Status::Internal("not loaded");
  std::call_once(once, [] {
    static constexpr ModuleSpec kSpec{"libmsp_native_embed.so", "MSP_NATIVE_EMBED_MODULE",
                                      MSP_NATIVE_EMBED_MODULE_BUILD_PATH, "msp_native_embed_v1",
                                      "the native embedder (embedder.provider = native)"};
    Result<void*> entry = LoadModule(kSpec);
    if (!entry.ok()) {
      loaded = entry.status();
      return;
    }
    using Entry = const native::NativeEmbedModuleV1* (*)();
    const native::NativeEmbedModuleV1* table = reinterpret_cast<Entry>(*entry)();
    if (table == nullptr || table->version != 2) {
      loaded = Status::FailedPrecondition(std::string(kSpec.file) + " is not an msp native embedder module of version 2");
      return;
    }
    loaded = table;
  });
  return loaded;
}

}  // namespace

Result<std::unique_ptr<Embedder>> OpenNativeEmbedder(const std::string& model_dir, int threads,
                                                     const std::string& pooling, const std::string& quantize) {
  MSP_ASSIGN_OR_RETURN(const native::NativeEmbedModuleV1* m, NativeModule());
  if (threads == 0) threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  return m->open(model_dir, threads, pooling, quantize);
}

std::string NativeEmbedderBackend() {
  Result<const native::NativeEmbedModuleV1*> m = NativeModule();
  return m.ok() ? (*m)->backend() : "";
}

}  // namespace msp
