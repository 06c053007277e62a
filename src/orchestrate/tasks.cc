// Task records: validation, the record <-> task mapping, and the
// compare-and-swap updates.
#include "orchestrate/tasks.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "mission/access.h"
#include "mission/records.h"
#include "msp/mission.h"
#include "orchestrate/task_json.h"
#include "util/text.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace {

using nlohmann::json;

constexpr size_t kMaxTaskTitleChars = 300;
constexpr size_t kMaxDescriptionBytes = 32000;
constexpr size_t kMaxCommentBytes = 16000;
constexpr size_t kMaxLabelChars = 64;
constexpr size_t kMaxListItems = 64;
constexpr size_t kMaxComments = 500;
// Compare-and-swap attempts before a write gives up. Losers back off for a
// random time that grows with the attempt (up to 32 ms), so writers racing
// on one task all get through instead of the unlucky one starving: with 8
// attempts and no backoff, 4 threads commenting on one task lost a comment
// in about 1 run in 10 under ASan.
constexpr int kMaxCasRetries = 64;

void BackOff(int attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  const int cap_ms = 1 << std::min(attempt, 5);
  std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, cap_ms * 1000)(rng)));
}

bool OneLine(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r' || c == '\0'; });
}

Status CheckText(std::string_view field, std::string_view s, size_t max_bytes) {
  if (!IsValidUtf8(s)) return Status::InvalidArgument(std::string(field) + ": not valid UTF-8");
  if (s.size() > max_bytes) {
    return Status::InvalidArgument(std::string(field) + ": " + std::to_string(s.size()) + " bytes, at most " +
                                   std::to_string(max_bytes));
  }
  return Status::Ok();
}

Status CheckList(std::string_view field, const std::vector<std::string>& items, bool identifiers) {
  if (items.size() > kMaxListItems) {
    return Status::InvalidArgument(std::string(field) + ": at most " + std::to_string(kMaxListItems) + " entries");
  }
  for (const std::string& s : items) {
    if (s.empty() || !OneLine(s) || !IsValidUtf8(s) || Utf8Chars(s) > 200) {
      return Status::InvalidArgument(std::string(field) + ": '" + s +
                                     "' must be one non-empty line of at most 200 characters");
    }
    if (identifiers && !IsMissionIdentifier(s)) {
      return Status::InvalidArgument(std::string(field) + ": '" + s +
                                     "' is not an identifier (1..64 characters; letters, digits, _-.:/)");
    }
  }
  return Status::Ok();
}

json CommentJson(const TaskComment& c) {
  return json{{"id", c.id}, {"author", c.author}, {"text", c.text}, {"created_at", c.created_at}};
}

json TaskBody(const Task& t) {
  json comments = json::array();
  for (const TaskComment& c : t.comments) comments.push_back(CommentJson(c));
  return json{{"type", kTaskBodyType},      {"task_id", t.task_id},
              {"title", t.title},           {"description", t.description},
              {"labels", t.labels},         {"paths", t.paths},
              {"components", t.components}, {"refs", t.refs},
              {"status", TaskStatusName(t.status)},
              {"tracker", t.tracker},       {"external_id", t.external_id},
              {"url", t.url},               {"opened_at", t.opened_at},
              {"component", t.components.empty() ? std::string() : t.components.front()},
              {"comments", comments}};
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string TaskText(const Task& t) {
  std::string text = "Task " + t.task_id + ": " + t.title;
  if (!t.labels.empty()) text += "\nLabels: " + Joined(t.labels);
  if (!t.paths.empty()) text += "\nPaths: " + Joined(t.paths);
  if (!t.components.empty()) text += "\nComponents: " + Joined(t.components);
  if (!t.refs.empty()) text += "\nAlso known as: " + Joined(t.refs);
  text += "\nStatus: " + std::string(TaskStatusName(t.status));
  if (!t.description.empty()) {
    // The description is indexed up to a few thousand bytes (on a character
    // boundary); the body keeps it whole.
    size_t cut = std::min<size_t>(t.description.size(), 6000);
    while (cut < t.description.size() && (static_cast<unsigned char>(t.description[cut]) & 0xC0) == 0x80) --cut;
    text += "\n\n" + t.description.substr(0, cut);
  }
  return text;
}

// Applies `mutate` to the stored task and writes it back with
// compare-and-swap, retrying on a concurrent change.
template <typename F>
Result<Task> UpdateTask(MemoryLayer& engine, const Namespace& scope, const std::string& task_id,
                        const std::string& actor, const std::string& reason, F mutate) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  const Namespace ns = MissionNamespace(scope);
  for (int attempt = 0;; ++attempt) {
    MSP_ASSIGN_OR_RETURN(std::optional<Memory> stored, FindRecord(engine, ns, TaskRecordId(ns, task_id)));
    if (!stored || stored->kind != Kind::kArtifact) {
      return Status::NotFound("no task '" + task_id + "' in mission '" + ns.mission + "' (`msp task list`)");
    }
    MSP_ASSIGN_OR_RETURN(Task task, TaskFromMemory(*stored));
    MSP_RETURN_IF_ERROR(mutate(task));
    MSP_RETURN_IF_ERROR(ValidateTask(task));
    Memory m = TaskToMemory(ns, task, stored->source);
    m.created_at = stored->created_at;
    m.access_count = stored->access_count;
    m.last_accessed = stored->last_accessed;
    RecordBatch batch;
    batch.scope = ns;
    batch.puts = {std::move(m)};
    batch.expected_seq = {stored->seq};
    batch.actor = actor;
    batch.reason = reason;
    Result<std::vector<Memory>> written = engine.Commit(batch);
    if (written.ok()) return TaskFromMemory(written->at(0));
    if (written.status().code() != StatusCode::kConflict || attempt + 1 >= kMaxCasRetries) return written.status();
    BackOff(attempt);
  }
}

}  // namespace

