// A client for OpenAI-compatible chat completions (POST /chat/completions
// under the base URL: Ollama, llama.cpp server, vLLM, OpenAI...).
//
// Two uses:
//  - Complete(): one completion, with optional tools; the reply's message
//    may carry tool_calls (the agent loop builds on this).
//  - CompleteJson(): a reply that is a JSON value satisfying a JSON Schema.
//    The schema goes out as response_format json_schema (strict), or, for
//    servers without it, as response_format json_object or in the prompt
//    only. The reply is validated (codec/json_schema.h) and by an optional check of
//    the caller; an invalid reply is retried once with the error appended to
//    the conversation, then reported as an error. A reply is never dropped
//    silently. In json_schema mode the schema goes out without its value
//    bounds (minimum, maximum, minLength, maxLength, minItems, maxItems),
//    which strict servers refuse; the reply is checked against all of it.
#ifndef MSP_PROVIDER_CHAT_CLIENT_H_
#define MSP_PROVIDER_CHAT_CLIENT_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/status.h"
#include "net/http_client.h"

namespace msp {

// A tool call the model asked for.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text, as the model wrote it

  bool operator==(const ToolCall&) const = default;
};

// One message of a conversation.
struct ChatMessage {
  std::string role;                  // system, user, assistant, tool
  std::string content;               // may be empty for an assistant's tool calls
  std::vector<ToolCall> tool_calls;  // assistant only
  std::string tool_call_id;          // tool only: the call this answers
  std::string name;                  // optional

  static ChatMessage System(std::string text) { return {"system", std::move(text), {}, "", ""}; }
  static ChatMessage User(std::string text) { return {"user", std::move(text), {}, "", ""}; }
  static ChatMessage Assistant(std::string text) { return {"assistant", std::move(text), {}, "", ""}; }
  static ChatMessage ToolResult(std::string call_id, std::string text) {
    return {"tool", std::move(text), {}, std::move(call_id), ""};
  }
  bool operator==(const ChatMessage&) const = default;
};

// A function the model may call.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json parameters = nlohmann::json::object();  // JSON Schema of the arguments
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  std::vector<ToolSpec> tools;
  std::string tool_choice;   // "", "auto", "none", "required"
  double temperature = 0.0;  // < 0: not sent (server default)
  int max_tokens = 0;        // 0: not sent
};

struct ChatReply {
  ChatMessage message;        // role "assistant"
  std::string finish_reason;  // stop, length, tool_calls, ...
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

// How CompleteJson asks for JSON.
enum class ResponseFormat {
  kAuto,        // json_schema; on a 400 that rejects it, json_object, then prompt only
  kJsonSchema,  // response_format {type: json_schema, json_schema: {name, schema, strict}}
  kJsonObject,  // response_format {type: json_object}, the schema in the prompt
  kPromptOnly,  // no response_format, the schema in the prompt
};
// "auto", "json_schema", "json_object", "prompt"; InvalidArgument otherwise.
Result<ResponseFormat> ParseResponseFormat(std::string_view name);
std::string_view ResponseFormatName(ResponseFormat format);

struct ChatOptions {
  std::string base_url;       // e.g. "http://localhost:11434/v1"
  std::string model;          // required
  std::string api_key;        // empty: no Authorization header
  int timeout_ms = 120000;    // read timeout of one attempt
  int connect_timeout_ms = 10000;
  int max_retries = 3;        // HTTP retries (429, 5xx, transport errors)
  int initial_backoff_ms = 500;
  ResponseFormat response_format = ResponseFormat::kAuto;
  // Test hook: how the HTTP client waits between attempts (empty: sleeps).
  std::function<void(std::chrono::milliseconds)> sleep;
};

// The JSON a caller wants back.
struct JsonReplySpec {
  std::string name;         // schema name, [a-zA-Z0-9_-], e.g. "facts"
  nlohmann::json schema;    // the JSON Schema (codec/json_schema.h subset)
  // Extra checks after the schema (ids that must exist, ...): a non-ok
  // Status counts as an invalid reply, retried once like a schema error.
  std::function<Status(const nlohmann::json&)> check;
};

// Thread-safe.
class ChatClient {
 public:
  // InvalidArgument for a bad base URL, an empty model or bad limits.
  static Result<std::unique_ptr<ChatClient>> Create(const ChatOptions& options);

  // One completion. Errors: the HTTP client's (Unavailable after retries,
  // InvalidArgument for a 400, FailedPrecondition for 401/403), or
  // Unavailable when the reply has no choices[0].message.
  Result<ChatReply> Complete(const ChatRequest& request) const;

  // A JSON value satisfying spec.schema (and spec.check). `messages` is the
  // conversation; the instructions for the JSON form are added by the
  // client where the format needs them. An invalid reply (not JSON, schema
  // violated, check failed) is sent back to the model once with the error;
  // a second invalid reply is Unavailable naming the error and the start of
  // the reply.
  Result<nlohmann::json> CompleteJson(const std::vector<ChatMessage>& messages,
                                      const JsonReplySpec& spec) const;

  // The format CompleteJson uses now (kAuto resolves after the first call).
  ResponseFormat current_format() const { return format_.load(); }
  const ChatOptions& options() const { return options_; }

 private:
  ChatClient(ChatOptions options, std::unique_ptr<net::HttpClient> http);
  nlohmann::json RequestBody(const ChatRequest& request) const;
  Result<ChatReply> ParseReply(const nlohmann::json& body) const;
  // One round of CompleteJson in `format`. Sets *rejected when the server
  // refused the response_format (HTTP 400 naming it).
  Result<ChatReply> SendJson(const std::vector<ChatMessage>& messages, const JsonReplySpec& spec,
                             ResponseFormat format, bool* rejected) const;

  ChatOptions options_;
  std::unique_ptr<net::HttpClient> http_;
  mutable std::atomic<ResponseFormat> format_;
};

// The JSON value in a model's text: code fences and <think>...</think>
// blocks are removed, then the text is parsed whole or, failing that, from
// the first '{' to its matching '}'. InvalidArgument when there is none.
Result<nlohmann::json> ExtractJsonFromText(std::string_view text);

// The wire forms (OpenAI chat format).
nlohmann::json ChatMessageToJson(const ChatMessage& message);
Result<ChatMessage> ChatMessageFromJson(const nlohmann::json& j);

}  // namespace msp

#endif  // MSP_PROVIDER_CHAT_CLIENT_H_
