// ChatClient: OpenAI-compatible chat completions, JSON replies with schema
// validation, and the response_format fallback chain.
#include "provider/chat_client.h"

#include <algorithm>

#include "codec/json_schema.h"
#include "util/text.h"

namespace msp {
namespace {

using json = nlohmann::json;

constexpr const char* kChatPath = "/chat/completions";

std::string Head(std::string_view s, size_t n) {
  std::string out(s.substr(0, n));
  if (s.size() > n) out += "...";
  return out;
}

// True when a 400 says the server does not take this response_format.
bool RejectsResponseFormat(const Status& s) {
  if (s.code() != StatusCode::kInvalidArgument) return false;
  const std::string m = AsciiLower(s.message());
  return m.find("response_format") != std::string::npos || m.find("json_schema") != std::string::npos ||
         m.find("json_object") != std::string::npos || m.find("response format") != std::string::npos;
}

ResponseFormat Next(ResponseFormat f) {
  return f == ResponseFormat::kJsonSchema ? ResponseFormat::kJsonObject : ResponseFormat::kPromptOnly;
}

// The end of the JSON value that opens at text[start] ('{' or '['), or npos.
size_t MatchingClose(std::string_view text, size_t start) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

// The schema as sent in response_format: without the value bounds
// (minimum, maximum, minLength, ...) that strict structured-output servers
// reject (OpenAI answers 400 "'minimum' is not permitted"). The reply is
// still checked against the full schema here.
json WireSchema(const json& schema) {
  if (schema.is_array()) {
    json out = json::array();
    for (const auto& x : schema) out.push_back(WireSchema(x));
    return out;
  }
  if (!schema.is_object()) return schema;
  json out = json::object();
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    const std::string& k = it.key();
    if (k == "minimum" || k == "maximum" || k == "minLength" || k == "maxLength" || k == "minItems" ||
        k == "maxItems") {
      continue;
    }
    // Under "properties" the keys are property names, not keywords.
    if (k == "properties" && it->is_object()) {
      json props = json::object();
      for (auto p = it->begin(); p != it->end(); ++p) props[p.key()] = WireSchema(p.value());
      out[k] = std::move(props);
    } else {
      out[k] = WireSchema(it.value());
    }
  }
  return out;
}

}  // namespace

Result<ResponseFormat> ParseResponseFormat(std::string_view name) {
  if (name == "auto") return ResponseFormat::kAuto;
  if (name == "json_schema") return ResponseFormat::kJsonSchema;
  if (name == "json_object") return ResponseFormat::kJsonObject;
  if (name == "prompt") return ResponseFormat::kPromptOnly;
  return Status::InvalidArgument("unknown response format '" + std::string(name) +
                                 "' (known: auto, json_schema, json_object, prompt)");
}

std::string_view ResponseFormatName(ResponseFormat format) {
  switch (format) {
    case ResponseFormat::kAuto: return "auto";
    case ResponseFormat::kJsonSchema: return "json_schema";
    case ResponseFormat::kJsonObject: return "json_object";
    case ResponseFormat::kPromptOnly: return "prompt";
  }
  return "auto";
}

json ChatMessageToJson(const ChatMessage& m) {
  json j{{"role", m.role}};
  if (m.content.empty() && !m.tool_calls.empty()) {
    j["content"] = nullptr;
  } else {
    j["content"] = m.content;
  }
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : m.tool_calls) {
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    j["tool_calls"] = calls;
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) j["name"] = m.name;
  return j;
}

