// Tasks of a mission (seed 003, push mode): what the refresh orchestrator
// follows. A task has an id, a title, labels (LONG-TERM among them), the
// repository paths and components it covers, a status and comments; it is
// created with the CLI or API, or imported from an issue tracker
// (trackers.h).
//
// Storage: one record per task, written with MemoryLayer::Commit:
// Kind::kArtifact, Layer::kWorkflow, ns {tenant, mission}, a deterministic
// id (tenant, mission, task id), source "operator" (CLI / API) or "import"
// (a tracker), tags "msp:task", "task:<id>" and "label:<label>" per label,
// criticality and access_level from the task, text "Task <id>: <title>"
// with the labels, paths, components and description, body
//   {type:"task", task_id, title, description, labels:[..], paths:[..],
//    components:[..], refs:[..], status, tracker, external_id, url,
//    opened_at (ms), comments:[{id, author, text, created_at (ms)}]}
// (docs/orchestrate.md). Every update is a compare-and-swap on the record's
// seq, retried on a concurrent change, so no comment is ever lost.
//
// Thread-safe (free functions over the thread-safe engine).
#ifndef MSP_ORCHESTRATE_TASKS_H_
#define MSP_ORCHESTRATE_TASKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// The label that puts a task under the orchestrator (compared
// case-insensitively).
inline constexpr std::string_view kLongTermLabel = "LONG-TERM";
inline constexpr std::string_view kTaskTag = "msp:task";
inline constexpr std::string_view kTaskBodyType = "task";

enum class TaskStatus { kOpen, kInProgress, kDone, kCancelled };
// "open", "in_progress", "done", "cancelled".
std::string_view TaskStatusName(TaskStatus s);
std::optional<TaskStatus> ParseTaskStatus(std::string_view s);

struct TaskComment {
  std::string id;          // unique within the task: "c<n>" for local ones, the tracker's id otherwise
  std::string author;      // one line; may be empty
  std::string text;        // required, <= 16,000 bytes
  TimeMs created_at = 0;   // 0 on add: now
  bool operator==(const TaskComment&) const = default;
};

struct Task {
  // An identifier (IsMissionIdentifier: "T-12", "gh-42", "WEB-7").
  std::string task_id;
  std::string title;                     // required; one line, <= 300 characters
  std::string description;               // <= 32,000 bytes
  std::vector<std::string> labels;       // one line each, <= 64 characters
  // Repository paths it covers: a commit touches the task when one of its
  // files is the path or lies below it ("src/nav" covers "src/nav/a.cc").
  std::vector<std::string> paths;
  // Components (identifiers): a commit file with a path segment equal to one
  // touches the task; decisions and mission events of the component belong
  // to it.
  std::vector<std::string> components;
  // Other names commits and decisions use for the task ("#42", "WEB-7"),
  // matched like the id: as a whole word, case-insensitively.
  std::vector<std::string> refs;
  TaskStatus status = TaskStatus::kOpen;
  Criticality criticality = Criticality::kNormal;
  int access_level = 0;                  // 0..9
  std::vector<TaskComment> comments;     // oldest first
  std::string tracker;                   // "" (local), "github", "plane"
  std::string external_id;               // the tracker's id
  std::string url;
  TimeMs opened_at = 0;                  // when the task was opened (tracker's created_at); 0: created_at
  // Read-only, from the stored record:
  std::string id;
  Namespace ns;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  int64_t seq = 0;

  bool IsLongTerm() const;
  bool operator==(const Task&) const = default;
};

struct TaskFilter {
  std::vector<std::string> labels;       // any of them (case-insensitive); empty: all
  std::vector<TaskStatus> statuses;      // any of them; empty: all
  bool long_term_only = false;
  // The reader's clearance: tasks with a higher access level are left out
  // (nullopt: no limit, a trusted caller such as the orchestrator).
  std::optional<int> clearance;
};

// The deterministic record id of task `task_id` in the mission of `scope`.
std::string TaskRecordId(const Namespace& scope, std::string_view task_id);

// Structural checks; InvalidArgument naming the field.
Status ValidateTask(const Task& t);

// Stores a new task. AlreadyExists when the id is taken.
Result<Task> AddTask(MemoryLayer& engine, const Namespace& scope, const Task& task, const std::string& actor);
// NotFound when the mission has no such task, or its access level is above
// `clearance` (nullopt: no limit).
Result<Task> GetTask(MemoryLayer& engine, const Namespace& scope, const std::string& task_id,
                     std::optional<int> clearance = std::nullopt);
// The mission's tasks matching `filter`, by task id.
Result<std::vector<Task>> ListTasks(MemoryLayer& engine, const Namespace& scope, const TaskFilter& filter);
// Appends a comment (id "c<n>" assigned when empty; created_at now when 0).
Result<Task> AddTaskComment(MemoryLayer& engine, const Namespace& scope, const std::string& task_id,
                            const TaskComment& comment, const std::string& actor, TimeMs now);
Result<Task> SetTaskStatus(MemoryLayer& engine, const Namespace& scope, const std::string& task_id,
                           TaskStatus status, const std::string& actor);

struct TaskImportEntry {
  std::string task_id;
  std::string action;      // "added", "updated", "unchanged"
  int new_comments = 0;
};
struct TaskImportReport {
  std::vector<TaskImportEntry> entries;
  int added = 0;
  int updated = 0;
  int unchanged = 0;
};
// Inserts or updates tasks from a tracker, all in one atomic write (a
// concurrent change makes the whole import retry). An existing task takes
// the tracker's title, description, labels, status, url and opened_at;
// paths, components, refs, criticality and access level are kept when the
// tracker gives none; comments are merged by id (local comments stay).
// `source` is the record source ("import").
Result<TaskImportReport> UpsertTasks(MemoryLayer& engine, const Namespace& scope, const std::vector<Task>& tasks,
                                     const std::string& actor, bool dry_run = false);

// The stored record <-> the task.
Memory TaskToMemory(const Namespace& scope, const Task& task, std::string_view source);
Result<Task> TaskFromMemory(const Memory& m);

}  // namespace msp

#endif  // MSP_ORCHESTRATE_TASKS_H_
