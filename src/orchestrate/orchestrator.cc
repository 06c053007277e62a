// The orchestrator: signals, the plan, and the one-Commit refresh.
#include "orchestrate/orchestrator.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "mission/access.h"
#include "mission/records.h"
#include "mission/retrieval_log.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace {

using nlohmann::json;

constexpr size_t kMaxArtifactText = 24000;
constexpr size_t kMaxQuestions = 30;
constexpr size_t kMaxProvenance = 200;
constexpr std::string_view kRefreshStateType = "refresh_state";
constexpr std::string_view kPushRefreshType = "push_refresh";

std::string Cut(std::string s, size_t max) {
  if (s.size() <= max) return s;
  return std::string(Utf8PrefixBytes(s, max)) + "\n(cut)";
}

std::string Since(TimeMs from) { return from == 0 ? std::string("the start") : FormatIso8601(from); }

Result<RefreshState> StateFromMemory(const Memory& m) {
  json b = json::parse(m.body_json, nullptr, false);
  if (!b.is_object() || b.value("type", "") != kRefreshStateType) {
    return Status::InvalidArgument("record " + m.id + " is not a refresh state");
  }
  try {
    RefreshState s;
    s.task_id = b.value("task_id", "");
    s.last_refresh_at = b.value("last_refresh_at", int64_t{0});
    s.refreshes = b.value("refreshes", int64_t{0});
    s.last_refresh_id = b.value("last_refresh_id", "");
    s.artifact_ids = b.value("artifact_ids", std::vector<std::string>{});
    s.record_id = m.id;
    s.seq = m.seq;
    return s;
  } catch (const json::exception& e) {
    return Status::InvalidArgument("refresh state " + m.id + " is malformed: " + e.what());
  }
}

// The text of a task a query must name to count as a pull of it.
bool QueryNamesTask(const std::string& query, const Task& t) {
  if (MentionsWord(query, t.task_id)) return true;
  for (const std::string& r : t.refs) {
    if (MentionsWord(query, r)) return true;
  }
  return t.title.size() >= 8 && MentionsWord(query, t.title);
}

// When a task started to be followed: its opening in the tracker, else
// its creation.
TimeMs TaskBase(const Task& t) { return t.opened_at > 0 ? std::min(t.opened_at, t.created_at) : t.created_at; }

bool Relevant(const Decision& d, const Task& t) {
  if (!d.component.empty() && std::find(t.components.begin(), t.components.end(), d.component) != t.components.end()) {
    return true;
  }
  std::vector<std::string> names = t.refs;
  names.push_back(t.task_id);
  for (const std::string& n : names) {
    if (MentionsWord(d.title, n) || MentionsWord(d.context, n) || MentionsWord(d.decision, n)) return true;
    for (const ProvenanceRef& p : d.provenance) {
      if (p.ref == n || (p.type == "issue" && !t.external_id.empty() && p.ref == t.external_id)) return true;
    }
  }
  return false;
}

Memory ArtifactRecord(const Namespace& ns, const Task& t, std::string_view artifact, const std::string& id,
                      const std::string& text, json body, int access_level) {
  Memory m;
  m.id = id;
  m.ns = ns;
  m.layer = Layer::kWorkflow;
  m.kind = Kind::kArtifact;
  m.text = Cut(text, kMaxArtifactText);
  body["type"] = kPushRefreshType;
  body["artifact"] = artifact;
  body["task_id"] = t.task_id;
  body["component"] = t.components.empty() ? std::string() : t.components.front();
  m.body_json = body.dump();
  m.tags = {std::string(kPushRefreshSource), "push-refresh:" + std::string(artifact), "task:" + t.task_id};
  for (const std::string& c : t.components) m.tags.push_back("component:" + c);
  m.source = std::string(kPushRefreshSource);
  m.criticality = t.criticality;
  m.access_level = access_level;
  return m;
}

}  // namespace

std::string RefreshStateRecordId(const Namespace& scope, std::string_view task_id) {
  return MissionRecordId(MissionNamespace(scope), {"refresh-state", task_id});
}

