// JSON-RPC 2.0 parsing and replies (see jsonrpc.h).
#include "mcp/jsonrpc.h"

#include "codec/memory_json.h"

namespace msp::mcp {
namespace {

using nlohmann::json;

ParsedMessage Fail(const json& id, int code, std::string_view message) {
  ParsedMessage p;
  p.error_reply = MakeError(id, code, message);
  return p;
}

bool ValidId(const json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

json MakeResult(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json MakeError(const json& id, int code, std::string_view message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", json{{"code", code}, {"message", std::string(message)}}}};
}

ParsedMessage ParseJsonRpc(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {
    // Valid JSON in an array is a batch; anything else is a parse error.
    const std::string wrapped = "{\"batch\":" + std::string(text) + "}";
    if (ParseJsonObject(wrapped, "message").ok()) {
      ParsedMessage p = Fail(nullptr, kInvalidRequest,
                             "JSON-RPC batches are not supported (MCP 2025-06-18 and later): send one "
                             "message at a time");
      p.batch = true;
      return p;
    }
  }
  Result<json> parsed = ParseJsonObject(text, "message");
  if (!parsed.ok()) {
    const std::string& why = parsed.status().message();
    // A valid JSON value that is not an object is an invalid request.
    const bool not_object = why.find("expected a JSON object") != std::string::npos;
    return Fail(nullptr, not_object ? kInvalidRequest : kParseError,
                (not_object ? "Invalid request: " : "Parse error: ") + why);
  }
  const json& j = *parsed;
  auto version = j.find("jsonrpc");
  const bool has_id = j.contains("id");
  const json id = has_id ? j["id"] : json(nullptr);
  const json reply_id = ValidId(id) ? id : json(nullptr);
  if (version == j.end() || *version != "2.0") {
    return Fail(reply_id, kInvalidRequest, "Invalid request: \"jsonrpc\" must be \"2.0\"");
  }
  JsonRpcMessage m;
  if (auto method = j.find("method"); method != j.end()) {
    if (!method->is_string() || method->get_ref<const std::string&>().empty()) {
      return Fail(reply_id, kInvalidRequest, "Invalid request: \"method\" must be a non-empty string");
    }
    m.method = method->get<std::string>();
    m.type = has_id ? MessageType::kRequest : MessageType::kNotification;
    if (has_id && !ValidId(id)) {
      return Fail(nullptr, kInvalidRequest, "Invalid request: \"id\" must be a string or an integer");
    }
    m.id = id;
    if (auto params = j.find("params"); params != j.end()) {
      if (!params->is_object()) {
        if (m.type == MessageType::kNotification) return ParsedMessage{};
        return Fail(id, kInvalidParams, "Invalid params: \"params\" must be an object");
      }
      m.params = *params;
    }
    ParsedMessage p;
    p.message = std::move(m);
    return p;
  }
  if (j.contains("result") || j.contains("error")) {
    if (!has_id) return Fail(nullptr, kInvalidRequest, "Invalid request: a response needs an \"id\"");
    m.type = MessageType::kResponse;
    m.id = id;
    ParsedMessage p;
    p.message = std::move(m);
    return p;
  }
  return Fail(reply_id, kInvalidRequest,
              "Invalid request: a message needs \"method\" (request or notification) or \"result\"/\"error\" "
              "(response)");
}

}  // namespace msp::mcp
