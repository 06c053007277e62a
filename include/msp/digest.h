// Mission retrieval (seed 003): workflow_memory_query, the retrieval log and
// the retrieval-correction signal, redundancy, handoff digests, mission
// events and degraded mode.
//
// Everything is built on the public engine API (MemoryLayer) and on the
// mission records of msp/mission.h (decisions, corrections, operators and
// their clearance). Formats (record bodies, digest Markdown and JSON) are in
// docs/mission.md.
//
// Records this part writes (all through MemoryLayer::Commit):
//   mission events  Kind::kEvent, Layer::kWorkflow, ns {tenant, mission},
//                   body {type, component, cause, resolves, operator}
//   retrieval logs  Kind::kEvent, Layer::kWorkflow, ns {tenant, mission,
//                   session}, EMPTY text (never matches a search), body
//                   {type:"retrieval", query, scope, operator, served:[{id,
//                   layer, score, tokens}], tokens_used, counter, degraded,
//                   alpha, used:[id]}; the record id is the retrieval id.
//
// Token counts: every budget and figure is counted with msp's one token
// counter (the tokens.* settings, src/working/tokens.h: cl100k when its
// vocabulary is installed, else the estimate); its name is reported beside
// every figure ("counter").
//
// Access: query and handoff serve only records whose access_level is at or
// below the asker's clearance (ResolveClearance of msp/mission.h; 0 for an
// unknown operator); counts (event rates, escalation) count only those
// records too.
//
// Thread-safety: a WorkflowMemory holds no mutable state besides the engine
// it points to (thread-safe) and may be used by several threads.
#ifndef MSP_DIGEST_H_
#define MSP_DIGEST_H_

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "msp/memory.h"
#include "msp/mission.h"
#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

class TokenCounter;

// ------------------------------------------------------------ degraded mode

// Criticality on [0, 1]: low 0.25, normal 0.5, high 0.75, critical 1.0.
double CriticalityWeight(Criticality c);
// alpha = min(1, max(0, (rate - capacity) / capacity)): 0 at or below
// capacity, rising linearly to 1 at twice the capacity. capacity <= 0
// switches degraded mode off (alpha 0).
double DegradedAlpha(double rate_per_min, double capacity_per_min);
// alpha * CriticalityWeight(c) + (1 - alpha) * similarity.
double DegradedScore(double alpha, Criticality c, double similarity);

// The load a ranking was made under.
struct LoadState {
  double rate_per_min = 0.0;      // mission events per minute over the window
  int64_t events_in_window = 0;
  int window_min = 0;
  double capacity_per_min = 0.0;
  double alpha = 0.0;
  bool degraded = false;          // alpha > 0
  // mission.degraded_mode: "auto" (by the rate), or set by hand to
  // "degraded" (alpha at least 0.5) or "normal" (alpha 0).
  std::string mode = "auto";
};

// ------------------------------------------------------------------- events

// Event types a caller may store. "retrieval" is reserved for the log.
// incident, alert, question, threat, change, resolution.
bool IsEventType(std::string_view type);

struct EventRequest {
  Namespace mission;              // tenant + mission (required)
  std::string type;               // IsEventType
  std::string component;          // IsMissionIdentifier; required
  Criticality criticality = Criticality::kNormal;
  std::string text;               // what happened; 1..8,000 bytes
  std::string cause_id;           // optional: the event that caused this one (must exist)
  std::string resolves_id;        // optional: the question / threat this resolves (must exist)
  std::string operator_id;        // who reported it (optional)
  int access_level = 0;           // 0..9
  std::vector<std::string> tags;
  std::string actor;              // audit
};

struct MissionEvent {
  std::string id;
  std::string type;
  std::string component;
  Criticality criticality = Criticality::kNormal;
  std::string text;
  std::string cause_id;
  std::string resolves_id;
  std::string operator_id;
  int access_level = 0;
  TimeMs created_at = 0;
};

// A mission event read back from its record; InvalidArgument when `m` is
// not a mission event (retrieval logs included).
Result<MissionEvent> EventFromMemory(const Memory& m);

// ---------------------------------------------------------------- the query

enum class QueryScope { kAll, kDomain, kWorkflow, kPractitioner };
// "all", "domain", "workflow", "practitioner".
std::string_view QueryScopeName(QueryScope s);
std::optional<QueryScope> ParseQueryScope(std::string_view s);

struct QueryFilters {
  std::string component;                   // empty: any (body "component" or tag "component:X")
  std::vector<Criticality> criticalities;  // empty: any
  TimeMs from = 0;                         // created_at >= from (0: unbounded)
  TimeMs to = 0;                           // created_at < to (0: unbounded)
};

