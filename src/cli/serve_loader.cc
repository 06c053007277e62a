// `msp serve` lives in a module, libmsp_serve.so (serve_module.cc: the HTTP
// server, the REST API and MCP over HTTP, with cpp-httplib and OpenSSL), so
// that no other verb loads them. RunServeModule loads it and runs RunServe
// there.
#include <mutex>

#include "cli/cli.h"
#include "cli/serve_module.h"
#include "util/module.h"

#ifndef MSP_SERVE_MODULE_BUILD_PATH
#define MSP_SERVE_MODULE_BUILD_PATH ""
#endif

namespace msp {

Status RunServeModule(Invocation& inv) {
  static std::once_flag once;
  static Result<const ServeModuleV1*> loaded = Status::Internal("not loaded");
  std::call_once(once, [] {
    static constexpr ModuleSpec kSpec{"libmsp_serve.so", "MSP_SERVE_MODULE", MSP_SERVE_MODULE_BUILD_PATH,
                                      "msp_serve_v1", "`msp serve` (the REST API and MCP over HTTP)"};
    Result<void*> entry = LoadModule(kSpec);
    if (!entry.ok()) {
      loaded = entry.status();
      return;
    }
    using Entry = const ServeModuleV1* (*)();
    const ServeModuleV1* table = reinterpret_cast<Entry>(*entry)();
    if (table == nullptr || table->version != 1) {
      loaded = Status::FailedPrecondition(std::string(kSpec.file) + " is not an msp serve module of version 1");
      return;
    }
    loaded = table;
  });
  MSP_ASSIGN_OR_RETURN(const ServeModuleV1* serve, loaded);
  return serve->run(inv);
}

}  // namespace msp
