// The orchestrator over a real engine with an injected clock: the three
// artifacts for a scripted repository history (and their return through
// workflow_memory_query with provenance), the clamp bounds end to end,
// degraded-mode order, the LLM summarizer, and an orchestrator process
// killed mid-run leaving queries unaffected and no half refresh.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "msp/digest.h"
#include "msp/mission.h"
#include "msp/procedural.h"
#include "orchestrate/orchestrate_test_util.h"
#include "orchestrate/orchestrator.h"
#include "provider/chat_client.h"
#include "tests/support/openai_stub.h"

namespace msp {
namespace {

using nlohmann::json;
using testing::Contains;
using testing::Hash;
using testing::kDay;
using testing::kHour;

class RefreshTest : public testing::EngineFixture {
 protected:
  Task NavTask() {
    Task t;
    t.task_id = "T-1";
    t.title = "Route planner hardening";
    t.labels = {"LONG-TERM"};
    t.paths = {"src/nav"};
    t.components = {"navigation"};
    t.refs = {"#12"};
    return t;
  }
  Task IdleTask(const std::string& id, Criticality c = Criticality::kNormal) {
    Task t;
    t.task_id = id;
    t.title = "Idle task " + id;
    t.labels = {"long-term"};
    t.paths = {"src/" + id};
    t.criticality = c;
    return t;
  }
  std::unique_ptr<Orchestrator> MakeOrchestrator() {
    OrchestratorConfig config;
    config.mission = options_.mission;
    return std::make_unique<Orchestrator>(*engine_, mission_, config, clock_);
  }
  // The artifacts of the latest refresh of `task_id`, by artifact kind.
  std::map<std::string, Memory> Artifacts(const std::string& task_id, bool include_superseded = false) {
    ListRequest req;
    req.scope = mission_;
    req.filter.sources = {"push-refresh"};
    req.filter.tags = {"task:" + task_id};
    req.filter.include_superseded = include_superseded;
    req.limit = 0;
    auto list = engine_->List(req);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::map<std::string, Memory> out;
    if (!list.ok()) return out;
    for (const Memory& m : *list) {
      json b = json::parse(m.body_json);
      if (b.value("type", "") != "push_refresh") continue;
      if (m.state == RecordState::kActive) out[b["artifact"].get<std::string>()] = m;
    }
    return out;
  }
  int CountPushRefresh(bool include_superseded) {
    ListRequest req;
    req.scope = mission_;
    req.filter.sources = {"push-refresh"};
    req.filter.include_superseded = include_superseded;
    req.limit = 0;
    auto list = engine_->List(req);
    EXPECT_TRUE(list.ok());
    int n = 0;
    for (const Memory& m : *list) n += json::parse(m.body_json).value("type", "") == "push_refresh";
    return n;
  }
  void PutTool(ProceduralMemory& pm, const std::string& name, const std::string& params) {
    ToolDefinition tool;
    tool.name = name;
    tool.description = "Tool " + name;
    tool.parameters_json = params;
    ASSERT_OK(pm.PutTool(tool, {"ann", "", -1}).status());
  }
  Namespace Agent() {
    Namespace a;
    a.tenant = mission_.tenant;
    a.agent = "navbot";
    return a;
  }
  // The scripted history before the first refresh.
  void ScriptFirstWindow() {
    ProceduralMemory pm(*engine_, Agent());
    PutTool(pm, "plan_route", R"({"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}}})");
    PutTool(pm, "old_tool", R"({"type":"object","properties":{}})");
    Task t = NavTask();
    TaskComment c{"", "bob", "Should we keep Dijkstra as a fallback? Benchmarks look good.", 0};
    ASSERT_OK(AddTask(*engine_, mission_, t, "ann").status());
    clock_->Advance(kHour);
    PutCommit(Hash(1), "Add A* heuristics", "Faster search.", {"src/nav/astar.cc", "src/nav/astar.h"});
    PutCommit(Hash(2), "Fix crash in planner", "Fixes #12.", {"docs/notes.md"}, "Bob");
    PutCommit(Hash(3), "Share geometry helpers", "", {"lib/navigation/geo.cc"});
    PutCommit(Hash(4), "Unrelated button work", "For T-10 only.", {"src/ui/button.cc"});
    ASSERT_OK(AddTaskComment(*engine_, mission_, "T-1", c, "bob", clock_->NowMs()).status());
    Decision proposed;
    proposed.title = "Choose the map tile provider";
    proposed.context = "Tiles for the planner.";
    proposed.decision = "Pending.";
    proposed.status = DecisionStatus::kProposed;
    proposed.component = "navigation";
    proposed.alternatives = {{"OpenStreetMap", "free"}, {"Mapbox", "paid"}};
    ASSERT_OK(AddDecision(*engine_, mission_, proposed, "ann").status());
    Decision accepted;
    accepted.title = "Use A* for routing";
    accepted.context = "Dijkstra is slow. What about offline maps?";
    accepted.decision = "A* with a haversine heuristic.";
    accepted.component = "navigation";
    ASSERT_OK(AddDecision(*engine_, mission_, accepted, "ann").status());
    Decision elsewhere = accepted;
    elsewhere.title = "Button colours";
    elsewhere.context = "Which blue do we use?";
    elsewhere.component = "ui";
    ASSERT_OK(AddDecision(*engine_, mission_, elsewhere, "ann").status());
    WorkflowMemory wm(*engine_, options_.mission, clock_);
    EventRequest q;
    q.mission = mission_;
    q.type = "question";
    q.component = "navigation";
    q.text = "Is GPS jitter handled near tunnels?";
    ASSERT_OK(wm.AddEvent(q).status());
    q.text = "Is the old planner still deployed anywhere?";
    ASSERT_OK_AND_ASSIGN(MissionEvent answered, wm.AddEvent(q));
    EventRequest r = q;
    r.type = "resolution";
    r.text = "It was removed last week.";
    r.resolves_id = answered.id;
    ASSERT_OK(wm.AddEvent(r).status());
    clock_->Advance(kHour);
  }
};