OrchestratorConfig OrchestratorConfigFrom(const Settings& options) {
  OrchestratorConfig c;
  const OrchestrateOptions& o = options.orchestrate;
  c.priority.commit_weight = o.commit_weight;
  c.priority.comment_weight = o.comment_weight;
  c.priority.pull_weight_per_day = o.pull_weight_per_day;
  c.priority.threshold = o.threshold;
  c.priority.min_interval_ms = static_cast<TimeMs>(o.min_interval_h) * 3600 * 1000;
  c.priority.max_interval_ms = static_cast<TimeMs>(o.max_interval_h) * 3600 * 1000;
  c.max_per_pass = o.max_per_pass;
  c.agent = o.agent;
  c.mission = options.mission;
  if (!options.actor.empty()) c.actor = options.actor;
  return c;
}

Orchestrator::Orchestrator(MemoryLayer& engine, Namespace mission, OrchestratorConfig config,
                           std::shared_ptr<Clock> clock, std::unique_ptr<Summarizer> summarizer)
    : engine_(engine),
      mission_(MissionNamespace(mission)),
      config_(std::move(config)),
      clock_(clock ? std::move(clock) : SystemClock()),
      summarizer_(summarizer ? std::move(summarizer) : MakeExtractiveSummarizer()) {}

Orchestrator::~Orchestrator() = default;

Result<bool> Orchestrator::Degraded() {
  WorkflowMemory workflow(engine_, config_.mission, clock_);
  MSP_ASSIGN_OR_RETURN(LoadState load, workflow.Load(mission_, std::nullopt));
  return load.degraded;
}

