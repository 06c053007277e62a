// The MCP protocol core (see mcp_server.h).
#include "mcp/mcp_server.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "codec/json_text.h"
#include "codec/memory_json.h"
#include "mcp/api_tools.h"
#include "mcp/graph_tools.h"
#include "codec/json_schema.h"
#include "util/fence.h"
#include "mcp/memory_tools.h"
#include "mcp/mission_tools.h"

namespace msp::mcp {
namespace {

using nlohmann::json;

// What initialize tells the model, the sentences of the profile's tools.
std::string Instructions(std::string_view profile) {
  std::string out =
      "msp is a persistent memory for agents. Search it (memory_search) before answering questions about "
      "earlier work, record durable facts, preferences and decisions (memory_write), and log the steps of a "
      "session (episode_add).";
  if (ProfileOffers(profile, "mission")) {
    out += " Before a task in a mission, workflow_memory_query returns a digest of its decisions, events and "
           "corrections; decision_record and the task tools keep them.";
  }
  if (ProfileOffers(profile, "graph")) {
    out += " The knowledge-graph tools (create_entities, add_observations, search_nodes, ...) keep entities "
           "and relations; read_graph returns the graph a page at a time.";
  }
  return out;
}

json TextContent(std::string text) { return json::array({json{{"type", "text"}, {"text", std::move(text)}}}); }

json ToolError(const std::string& message) {
  return json{{"content", TextContent(message)}, {"isError", true}};
}

// DumpJson of MakeResult(id, {content: TextContent(text), isError: false,
// structuredContent}) for a result already serialized: the keys in
// nlohmann's (sorted) order, each part copied once.
std::string ToolResultText(const json& id, const ToolOutput::Serialized& result) {
  const std::string id_json = DumpJson(id);
  constexpr std::string_view kHead = ",\"jsonrpc\":\"2.0\",\"result\":{\"content\":[{\"text\":";
  constexpr std::string_view kMiddle = ",\"type\":\"text\"}],\"isError\":false,\"structuredContent\":";
  std::string out;
  out.reserve(16 + id_json.size() + kHead.size() + result.text_json.size() + kMiddle.size() +
              result.structured.size());
  out += "{\"id\":";
  out += id_json;
  out += kHead;
  out += result.text_json;
  out += kMiddle;
  out += result.structured;
  out += "}}";
  return out;
}

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> versions = {std::string(kLatestProtocolVersion), "2025-06-18"};
  return versions;
}

json ToolAnnotations(bool read_only, bool destructive, bool idempotent) {
  return json{{"readOnlyHint", read_only},
              {"destructiveHint", destructive},
              {"idempotentHint", idempotent},
              {"openWorldHint", false}};
}

bool ProfileOffers(std::string_view profile, std::string_view group) {
  if (group != "core" && group != "graph" && group != "mission") return false;
  return profile == "all" || group == "core" || profile == group;
}

McpServer::McpServer(MemoryLayer& engine, McpServerOptions options)
    : options_(std::move(options)), engine_(&engine) {
  std::shared_ptr<MissionMemory> mission = OpenMissionMemory(engine, options_.options);
  ToolSet all;
  AddMemoryTools(all);
  AddApiTools(mission, options_.options, all);
  AddGraphTools(engine, options_.options.mcp, all);
  for (Tool& t : all) {
    // Each tool names its profile where it is made (src/api's declarations
    // name theirs: OperationInfo::mcp_profile). memory_get, session_steps
    // and the other record tools are core: an agent opens what the
    // SessionStart index or a hit names, follows and removes what it wrote,
    // and ends its own session, all in its session's namespace.
    if (ProfileOffers(options_.options.mcp.tools, t.profile)) {
      tools_.push_back(std::move(t));
    } else {
      hidden_.emplace_back(t.name, t.profile);
    }
  }
}

McpServer::McpServer(ToolSet tools, McpServerOptions options)
    : tools_(std::move(tools)), options_(std::move(options)) {}

std::optional<std::string> McpServer::Handle(McpSession& session, std::string_view text) {
  ParsedMessage parsed = ParseJsonRpc(text);
  if (!parsed.message) {
    if (parsed.error_reply.is_null()) return std::nullopt;
    return DumpJson(parsed.error_reply);
  }
  return HandleMessageText(session, *parsed.message);
}

std::optional<json> McpServer::HandleMessage(McpSession& session, const JsonRpcMessage& m) {
  std::optional<Reply> reply = Dispatch(session, m);
  if (!reply) return std::nullopt;
  if (reply->text) return json::parse(*reply->text);
  return std::move(reply->value);
}

std::optional<std::string> McpServer::HandleMessageText(McpSession& session, const JsonRpcMessage& m) {
  std::optional<Reply> reply = Dispatch(session, m);
  if (!reply) return std::nullopt;
  if (reply->text) return std::move(reply->text);
  return DumpJson(reply->value);
}

std::optional<McpServer::Reply> McpServer::Dispatch(McpSession& session, const JsonRpcMessage& m) {
  if (m.type == MessageType::kResponse) return std::nullopt;  // msp sends no requests
  if (m.type == MessageType::kNotification) {
    if (m.method == "notifications/initialized" && !session.protocol_version.empty()) session.initialized = true;
    return std::nullopt;  // others (cancelled, progress, roots/list_changed) need nothing
  }
  if (m.method == "initialize") return Reply{Initialize(session, m), std::nullopt};
  if (m.method == "ping") return Reply{MakeResult(m.id, json::object()), std::nullopt};
  if (m.method == "tools/list" || m.method == "tools/call") {
    if (session.protocol_version.empty()) {
      return Reply{MakeError(m.id, kInvalidRequest, "the session is not initialized: send initialize first"),
                   std::nullopt};
    }
    if (m.method == "tools/list") return Reply{ListTools(m), std::nullopt};
    return CallTool(session, m);
  }
  return Reply{MakeError(m.id, kMethodNotFound, "Method not found: " + m.method), std::nullopt};
}

json McpServer::Initialize(McpSession& session, const JsonRpcMessage& m) {
  if (!session.protocol_version.empty()) {
    return MakeError(m.id, kInvalidRequest, "the session is already initialized");
  }
  auto requested = m.params.find("protocolVersion");
  if (requested == m.params.end() || !requested->is_string()) {
    return MakeError(m.id, kInvalidParams, "Invalid params: initialize needs \"protocolVersion\" (a string)");
  }
  const std::vector<std::string>& supported = SupportedProtocolVersions();
  const std::string asked = requested->get<std::string>();
  session.protocol_version = std::find(supported.begin(), supported.end(), asked) != supported.end()
                                 ? asked
                                 : std::string(kLatestProtocolVersion);
  if (auto info = m.params.find("clientInfo"); info != m.params.end() && info->is_object()) {
    session.client_name = info->value("name", "");
    session.client_version = info->value("version", "");
  }
  json result = {
      {"protocolVersion", session.protocol_version},
      {"capabilities", json{{"tools", json{{"listChanged", false}}}}},
      {"serverInfo", json{{"name", "msp"}, {"title", "msp memory"}, {"version", options_.server_version}}},
      {"instructions", Instructions(engine_ ? options_.options.mcp.tools : "all")},
  };
  return MakeResult(m.id, std::move(result));
}

json McpServer::ListTools(const JsonRpcMessage& m) const {
  if (auto cursor = m.params.find("cursor"); cursor != m.params.end() && !cursor->is_null()) {
    return MakeError(m.id, kInvalidParams, "Invalid params: unknown cursor (tools/list has a single page)");
  }
  json list = json::array();
  for (const Tool& t : tools_) {
    list.push_back(json{{"name", t.name},
                        {"title", t.title},
                        {"description", t.description},
                        {"inputSchema", t.input_schema},
                        {"outputSchema", t.output_schema},
                        {"annotations", t.annotations}});
  }
  return MakeResult(m.id, json{{"tools", std::move(list)}});
}

McpServer::Reply McpServer::CallTool(const McpSession& session, const JsonRpcMessage& m) const {
  auto name = m.params.find("name");
  if (name == m.params.end() || !name->is_string()) {
    return Reply{MakeError(m.id, kInvalidParams, "Invalid params: tools/call needs \"name\" (a string)"),
                 std::nullopt};
  }
  const std::string& tool_name = name->get_ref<const std::string&>();
  auto tool = std::find_if(tools_.begin(), tools_.end(), [&](const Tool& t) { return t.name == tool_name; });
  if (tool == tools_.end()) {
    auto hidden = std::find_if(hidden_.begin(), hidden_.end(), [&](const auto& h) { return h.first == tool_name; });
    if (hidden != hidden_.end() && !hidden->second.empty()) {
      return Reply{MakeError(m.id, kInvalidParams,
                             "Invalid params: tool '" + tool_name + "' is not offered by the tool profile '" +
                                 options_.options.mcp.tools + "' (mcp.tools, msp mcp --mcp-tools); profile " +
                                 hidden->second + " or all offers it"),
                   std::nullopt};
    }
    return Reply{
        MakeError(m.id, kInvalidParams, "Invalid params: unknown tool '" + tool_name + "'; tools/list names them"),
        std::nullopt};
  }
  json arguments = json::object();
  if (auto a = m.params.find("arguments"); a != m.params.end() && !a->is_null()) {
    if (!a->is_object()) {
      return Reply{MakeError(m.id, kInvalidParams, "Invalid params: \"arguments\" must be an object"), std::nullopt};
    }
    arguments = *a;
  }
  // Bad arguments are a tool error the model can read and correct, not a
  // protocol error (MCP 2025-11-25).
  if (Status s = tool->checks_arguments ? Status::Ok() : ValidateJsonSchema(tool->input_schema, arguments, "arguments");
      !s.ok()) {
    return Reply{MakeResult(m.id, ToolError("invalid arguments: " + s.message())), std::nullopt};
  }
  // The tool runs as the session's caller: the engine enforces its tenant
  // and clearance.
  McpSession call = session;
  call.trusted_sources = options_.options.policy.context_trusted_sources;
  std::unique_ptr<MemoryLayer> layer = engine_ ? AsCaller(*engine_, CallerOf(session)) : nullptr;
  call.engine = layer.get();
  Result<ToolOutput> out = Status::Internal("the tool did not run");
  try {
    out = tool->handler(call, arguments);
  } catch (const std::exception& e) {
    out = Status::Internal(std::string("unexpected error: ") + e.what());
  }
  if (!out.ok()) return Reply{MakeResult(m.id, ToolError(out.status().ToString())), std::nullopt};
  // Stored text is data: in the JSON text a model reads, U+2028 and U+2029
  // are escaped like the other line breaks (util/fence.h).
  if (out->serialized) return Reply{json(), ToolResultText(m.id, *out->serialized)};
  // The structured result serialized once: the text block is that text as
  // a JSON string, not a second walk of the tree.
  return Reply{json(), ToolResultText(m.id, ToolOutput::Serialized::OfText(DumpJson(out->structured), out->text))};
}

ToolOutput::Serialized ToolOutput::Serialized::OfText(std::string structured, const std::optional<std::string>& text) {
  Serialized out;
  AppendJsonString(out.text_json, text ? *text : EscapeJsonLineSeparators(structured));
  out.structured = std::move(structured);
  return out;
}

}  // namespace msp::mcp