TEST_F(RefreshTest, ThreeArtifactsForAScriptedHistory) {
  ASSERT_NO_FATAL_FAILURE(ScriptFirstWindow());
  auto orch = MakeOrchestrator();
  ASSERT_OK_AND_ASSIGN(std::vector<TaskPlan> plan, orch->Plan());
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].signals.commits, 3);  // by path, by ref "#12", by component; not the T-10 one
  EXPECT_EQ(plan[0].signals.comments, 1);
  EXPECT_TRUE(plan[0].decision.due);
  EXPECT_EQ(plan[0].decision.reason, DueReason::kActivity);

  ASSERT_OK_AND_ASSIGN(PassReport pass, orch->RunOnce());
  ASSERT_EQ(pass.refreshed.size(), 1u) << (pass.errors.empty() ? "" : pass.errors[0]);
  const RefreshResult& r = pass.refreshed[0];
  EXPECT_EQ(r.commits, 3);
  EXPECT_EQ(r.generator, "extractive");
  std::map<std::string, Memory> a = Artifacts("T-1");
  ASSERT_EQ(a.size(), 3u);
  for (const auto& [kind, m] : a) {
    EXPECT_EQ(m.source, "push-refresh") << kind;
    EXPECT_EQ(m.layer, Layer::kWorkflow) << kind;
    EXPECT_EQ(json::parse(m.body_json)["refresh_id"], r.refresh_id) << kind;
  }

  const Memory& summary = a["summary"];
  EXPECT_TRUE(Contains(summary.text, "T-1")) << summary.text;
  for (int i : {1, 2, 3}) EXPECT_TRUE(Contains(summary.text, Hash(i).substr(0, 10))) << summary.text;
  EXPECT_FALSE(Contains(summary.text, Hash(4).substr(0, 10))) << summary.text;
  EXPECT_TRUE(Contains(summary.text, "src/nav/astar.cc")) << summary.text;
  EXPECT_TRUE(Contains(summary.text, "Should we keep Dijkstra")) << summary.text;
  std::set<std::string> commit_refs;
  bool comment_ref = false;
  for (const ProvenanceRef& p : summary.provenance) {
    if (p.type == "commit") commit_refs.insert(p.ref);
    if (p.type == "comment") comment_ref = p.ref.rfind("T-1/", 0) == 0;
  }
  EXPECT_EQ(commit_refs, (std::set<std::string>{Hash(1), Hash(2), Hash(3)}));
  EXPECT_TRUE(comment_ref);

  const Memory& lineage = a["tool_lineage"];
  EXPECT_TRUE(Contains(lineage.text, "Added: navbot/plan_route (v1)")) << lineage.text;
  EXPECT_TRUE(Contains(lineage.text, "Added: navbot/old_tool (v1)")) << lineage.text;

  const Memory& questions = a["open_questions"];
  EXPECT_TRUE(Contains(questions.text, "Undecided: Choose the map tile provider — alternatives: OpenStreetMap"))
      << questions.text;
  EXPECT_TRUE(Contains(questions.text, "What about offline maps? (decision: Use A* for routing)")) << questions.text;
  EXPECT_TRUE(Contains(questions.text, "Should we keep Dijkstra as a fallback? (comment by bob)")) << questions.text;
  EXPECT_TRUE(Contains(questions.text, "Is GPS jitter handled near tunnels?")) << questions.text;
  EXPECT_FALSE(Contains(questions.text, "old planner still deployed")) << questions.text;  // resolved
  EXPECT_FALSE(Contains(questions.text, "Which blue")) << questions.text;                 // another component
  std::set<std::string> kinds;
  for (const ProvenanceRef& p : questions.provenance) kinds.insert(p.type);
  EXPECT_EQ(kinds, (std::set<std::string>{"task", "decision", "comment", "event"}));

  // Second window: tools change, new commits; refreshed after 24 h.
  ProceduralMemory pm(*engine_, Agent());
  clock_->Advance(2 * kHour);
  PutTool(pm, "plan_route",
          R"({"type":"object","properties":{"avoid_tolls":{"type":"boolean"},"from":{"type":"string"},"to":{"type":"string"}}})");
  ASSERT_OK(pm.Remove(ProcedureType::kTool, "old_tool", {"ann", "retired", -1}).status());
  PutTool(pm, "new_tool", R"({"type":"object","properties":{}})");
  for (int i = 5; i < 9; ++i) PutCommit(Hash(i), "Tune planner " + std::to_string(i), "", {"src/nav/tune.cc"});
  clock_->Advance(20 * kHour);  // 22 h after the refresh: clamped
  ASSERT_OK_AND_ASSIGN(PassReport early, orch->RunOnce());
  EXPECT_TRUE(early.refreshed.empty());
  ASSERT_EQ(early.plan.size(), 1u);
  EXPECT_EQ(early.plan[0].decision.reason, DueReason::kTooSoon);
  clock_->Advance(2 * kHour);
  ASSERT_OK_AND_ASSIGN(PassReport second, orch->RunOnce());
  ASSERT_EQ(second.refreshed.size(), 1u);
  EXPECT_EQ(second.refreshed[0].commits, 4);
  EXPECT_EQ(second.refreshed[0].comments, 0);
  std::map<std::string, Memory> b = Artifacts("T-1");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_FALSE(Contains(b["summary"].text, Hash(1).substr(0, 10)));
  EXPECT_TRUE(Contains(b["summary"].text, Hash(8).substr(0, 10)));
  const std::string& delta = b["tool_lineage"].text;
  EXPECT_TRUE(Contains(delta, "Changed: navbot/plan_route v1 -> v2")) << delta;
  EXPECT_TRUE(Contains(delta, "+     \"avoid_tolls\": {")) << delta;
  EXPECT_TRUE(Contains(delta, "Retired: navbot/old_tool (was v1)")) << delta;
  EXPECT_TRUE(Contains(delta, "Added: navbot/new_tool (v1)")) << delta;
  EXPECT_FALSE(Contains(delta, "Added: navbot/plan_route")) << delta;
  // The first refresh's artifacts are superseded by the second's.
  EXPECT_EQ(CountPushRefresh(true), 6);
  EXPECT_EQ(CountPushRefresh(false), 3);
  ASSERT_OK_AND_ASSIGN(Memory old_summary, engine_->Get(mission_, a["summary"].id));
  EXPECT_EQ(old_summary.state, RecordState::kSuperseded);
  EXPECT_EQ(old_summary.superseded_by, b["summary"].id);

  // Pull: workflow_memory_query serves the current artifacts with provenance.
  clock_->Advance(2 * kHour);
  WorkflowMemory wm(*engine_, options_.mission, clock_);
  MissionQuery q;
  q.mission = mission_;
  q.task_description = "T-1 route planner hardening: what changed, tool lineage, open questions";
  q.scope = QueryScope::kWorkflow;
  q.asker.clearance = 0;
  ASSERT_OK_AND_ASSIGN(QueryDigest digest, wm.Query(q));
  std::set<std::string> served;
  bool commit_provenance = false;
  for (const DigestEntry& e : digest.served) {
    served.insert(e.id);
    if (e.id == b["summary"].id) {
      EXPECT_EQ(e.source, "push-refresh");
      for (const ProvenanceRef& p : e.provenance) commit_provenance |= p.type == "commit" && p.ref == Hash(8);
    }
  }
  for (const auto& [kind, m] : b) EXPECT_EQ(served.count(m.id), 1u) << kind << "\n" << digest.markdown;
  EXPECT_EQ(served.count(a["summary"].id), 0u);
  EXPECT_TRUE(commit_provenance);
  EXPECT_TRUE(Contains(digest.markdown, "commit:" + Hash(8)) || Contains(digest.markdown, Hash(8))) << digest.markdown;

  // That query was a pull of T-1: the next plan counts time from it.
  clock_->Advance(kHour);
  ASSERT_OK_AND_ASSIGN(std::vector<TaskPlan> after_pull, orch->Plan());
  EXPECT_EQ(after_pull[0].signals.since_pull_ms, kHour);
}

