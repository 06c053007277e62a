// Session summaries in prose through a chat model (see session_narrative.h).
#include "coding/session_narrative.h"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/text.h"
#include "util/utf8.h"

namespace msp {

namespace {

constexpr size_t kInputChars = 12000;
constexpr int kTimeoutMs = 6000;
constexpr int kConnectTimeoutMs = 2000;

}  // namespace

bool SessionSummaryUsesModel(const CodingOptions& coding, const LlmOptions& llm) {
  return coding.session_summary == ModelChoice::kLlm || (coding.session_summary == ModelChoice::kAuto && !llm.model.empty());
}

ChatOptions SessionNarrativeChatOptions(ChatOptions options) {
  options.timeout_ms = std::min(options.timeout_ms, kTimeoutMs);
  options.connect_timeout_ms = std::min(options.connect_timeout_ms, kConnectTimeoutMs);
  options.max_retries = 0;
  return options;
}

Result<std::string> NarrateSessionWithModel(const ChatClient& chat, const SessionSummary& s) {
  std::string facts = SessionSummaryText(s);
  if (Utf8Chars(facts) > kInputChars) facts = CapUtf8Chars(facts, kInputChars);
  JsonReplySpec spec;
  spec.name = "session_summary";
  spec.schema = {{"type", "object"},
                 {"properties", {{"summary", {{"type", "string"}, {"minLength", 1}}}}},
                 {"required", {"summary"}},
                 {"additionalProperties", false}};
  const std::vector<ChatMessage> messages = {
      ChatMessage::System(
          "You summarise a developer's session with a coding agent for whoever works on the repository next. "
          "From the session record you are given, write one paragraph of at most four sentences: what was "
          "asked, what was changed, what failed or is left open, and any decision taken. Use only what the "
          "record says; name files and commands exactly as written there."),
      ChatMessage::User(facts)};
  MSP_ASSIGN_OR_RETURN(nlohmann::json reply, chat.CompleteJson(messages, spec));
  std::string text = CollapseAsciiSpace(reply["summary"].get<std::string>());
  if (text.empty()) return Status::InvalidArgument("the model's session summary was empty");
  if (!IsValidUtf8(text)) text = EscapeInvalidUtf8(text);
  if (Utf8Chars(text) > kSessionNarrativeChars) {
    // Cut between characters, the ellipsis inside the limit.
    text = std::string(Utf8PrefixChars(text, kSessionNarrativeChars - 1)) + "…";
  }
  return text;
}

}  // namespace msp
