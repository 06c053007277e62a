// What an MCP tool is to msp's server: its name, schemas and handler, and
// the session it runs in.
//
// A handler returns the tool's structured result (an object matching its
// outputSchema) or a Status; the server turns a Status into a tool result
// with isError set, never into a protocol error.
#ifndef MSP_MCP_TOOL_H_
#define MSP_MCP_TOOL_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/caller.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp::mcp {

// One client's conversation with the server. stdio has one; Streamable HTTP
// has one per Mcp-Session-Id.
struct McpSession {
  std::string id;                // HTTP: the Mcp-Session-Id; stdio: empty
  Namespace ns;                  // where the session's tools read and write
  // The caller's clearance (its API key's): tools serve only records whose
  // access_level is at most this, and mission reads cap the operator's
  // clearance with it. nullopt: no limit (stdio, keys without a clearance).
  std::optional<int> clearance;
  std::string actor = "mcp";     // who acts, for the audit log
  // The engine as this session's caller (AsCaller of CallerOf(session)),
  // set by McpServer for each tool call: tools read and write through it,
  // so the engine enforces the session's tenant and clearance.
  MemoryLayer* engine = nullptr;
  std::string protocol_version;  // agreed at initialize; empty before it
  bool initialized = false;      // notifications/initialized received
  std::string client_name;       // from initialize's clientInfo
  std::string client_version;
  // policy.context_trusted_sources, set by McpServer for each tool call: the
  // trust label of the records a tool serves.
  std::vector<std::string> trusted_sources = WritePolicyOptions{}.context_trusted_sources;
};

// The session's caller: its tenant, actor and clearance.
inline Caller CallerOf(const McpSession& session) {
  return Caller{session.ns.tenant, session.actor, session.clearance};
}

struct ToolOutput {
  nlohmann::json structured = nlohmann::json::object();  // structuredContent
  // The text block; empty: the structured result as JSON text.
  std::optional<std::string> text;
  // The result already serialized (the graph tools, whose answers run to
  // 100 KiB), exactly as DumpJson writes it (keys sorted): `structured` the
  // compact structured result, `text_json` the text block as a JSON string
  // (quoted). When set, `structured` and `text` above are unused.
  struct Serialized {
    std::string structured;
    std::string text_json;
    // `structured` (compact JSON text, as DumpJson writes it) with, as the
    // text block, `text` when given, else that JSON text with U+2028 and
    // U+2029 escaped (stored text is data; util/fence.h).
    static Serialized OfText(std::string structured, const std::optional<std::string>& text = std::nullopt);
  };
  std::optional<Serialized> serialized = std::nullopt;
};

// REQUIRES: `arguments` already satisfies the tool's inputSchema (unless the
// tool checks its arguments itself: Tool::checks_arguments).
using ToolHandler = std::function<Result<ToolOutput>(const McpSession& session, const nlohmann::json& arguments)>;

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  nlohmann::json input_schema;   // a JSON Schema object, type "object"
  nlohmann::json output_schema;  // a JSON Schema object, type "object"
  nlohmann::json annotations = nlohmann::json::object();  // readOnlyHint, ...
  ToolHandler handler;
  // The handler decodes its arguments strictly itself (the tools of
  // src/api's operations, whose errors are the same on every face): the
  // server then does not check them against input_schema first.
  bool checks_arguments = false;
  // The smallest tool profile (mcp.tools) that offers it: "core", "graph"
  // or "mission" (docs/mcp.md, "Tool profiles"). Every tool names one; the
  // server refuses to offer a tool that does not.
  std::string profile;
};

using ToolSet = std::vector<Tool>;

// Annotations {readOnlyHint, destructiveHint, idempotentHint, openWorldHint: false}.
nlohmann::json ToolAnnotations(bool read_only, bool destructive, bool idempotent);

}  // namespace msp::mcp

#endif  // MSP_MCP_TOOL_H_