TEST_F(RefreshTest, IdleTasksAreRefreshedOnceAWeekAndNotMoreThanDaily) {
  ASSERT_OK(AddTask(*engine_, mission_, IdleTask("idle"), "ann").status());
  auto orch = MakeOrchestrator();
  int refreshes = 0;
  std::vector<TimeMs> at;
  const TimeMs start = clock_->NowMs();
  for (int hour = 6; hour <= 24 * 15; hour += 6) {
    clock_->Advance(6 * kHour);
    ASSERT_OK_AND_ASSIGN(PassReport pass, orch->RunOnce());
    for (const RefreshResult& r : pass.refreshed) {
      EXPECT_EQ(r.reason, "max_interval");
      ++refreshes;
      at.push_back(clock_->NowMs() - start);
    }
    if (hour % 24 == 0) {
      // Commits that touch no task do not make the idle one due.
      PutCommit(Hash(hour), "daily work", "", {"src/busy/a.cc"});
    }
  }
  EXPECT_EQ(at, (std::vector<TimeMs>{7 * kDay, 14 * kDay}));
  EXPECT_EQ(refreshes, 2);
}

TEST_F(RefreshTest, BusyTaskIsRefreshedAtMostOncePer24Hours) {
  Task busy = IdleTask("busy");
  ASSERT_OK(AddTask(*engine_, mission_, busy, "ann").status());
  auto orch = MakeOrchestrator();
  std::vector<TimeMs> at;
  const TimeMs start = clock_->NowMs();
  for (int hour = 1; hour <= 50; ++hour) {
    clock_->Advance(kHour);
    // One commit an hour: 24 of them (priority 6) by the end of each day.
    PutCommit(Hash(hour), "busy work", "", {"src/busy/x.cc"});
    if (hour == 1) {
      for (int k = 0; k < 4; ++k) PutCommit(Hash(100 + k), "busy start", "", {"src/busy/y.cc"});
    }
    ASSERT_OK_AND_ASSIGN(PassReport pass, orch->RunOnce());
    for (size_t i = 0; i < pass.refreshed.size(); ++i) at.push_back(clock_->NowMs() - start);
  }
  // The first pass (never refreshed) and then every 24 h exactly.
  EXPECT_EQ(at, (std::vector<TimeMs>{kHour, 25 * kHour, 49 * kHour}));
}

