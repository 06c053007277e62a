// The push-refresh orchestrator (seed 003): a separate process (`msp
// orchestrate`) with its own schedule that keeps idle LONG-TERM tasks
// current. Each pass it
//   1. lists the mission's LONG-TERM tasks that are open or in progress,
//   2. gathers each task's signals since its last refresh — git commits that
//      touch it (the workflow layer's "git-commit" records), its new
//      comments, the time since its last pull — and decides which are due
//      (priority.h),
//   3. refreshes the due tasks, highest priority first (degraded mode:
//      critical first), at most max_per_pass of them.
// A refresh writes three artifacts into the workflow layer, with source
// "push-refresh": an executive summary of what changed, a tool-lineage delta
// (procedural memory's tools added, changed with a diff of their JSON
// schemas, retired), and the open questions (undecided decisions, questions
// in decisions, comments and unresolved mission question events). The three
// artifacts, the task's refresh state and the superseding of the previous
// refresh's artifacts are ONE MemoryLayer::Commit: a refresh lands whole or
// not at all, so an orchestrator killed at any point leaves no half refresh,
// and pull (workflow_memory_query) never depends on it running.
//
// Records (ns {tenant, mission}; formats in docs/orchestrate.md):
//   artifacts      Kind::kArtifact, Layer::kWorkflow, source "push-refresh",
//                  tags "push-refresh", "push-refresh:<artifact>",
//                  "task:<id>", "component:<c>"; body {type:"push_refresh",
//                  artifact: summary | tool_lineage | open_questions,
//                  task_id, refresh_id, window_from, window_to, ...}
//   refresh state  Kind::kArtifact, Layer::kWorkflow, EMPTY text (never
//                  matches a search), tag "msp:refresh-state", body
//                  {type:"refresh_state", task_id, last_refresh_at,
//                  refreshes, last_refresh_id, artifact_ids}
//
// Thread-compatible: one Orchestrator per thread; several orchestrator
// processes may run on one mission (a task refreshed by another one in the
// meantime is a Conflict, skipped).
#ifndef MSP_ORCHESTRATE_ORCHESTRATOR_H_
#define MSP_ORCHESTRATE_ORCHESTRATOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "msp/memory.h"
#include "config/settings.h"
#include "msp/status.h"
#include "msp/types.h"
#include "orchestrate/priority.h"
#include "orchestrate/tasks.h"

