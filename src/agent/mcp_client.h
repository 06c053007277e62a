// A small MCP client over stdio: msp spawns an external MCP server process
// and talks newline-delimited JSON-RPC 2.0 on its standard input and output
// (Model Context Protocol, stdio transport): initialize, then
// notifications/initialized, tools/list (following nextCursor) and
// tools/call. The server's standard error is passed through.
//
// Servers are configured as agent.mcp_servers entries "NAME=COMMAND [ARG
// ...]"; arguments are split on spaces, with single or double quotes and
// backslash escapes.
//
// Not thread-safe: one request at a time (the agent loop is sequential).
#ifndef MSP_AGENT_MCP_CLIENT_H_
#define MSP_AGENT_MCP_CLIENT_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/status.h"

namespace msp {

struct McpServerSpec {
  std::string name;               // [A-Za-z0-9_-], 1..32: the prefix of its tools
  std::vector<std::string> argv;  // the command and its arguments
};

// "NAME=COMMAND [ARG ...]"; InvalidArgument naming what is wrong.
Result<McpServerSpec> ParseMcpServerSpec(std::string_view text);

struct McpTool {
  std::string name;
  std::string description;
  nlohmann::json input_schema = nlohmann::json::object();
};

struct McpCallResult {
  std::string text;       // the text items joined by newlines; other items described
  bool is_error = false;  // the server's isError
};

class McpClient {
 public:
  // Spawns the server and runs the initialize handshake. Unavailable when
  // the process cannot start, exits or does not answer within timeout_ms.
  static Result<std::unique_ptr<McpClient>> Start(const McpServerSpec& spec, int timeout_ms);
  // Closes the server's input, waits briefly, then terminates it.
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  Result<std::vector<McpTool>> ListTools();
  // A JSON-RPC error or a broken server is an error Status; a tool that ran
  // and failed is a result with is_error set.
  Result<McpCallResult> CallTool(const std::string& name, const nlohmann::json& arguments);

  const std::string& name() const { return spec_.name; }
  const std::string& server_name() const { return server_name_; }  // from initialize

 private:
  McpClient(McpServerSpec spec, int timeout_ms) : spec_(std::move(spec)), timeout_ms_(timeout_ms) {}
  Status Spawn();
  Status Send(const nlohmann::json& message);
  // The next complete line from the server, waiting up to the timeout.
  Result<std::string> ReadLine();
  // Sends a request and waits for its response's result (answering pings
  // and skipping notifications meanwhile).
  Result<nlohmann::json> Request(const std::string& method, const nlohmann::json& params);

  McpServerSpec spec_;
  int timeout_ms_;
  pid_t pid_ = -1;
  int fd_ = -1;  // our end of the socket pair (the server's stdin and stdout)
  std::string buffer_;
  int64_t next_id_ = 1;
  std::string server_name_;
};

}  // namespace msp

#endif  // MSP_AGENT_MCP_CLIENT_H_