TEST_F(RefreshTest, DegradedModeOrdersTheQueueByCriticality) {
  ASSERT_OK(AddTask(*engine_, mission_, IdleTask("a-normal", Criticality::kNormal), "ann").status());
  ASSERT_OK(AddTask(*engine_, mission_, IdleTask("b-critical", Criticality::kCritical), "ann").status());
  clock_->Advance(kHour);
  // a-normal has more activity, so the higher priority.
  for (int i = 0; i < 8; ++i) PutCommit(Hash(i), "work", "", {"src/a-normal/x.cc"});
  for (int i = 8; i < 12; ++i) PutCommit(Hash(i), "work", "", {"src/b-critical/x.cc"});
  OrchestratorConfig config;
  config.max_per_pass = 1;
  config.mission = options_.mission;
  config.mission.capacity_events_per_min = 1;
  config.mission.rate_window_min = 5;
  {
    Orchestrator calm(*engine_, mission_, config, clock_);
    ASSERT_OK_AND_ASSIGN(std::vector<TaskPlan> plan, calm.Plan());
    ASSERT_EQ(plan.size(), 2u);
    EXPECT_EQ(plan[0].task.task_id, "a-normal");
    EXPECT_GT(plan[0].decision.priority, plan[1].decision.priority);
  }
  WorkflowMemory wm(*engine_, config.mission, clock_);
  for (int i = 0; i < 12; ++i) {
    EventRequest e;
    e.mission = mission_;
    e.type = "alert";
    e.component = "sensors";
    e.text = "Sensor alert " + std::to_string(i);
    ASSERT_OK(wm.AddEvent(e).status());
  }
  Orchestrator loaded(*engine_, mission_, config, clock_);
  ASSERT_OK_AND_ASSIGN(PassReport pass, loaded.RunOnce());
  EXPECT_TRUE(pass.degraded);
  ASSERT_EQ(pass.refreshed.size(), 1u);
  EXPECT_EQ(pass.refreshed[0].task_id, "b-critical");
}

