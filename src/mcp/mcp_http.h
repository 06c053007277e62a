// The Streamable HTTP transport of MCP on one endpoint (/mcp) of an
// httplib::Server that someone else owns (`msp serve`, or a test).
//
// POST one JSON-RPC message per request: a request gets its reply as
// application/json (200); a notification or a response gets 202 and no body.
// initialize opens a session and returns its id in Mcp-Session-Id; every
// later POST and DELETE must carry it (400 without, 404 for an unknown or
// ended one). DELETE ends a session (204). GET answers 405 (msp sends no
// server-initiated messages). A request with an Origin header that is
// neither a loopback origin nor in allowed_origins gets 403 (against DNS
// rebinding; util/web_origin.h); one without Origin is accepted. Unsupported MCP-Protocol-Version
// headers get 400. Batches (JSON arrays) get 400 with a JSON-RPC error.
#ifndef MSP_MCP_MCP_HTTP_H_
#define MSP_MCP_MCP_HTTP_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "msp/memory.h"
#include "config/settings.h"
#include "msp/status.h"
#include "msp/caller.h"
#include "msp/types.h"

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace msp::mcp {

// Who is calling, as the caller's credentials say (msp/caller.h): the
// tenant whose records the session reads and writes, the actor ("": "mcp")
// and the key's clearance (nullopt: no limit).
using McpCaller = Caller;

// Resolves a request's credentials (its API key) to a caller, or fails: a
// failure is answered 401 with the Status message.
using McpAuthenticator = std::function<Result<McpCaller>(const httplib::Request&)>;

struct McpHttpOptions {
  std::string path = "/mcp";
  // The namespace of every session; the tenant is replaced by the caller's
  // when an authenticator is given.
  Namespace base_namespace;
  std::string server_version = "0.0.0";
  McpOptions mcp;  // allowed_origins, read_graph page size, search_nodes limits
  MissionOptions mission;  // the mission tools
  TokenOptions tokens;     // the token counter of the mission tools' budgets
  WritePolicyOptions policy;  // stable tags (memory_write) and the trust labels of served records
  size_t max_body_bytes = 8u << 20;  // larger POST bodies get 413
  size_t max_sessions = 1000;        // initialize beyond this (after idle ones expire) gets 503
  int session_idle_seconds = 3600;   // a session unused this long is ended
};

// Registers POST, DELETE and GET handlers for options.path on `http`. The
// handlers keep the MCP server and its sessions alive as long as `http`
// lives; `engine` must outlive `http`. `authenticate` may be empty: every
// caller then acts in options.base_namespace. InvalidArgument when the path
// does not start with '/'.
Status MountMcpHttp(httplib::Server& http, MemoryLayer& engine, const McpHttpOptions& options,
                    McpAuthenticator authenticate);

}  // namespace msp::mcp

#endif  // MSP_MCP_MCP_HTTP_H_
