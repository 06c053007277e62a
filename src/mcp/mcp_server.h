// The transport-independent MCP server: lifecycle (initialize, ping), tool
// listing and tool calls, over JSON-RPC 2.0 (MCP revision 2025-11-25; the
// client's 2025-06-18 is accepted and echoed).
//
// Transports (stdio, Streamable HTTP) hand every incoming message to
// Handle() with the session it belongs to and send back what it returns.
// Thread-safe: Handle may run on several threads at once, each with its own
// McpSession (the engine and the tool set are shared, the tools read-only).
#ifndef MSP_MCP_MCP_SERVER_H_
#define MSP_MCP_MCP_SERVER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp/jsonrpc.h"
#include "mcp/tool.h"
#include "msp/memory.h"
#include "config/settings.h"

namespace msp::mcp {

// The protocol revisions msp speaks, newest first; the first is offered to a
// client that asks for one msp does not speak.
const std::vector<std::string>& SupportedProtocolVersions();
constexpr std::string_view kLatestProtocolVersion = "2025-11-25";

// True when profile `profile` (mcp.tools: core, mission, graph, all) offers
// a tool whose Tool::profile is `group`: "graph" offers core and graph,
// "mission" core and mission, "all" every tool. A tool naming no profile is
// offered by none.
bool ProfileOffers(std::string_view profile, std::string_view group);

struct McpServerOptions {
  std::string server_version = "0.0.0";  // serverInfo.version
  // The settings the tools read: mcp.* (the graph tools), mission.* and
  // tokens.* (the mission tools).
  Settings options;
};

class McpServer {
 public:
  // A server with msp's tools (memory_*, episode_add, fact_history, the
  // knowledge-graph tools, the mission tools) over `engine`, which must
  // outlive it: those of the profile options.mcp.tools (Tool::profile).
  // When the mission memory cannot be opened (tokens.counter cl100k without
  // its vocabulary), the mission tools report why on call.
  McpServer(MemoryLayer& engine, McpServerOptions options);
  // A server with exactly `tools` (for tests of the protocol core).
  McpServer(ToolSet tools, McpServerOptions options);

  // Handles one incoming text. Returns the reply to send, or nullopt when
  // none is due (notifications, responses).
  std::optional<std::string> Handle(McpSession& session, std::string_view text);
  // The same for an already parsed message: the reply as JSON.
  std::optional<nlohmann::json> HandleMessage(McpSession& session, const JsonRpcMessage& message);
  // The same, the reply as text (DumpJson of HandleMessage's reply, without
  // building the tree when a tool serialized its own result).
  std::optional<std::string> HandleMessageText(McpSession& session, const JsonRpcMessage& message);

  const ToolSet& tools() const { return tools_; }

 private:
  // A reply: `value`, or when `text` is set, that reply already serialized.
  struct Reply {
    nlohmann::json value;
    std::optional<std::string> text;
  };
  std::optional<Reply> Dispatch(McpSession& session, const JsonRpcMessage& m);
  nlohmann::json Initialize(McpSession& session, const JsonRpcMessage& m);
  nlohmann::json ListTools(const JsonRpcMessage& m) const;
  Reply CallTool(const McpSession& session, const JsonRpcMessage& m) const;

  ToolSet tools_;
  // msp's tools the profile leaves out: name -> the profile that offers it
  // ("" for a tool that names none: offered by no profile).
  std::vector<std::pair<std::string, std::string>> hidden_;
  McpServerOptions options_;
  MemoryLayer* engine_ = nullptr;  // null for a server of given tools
};

}  // namespace msp::mcp

#endif  // MSP_MCP_MCP_SERVER_H_