TEST_F(RefreshTest, LlmSummaryAndFallback) {
  ASSERT_OK(AddTask(*engine_, mission_, NavTask(), "ann").status());
  clock_->Advance(kHour);
  for (int i = 0; i < 4; ++i) PutCommit(Hash(i), "Planner step " + std::to_string(i), "", {"src/nav/p.cc"});
  testing::OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(testing::kChatPath,
               testing::StubReply::ChatContent(R"({"summary": "The planner gained four incremental steps."})"));
  ChatOptions co;
  co.base_url = stub.base_url();
  co.model = "stub-model";
  co.max_retries = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ChatClient> chat, ChatClient::Create(co));
  OrchestratorConfig config;
  config.mission = options_.mission;
  Orchestrator orch(*engine_, mission_, config, clock_, MakeLlmSummarizer(std::move(chat)));
  ASSERT_OK_AND_ASSIGN(PassReport pass, orch.RunOnce());
  ASSERT_EQ(pass.refreshed.size(), 1u);
  EXPECT_EQ(pass.refreshed[0].generator, "llm:stub-model");
  std::map<std::string, Memory> a = Artifacts("T-1");
  EXPECT_TRUE(Contains(a["summary"].text, "The planner gained four incremental steps.")) << a["summary"].text;
  ASSERT_EQ(stub.RequestCount(testing::kChatPath), 1u);
  const std::string sent = stub.Requests(testing::kChatPath)[0].body;
  EXPECT_TRUE(Contains(sent, "Planner step 3")) << sent;

  // The model failing: the extractive summary is written instead, and says so.
  clock_->Advance(2 * kDay);
  for (int i = 4; i < 8; ++i) PutCommit(Hash(i), "Planner step " + std::to_string(i), "", {"src/nav/p.cc"});
  stub.Enqueue(testing::kChatPath, testing::StubReply::Error(400, "model not found"));
  ASSERT_OK_AND_ASSIGN(PassReport second, orch.RunOnce());
  ASSERT_EQ(second.refreshed.size(), 1u);
  EXPECT_TRUE(Contains(second.refreshed[0].generator, "extractive (llm:stub-model failed")) << second.refreshed[0].generator;
  a = Artifacts("T-1");
  EXPECT_TRUE(Contains(a["summary"].text, Hash(7).substr(0, 10))) << a["summary"].text;
}

