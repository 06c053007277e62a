// The stdio transport of MCP: one JSON-RPC message per line in, one reply
// per line out (flushed after each), nothing else on the output stream; log
// lines go to `log` (the process's stderr).
#ifndef MSP_MCP_MCP_STDIO_H_
#define MSP_MCP_MCP_STDIO_H_

#include <cstddef>
#include <iosfwd>

#include "mcp/mcp_server.h"
#include "mcp/tool.h"
#include "msp/status.h"

namespace msp::mcp {

// A line longer than this is answered with a parse error and skipped.
constexpr size_t kMaxStdioMessageBytes = 16u << 20;

// Serves `session` until `in` ends (the client closed its end). Blank lines
// are skipped. Returns IoError when `out` fails (the client went away).
Status ServeStdio(McpServer& server, McpSession& session, std::istream& in, std::ostream& out, std::ostream& log);

}  // namespace msp::mcp

#endif  // MSP_MCP_MCP_STDIO_H_