std::string_view TaskStatusName(TaskStatus s) {
  switch (s) {
    case TaskStatus::kOpen: return "open";
    case TaskStatus::kInProgress: return "in_progress";
    case TaskStatus::kDone: return "done";
    case TaskStatus::kCancelled: return "cancelled";
  }
  return "unknown";
}

std::optional<TaskStatus> ParseTaskStatus(std::string_view s) {
  for (TaskStatus t : {TaskStatus::kOpen, TaskStatus::kInProgress, TaskStatus::kDone, TaskStatus::kCancelled}) {
    if (TaskStatusName(t) == s) return t;
  }
  return std::nullopt;
}

bool Task::IsLongTerm() const {
  const std::string want = AsciiLower(kLongTermLabel);
  return std::any_of(labels.begin(), labels.end(),
                     [&](const std::string& l) { return AsciiLower(l) == want; });
}

std::string TaskRecordId(const Namespace& scope, std::string_view task_id) {
  return MissionRecordId(MissionNamespace(scope), {"task", task_id});
}

Status ValidateTask(const Task& t) {
  if (!IsMissionIdentifier(t.task_id)) {
    return Status::InvalidArgument("task id '" + t.task_id +
                                   "' is not an identifier (1..64 characters; letters, digits, _-.:/)");
  }
  if (t.title.empty() || !OneLine(t.title)) return Status::InvalidArgument("title: required, one line");
  MSP_RETURN_IF_ERROR(CheckText("title", t.title, 4 * kMaxTaskTitleChars));
  if (Utf8Chars(t.title) > kMaxTaskTitleChars) {
    return Status::InvalidArgument("title: at most " + std::to_string(kMaxTaskTitleChars) + " characters");
  }
  MSP_RETURN_IF_ERROR(CheckText("description", t.description, kMaxDescriptionBytes));
  MSP_RETURN_IF_ERROR(CheckList("labels", t.labels, false));
  for (const std::string& l : t.labels) {
    if (Utf8Chars(l) > kMaxLabelChars) return Status::InvalidArgument("labels: '" + l + "' is too long");
  }
  MSP_RETURN_IF_ERROR(CheckList("paths", t.paths, false));
  MSP_RETURN_IF_ERROR(CheckList("components", t.components, true));
  MSP_RETURN_IF_ERROR(CheckList("refs", t.refs, false));
  MSP_RETURN_IF_ERROR(ValidateAccessLevel(t.access_level));
  if (t.comments.size() > kMaxComments) {
    return Status::InvalidArgument("comments: at most " + std::to_string(kMaxComments) + " per task");
  }
  std::set<std::string> ids;
  for (const TaskComment& c : t.comments) {
    if (c.id.empty() || !ids.insert(c.id).second) {
      return Status::InvalidArgument("comments: every comment needs a distinct id ('" + c.id + "')");
    }
    if (c.text.empty()) return Status::InvalidArgument("comments: comment " + c.id + " has no text");
    MSP_RETURN_IF_ERROR(CheckText("comment " + c.id, c.text, kMaxCommentBytes));
    if (!OneLine(c.author) || !IsValidUtf8(c.author)) {
      return Status::InvalidArgument("comments: author of " + c.id + " must be one line");
    }
  }
  for (const std::string* s : {&t.tracker, &t.external_id, &t.url}) {
    if (!OneLine(*s) || !IsValidUtf8(*s) || s->size() > 2000) {
      return Status::InvalidArgument("tracker, external_id and url must be one line of at most 2,000 bytes");
    }
  }
  return Status::Ok();
}