Result<std::vector<TaskPlan>> Orchestrator::Plan() {
  MSP_RETURN_IF_ERROR(RequireMission(mission_));
  const TimeMs now = clock_->NowMs();
  TaskFilter filter;
  filter.long_term_only = true;
  filter.statuses = {TaskStatus::kOpen, TaskStatus::kInProgress};
  MSP_ASSIGN_OR_RETURN(std::vector<Task> tasks, ListTasks(engine_, mission_, filter));

  std::map<std::string, RefreshState> states;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> state_records,
                       ListAll(engine_, mission_, Kind::kArtifact, std::nullopt, false, std::string(kRefreshStateTag)));
  for (const Memory& m : state_records) {
    Result<RefreshState> s = StateFromMemory(m);
    if (s.ok()) states[s->task_id] = std::move(s).value();
  }
  // One read of the commits and retrieval logs newer than the oldest
  // refresh among the tasks.
  TimeMs since = now;
  for (const Task& t : tasks) {
    auto it = states.find(t.task_id);
    since = std::min(since, it == states.end() ? TimeMs{0} : it->second.last_refresh_at);
  }
  ListRequest commits_req;
  commits_req.scope = mission_;
  commits_req.filter.kinds = {Kind::kEvent};
  commits_req.filter.layers = {Layer::kWorkflow};
  commits_req.filter.tags = {std::string(kGitCommitTag)};
  commits_req.filter.sources = {std::string(kGitSource)};
  if (since > 0) commits_req.filter.created_from = since + 1;
  commits_req.limit = 0;
  std::vector<CommitInfo> commits;
  if (!tasks.empty()) {
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> commit_records, engine_.List(commits_req));
    for (const Memory& m : commit_records) {
      Result<CommitInfo> c = CommitFromMemory(m);
      if (c.ok()) commits.push_back(std::move(c).value());
    }
  }
  std::stable_sort(commits.begin(), commits.end(),
                   [](const CommitInfo& a, const CommitInfo& b) { return a.time < b.time; });
  std::vector<std::pair<TimeMs, std::string>> pulls;  // (time, query)
  if (!tasks.empty()) {
    // Pulls before a task's last refresh (or its creation) do not matter.
    TimeMs pulls_since = now;
    for (const Task& t : tasks) {
      auto it = states.find(t.task_id);
      const TimeMs last = it == states.end() ? 0 : it->second.last_refresh_at;
      pulls_since = std::min(pulls_since, std::max(last, TaskBase(t)));
    }
    ListRequest logs_req = commits_req;
    logs_req.filter.tags.clear();
    logs_req.filter.sources = {std::string(kRetrievalLogSource)};
    logs_req.filter.created_from = pulls_since + 1;
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> logs, engine_.List(logs_req));
    for (const Memory& m : logs) {
      json b = json::parse(m.body_json, nullptr, false);
      if (b.is_object() && b.value("type", "") == kRetrievalType && b.contains("query") && b["query"].is_string()) {
        pulls.emplace_back(m.created_at, b["query"].get<std::string>());
      }
    }
  }

  std::vector<TaskPlan> plans;
  for (Task& t : tasks) {
    TaskPlan p;
    auto it = states.find(t.task_id);
    if (it != states.end()) p.state = it->second;
    p.state.task_id = t.task_id;
    const TimeMs last = p.state.last_refresh_at;
    for (const CommitInfo& c : commits) {
      if (c.ingested_at > last && CommitTouchesTask(c, t)) p.commits.push_back(c);
    }
    for (const TaskComment& c : t.comments) {
      if (c.created_at > last) p.comments.push_back(c);
    }
    const TimeMs base = TaskBase(t);
    p.last_pull_at = std::max(last, base);
    for (const auto& [at, query] : pulls) {
      if (at > p.last_pull_at && QueryNamesTask(query, t)) p.last_pull_at = at;
    }
    p.signals.commits = static_cast<int64_t>(p.commits.size());
    p.signals.comments = static_cast<int64_t>(p.comments.size());
    p.signals.since_pull_ms = std::max<TimeMs>(0, now - p.last_pull_at);
    p.signals.never_refreshed = last == 0;
    p.signals.since_refresh_ms = std::max<TimeMs>(0, now - (last == 0 ? base : last));
    p.decision = DecideRefresh(p.signals, config_.priority);
    p.task = std::move(t);
    plans.push_back(std::move(p));
  }
  MSP_ASSIGN_OR_RETURN(const bool degraded, Degraded());
  std::vector<QueueEntry> queue;
  for (const TaskPlan& p : plans) queue.push_back({p.task.task_id, p.task.criticality, p.decision.priority});
  OrderQueue(&queue, degraded);
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < queue.size(); ++i) rank[queue[i].task_id] = i;
  std::stable_sort(plans.begin(), plans.end(), [&](const TaskPlan& a, const TaskPlan& b) {
    if (a.decision.due != b.decision.due) return a.decision.due;
    return rank[a.task.task_id] < rank[b.task.task_id];
  });
  return plans;
}