namespace msp {

class ChatClient;

inline constexpr std::string_view kPushRefreshSource = "push-refresh";
inline constexpr std::string_view kRefreshStateTag = "msp:refresh-state";
inline constexpr std::string_view kGitCommitTag = "git-commit";
inline constexpr std::string_view kGitSource = "git";

// A git commit record (written by `msp ingest --git`), read back.
struct CommitInfo {
  std::string record_id;
  std::string hash;
  std::string author;
  std::string subject;
  std::string message;                 // the whole message
  std::vector<std::string> files;
  std::string repo;
  TimeMs time = 0;                     // commit time
  TimeMs ingested_at = 0;              // the record's created_at
  int access_level = 0;
};
// InvalidArgument when `m` is not a git commit record.
Result<CommitInfo> CommitFromMemory(const Memory& m);

// True when `word` occurs in `text` case-insensitively and not inside a
// longer word (the characters around it are not letters, digits or '_').
bool MentionsWord(std::string_view text, std::string_view word);
// A commit touches a task when its message mentions the task id or one of
// its refs, or one of its files is (below) a task path, or has a path
// segment equal to one of the task's components.
bool CommitTouchesTask(const CommitInfo& c, const Task& t);

// What an executive summary is made from.
struct SummaryInput {
  Task task;
  TimeMs from = 0;                     // the last refresh (0: none)
  TimeMs to = 0;
  std::vector<CommitInfo> commits;     // by commit time
  std::vector<TaskComment> comments;   // by time
};

class Summarizer {
 public:
  virtual ~Summarizer() = default;
  virtual std::string name() const = 0;   // "extractive", "llm:<model>"
  virtual Result<std::string> Summarize(const SummaryInput& input) = 0;
};
// Built in, no model: counts, each commit (short hash, subject, author,
// date, files), each comment's first sentence, the most touched folders.
std::unique_ptr<Summarizer> MakeExtractiveSummarizer();
// An OpenAI-compatible chat model, asked for {"summary": "..."} (JSON
// Schema output). `chat` must not be null.
std::unique_ptr<Summarizer> MakeLlmSummarizer(std::unique_ptr<ChatClient> chat);
// orchestrate.summarizer: "extractive"; "llm" (llm.model required);
// "auto": llm when llm.model is set, else extractive. `openai_env_key` as
// ChatOptionsFor (consolidate/llm_extractor.h).
Result<std::unique_ptr<Summarizer>> MakeConfiguredSummarizer(const Settings& options,
                                                             std::string_view openai_env_key);

// One change of a tool between two refreshes.
struct ToolChange {
  std::string agent;
  std::string name;
  std::string change;                  // "added", "changed", "retired"
  int from_version = 0;                // 0 for added
  int to_version = 0;
  bool description_changed = false;
  std::string schema_diff;             // LineDiff of the parameters' JSON Schemas (changed only; may be empty)
  std::string version_record_id;
  int access_level = 0;
};
// The tools of procedural memory whose latest version in (from, to] differs
// from the version current at `from`: in {tenant} of `scope`, or only
// `agent`'s when it is non-empty. By agent and name.
Result<std::vector<ToolChange>> ToolLineageDelta(MemoryLayer& engine, const Namespace& scope,
                                                 const std::string& agent, TimeMs from, TimeMs to);

struct OpenQuestion {
  std::string text;
  ProvenanceRef source;                // decision, comment or event
  int access_level = 0;
};
// Sentences ending in '?', and lines starting "Open question", "Question:",
// "TBD" or "Unresolved", of `text`, trimmed.
std::vector<std::string> QuestionsIn(std::string_view text);

// A task's refresh state (none stored yet: seq 0).
struct RefreshState {
  std::string task_id;
  TimeMs last_refresh_at = 0;          // 0: never refreshed
  int64_t refreshes = 0;
  std::string last_refresh_id;
  std::vector<std::string> artifact_ids;
  std::string record_id;
  int64_t seq = 0;
};
std::string RefreshStateRecordId(const Namespace& scope, std::string_view task_id);

struct OrchestratorConfig {
  PriorityOptions priority;
  int max_per_pass = 0;                // 0: every due task
  std::string agent;                   // tool lineage of this agent only ("" every agent of the tenant)
  MissionOptions mission;              // degraded mode: the event rate against capacity
  std::string actor = "orchestrator";
};
// The configuration options.orchestrate (and options.mission) describe.
OrchestratorConfig OrchestratorConfigFrom(const Settings& options);

struct TaskPlan {
  Task task;
  RefreshState state;
  RefreshSignals signals;
  RefreshDecision decision;
  TimeMs last_pull_at = 0;
  std::vector<CommitInfo> commits;     // new ones touching the task, by commit time
  std::vector<TaskComment> comments;   // new ones
};

struct RefreshResult {
  std::string task_id;
  std::string refresh_id;
  std::string summary_id;
  std::string lineage_id;
  std::string questions_id;
  double priority = 0.0;
  std::string reason;                  // DueReasonName
  std::string generator;               // the summarizer used
  int commits = 0;
  int comments = 0;
  int tool_changes = 0;
  int open_questions = 0;
};

struct PassReport {
  TimeMs at = 0;
  bool degraded = false;
  std::vector<TaskPlan> plan;          // every LONG-TERM task: due ones in queue order, then the others
  std::vector<RefreshResult> refreshed;
  std::vector<std::string> errors;     // refreshes that failed (the pass goes on)
};

class Orchestrator {
 public:
  // `engine` must outlive this object. `clock`: nullptr = the system clock
  // (give the engine's, so that times agree). `summarizer`: nullptr =
  // extractive.
  Orchestrator(MemoryLayer& engine, Namespace mission, OrchestratorConfig config,
               std::shared_ptr<Clock> clock = nullptr, std::unique_ptr<Summarizer> summarizer = nullptr);
  ~Orchestrator();

  // Whether the mission is in degraded mode now.
  Result<bool> Degraded();
  // The LONG-TERM tasks (open or in progress) with their signals and
  // decisions: due ones first in queue order, then the others by priority.
  Result<std::vector<TaskPlan>> Plan();
  // One pass: Plan, then refresh the due tasks in order (max_per_pass).
  Result<PassReport> RunOnce();
  // Refreshes one task now, due or not (one atomic Commit). Conflict when
  // another orchestrator refreshed it since `plan` was made.
  Result<RefreshResult> Refresh(const TaskPlan& plan);

  // Test hook: called after a refresh's records are built, just before they
  // are written.
  void set_before_commit(std::function<void(const std::string& task_id)> hook) { before_commit_ = std::move(hook); }

 private:
  MemoryLayer& engine_;
  Namespace mission_;
  OrchestratorConfig config_;
  std::shared_ptr<Clock> clock_;
  std::unique_ptr<Summarizer> summarizer_;
  std::function<void(const std::string&)> before_commit_;
};

// Runs passes until `wait` returns false: a pass, then wait(interval) (the
// caller sleeps or is woken by a signal). Each pass's outcome is printed on
// `log` (may be null); a failed pass is logged and the loop goes on.
Status RunOrchestratorLoop(Orchestrator& orchestrator, std::chrono::seconds interval,
                           const std::function<bool(std::chrono::seconds)>& wait, std::ostream* log,
                           const std::function<Status()>& before_pass = nullptr);

}  // namespace msp

#endif  // MSP_ORCHESTRATE_ORCHESTRATOR_H_
