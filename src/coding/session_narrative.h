// A coding session's summary in prose, through the configured chat model
// (hooks.session_summary = llm, or auto with llm.model set; docs/
// coding-agents.md, "Session summaries"). The rule-based summary
// (session_summary.h) is always made; the model turns it into one short
// paragraph that the summary record carries beside the rules' sections, with
// the model named as its maker. The SessionEnd hook must not keep a closing
// agent waiting: one attempt, a few seconds at most, and on any failure the
// rule-based summary is written alone.
#ifndef MSP_CODING_SESSION_NARRATIVE_H_
#define MSP_CODING_SESSION_NARRATIVE_H_

#include <cstddef>
#include <string>

#include "coding/session_summary.h"
#include "config/settings.h"
#include "msp/status.h"
#include "provider/chat_client.h"

namespace msp {

// True when SessionEnd summaries go through the chat model: session_summary
// is "llm", or "auto" and llm.model is set.
bool SessionSummaryUsesModel(const CodingOptions& coding, const LlmOptions& llm);

// `options` held to the hook's limits: read timeout at most 6 s, connect at
// most 2 s, no retries.
ChatOptions SessionNarrativeChatOptions(ChatOptions options);

// Longest narrative kept, in characters.
inline constexpr size_t kSessionNarrativeChars = 600;

// The model's paragraph about session `s` (from SessionSummaryText, cut to
// 12,000 characters): whitespace runs as one space, at most
// kSessionNarrativeChars characters. Errors: the client's, or
// InvalidArgument when the model's paragraph is empty.
Result<std::string> NarrateSessionWithModel(const ChatClient& chat, const SessionSummary& s);

}  // namespace msp

#endif  // MSP_CODING_SESSION_NARRATIVE_H_