Result<RefreshResult> Orchestrator::Refresh(const TaskPlan& plan) {
  const Task& t = plan.task;
  const TimeMs now = clock_->NowMs();
  const TimeMs from = plan.state.last_refresh_at;
  RefreshResult result;
  result.task_id = t.task_id;
  // Deterministic ids (task, refresh number): two orchestrators making the
  // same refresh collide on them, and ids never depend on a random state
  // (which a forked process shares with its parent).
  const std::string number = std::to_string(plan.state.refreshes + 1);
  result.refresh_id = MissionRecordId(mission_, {"push-refresh", t.task_id, number});
  result.priority = plan.decision.priority;
  result.reason = DueReasonName(plan.decision.reason);
  result.commits = static_cast<int>(plan.commits.size());
  result.comments = static_cast<int>(plan.comments.size());
  const std::string heading = "Push refresh of task " + t.task_id + " (" + t.title + ")";
  const json window{{"refresh_id", result.refresh_id},
                    {"window_from", from == 0 ? json(nullptr) : json(FormatIso8601(from))},
                    {"window_to", FormatIso8601(now)}};
  const ProvenanceRef task_ref{"task", t.task_id, t.id};

  // 1. Executive summary.
  SummaryInput input{t, from, now, plan.commits, plan.comments};
  std::string summary;
  Result<std::string> made = summarizer_->Summarize(input);
  result.generator = summarizer_->name();
  if (made.ok()) {
    summary = std::move(made).value();
  } else {
    result.generator = "extractive (" + summarizer_->name() + " failed: " + made.status().message() + ")";
    MSP_ASSIGN_OR_RETURN(summary, MakeExtractiveSummarizer()->Summarize(input));
  }
  int summary_access = t.access_level;
  std::vector<ProvenanceRef> summary_prov = {task_ref};
  json commit_hashes = json::array();
  for (const CommitInfo& c : plan.commits) {
    summary_access = std::max(summary_access, c.access_level);
    commit_hashes.push_back(c.hash);
    if (summary_prov.size() < kMaxProvenance) summary_prov.push_back({"commit", c.hash, c.repo});
  }
  json comment_ids = json::array();
  for (const TaskComment& c : plan.comments) {
    comment_ids.push_back(c.id);
    if (summary_prov.size() < kMaxProvenance) summary_prov.push_back({"comment", t.task_id + "/" + c.id, c.author});
  }
  json summary_body = window;
  summary_body["generator"] = result.generator;
  summary_body["commits"] = commit_hashes;
  summary_body["comments"] = comment_ids;
  const std::string summary_text =
      heading + ": executive summary of what changed since " + Since(from) + "\n" + summary;

  // 2. Tool-lineage delta.
  MSP_ASSIGN_OR_RETURN(std::vector<ToolChange> changes,
                       ToolLineageDelta(engine_, mission_, config_.agent, from, now));
  result.tool_changes = static_cast<int>(changes.size());
  std::string lineage_text = heading + ": tool lineage since " + Since(from);
  if (changes.empty()) lineage_text += "\nNo tools were added, changed or retired.";
  json changes_json = json::array();
  std::vector<ProvenanceRef> lineage_prov = {task_ref};
  for (const ToolChange& c : changes) {
    const std::string who = (c.agent.empty() ? std::string() : c.agent + "/") + c.name;
    if (c.change == "added") {
      lineage_text += "\nAdded: " + who + " (v" + std::to_string(c.to_version) + ")";
    } else if (c.change == "retired") {
      lineage_text += "\nRetired: " + who + " (was v" + std::to_string(c.from_version) + ")";
    } else {
      lineage_text += "\nChanged: " + who + " v" + std::to_string(c.from_version) + " -> v" +
                      std::to_string(c.to_version);
      if (c.description_changed) lineage_text += " (description changed)";
      if (!c.schema_diff.empty()) lineage_text += "\n  parameters schema diff:\n" + c.schema_diff;
    }
    changes_json.push_back(json{{"agent", c.agent},
                                {"name", c.name},
                                {"change", c.change},
                                {"from_version", c.from_version},
                                {"to_version", c.to_version},
                                {"description_changed", c.description_changed},
                                {"schema_diff", c.schema_diff}});
    if (lineage_prov.size() < kMaxProvenance) {
      lineage_prov.push_back({"procedure", c.version_record_id, who + " v" + std::to_string(c.to_version)});
    }
  }
  json lineage_body = window;
  lineage_body["changes"] = changes_json;

  // 3. Open questions.
  std::vector<OpenQuestion> questions;
  auto add_question = [&](std::string text, ProvenanceRef source, int access) {
    if (questions.size() >= kMaxQuestions) return;
    for (const OpenQuestion& q : questions) {
      if (q.text == text) return;
    }
    questions.push_back({std::move(text), std::move(source), access});
  };
  Asker trusted;
  trusted.clearance = kMaxAccessLevel;
  MSP_ASSIGN_OR_RETURN(std::vector<Decision> decisions, ListDecisions(engine_, mission_, DecisionFilter{}, trusted));
  for (const Decision& d : decisions) {
    if (!Relevant(d, t)) continue;
    const ProvenanceRef ref{"decision", d.id, d.title};
    if (d.status == DecisionStatus::kProposed) {
      std::string q = "Undecided: " + d.title;
      if (!d.alternatives.empty()) {
        q += " — alternatives: ";
        for (size_t i = 0; i < d.alternatives.size(); ++i) {
          q += (i ? "; " : "") + d.alternatives[i].option;
          if (!d.alternatives[i].reason.empty()) q += " (" + d.alternatives[i].reason + ")";
        }
      }
      add_question(q, ref, d.access_level);
    }
    if (d.status == DecisionStatus::kProposed || d.status == DecisionStatus::kAccepted) {
      for (const std::string* field : {&d.context, &d.decision, &d.consequences}) {
        for (std::string& q : QuestionsIn(*field)) add_question(q + " (decision: " + d.title + ")", ref, d.access_level);
      }
    }
  }
  for (auto c = t.comments.rbegin(); c != t.comments.rend(); ++c) {
    for (std::string& q : QuestionsIn(c->text)) {
      add_question(q + " (comment by " + (c->author.empty() ? std::string("someone") : c->author) + ")",
                   {"comment", t.task_id + "/" + c->id, c->author}, t.access_level);
    }
  }
  {
    WorkflowMemory workflow(engine_, config_.mission, clock_);
    MSP_ASSIGN_OR_RETURN(std::vector<MissionEvent> events, workflow.Events(mission_, 0, 0, std::nullopt));
    std::set<std::string> resolved;
    for (const MissionEvent& e : events) {
      if (!e.resolves_id.empty()) resolved.insert(e.resolves_id);
    }
    for (auto e = events.rbegin(); e != events.rend(); ++e) {
      if (e->type != "question" || resolved.count(e->id) > 0) continue;
      const bool ours = (!e->component.empty() &&
                         std::find(t.components.begin(), t.components.end(), e->component) != t.components.end()) ||
                        MentionsWord(e->text, t.task_id);
      if (ours) add_question(e->text + " (mission question event)", {"event", e->id, e->component}, e->access_level);
    }
  }
  result.open_questions = static_cast<int>(questions.size());
  std::string questions_text = heading + ": open questions";
  if (questions.empty()) questions_text += "\nNo open questions were found in decisions, comments or events.";
  json questions_json = json::array();
  std::vector<ProvenanceRef> questions_prov = {task_ref};
  int questions_access = t.access_level;
  for (const OpenQuestion& q : questions) {
    questions_text += "\n- " + q.text;
    questions_json.push_back(json{{"text", q.text}, {"source", {{"type", q.source.type}, {"ref", q.source.ref}}}});
    questions_prov.push_back(q.source);
    questions_access = std::max(questions_access, q.access_level);
  }
  json questions_body = window;
  questions_body["questions"] = questions_json;

  // The batch: three artifacts, the state, the previous artifacts superseded.
  result.summary_id = MissionRecordId(mission_, {"push-refresh", t.task_id, number, "summary"});
  result.lineage_id = MissionRecordId(mission_, {"push-refresh", t.task_id, number, "tool_lineage"});
  result.questions_id = MissionRecordId(mission_, {"push-refresh", t.task_id, number, "open_questions"});
  RecordBatch batch;
  batch.scope = mission_;
  batch.actor = config_.actor;
  batch.reason = "push refresh of task " + t.task_id;
  Memory summary_m = ArtifactRecord(mission_, t, "summary", result.summary_id, summary_text, summary_body,
                                    summary_access);
  summary_m.provenance = summary_prov;
  Memory lineage_m = ArtifactRecord(mission_, t, "tool_lineage", result.lineage_id, lineage_text, lineage_body,
                                    t.access_level);
  lineage_m.provenance = lineage_prov;
  Memory questions_m = ArtifactRecord(mission_, t, "open_questions", result.questions_id, questions_text,
                                      questions_body, questions_access);
  questions_m.provenance = questions_prov;
  std::vector<Memory*> fresh = {&summary_m, &lineage_m, &questions_m};
  // The previous refresh's artifacts, in the same order, are superseded.
  for (size_t i = 0; i < plan.state.artifact_ids.size() && i < fresh.size(); ++i) {
    MSP_ASSIGN_OR_RETURN(std::optional<Memory> old, FindRecord(engine_, mission_, plan.state.artifact_ids[i]));
    if (!old || old->state == RecordState::kSuperseded) continue;
    fresh[i]->supersedes = old->id;
    const int64_t seq = old->seq;
    old->state = RecordState::kSuperseded;
    old->superseded_by = fresh[i]->id;
    old->invalid_at = now;
    old->embedding.clear();
    old->embedder_id.clear();
    batch.puts.push_back(std::move(*old));
    batch.expected_seq.push_back(seq);
  }
  for (Memory* m : fresh) {
    batch.puts.push_back(std::move(*m));
    batch.expected_seq.push_back(0);
  }
  Memory state;
  state.id = RefreshStateRecordId(mission_, t.task_id);
  state.ns = mission_;
  state.layer = Layer::kWorkflow;
  state.kind = Kind::kArtifact;
  state.text = "";
  state.tags = {std::string(kRefreshStateTag), "task:" + t.task_id};
  state.source = std::string(kPushRefreshSource);
  state.criticality = Criticality::kLow;
  state.access_level = t.access_level;
  state.body_json = json{{"type", kRefreshStateType},
                         {"task_id", t.task_id},
                         {"last_refresh_at", now},
                         {"refreshes", plan.state.refreshes + 1},
                         {"last_refresh_id", result.refresh_id},
                         {"artifact_ids", {result.summary_id, result.lineage_id, result.questions_id}},
                         {"priority", result.priority},
                         {"reason", result.reason}}
                        .dump();
  batch.puts.push_back(std::move(state));
  batch.expected_seq.push_back(plan.state.seq);  // 0 when none was stored: must not exist yet
  if (before_commit_) before_commit_(t.task_id);
  Result<std::vector<Memory>> written = engine_.Commit(batch);
  if (!written.ok()) {
    if (written.status().code() == StatusCode::kConflict) {
      return Status::Conflict("task " + t.task_id + " was refreshed by another orchestrator meanwhile: " +
                              written.status().message());
    }
    return written.status();
  }
  return result;
}

