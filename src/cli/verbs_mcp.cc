// `msp mcp`: the MCP server on stdio (one JSON-RPC message per line on
// standard input and output; log lines on standard error). docs/mcp.md.
#include <ostream>

#include "cli/cli.h"
#include "cli/index_housekeeping.h"
#include "mcp/mcp_server.h"
#include "mcp/mcp_stdio.h"

#ifndef MSP_VERSION
#define MSP_VERSION "unknown"
#endif

namespace msp {

Status RunMcp(Invocation& inv) {
  // The server makes each tool call as the session's caller: the command
  // line's (CliCaller), whose actor is "mcp" unless --operator or
  // options.actor names one.
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<MemoryLayer> engine, OpenServedEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(const Caller caller, CliCaller(inv, *engine));
  mcp::McpServerOptions server_options;
  server_options.server_version = MSP_VERSION;
  server_options.options = inv.config.options;
  mcp::McpServer server(*engine, server_options);
  mcp::McpSession session;
  session.ns = inv.ns;
  session.actor = inv.ns.operator_id.empty() && inv.config.options.actor.empty() ? "mcp" : caller.actor;
  session.clearance = caller.clearance;
  *inv.err << "msp mcp: serving " << inv.config.options.store.data_dir << " (" << inv.ns.ToString()
           << ") on stdio\n";
  // The indexes caught up while the client starts, and the vector file
  // written when the store is quiet and as the session ends.
  IndexHousekeeping housekeeping(*engine, *inv.err);
  return mcp::ServeStdio(server, session, *inv.in, *inv.out, *inv.err);
}

}  // namespace msp
