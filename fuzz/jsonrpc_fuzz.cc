// Fuzz target: one MCP JSON-RPC message as the stdio and HTTP transports
// receive it (mcp/jsonrpc.h, ParseJsonRpc), and the error reply it yields.
#include "fuzz/fuzz_util.h"
#include "mcp/jsonrpc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  msp::mcp::ParsedMessage parsed = msp::mcp::ParseJsonRpc(msp::fuzz::Text(data, size));
  if (!parsed.error_reply.is_null()) (void)parsed.error_reply.dump();
  return 0;
}
