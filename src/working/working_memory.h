// Working memory: the prompt for one model call, packed into a token budget
// (seed 000, section 2.4).
//
// The prompt has six sections, always in this order:
//   system             "System: {system prompt}"
//   facts              "Relevant facts from memory:" and "- {fact}" lines
//   retrieved history  "Earlier conversation (retrieved from memory):" and
//                      "{role}: {text}" lines of older episodes found by retrieval
//   recent history     "Recent conversation history:" and the last K steps
//   tools              "Available tools:" and one schema per line
//   request            "User's current request: {request}"
// An empty section is left out of the prompt. Sections are separated by one
// empty line.
//
// Budget = context_tokens - reply_reserve. When the prompt is over budget,
// history is dropped oldest first (FIFO): the retrieved episodes first, then
// the oldest of the recent episodes, until it fits. The system prompt, the
// facts, the tool schemas and the request are never cut: when they alone are
// over budget the packing fails with FailedPrecondition naming their sizes.
#ifndef MSP_WORKING_WORKING_MEMORY_H_
#define MSP_WORKING_WORKING_MEMORY_H_

#include <cstddef>
#include <cstdint>
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
};

// One step of history as the model sees it.
struct WorkingEpisode {
  std::string id;
  EpisodeType type = EpisodeType::kUserMessage;
  std::string text;
  std::string tool_name;  // tool calls and results: shown beside the role
  int64_t step_number = 0;
};

// The episode an episodic Memory holds: its type and tool name come from
// body_json ({"type": ..., "metadata": {"tool_name": ...}}). InvalidArgument
// when `m` is not an episode or its body has no known type.
Result<WorkingEpisode> WorkingEpisodeFromMemory(const Memory& m);

// What the prompt is built from. Each history list is oldest first: the
// packer drops from the front.
struct WorkingMemoryInput {
  std::string system_prompt;
  std::vector<WorkingFact> facts;              // in the order to show them
  std::vector<WorkingEpisode> retrieved;       // older episodes found by retrieval
  std::vector<WorkingEpisode> recent;          // the last K steps of the session
  std::vector<std::string> tool_schemas;       // one JSON schema (or text) per tool
  std::string request;                         // the current user request
};

struct WorkingMemoryBudget {
  int64_t context_tokens = 8192;  // the model's context window
  int64_t reply_reserve = 1024;   // kept free for the model's answer
};

enum class WorkingSectionId { kSystem, kFacts, kRetrievedHistory, kRecentHistory, kTools, kRequest };

// "system", "facts", "retrieved history", "recent history", "tools", "request".
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
};

struct WorkingMemory {
  // All six sections in prompt order (empty ones included, with empty text).
  std::vector<WorkingSection> sections;
  // Count of the rendered prompt as one text (it can differ slightly from
  // the sum of the section counts). Always <= budget.
  size_t total_tokens = 0;
  size_t budget = 0;
  std::string counter_name;  // the TokenCounter used
  // The facts in the prompt, with id and score (for the report).
  std::vector<WorkingFact> facts;
  std::vector<DroppedEpisode> dropped;  // in the order they were dropped

  const WorkingSection& section(WorkingSectionId id) const;
  // The prompt: the non-empty sections joined by one empty line.
  std::string Render() const;
  // For people: "== facts (123 tokens, 4 items) ==" then the section's text,
  // per section; then what was dropped and the total against the budget.
  std::string Report() const;
};

// Packs `input` into budget.context_tokens - budget.reply_reserve tokens as
// counted by `counter` (see the file comment for the order and what is
// dropped). InvalidArgument when the budget is not positive or reply_reserve
// is negative; FailedPrecondition when the system prompt, facts, tools and
// request alone do not fit.
Result<WorkingMemory> PackWorkingMemory(const WorkingMemoryInput& input, const WorkingMemoryBudget& budget,
                                        const TokenCounter& counter);

}  // namespace msp

#endif  // MSP_WORKING_WORKING_MEMORY_H_