Memory TaskToMemory(const Namespace& scope, const Task& task, std::string_view source) {
  const Namespace ns = MissionNamespace(scope);
  Memory m;
  m.id = TaskRecordId(ns, task.task_id);
  m.ns = ns;
  m.layer = Layer::kWorkflow;
  m.kind = Kind::kArtifact;
  m.text = TaskText(task);
  m.body_json = TaskBody(task).dump();
  m.tags = {std::string(kTaskTag), "task:" + task.task_id};
  for (const std::string& l : task.labels) m.tags.push_back("label:" + l);
  for (const std::string& c : task.components) m.tags.push_back("component:" + c);
  m.source = std::string(source);
  m.criticality = task.criticality;
  m.access_level = task.access_level;
  m.created_at = task.created_at;
  m.valid_at = task.opened_at;
  if (!task.url.empty()) m.provenance.push_back({"url", task.url, task.tracker});
  if (!task.external_id.empty()) m.provenance.push_back({"issue", task.external_id, task.tracker});
  return m;
}

Result<Task> TaskFromMemory(const Memory& m) {
  if (m.kind != Kind::kArtifact) return Status::InvalidArgument("record " + m.id + " is not a task");
  json b = json::parse(m.body_json, nullptr, false);
  if (!b.is_object() || b.value("type", "") != kTaskBodyType) {
    return Status::InvalidArgument("record " + m.id + " is not a task");
  }
  try {
    Task t;
    t.task_id = b.value("task_id", "");
    t.title = b.value("title", "");
    t.description = b.value("description", "");
    t.labels = b.value("labels", std::vector<std::string>{});
    t.paths = b.value("paths", std::vector<std::string>{});
    t.components = b.value("components", std::vector<std::string>{});
    t.refs = b.value("refs", std::vector<std::string>{});
    t.status = ParseTaskStatus(b.value("status", "open")).value_or(TaskStatus::kOpen);
    t.tracker = b.value("tracker", "");
    t.external_id = b.value("external_id", "");
    t.url = b.value("url", "");
    t.opened_at = b.value("opened_at", int64_t{0});
    for (const json& c : b.value("comments", json::array())) {
      t.comments.push_back(TaskComment{c.value("id", ""), c.value("author", ""), c.value("text", ""),
                                       c.value("created_at", int64_t{0})});
    }
    t.criticality = m.criticality;
    t.access_level = m.access_level;
    t.id = m.id;
    t.ns = m.ns;
    t.created_at = m.created_at;
    t.updated_at = m.updated_at;
    t.seq = m.seq;
    return t;
  } catch (const json::exception& e) {
    return Status::InvalidArgument("task record " + m.id + " has a malformed body: " + e.what());
  }
}

Result<Task> AddTask(MemoryLayer& engine, const Namespace& scope, const Task& task, const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_RETURN_IF_ERROR(ValidateTask(task));
  const Namespace ns = MissionNamespace(scope);
  Task copy = task;
  copy.created_at = 0;
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {TaskToMemory(ns, copy, kMissionSource)};
  batch.expected_seq = {0};
  batch.actor = actor;
  batch.reason = "task add";
  Result<std::vector<Memory>> stored = engine.Commit(batch);
  if (!stored.ok() && stored.status().code() == StatusCode::kConflict) {
    return Status::AlreadyExists("task '" + task.task_id + "' already exists in mission '" + ns.mission + "'");
  }
  if (!stored.ok()) return stored.status();
  return TaskFromMemory(stored->at(0));
}