struct MissionQuery {
  Namespace mission;                // tenant + mission (required); session: logged for redundancy
  std::string task_description;     // required, non-empty
  std::string title;                // the digest's heading (one line, 300 characters); empty: the task description's first 120
  QueryScope scope = QueryScope::kAll;
  int64_t token_budget = 8000;      // >= 0; the Markdown digest never exceeds it
  QueryFilters filters;
  Asker asker;                      // clearance; practitioner entries are the asker's own
  std::string actor;                // audit of the retrieval-log write
};

struct DigestEntry {
  std::string id;
  Layer layer = Layer::kWorkflow;
  Kind kind = Kind::kFact;
  double score = 0.0;       // the ranking score (similarity, or the degraded mix)
  double similarity = 0.0;  // SearchHit::score (0 for a criticality-only candidate)
  Criticality criticality = Criticality::kNormal;
  int access_level = 0;
  std::string component;
  std::string title;        // a decision's title; else empty
  std::string text;         // as shown (cut when truncated)
  std::vector<ProvenanceRef> provenance;
  std::string source;       // Memory::source (shown when there is no provenance)
  std::string event_type;   // events: incident, alert, ...; else empty
  TimeMs created_at = 0;
  size_t tokens = 0;        // tokens of the entry's lines in the digest
  bool truncated = false;   // shown as an excerpt (the full record is `id`)
  // Near-duplicates collapsed into this entry (mission.near_duplicate):
  // their number (this one included; 1 when alone) and the time span.
  int duplicates = 1;
  std::vector<std::string> duplicate_ids;  // the others, by rank
  TimeMs first_at = 0;
  TimeMs last_at = 0;
};

struct QueryDigest {
  std::string retrieval_id;         // the retrieval-log record's id
  std::string markdown;             // Count(markdown) <= token_budget
  std::string json;                 // the structured form (docs/mission.md)
  size_t tokens_used = 0;           // Count(markdown)
  int64_t token_budget = 0;
  std::string counter;              // the token counter's name
  int clearance = 0;
  std::vector<DigestEntry> served;  // in digest order (section, then rank)
  std::vector<DigestEntry> left_out;  // candidates the budget left out, by rank
  LoadState load;
};

// -------------------------------------------------------- usage and reports

struct MarkUsedResult {
  std::string retrieval_id;
  std::vector<std::string> used;    // every entry marked used so far
  size_t served = 0;
};

struct CorrectionWeek {
  std::string week;                 // ISO week, "2026-W03"
  int64_t retrievals = 0;           // retrievals logged that week
  int64_t corrections = 0;          // corrections linked to those retrievals
  int64_t corrected_retrievals = 0; // retrievals with at least one
  double rate = 0.0;                // corrections / retrievals (0 without retrievals)
};

struct CorrectionComponent {
  std::string component;
  int64_t corrections = 0;          // linked corrections on this component
  double rate = 0.0;                // / all retrievals of the period
};

struct CorrectionsReport {
  std::vector<CorrectionWeek> weeks;            // oldest first
  std::vector<CorrectionComponent> components;  // most corrections first
  int64_t retrievals = 0;
  int64_t linked_corrections = 0;   // naming a retrieval of the period
  int64_t unlinked_corrections = 0; // naming none (or an unknown one), created in the period
  double rate = 0.0;
};

struct RedundancySession {
  std::string session;              // the query's session; "" when none was given
  int64_t retrievals = 0;
  int64_t marked_retrievals = 0;    // with at least one entry marked used
  int64_t served_entries = 0;
  int64_t used_entries = 0;
  int64_t served_tokens = 0;
  int64_t used_tokens = 0;
  double unused_share_tokens = 0.0; // (served - used) / served; 0 when nothing served
  double unused_share_count = 0.0;
};

struct RedundancyReport {
  std::vector<RedundancySession> sessions;  // by session id
  RedundancySession total;                  // session "" summed over all
  std::string counter;
};

// ------------------------------------------------------------------ handoff

struct HandoffRequest {
  Namespace mission;                // tenant + mission (required)
  std::string from_operator;        // the predecessor (required)
  std::string to_operator;          // the next operator: their clearance applies (required)
  TimeMs since = 0;                 // decisions and events from then on (0: all)
  int64_t token_budget = 8000;
  std::optional<int> clearance;     // trusted callers only: overrides to_operator's
};

struct Escalation {
  std::string component;
  int64_t recent = 0;               // events in the last window
  int64_t earlier = 0;              // events in the window before
};

struct CountedName {
  std::string name;
  int64_t count = 0;
};

struct HandoffDigest {
  std::string markdown;             // Count(markdown) <= token_budget
  std::string json;
  size_t tokens_used = 0;
  int64_t token_budget = 0;
  std::string counter;
  int clearance = 0;
  std::vector<std::string> timeline;      // record ids in digest order (causes before effects)
  std::vector<std::string> decisions;     // decision ids since `since` (current ones; a superseded
                                          // one is shown inside its successor's entry)
  std::vector<std::string> superseded_hidden;  // superseded ones left out: successor not visible
  std::vector<std::string> open_questions;
  std::vector<std::string> open_threats;
  std::vector<Escalation> escalating;
  std::vector<CountedName> correction_classes;   // the predecessor's, most frequent first
  std::vector<CountedName> attention_components; // components of their corrections
  size_t left_out = 0;                    // items the budget left out
  LoadState load;
};

