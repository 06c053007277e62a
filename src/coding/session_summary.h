// Session summaries of a coding agent (docs/coding-agents.md, "Session
// summaries" and "The session index"): at SessionEnd, a rule-based record of
// the session (what was asked, files changed, commands run and which failed,
// decisions mentioned, the outcome) built from its captured prompts and tool
// observations, stored once under an id derived from the session (so a hook
// that fires twice writes nothing new) with provenance to the episodes and
// prompts it was made from. At SessionStart, an index of the last sessions of
// the repository and branch, one line each, that the MCP tools open by id.
#ifndef MSP_CODING_SESSION_SUMMARY_H_
#define MSP_CODING_SESSION_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "coding/observation.h"
#include "coding/prompt_record.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

inline constexpr char kSessionSummaryTag[] = "session-summary";
// The source of summary records (RecentSessionSummaries lists by it).
inline constexpr char kSessionSummarySource[] = "consolidation";

// What a session summary holds.
struct SessionSummary {
  std::string session_id;
  std::string repository;
  std::string branch;
  std::string reason;                   // SessionEnd's reason (clear, logout, prompt_input_exit, other)
  TimeMs started_at = 0, ended_at = 0;
  std::vector<std::string> asked;       // the prompts, oldest first (each cut to 300 characters)
  std::vector<std::string> files_changed;  // by observations, in first-touched order
  std::vector<std::string> files_read;
  struct Command {
    std::string command;
    int exit_code = -1;
    bool failed = false;
  };
  std::vector<Command> commands;        // Bash observations, in order
  size_t tool_uses = 0;
  size_t failures = 0;                  // failed tool uses (commands included)
  std::vector<std::string> decisions;   // sentences of the prompts that state a decision
  std::string outcome;                  // one line
  // The session in prose by a chat model (session_narrative.h), or empty;
  // who made the summary: "rules", or "llm:<model>" with a narrative.
  std::string narrative;
  std::string made_by = "rules";
  std::vector<ProvenanceRef> provenance;  // the episodes and prompt commits it was made from
};

// The summary of `session_id` from its prompts (oldest first) and its
// observation episodes (Memory records whose body holds an observation;
// others are skipped). `end` is the time of the SessionEnd hook.
SessionSummary SummarizeSession(const std::string& session_id, const std::vector<CapturedPrompt>& prompts,
                                const std::vector<Memory>& episodes, TimeMs end);

// Sentences of `text` that state a decision ("we decided", "let's use",
// "go with", "from now on", "instead of", "don't use", ...).
std::vector<std::string> DecisionSentences(const std::string& text);

// The record's text (markdown, what search and get return; a narrative
// comes first, under "## Summary (<made_by>)") and body (JSON).
std::string SessionSummaryText(const SessionSummary& s);
std::string SessionSummaryBody(const SessionSummary& s);

// The stable id of a session's summary record in `tenant`: NameUuid of
// "msp/coding/session-summary/<tenant>/<session>".
std::string SessionSummaryId(const std::string& tenant, const std::string& session_id);

// Writes the summary record (kind event, layer episodic, tags claude-code,
// session-summary, repository:<path>, branch:<name>) in `scope` (tenant,
// user, mission; no session) under SessionSummaryId. Written once: when the
// record exists already nothing is written and `*written` is false.
Result<Memory> WriteSessionSummary(MemoryLayer& engine, const Namespace& scope, const SessionSummary& s,
                                   const std::string& actor, bool* written);

// One line of the session index:
// "- <start, UTC minute> [session <id 8> · record <uuid>] asked: "<first
// prompt cut>" (+N more) · files: a, b (+N) · outcome: ... · details ~T tokens"
// where T is the record text's token count.
std::string SessionIndexLine(const Memory& summary, size_t detail_tokens);

class TokenCounter;

// The SessionStart index: "# Last sessions on this repository and branch
// (most recent first; open one by its record id: memory_get or msp
// get)" and a SessionIndexLine per summary, the details' tokens counted with
// `counter`; the oldest lines dropped until it fits in `budget` tokens
// (counted with `counter`). "" when there are none or none fits.
std::string SessionIndexSection(const std::vector<Memory>& summaries, const TokenCounter& counter, int64_t budget);

// How many sessions the SessionStart index lists at most.
inline constexpr size_t kSessionIndexSessions = 5;

// The session summaries of `repository` (and `branch` when not empty) in
// `scope`, newest first, at most `limit`.
Result<std::vector<Memory>> RecentSessionSummaries(MemoryLayer& engine, const Namespace& scope,
                                                   const std::string& repository, const std::string& branch,
                                                   size_t limit);

}  // namespace msp

#endif  // MSP_CODING_SESSION_SUMMARY_H_