Result<PassReport> Orchestrator::RunOnce() {
  PassReport report;
  report.at = clock_->NowMs();
  MSP_ASSIGN_OR_RETURN(report.degraded, Degraded());
  MSP_ASSIGN_OR_RETURN(report.plan, Plan());
  int done = 0;
  for (const TaskPlan& p : report.plan) {
    if (!p.decision.due) break;
    if (config_.max_per_pass > 0 && done >= config_.max_per_pass) break;
    Result<RefreshResult> r = Refresh(p);
    if (r.ok()) {
      report.refreshed.push_back(std::move(r).value());
      ++done;
    } else {
      report.errors.push_back("task " + p.task.task_id + ": " + r.status().ToString());
    }
  }
  return report;
}

Status RunOrchestratorLoop(Orchestrator& orchestrator, std::chrono::seconds interval,
                           const std::function<bool(std::chrono::seconds)>& wait, std::ostream* log,
                           const std::function<Status()>& before_pass) {
  while (true) {
    Status pre = before_pass ? before_pass() : Status::Ok();
    if (!pre.ok() && log) *log << "orchestrate: " << pre.ToString() << " (going on with the stored tasks)\n";
    Result<PassReport> pass = orchestrator.RunOnce();
    if (log) {
      if (!pass.ok()) {
        *log << "orchestrate: pass failed: " << pass.status().ToString() << "\n";
      } else {
        *log << "orchestrate: " << FormatIso8601(pass->at) << " " << pass->plan.size() << " long-term tasks, "
             << pass->refreshed.size() << " refreshed" << (pass->degraded ? " (degraded mode)" : "") << "\n";
        for (const std::string& e : pass->errors) *log << "orchestrate: " << e << "\n";
      }
      log->flush();
    }
    if (!wait(interval)) return Status::Ok();
  }
}

}  // namespace msp
