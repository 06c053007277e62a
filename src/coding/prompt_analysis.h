// What `msp prompts` computes over captured prompts: search, intent labels
// (a documented rule-based classifier, or a chat model), topic frequencies
// over time and switches between projects per day.
//
// Pure functions over CapturedPrompt values (the model client aside); the
// times are UTC.
#ifndef MSP_CODING_PROMPT_ANALYSIS_H_
#define MSP_CODING_PROMPT_ANALYSIS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coding/prompt_store.h"
#include "msp/status.h"

namespace msp {

class ChatClient;

enum class Intent { kQuestion, kInstruction, kCorrection, kApproval };
std::string_view IntentName(Intent intent);  // "question", "instruction", "correction", "approval"
std::optional<Intent> ParseIntent(std::string_view name);

// The rule-based classifier (docs/coding-agents.md lists the rules):
//  1. approval: at most 8 words, and the text is (or starts with) an assent
//     ("yes", "ok", "lgtm", "looks good", "go ahead", "thanks", ...) with no
//     question mark and no "but";
//  2. correction: starts with a rejection or a redirect ("no", "wrong",
//     "that's not", "actually", "instead", "revert", "undo", "you forgot",
//     "still fails", ...) or contains "not what I" / "that broke";
//  3. question: ends with '?' (ignoring trailing spaces), or starts with a
//     question word (what, why, how, where, when, which, who, is, are, does,
//     do, did, should, ...) and not with a polite request ("can you",
//     "could you", "would you", "will you", "please");
//  4. instruction: everything else.
Intent ClassifyIntent(std::string_view prompt);

// Labels from a chat model (JSON-schema output), 20 prompts a request.
// Errors: the client's (Unavailable, ...).
Result<std::vector<Intent>> ClassifyIntentsWithModel(const ChatClient& chat, const std::vector<std::string>& prompts);

// Lower-case word terms of `text` (letters, digits, '_', '-', '.'; 2..40
// bytes; English stop words and pure numbers removed).
std::vector<std::string> PromptTerms(std::string_view text);

// The project a prompt belongs to: the last component of its repository
// path, or "(none)".
std::string ProjectOf(const CapturedPrompt& p);

struct PromptMatch {
  size_t index = 0;    // into the searched prompts
  double score = 0.0;  // sum of idf of the query terms the prompt holds
};
// Prompts holding at least one of the query's terms, best first (ties: newest
// first); at most `limit` (0: all).
std::vector<PromptMatch> SearchPrompts(const std::vector<CapturedPrompt>& prompts, std::string_view query,
                                       size_t limit);

enum class Period { kDay, kWeek, kMonth };
std::optional<Period> ParsePeriod(std::string_view name);  // day, week, month
// "2026-11-30", "2026-W48" (ISO week), "2026-11".
std::string PeriodLabel(TimeMs t, Period period);

// Topic frequencies: the `top` terms found in most prompts overall, and per
// period how many prompts held each.
struct TopicTable {
  std::vector<std::string> periods;          // oldest first
  std::vector<std::string> topics;           // most frequent first
  std::vector<size_t> totals;                // per topic: prompts holding it
  std::vector<std::vector<size_t>> counts;   // [topic][period]
};
TopicTable TopicFrequencies(const std::vector<CapturedPrompt>& prompts, Period period, size_t top);

// Switches between projects: per day (UTC), prompts are taken in time order
// and a switch is a prompt whose project differs from the one before it
// that day.
struct SwitchDay {
  std::string day;
  size_t prompts = 0;
  size_t projects = 0;   // distinct projects that day
  size_t switches = 0;
  // "from -> to" with counts, most frequent first.
  std::vector<std::pair<std::string, size_t>> transitions;
};
std::vector<SwitchDay> ProjectSwitches(const std::vector<CapturedPrompt>& prompts);

}  // namespace msp

#endif  // MSP_CODING_PROMPT_ANALYSIS_H_