// An orchestrator process killed in the middle of a pass: the refresh it had
// finished is whole, the one it was writing left nothing, queries work, and
// the next orchestrator carries on.
TEST_F(RefreshTest, KilledOrchestratorLeavesNoHalfRefreshAndQueriesWork) {
  ASSERT_OK(AddTask(*engine_, mission_, IdleTask("first", Criticality::kCritical), "ann").status());
  ASSERT_OK(AddTask(*engine_, mission_, IdleTask("second"), "ann").status());
  clock_->Advance(8 * kDay);  // both due (max interval); "first" has the higher priority? equal: by id
  engine_.reset();  // the parent holds no engine across fork

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto engine = MemoryLayer::Open(options_, clock_);
    if (!engine.ok()) _exit(2);
    OrchestratorConfig config;
    config.mission = options_.mission;
    Orchestrator orch(**engine, mission_, config, clock_);
    int commits = 0;
    orch.set_before_commit([&](const std::string&) {
      if (++commits == 2) raise(SIGKILL);  // dies with the second refresh built but not written
    });
    (void)orch.RunOnce();
    _exit(3);  // the hook never fired twice
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  OpenEngine();
  std::map<std::string, Memory> first = Artifacts("first");
  std::map<std::string, Memory> second = Artifacts("second");
  ASSERT_EQ(first.size(), 3u);
  EXPECT_TRUE(second.empty());
  EXPECT_EQ(CountPushRefresh(true), 3);
  // The state names exactly the three artifacts written.
  ASSERT_OK_AND_ASSIGN(Memory state, engine_->Get(mission_, RefreshStateRecordId(mission_, "first")));
  json sb = json::parse(state.body_json);
  std::set<std::string> named(sb["artifact_ids"].begin(), sb["artifact_ids"].end());
  std::set<std::string> present;
  for (const auto& [kind, m] : first) present.insert(m.id);
  EXPECT_EQ(named, present);
  EXPECT_EQ(engine_->Get(mission_, RefreshStateRecordId(mission_, "second")).status().code(),
            StatusCode::kNotFound);

  // Pull works without any orchestrator running.
  WorkflowMemory wm(*engine_, options_.mission, clock_);
  MissionQuery q;
  q.mission = mission_;
  q.task_description = "Idle task first executive summary";
  q.asker.clearance = 0;
  ASSERT_OK_AND_ASSIGN(QueryDigest digest, wm.Query(q));
  bool served = false;
  for (const DigestEntry& e : digest.served) served |= e.id == first["summary"].id;
  EXPECT_TRUE(served) << digest.markdown;

  // A new orchestrator refreshes what is still due: only "second".
  auto orch = MakeOrchestrator();
  ASSERT_OK_AND_ASSIGN(PassReport pass, orch->RunOnce());
  ASSERT_EQ(pass.refreshed.size(), 1u) << (pass.errors.empty() ? "no errors" : pass.errors[0]);
  EXPECT_EQ(pass.refreshed[0].task_id, "second");
  EXPECT_EQ(Artifacts("second").size(), 3u);
}

