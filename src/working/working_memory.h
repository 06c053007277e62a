// Working memory: the prompt for one model call, packed into a token budget
// (seed 000, section 2.4).
//
// The prompt has nine sections, always in this order:
//   system             "System: {system prompt}"
//   core memory        "Core memory (...):" and one <label chars="n/limit">
//                      block per core memory block (seed 000, 4.6)
//   facts              "Relevant facts from memory:" and "- {label} {fact}"
//                      lines
//   retrieved history  "Earlier conversation (retrieved from memory):" and
//                      "{role} {label}: {text}" lines of older episodes found
//                      by retrieval
//   summary            "Summary of earlier conversation:" and the summary of
//                      history the budget left out (only when summarising)
//   recent history     "Recent conversation history:" and the last K steps
//   tools              "Available tools:" and one schema per line
//   request            "User's current request: {request}"
//   turn               "This turn so far:" and the tool calls and results of
//                      the current turn
// An empty section is left out of the prompt. Sections are separated by one
// empty line.
//
// Stored text is data (util/fence.h): every fact and history entry carries a
// label with its kind, source, trust and short id (the last 8 characters of
// its record id, to keep the label cheap), and its text is fenced, so that
// a further line of it starts with the gutter "  > " and can never pass for
// one of the headers above; core memory values and the summary are fenced
// the same way, tool schemas are put on one line.
//
// Budget = context_tokens - reply_reserve. When the prompt is over budget,
// history is dropped oldest first (FIFO): the retrieved episodes first, then
// the oldest of the recent episodes, until it fits. With a summariser
// (WorkingMemoryPackOptions) the dropped entries are summarised instead, and
// the summary takes their place when it fits (more history is dropped,
// unsummarised, to make room for it if needed). The system prompt, core
// memory, facts, tool schemas, request and turn are never cut: when they
// alone are over budget the packing fails with FailedPrecondition naming
// their sizes and by how much they are over.
#ifndef MSP_WORKING_WORKING_MEMORY_H_
#define MSP_WORKING_WORKING_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"
#include "msp/types.h"
#include "working/tokens.h"

namespace msp {

// A fact chosen by retrieval for this call.
struct WorkingFact {
  std::string id;
  std::string text;
  double score = 0.0;  // the retrieval score, shown in the report
  std::string source;  // the record's source, shown in its label
  bool trusted = false;  // source in policy.context_trusted_sources
};

// One step of history as the model sees it.
struct WorkingEpisode {
  std::string id;
  EpisodeType type = EpisodeType::kUserMessage;
  std::string text;
  std::string tool_name;  // tool calls and results: shown beside the role
  int64_t step_number = 0;
  std::string source;     // the record's source, shown in its label
  bool trusted = false;   // source in policy.context_trusted_sources
};

// The episode an episodic Memory holds: its type and tool name come from
// body_json ({"type": ..., "metadata": {"tool_name": ...}}). InvalidArgument
// when `m` is not an episode or its body has no known type.
Result<WorkingEpisode> WorkingEpisodeFromMemory(const Memory& m);

// A core memory block as the model sees it.
struct WorkingBlock {
  std::string label;   // persona, user, task, ...
  std::string value;
  size_t limit = 0;    // characters; shown beside the block
};

// What the prompt is built from. Each history list is oldest first: the
// packer drops from the front.
struct WorkingMemoryInput {
  std::string system_prompt;
  std::vector<WorkingBlock> core_blocks;       // never cut
  std::vector<WorkingFact> facts;              // in the order to show them
  std::vector<WorkingEpisode> retrieved;       // older episodes found by retrieval
  std::vector<WorkingEpisode> recent;          // the last K steps of the session
  std::vector<std::string> tool_schemas;       // one JSON schema (or text) per tool
  std::string request;                         // the current user request
  std::vector<std::string> turn;               // this turn's tool calls and results, one line each
};

struct WorkingMemoryBudget {
  int64_t context_tokens = 8192;  // the model's context window
  int64_t reply_reserve = 1024;   // kept free for the model's answer
};

enum class WorkingSectionId {
  kSystem, kFacts, kRetrievedHistory, kRecentHistory, kTools, kRequest, kCoreMemory, kSummary, kTurn
};

// "system", "facts", "retrieved history", "recent history", "tools",
// "request", "core memory", "summary", "turn".
std::string_view WorkingSectionName(WorkingSectionId id);

struct WorkingSection {
  WorkingSectionId id = WorkingSectionId::kSystem;
  std::string text;   // as it appears in the prompt, header included; empty if left out
  size_t tokens = 0;  // Count(text)
  size_t items = 0;   // facts, episodes or tools kept (1 for system and request when set)
};

// A history entry the budget left out.
struct DroppedEpisode {
  WorkingSectionId section = WorkingSectionId::kRetrievedHistory;
  std::string id;
  int64_t step_number = 0;
  size_t tokens = 0;  // what its line would have cost
  bool summarised = false;  // covered by the summary section
};

struct WorkingMemory {
  // All nine sections in prompt order (empty ones included, with empty text).
  std::vector<WorkingSection> sections;
  // Count of the rendered prompt as one text (it can differ slightly from
  // the sum of the section counts). Always <= budget.
  size_t total_tokens = 0;
  size_t budget = 0;
  std::string counter_name;  // the TokenCounter used
  // The facts in the prompt, with id and score (for the report).
  std::vector<WorkingFact> facts;
  std::vector<DroppedEpisode> dropped;  // in the order they were dropped
  bool summarised = false;              // the summary section holds dropped history
  std::string summary_error;            // why dropped history was not summarised, if it was not

  const WorkingSection& section(WorkingSectionId id) const;
  // The prompt: the non-empty sections joined by one empty line.
  std::string Render() const;
  // The sections before `id` (in prompt order), joined as Render() does:
  // e.g. what goes into a system message ahead of the request.
  std::string RenderBefore(WorkingSectionId id) const;
  // For people: "== facts (123 tokens, 4 items) ==" then the section's text,
  // per section; then what was dropped and the total against the budget.
  std::string Report() const;
};

// Summarises history the budget leaves out (oldest first); used when a
// model is configured. An error or empty text leaves the history dropped.
using HistorySummariser = std::function<Result<std::string>(const std::vector<WorkingEpisode>& dropped)>;

struct WorkingMemoryPackOptions {
  HistorySummariser summarise;  // empty: drop history (FIFO) without a summary
};

// Packs `input` into budget.context_tokens - budget.reply_reserve tokens as
// counted by `counter` (see the file comment for the order and what is
// dropped). InvalidArgument when the budget is not positive or reply_reserve
// is negative; FailedPrecondition when the sections that are never cut do
// not fit.
Result<WorkingMemory> PackWorkingMemory(const WorkingMemoryInput& input, const WorkingMemoryBudget& budget,
                                        const TokenCounter& counter,
                                        const WorkingMemoryPackOptions& options = {});

// The text of one history entry as the prompt shows it:
// "{Role} ({tool}) [episode · from {source} · {trust} · id {short id}]:
// {text}", the text fenced (util/fence.h; ShortId: the id's last 8 characters).
std::string WorkingEpisodeLine(const WorkingEpisode& e);

}  // namespace msp

#endif  // MSP_WORKING_WORKING_MEMORY_H_
