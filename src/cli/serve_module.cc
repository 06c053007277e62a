// The entry point of libmsp_serve.so (see serve_module.h).
#include "cli/serve_module.h"

extern "C" __attribute__((visibility("default"))) const msp::ServeModuleV1* msp_serve_v1() {
  static const msp::ServeModuleV1 table{1, &msp::RunServe};
  return &table;
}