// The long-running loop: a pass, then the wait; the task poll before each
// pass may fail without stopping the loop.
TEST_F(RefreshTest, LoopPollsThenRefreshesAndSurvivesAFailedPoll) {
  auto orch = MakeOrchestrator();
  int polls = 0;
  int waits = 0;
  std::ostringstream log;
  auto poll = [&]() -> Status {
    if (++polls == 1) return Status::Unavailable("tracker down");
    if (polls == 2) return AddTask(*engine_, mission_, IdleTask("polled"), "poll").status();
    return Status::Ok();
  };
  auto wait = [&](std::chrono::seconds interval) {
    EXPECT_EQ(interval.count(), 60);
    clock_->Advance(8 * kDay);
    return ++waits < 3;
  };
  ASSERT_OK(RunOrchestratorLoop(*orch, std::chrono::seconds(60), wait, &log, poll));
  EXPECT_EQ(polls, 3);
  EXPECT_EQ(waits, 3);
  EXPECT_TRUE(Contains(log.str(), "tracker down")) << log.str();
  EXPECT_TRUE(Contains(log.str(), "0 long-term tasks, 0 refreshed")) << log.str();
  // Created in the second pass at day 8, refreshed in the third at day 16.
  EXPECT_TRUE(Contains(log.str(), "1 long-term tasks, 1 refreshed")) << log.str();
  EXPECT_EQ(Artifacts("polled").size(), 3u);
}

TEST(MatchingTest, WordsPathsAndComponents) {
  EXPECT_TRUE(MentionsWord("Fixes T-1.", "T-1"));
  EXPECT_TRUE(MentionsWord("fixes t-1", "T-1"));
  EXPECT_FALSE(MentionsWord("Fixes T-10", "T-1"));
  EXPECT_FALSE(MentionsWord("XT-1", "T-1"));
  EXPECT_TRUE(MentionsWord("see #12, thanks", "#12"));
  EXPECT_FALSE(MentionsWord("see #123", "#12"));
  Task t;
  t.task_id = "T-1";
  t.paths = {"./src/nav/"};
  t.components = {"geo"};
  CommitInfo c;
  c.message = "work";
  c.files = {"src/navigation/x.cc"};
  EXPECT_FALSE(CommitTouchesTask(c, t));  // a prefix of a name is not a path below it
  c.files = {"src/nav"};
  EXPECT_TRUE(CommitTouchesTask(c, t));
  c.files = {"lib/geo/a.cc"};
  EXPECT_TRUE(CommitTouchesTask(c, t));
  c.files = {"lib/geometry/a.cc"};
  EXPECT_FALSE(CommitTouchesTask(c, t));
}

TEST(QuestionsTest, SentencesAndMarkers) {
  EXPECT_EQ(QuestionsIn("We tried X. Should we try Y? It failed!"),
            (std::vector<std::string>{"Should we try Y?"}));
  EXPECT_EQ(QuestionsIn("- Open question: cache size\nTBD: owner of the pipeline\nDone."),
            (std::vector<std::string>{"Open question: cache size", "TBD: owner of the pipeline"}));
  EXPECT_TRUE(QuestionsIn("No questions here. Ok?").empty());  // too short to be one
}

}  // namespace
}  // namespace msp