Result<ChatMessage> ChatMessageFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a chat message must be a JSON object");
  ChatMessage m;
  m.role = j.value("role", std::string("assistant"));
  if (auto c = j.find("content"); c != j.end()) {
    if (c->is_string()) {
      m.content = c->get<std::string>();
    } else if (c->is_array()) {
      // Content parts: [{"type": "text", "text": "..."}].
      for (const auto& part : *c) {
        if (part.is_object() && part.contains("text") && part["text"].is_string()) {
          m.content += part["text"].get<std::string>();
        }
      }
    } else if (!c->is_null()) {
      return Status::InvalidArgument("message content must be a string, an array or null");
    }
  }
  if (auto calls = j.find("tool_calls"); calls != j.end() && !calls->is_null()) {
    if (!calls->is_array()) return Status::InvalidArgument("tool_calls must be an array");
    for (const auto& c : *calls) {
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) {
        return Status::InvalidArgument("a tool call needs a 'function' object");
      }
      const json& f = c["function"];
      ToolCall call;
      call.id = c.value("id", std::string());
      call.name = f.value("name", std::string());
      if (call.name.empty()) return Status::InvalidArgument("a tool call has no function name");
      if (auto a = f.find("arguments"); a != f.end()) {
        call.arguments = a->is_string() ? a->get<std::string>() : a->dump();
      } else {
        call.arguments = "{}";
      }
      m.tool_calls.push_back(std::move(call));
    }
  }
  if (auto id = j.find("tool_call_id"); id != j.end() && id->is_string()) m.tool_call_id = id->get<std::string>();
  if (auto n = j.find("name"); n != j.end() && n->is_string()) m.name = n->get<std::string>();
  return m;
}

Result<json> ExtractJsonFromText(std::string_view input) {
  std::string text(input);
  // Reasoning models wrap their thoughts in <think>...</think>.
  for (size_t open; (open = text.find("<think>")) != std::string::npos;) {
    size_t close = text.find("</think>", open);
    text.erase(open, close == std::string::npos ? std::string::npos : close + 8 - open);
  }
  // A fenced block: ```json ... ``` or ``` ... ```.
  if (size_t fence = text.find("```"); fence != std::string::npos) {
    size_t body = text.find('\n', fence);
    size_t end = body == std::string::npos ? std::string::npos : text.find("```", body);
    if (end != std::string::npos) text = text.substr(body + 1, end - body - 1);
  }
  text = std::string(TrimAsciiSpace(text));
  json whole = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!whole.is_discarded()) return whole;
  size_t start = text.find_first_of("{[");
  if (start != std::string::npos) {
    size_t end = MatchingClose(text, start);
    if (end != std::string::npos) {
      json part = json::parse(text.substr(start, end - start + 1), nullptr, false);
      if (!part.is_discarded()) return part;
    }
  }
  return Status::InvalidArgument("the reply is not JSON: '" + Head(text, 120) + "'");
}

Result<std::unique_ptr<ChatClient>> ChatClient::Create(const ChatOptions& options) {
  if (options.model.empty()) {
    return Status::InvalidArgument("no chat model configured (set llm.model, e.g. 'llama3.1' or 'gpt-4o-mini')");
  }
  net::HttpClientOptions h;
  h.base_url = options.base_url;
  h.api_key = options.api_key;
  h.connect_timeout_ms = options.connect_timeout_ms;
  h.read_timeout_ms = options.timeout_ms;
  h.max_retries = options.max_retries;
  h.initial_backoff_ms = options.initial_backoff_ms;
  h.sleep = options.sleep;
  auto http = net::HttpClient::Create(std::move(h));
  if (!http.ok()) return http.status().WithContext("llm");
  return std::unique_ptr<ChatClient>(new ChatClient(options, std::move(http).value()));
}

ChatClient::ChatClient(ChatOptions options, std::unique_ptr<net::HttpClient> http)
    : options_(std::move(options)),
      http_(std::move(http)),
      format_(options_.response_format == ResponseFormat::kAuto ? ResponseFormat::kJsonSchema
                                                                : options_.response_format) {}

json ChatClient::RequestBody(const ChatRequest& request) const {
  json body{{"model", options_.model}, {"stream", false}};
  json messages = json::array();
  for (const auto& m : request.messages) messages.push_back(ChatMessageToJson(m));
  body["messages"] = std::move(messages);
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const auto& t : request.tools) {
      tools.push_back({{"type", "function"},
                       {"function", {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
    }
    body["tools"] = std::move(tools);
  }
  if (!request.tool_choice.empty()) body["tool_choice"] = request.tool_choice;
  if (request.temperature >= 0) body["temperature"] = request.temperature;
  if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;
  return body;
}

Result<ChatReply> ChatClient::ParseReply(const json& body) const {
  const std::string where = "chat reply from " + http_->base_url().Join(kChatPath);
  if (!body.is_object() || !body.contains("choices") || !body["choices"].is_array() || body["choices"].empty() ||
      !body["choices"][0].is_object() || !body["choices"][0].contains("message")) {
    return Status::Unavailable(where + " has no choices[0].message: '" + Head(body.dump(), 200) + "'");
  }
  const json& choice = body["choices"][0];
  auto message = ChatMessageFromJson(choice["message"]);
  if (!message.ok()) return Status::Unavailable(where + ": " + message.status().message());
  ChatReply reply;
  reply.message = std::move(message).value();
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
    reply.finish_reason = choice["finish_reason"].get<std::string>();
  }
  if (body.contains("usage") && body["usage"].is_object()) {
    const json& u = body["usage"];
    if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number()) reply.prompt_tokens = u["prompt_tokens"].get<int64_t>();
    if (u.contains("completion_tokens") && u["completion_tokens"].is_number()) {
      reply.completion_tokens = u["completion_tokens"].get<int64_t>();
    }
  }
  return reply;
}

