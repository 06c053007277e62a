// JSON-RPC 2.0 messages as MCP uses them: parsing one incoming text into a
// request, notification or response, and building replies.
//
// MCP narrows JSON-RPC: ids are strings or integers (0 is a valid id, null is
// not), params are objects, and since revision 2025-06-18 batches (arrays)
// are not allowed; msp refuses them with InvalidRequest.
#ifndef MSP_MCP_JSONRPC_H_
#define MSP_MCP_JSONRPC_H_

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace msp::mcp {

// JSON-RPC 2.0 error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

enum class MessageType { kRequest, kNotification, kResponse };

struct JsonRpcMessage {
  MessageType type = MessageType::kRequest;
  nlohmann::json id;      // requests and responses: a string or an integer
  std::string method;     // requests and notifications
  nlohmann::json params = nlohmann::json::object();  // always an object
};

// What parsing one incoming text gave.
struct ParsedMessage {
  std::optional<JsonRpcMessage> message;  // set when the text is a valid message
  // Otherwise the error response to send back, or null when none is due (a
  // malformed notification gets no reply).
  nlohmann::json error_reply;
  bool batch = false;  // the text was a JSON array (refused)
};

// Parses one message (UTF-8 checked, nesting limited to kMaxJsonDepth).
// Errors: invalid JSON -32700 (id null); a batch, a missing or wrong
// "jsonrpc", a bad id or method, or a message that is neither request,
// notification nor response -32600; params that are not an object -32602.
ParsedMessage ParseJsonRpc(std::string_view text);

// {"jsonrpc": "2.0", "id": id, "result": result}.
nlohmann::json MakeResult(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}.
nlohmann::json MakeError(const nlohmann::json& id, int code, std::string_view message);

}  // namespace msp::mcp

#endif  // MSP_MCP_JSONRPC_H_