Result<Task> GetTask(MemoryLayer& engine, const Namespace& scope, const std::string& task_id,
                     std::optional<int> clearance) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  const Namespace ns = MissionNamespace(scope);
  MSP_ASSIGN_OR_RETURN(std::optional<Memory> m, FindRecord(engine, ns, TaskRecordId(ns, task_id)));
  if (m && clearance && m->access_level > *clearance) m.reset();  // its existence is not revealed
  if (!m) return Status::NotFound("no task '" + task_id + "' in mission '" + ns.mission + "' (`msp task list`)");
  return TaskFromMemory(*m);
}

Result<std::vector<Task>> ListTasks(MemoryLayer& engine, const Namespace& scope, const TaskFilter& filter) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records,
                       ListAll(engine, MissionNamespace(scope), Kind::kArtifact, filter.clearance, false,
                               std::string(kTaskTag)));
  std::set<std::string> wanted;
  for (const std::string& l : filter.labels) wanted.insert(AsciiLower(l));
  std::vector<Task> out;
  for (const Memory& m : records) {
    Result<Task> t = TaskFromMemory(m);
    if (!t.ok()) continue;
    if (filter.long_term_only && !t->IsLongTerm()) continue;
    if (!filter.statuses.empty() &&
        std::find(filter.statuses.begin(), filter.statuses.end(), t->status) == filter.statuses.end()) {
      continue;
    }
    if (!wanted.empty() && std::none_of(t->labels.begin(), t->labels.end(), [&](const std::string& l) {
          return wanted.count(AsciiLower(l)) > 0;
        })) {
      continue;
    }
    out.push_back(std::move(t).value());
  }
  std::sort(out.begin(), out.end(), [](const Task& a, const Task& b) { return a.task_id < b.task_id; });
  return out;
}

Result<Task> AddTaskComment(MemoryLayer& engine, const Namespace& scope, const std::string& task_id,
                            const TaskComment& comment, const std::string& actor, TimeMs now) {
  return UpdateTask(engine, scope, task_id, actor, "task comment", [&](Task& t) -> Status {
    TaskComment c = comment;
    if (c.created_at == 0) c.created_at = now;
    if (c.id.empty()) {
      int n = static_cast<int>(t.comments.size()) + 1;
      auto taken = [&](const std::string& id) {
        return std::any_of(t.comments.begin(), t.comments.end(), [&](const TaskComment& x) { return x.id == id; });
      };
      while (taken("c" + std::to_string(n))) ++n;
      c.id = "c" + std::to_string(n);
    }
    t.comments.push_back(std::move(c));
    return Status::Ok();
  });
}

Result<Task> SetTaskStatus(MemoryLayer& engine, const Namespace& scope, const std::string& task_id,
                           TaskStatus status, const std::string& actor) {
  return UpdateTask(engine, scope, task_id, actor, "task status", [&](Task& t) -> Status {
    t.status = status;
    return Status::Ok();
  });
}