Result<ChatReply> ChatClient::Complete(const ChatRequest& request) const {
  if (request.messages.empty()) return Status::InvalidArgument("a chat request needs at least one message");
  MSP_ASSIGN_OR_RETURN(json body, http_->PostJson(kChatPath, RequestBody(request)));
  return ParseReply(body);
}

Result<ChatReply> ChatClient::SendJson(const std::vector<ChatMessage>& messages, const JsonReplySpec& spec,
                                       ResponseFormat format, bool* rejected) const {
  *rejected = false;
  ChatRequest request;
  request.messages = messages;
  std::string instruction = "Reply with one JSON value only, no prose and no code fences.";
  if (format != ResponseFormat::kJsonSchema) {
    instruction += " It must satisfy this JSON Schema:\n" + spec.schema.dump();
  }
  if (!request.messages.empty() && request.messages.front().role == "system") {
    request.messages.front().content += "\n\n" + instruction;
  } else {
    request.messages.insert(request.messages.begin(), ChatMessage::System(instruction));
  }
  json body = RequestBody(request);
  if (format == ResponseFormat::kJsonSchema) {
    body["response_format"] = {{"type", "json_schema"},
                               {"json_schema", {{"name", spec.name}, {"schema", WireSchema(spec.schema)}, {"strict", true}}}};
  } else if (format == ResponseFormat::kJsonObject) {
    body["response_format"] = {{"type", "json_object"}};
  }
  auto reply = http_->PostJson(kChatPath, body);
  if (!reply.ok()) {
    *rejected = format != ResponseFormat::kPromptOnly && RejectsResponseFormat(reply.status());
    return reply.status();
  }
  return ParseReply(*reply);
}

Result<json> ChatClient::CompleteJson(const std::vector<ChatMessage>& messages, const JsonReplySpec& spec) const {
  if (messages.empty()) return Status::InvalidArgument("a chat request needs at least one message");
  std::vector<ChatMessage> conversation = messages;
  std::string last_error;
  std::string last_text;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ResponseFormat format = format_.load();
    Result<ChatReply> reply = Status::Internal("no request sent");
    for (;;) {
      bool rejected = false;
      reply = SendJson(conversation, spec, format, &rejected);
      if (!reply.ok() && rejected && options_.response_format == ResponseFormat::kAuto) {
        format = Next(format);  // the server does not take it: one step down, for good
        format_.store(format);
        continue;
      }
      break;
    }
    if (!reply.ok()) return reply.status();
    last_text = reply->message.content;
    Status valid;
    auto parsed = ExtractJsonFromText(last_text);
    if (!parsed.ok()) {
      valid = parsed.status();
    } else {
      valid = ValidateJsonSchema(spec.schema, *parsed);
      if (valid.ok() && spec.check) valid = spec.check(*parsed);
    }
    if (valid.ok()) return std::move(parsed).value();
    last_error = valid.message();
    conversation.push_back(ChatMessage::Assistant(last_text));
    conversation.push_back(ChatMessage::User("Your reply is invalid: " + last_error +
                                             ". Reply again with only the corrected JSON."));
  }
  return Status::Unavailable("model '" + options_.model + "' at " + http_->base_url().Join(kChatPath) +
                             " gave an invalid '" + spec.name + "' reply twice; last error: " + last_error +
                             "; reply began: '" + Head(last_text, 160) + "'");
}

}  // namespace msp
