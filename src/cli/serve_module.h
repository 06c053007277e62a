// The interface of libmsp_serve.so: `msp serve` (verbs_serve.cc) with the
// HTTP server, the REST API and MCP over HTTP, which link cpp-httplib and
// OpenSSL. The msp binary loads it only for `msp serve` (serve_loader.cc).
#ifndef MSP_CLI_SERVE_MODULE_H_
#define MSP_CLI_SERVE_MODULE_H_

#include "cli/cli.h"

namespace msp {

struct ServeModuleV1 {
  int version = 1;
  Status (*run)(Invocation& inv) = nullptr;  // RunServe
};

}  // namespace msp

// The module's one exported symbol.
extern "C" const msp::ServeModuleV1* msp_serve_v1();

#endif  // MSP_CLI_SERVE_MODULE_H_