Result<TaskImportReport> UpsertTasks(MemoryLayer& engine, const Namespace& scope, const std::vector<Task>& tasks,
                                     const std::string& actor, bool dry_run) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  const Namespace ns = MissionNamespace(scope);
  std::set<std::string> seen;
  for (const Task& t : tasks) {
    MSP_RETURN_IF_ERROR(ValidateTask(t).WithContext("task " + t.task_id));
    if (!seen.insert(t.task_id).second) return Status::InvalidArgument("task " + t.task_id + " is imported twice");
  }
  for (int attempt = 0;; ++attempt) {
    TaskImportReport report;
    RecordBatch batch;
    batch.scope = ns;
    batch.actor = actor;
    batch.reason = "task import";
    for (const Task& incoming : tasks) {
      MSP_ASSIGN_OR_RETURN(std::optional<Memory> stored, FindRecord(engine, ns, TaskRecordId(ns, incoming.task_id)));
      TaskImportEntry entry{incoming.task_id, "added", static_cast<int>(incoming.comments.size())};
      Task merged = incoming;
      int64_t expected = 0;
      TimeMs created_at = 0;
      if (stored) {
        MSP_ASSIGN_OR_RETURN(Task old, TaskFromMemory(*stored));
        expected = stored->seq;
        created_at = stored->created_at;
        if (merged.paths.empty()) merged.paths = old.paths;
        if (merged.components.empty()) merged.components = old.components;
        if (merged.refs.empty()) merged.refs = old.refs;
        if (incoming.criticality == Criticality::kNormal) merged.criticality = old.criticality;
        if (incoming.access_level == 0) merged.access_level = old.access_level;
        // Comments: the old ones (local ones included), then new tracker ones.
        std::vector<TaskComment> comments = old.comments;
        entry.new_comments = 0;
        for (const TaskComment& c : incoming.comments) {
          auto it = std::find_if(comments.begin(), comments.end(), [&](const TaskComment& x) { return x.id == c.id; });
          if (it == comments.end()) {
            comments.push_back(c);
            ++entry.new_comments;
          } else {
            *it = c;
          }
        }
        std::stable_sort(comments.begin(), comments.end(),
                         [](const TaskComment& a, const TaskComment& b) { return a.created_at < b.created_at; });
        merged.comments = std::move(comments);
        MSP_RETURN_IF_ERROR(ValidateTask(merged).WithContext("task " + merged.task_id));
        merged.created_at = created_at;
        Memory candidate = TaskToMemory(ns, merged, stored->source);
        if (candidate.body_json == stored->body_json && candidate.text == stored->text &&
            candidate.criticality == stored->criticality && candidate.access_level == stored->access_level &&
            candidate.tags == stored->tags) {
          entry.action = "unchanged";
          ++report.unchanged;
          report.entries.push_back(entry);
          continue;
        }
        entry.action = "updated";
        ++report.updated;
      } else {
        ++report.added;
      }
      Memory m = TaskToMemory(ns, merged, kAdrSource);
      m.created_at = created_at;
      if (stored) m.source = stored->source;
      batch.puts.push_back(std::move(m));
      batch.expected_seq.push_back(expected);
      report.entries.push_back(entry);
    }
    if (dry_run || batch.puts.empty()) return report;
    Result<std::vector<Memory>> written = engine.Commit(batch);
    if (written.ok()) return report;
    if (written.status().code() != StatusCode::kConflict || attempt + 1 >= kMaxCasRetries) return written.status();
    BackOff(attempt);
  }
}

json TaskToJson(const Task& t) {
  json j = TaskBody(t);
  j.erase("type");
  j.erase("component");
  j["id"] = t.id;
  j["criticality"] = CriticalityName(t.criticality);
  j["access_level"] = t.access_level;
  j["long_term"] = t.IsLongTerm();
  j["opened_at"] = t.opened_at == 0 ? json(nullptr) : json(FormatIso8601(t.opened_at));
  for (json& c : j["comments"]) {
    const int64_t at = c.value("created_at", int64_t{0});
    c["created_at"] = at == 0 ? json(nullptr) : json(FormatIso8601(at));
  }
  j["created_at"] = t.created_at == 0 ? json(nullptr) : json(FormatIso8601(t.created_at));
  j["updated_at"] = t.updated_at == 0 ? json(nullptr) : json(FormatIso8601(t.updated_at));
  return j;
}

json TaskPlanToJson(const TaskPlan& p) {
  return json{{"task_id", p.task.task_id},
              {"title", p.task.title},
              {"criticality", CriticalityName(p.task.criticality)},
              {"priority", p.decision.priority},
              {"due", p.decision.due},
              {"reason", DueReasonName(p.decision.reason)},
              {"commits", p.signals.commits},
              {"comments", p.signals.comments},
              {"hours_since_pull", static_cast<double>(p.signals.since_pull_ms) / 3600000.0},
              {"hours_since_refresh", static_cast<double>(p.signals.since_refresh_ms) / 3600000.0},
              {"never_refreshed", p.signals.never_refreshed},
              {"last_refresh_at",
               p.state.last_refresh_at ? json(FormatIso8601(p.state.last_refresh_at)) : json(nullptr)}};
}

json TaskImportReportToJson(const TaskImportReport& r) {
  json entries = json::array();
  for (const TaskImportEntry& e : r.entries) {
    entries.push_back(json{{"task_id", e.task_id}, {"action", e.action}, {"new_comments", e.new_comments}});
  }
  return json{{"added", r.added}, {"updated", r.updated}, {"unchanged", r.unchanged}, {"entries", entries}};
}

}  // namespace msp