// ------------------------------------------------------------ the interface

class WorkflowMemory {
 public:
  // The usual way in: options.mission, and the token counter the tokens.*
  // settings name (MakeTokenCounter(options.tokens); its errors, e.g. a
  // missing cl100k vocabulary, are returned).
  static Result<std::unique_ptr<WorkflowMemory>> Open(MemoryLayer& engine, const Options& options,
                                                      std::shared_ptr<Clock> clock = nullptr);
  // `engine` must outlive this object. `clock`: nullptr = the system clock
  // (give the engine's clock, so that "now" agrees with created_at). Tokens
  // are counted with the built-in default counter (Open: the tokens.*
  // settings' counter).
  WorkflowMemory(MemoryLayer& engine, MissionOptions options, std::shared_ptr<Clock> clock = nullptr);
  ~WorkflowMemory();
  // The same settings, clock and token counter over `engine`, typically
  // AsCaller's layer (msp/caller.h): every call of the copy is then made as
  // that caller. Cheap (nothing is loaded); `engine` must outlive it.
  std::unique_ptr<WorkflowMemory> Over(MemoryLayer& engine) const;
  WorkflowMemory(const WorkflowMemory&) = delete;
  WorkflowMemory& operator=(const WorkflowMemory&) = delete;

  // workflow_memory_query: routes the task description to the layers of
  // `scope` (domain and workflow in the mission; practitioner: the asker's
  // own corrections), ranks by relevance (or the degraded mix under load),
  // and packs a digest of at most token_budget tokens. Logs the retrieval
  // (its id is QueryDigest::retrieval_id).
  Result<QueryDigest> Query(const MissionQuery& query);

  // Stores a mission event. InvalidArgument for an unknown type, a bad
  // component, an empty text, or a cause / resolves id that names no event
  // of the mission.
  Result<MissionEvent> AddEvent(const EventRequest& request);
  // The mission's events with created_at in [from, to) (0: unbounded) whose
  // access level is at most `clearance` (nullopt: all), oldest first.
  Result<std::vector<MissionEvent>> Events(const Namespace& mission, TimeMs from, TimeMs to,
                                           std::optional<int> clearance);
  // The event rate over mission.rate_window_min ending now, and alpha.
  Result<LoadState> Load(const Namespace& mission, std::optional<int> clearance);

  // Marks served entries of a retrieval as used (a compare-and-swap update
  // of the retrieval-log record; marks accumulate). InvalidArgument when an
  // id was not served by that retrieval; NotFound for an unknown retrieval,
  // and for one logged above `clearance` (nullopt: no limit), whose served
  // entries the asker may not see.
  Result<MarkUsedResult> MarkUsed(const Namespace& mission, const std::string& retrieval_id,
                                  const std::vector<std::string>& entry_ids, const std::string& actor,
                                  std::optional<int> clearance = std::nullopt);

  // The retrieval-correction signal over retrievals logged in [from, to).
  Result<CorrectionsReport> Corrections(const Namespace& mission, TimeMs from, TimeMs to);
  // One JSON line per linked correction: {retrieval_id, query, week,
  // served:[{id, layer, score, text}], corrected_to:{id, class, category,
  // component, outcome, summary, operator}}. Returns the number of lines.
  Result<int64_t> ExportCorrectionPairs(const Namespace& mission, TimeMs from, TimeMs to, std::ostream& out);
  // Served-but-unused context per session, over retrievals logged in [from, to).
  Result<RedundancyReport> Redundancy(const Namespace& mission, TimeMs from, TimeMs to);

  // The handoff digest for the next operator (docs/mission.md).
  Result<HandoffDigest> Handoff(const HandoffRequest& request);

  // The tokens of `text` as every figure here counts them (tokens_used,
  // budgets).
  size_t CountTokens(std::string_view text) const;

 private:
  // `counter`: the token counter (nullptr: the built-in default), kept
  // internal (src/working/tokens.h).
  WorkflowMemory(MemoryLayer& engine, MissionOptions options, std::shared_ptr<Clock> clock,
                 std::shared_ptr<const TokenCounter> counter);

  MemoryLayer& engine_;
  MissionOptions options_;
  // policy.context_trusted_sources: which records the digests label trusted.
  std::vector<std::string> trusted_sources_ = WritePolicyOptions{}.context_trusted_sources;
  std::shared_ptr<Clock> clock_;
  std::shared_ptr<const TokenCounter> counter_;
};

}  // namespace msp

#endif  // MSP_DIGEST_H_
