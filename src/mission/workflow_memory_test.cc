// WorkflowMemory over a real engine (SQLite store, Xapian, hashing embedder)
// in a temp directory, with a fake clock: routing by scope, clearance,
// budgets, the retrieval log, corrections per week, redundancy, events and
// degraded ranking, and handoff digests.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "mission/retrieval_log.h"
#include "msp/digest.h"
#include "msp/memory.h"
#include "msp/mission.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"
#include "util/utf8.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

using testing::Contains;

using testing::FakeClock;

constexpr TimeMs kMinute = 60000;

class WorkflowMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("workflow-memory");
    ASSERT_FALSE(dir_.empty());
    clock_ = std::make_shared<FakeClock>(*ParseIso8601("2026-01-05T09:00:00Z"));  // a Monday
    options_.store.data_dir = dir_ + "/data";
    options_.store.synchronous = "normal";
    options_.actor = "tester";
    options_.mission.capacity_events_per_min = 5;
    options_.mission.rate_window_min = 2;
    options_.mission.escalation_window_min = 30;
    auto engine = MemoryLayer::Open(options_, clock_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    wm_ = std::make_unique<WorkflowMemory>(*engine_, options_.mission, clock_);
    mission_.tenant = "acme";
    mission_.mission = "m1";
  }
  void TearDown() override {
    wm_.reset();
    engine_.reset();
    testing::RemoveTestDir(dir_);
  }

  // A record written directly (a domain chunk, a fact in the mission).
  std::string Put(Layer layer, Kind kind, const std::string& text, int access_level = 0,
                  Criticality crit = Criticality::kNormal, const std::string& operator_id = "") {
    Memory m;
    m.ns = mission_;
    m.ns.operator_id = operator_id;
    m.layer = layer;
    m.kind = kind;
    m.text = text;
    m.source = "import";
    m.access_level = access_level;
    m.criticality = crit;
    m.provenance.push_back({"document", "spec.pdf", "p. 4"});
    RecordBatch b;
    b.scope = mission_;
    b.puts.push_back(m);
    auto r = engine_->Commit(b);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    clock_->Advance(1000);
    return r.ok() ? r->at(0).id : "";
  }

  std::string AddDecisionRecord(const std::string& title, const std::string& component, int access_level = 0,
                                std::vector<ProvenanceRef> provenance = {}, TimeMs decided_at = 0) {
    Decision d;
    d.title = title;
    d.context = "Context for " + title;
    d.decision = "We decided: " + title;
    d.alternatives = {{"Do nothing", "the risk stays"}};
    d.component = component;
    d.access_level = access_level;
    d.decided_by = "ann";
    d.decided_at = decided_at;
    d.provenance = std::move(provenance);
    auto r = AddDecision(*engine_, mission_, d, "tester");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    clock_->Advance(1000);
    return r.ok() ? r->id : "";
  }

  void SetClearance(const std::string& op, int clearance) {
    OperatorRecord rec;
    rec.operator_id = op;
    rec.clearance = clearance;
    ASSERT_OK(SetOperator(*engine_, mission_, rec, "tester").status());
  }

  std::string AddCorrectionRecord(const std::string& op, const std::string& retrieval_id,
                                  const std::string& cls = "missing_context", const std::string& component = "nav") {
    Namespace ns = mission_;
    ns.operator_id = op;
    Correction c;
    c.correction_class = cls;
    c.category = "route";
    c.component = component;
    c.outcome = CorrectionOutcome::kModified;
    c.summary = "The route ignored the closed sector.";
    c.retrieval_id = retrieval_id;
    auto r = AddCorrection(*engine_, ns, c, "tester");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    clock_->Advance(1000);
    return r.ok() ? r->id : "";
  }

  std::string Event(const std::string& type, const std::string& component, const std::string& text,
                    Criticality crit = Criticality::kNormal, const std::string& cause = "",
                    const std::string& resolves = "", int access_level = 0) {
    EventRequest e;
    e.mission = mission_;
    e.type = type;
    e.component = component;
    e.text = text;
    e.criticality = crit;
    e.cause_id = cause;
    e.resolves_id = resolves;
    e.access_level = access_level;
    auto r = wm_->AddEvent(e);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : "";
  }

  MissionQuery Q(const std::string& text, QueryScope scope = QueryScope::kAll, int64_t budget = 8000,
                 const std::string& op = "") {
    MissionQuery q;
    q.mission = mission_;
    q.task_description = text;
    q.scope = scope;
    q.token_budget = budget;
    q.asker.operator_id = op;
    return q;
  }

  std::set<std::string> ServedIds(const QueryDigest& d) {
    std::set<std::string> ids;
    for (const DigestEntry& e : d.served) ids.insert(e.id);
    return ids;
  }

  std::string dir_;
  std::shared_ptr<FakeClock> clock_;
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<WorkflowMemory> wm_;
  Namespace mission_;
};

TEST_F(WorkflowMemoryTest, RoutesByScope) {
  const std::string domain = Put(Layer::kDomain, Kind::kDocumentChunk, "Radar calibration procedure for sector north");
  const std::string decision = AddDecisionRecord("Radar calibration every shift", "radar");
  const std::string mine = AddCorrectionRecord("ann", "");
  const std::string theirs = AddCorrectionRecord("bob", "");
  (void)theirs;

  ASSERT_OK_AND_ASSIGN(QueryDigest all, wm_->Query(Q("radar calibration route closed sector", QueryScope::kAll, 8000, "ann")));
  EXPECT_EQ(ServedIds(all), (std::set<std::string>{domain, decision, mine}));
  EXPECT_TRUE(Contains(all.markdown, "## Domain"));
  EXPECT_TRUE(Contains(all.markdown, "## Workflow"));
  EXPECT_TRUE(Contains(all.markdown, "## Practitioner"));
  EXPECT_TRUE(Contains(all.markdown, "provenance: document spec.pdf (p. 4)"));

  ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(Q("radar calibration", QueryScope::kDomain)));
  EXPECT_EQ(ServedIds(d), (std::set<std::string>{domain}));
  EXPECT_FALSE(Contains(d.markdown, "## Workflow"));
  ASSERT_OK_AND_ASSIGN(QueryDigest w, wm_->Query(Q("radar calibration", QueryScope::kWorkflow)));
  EXPECT_EQ(ServedIds(w), (std::set<std::string>{decision}));
  ASSERT_OK_AND_ASSIGN(QueryDigest p, wm_->Query(Q("route closed sector", QueryScope::kPractitioner, 8000, "ann")));
  EXPECT_EQ(ServedIds(p), (std::set<std::string>{mine}));  // only the asker's own corrections
  for (const DigestEntry& e : all.served) {
    EXPECT_GT(e.score, 0.0);
    EXPECT_GT(e.tokens, 0u);
  }
  const json j = json::parse(all.json);
  EXPECT_EQ(j["retrieval_id"], all.retrieval_id);
  EXPECT_EQ(j["sections"].size(), 3u);
  EXPECT_EQ(j["counter"], all.counter);
  EXPECT_EQ(j["tokens_used"], all.tokens_used);
}

// A query's scores depend on what is stored, never on the searches before
// it: each query logs a retrieval (a record without text) and bumps the
// access counts of what it served, and neither may move the lexical
// statistics that BM25 and the calibrated scores read.
TEST_F(WorkflowMemoryTest, AQueryScoresTheSameWhateverWasSearchedBefore) {
  Put(Layer::kDomain, Kind::kDocumentChunk, "Radar calibration procedure for sector north");
  Put(Layer::kDomain, Kind::kDocumentChunk, "Sector south radar maintenance window on Fridays");
  AddDecisionRecord("Radar calibration every shift", "radar");
  AddDecisionRecord("Antenna tilt for comms relay", "comms");
  auto scores = [](const QueryDigest& d) {
    std::vector<std::pair<std::string, double>> out;
    for (const DigestEntry& e : d.served) out.emplace_back(e.id, e.score);
    return out;
  };
  RetrieveRequest search;
  search.scope = mission_;
  search.query = "radar calibration sector";
  ASSERT_OK_AND_ASSIGN(RetrieveResult searched, engine_->Search(search));
  ASSERT_OK_AND_ASSIGN(QueryDigest first, wm_->Query(Q("radar calibration sector")));
  ASSERT_FALSE(first.served.empty());
  for (const char* other : {"antenna tilt relay", "radar maintenance Fridays", "radar calibration sector"}) {
    ASSERT_OK(wm_->Query(Q(other)).status());
  }
  ASSERT_OK_AND_ASSIGN(QueryDigest again, wm_->Query(Q("radar calibration sector")));
  EXPECT_EQ(scores(again), scores(first));
  ASSERT_OK_AND_ASSIGN(RetrieveResult searched_again, engine_->Search(search));
  ASSERT_EQ(searched_again.hits.size(), searched.hits.size());
  for (size_t i = 0; i < searched.hits.size(); ++i) {
    EXPECT_EQ(searched_again.hits[i].memory.id, searched.hits[i].memory.id);
    EXPECT_EQ(searched_again.hits[i].score, searched.hits[i].score) << "hit " << i;
  }
}

TEST_F(WorkflowMemoryTest, FiltersByComponentCriticalityAndTime) {
  const std::string a = AddDecisionRecord("Antenna tilt for comms relay", "comms");
  const TimeMs split = clock_->NowMs();
  const std::string b = AddDecisionRecord("Antenna tilt for nav beacon", "nav");
  MissionQuery q = Q("antenna tilt");
  q.filters.component = "comms";
  ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(q));
  EXPECT_EQ(ServedIds(d), (std::set<std::string>{a}));
  q.filters.component.clear();
  q.filters.from = split;
  ASSERT_OK_AND_ASSIGN(QueryDigest t, wm_->Query(q));
  EXPECT_EQ(ServedIds(t), (std::set<std::string>{b}));
  q.filters.from = 0;
  q.filters.criticalities = {Criticality::kCritical};
  ASSERT_OK_AND_ASSIGN(QueryDigest c, wm_->Query(q));
  EXPECT_TRUE(c.served.empty());
  EXPECT_TRUE(Contains(c.markdown, "no matching records"));
}

TEST_F(WorkflowMemoryTest, ClearanceFiltersQueryAndHandoff) {
  SetClearance("low", 1);
  SetClearance("high", 7);
  const std::string open = AddDecisionRecord("Jammer response plan open", "ew", 0);
  const std::string secret = AddDecisionRecord("Jammer response plan secret", "ew", 5);
  const std::string secret_event = Event("threat", "ew", "Jammer response plan threat secret", Criticality::kHigh, "", "", 5);
  const std::string secret_chunk = Put(Layer::kDomain, Kind::kDocumentChunk, "Jammer response plan classified annex", 6);

  ASSERT_OK_AND_ASSIGN(QueryDigest low, wm_->Query(Q("jammer response plan", QueryScope::kAll, 8000, "low")));
  EXPECT_EQ(low.clearance, 1);
  EXPECT_EQ(ServedIds(low), (std::set<std::string>{open}));
  for (const std::string& hidden : {secret, secret_event, secret_chunk}) {
    EXPECT_FALSE(Contains(low.markdown, hidden));
    EXPECT_FALSE(Contains(low.json, hidden));
  }
  EXPECT_FALSE(Contains(low.markdown, "secret"));
  EXPECT_FALSE(Contains(low.markdown, "classified"));

  ASSERT_OK_AND_ASSIGN(QueryDigest high, wm_->Query(Q("jammer response plan", QueryScope::kAll, 8000, "high")));
  EXPECT_EQ(ServedIds(high), (std::set<std::string>{open, secret, secret_event, secret_chunk}));
  // A retrieval that served level-6 entries is unknown to a clearance below 6:
  // it cannot be marked, and nothing is changed.
  EXPECT_EQ(wm_->MarkUsed(mission_, high.retrieval_id, {open}, "tester", 1).status().code(), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(MarkUsedResult high_mark, wm_->MarkUsed(mission_, high.retrieval_id, {secret}, "tester", 7));
  EXPECT_EQ(high_mark.used, (std::vector<std::string>{secret}));
  ASSERT_OK_AND_ASSIGN(MarkUsedResult low_mark, wm_->MarkUsed(mission_, low.retrieval_id, {open}, "tester", 1));
  EXPECT_EQ(low_mark.used, (std::vector<std::string>{open}));
  // An unknown asker has clearance 0.
  ASSERT_OK_AND_ASSIGN(QueryDigest anon, wm_->Query(Q("jammer response plan")));
  EXPECT_EQ(anon.clearance, 0);
  EXPECT_EQ(ServedIds(anon), (std::set<std::string>{open}));

  HandoffRequest h;
  h.mission = mission_;
  h.from_operator = "high";
  h.to_operator = "low";
  ASSERT_OK_AND_ASSIGN(HandoffDigest hl, wm_->Handoff(h));
  EXPECT_TRUE(Contains(hl.markdown, "Jammer response plan open"));
  for (const std::string& hidden : {secret, secret_event}) {
    EXPECT_FALSE(Contains(hl.markdown, hidden));
    EXPECT_FALSE(Contains(hl.json, hidden));
  }
  EXPECT_FALSE(Contains(hl.markdown, "secret"));
  h.to_operator = "high";
  ASSERT_OK_AND_ASSIGN(HandoffDigest hh, wm_->Handoff(h));
  EXPECT_TRUE(Contains(hh.markdown, "Jammer response plan secret"));
  EXPECT_EQ(hh.open_threats, (std::vector<std::string>{secret_event}));
}

TEST_F(WorkflowMemoryTest, RetrievalLogIsWrittenAndNeverMatchesASearch) {
  const std::string a = AddDecisionRecord("Battery swap interval for drones", "power");
  MissionQuery q = Q("battery swap interval");
  q.mission.session = "s1";
  ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(q));
  ASSERT_EQ(d.served.size(), 1u);
  EXPECT_TRUE(Contains(d.markdown, d.retrieval_id));
  ASSERT_OK_AND_ASSIGN(Memory log, engine_->Get(mission_, d.retrieval_id));
  EXPECT_EQ(log.kind, Kind::kEvent);
  EXPECT_EQ(log.layer, Layer::kWorkflow);
  EXPECT_EQ(log.text, "");
  EXPECT_EQ(log.ns.session, "s1");
  const json body = json::parse(log.body_json);
  EXPECT_EQ(body["type"], "retrieval");
  EXPECT_EQ(body["query"], "battery swap interval");
  EXPECT_EQ(body["scope"], "all");
  ASSERT_EQ(body["served"].size(), 1u);
  EXPECT_EQ(body["served"][0]["id"], a);
  EXPECT_EQ(body["served"][0]["layer"], "workflow");
  EXPECT_EQ(body["tokens_used"], d.tokens_used);
  EXPECT_EQ(body["counter"], d.counter);
  EXPECT_EQ(body["degraded"], false);
  // The log never comes back from a search, even for its own query words.
  RetrieveRequest r;
  r.scope = mission_;
  r.query = "battery swap interval retrieval";
  r.top_k = 100;
  ASSERT_OK_AND_ASSIGN(std::vector<SearchHit> hits, engine_->Retrieve(r));
  for (const SearchHit& h : hits) EXPECT_NE(h.memory.id, d.retrieval_id);
  // A second query does not serve the first one's log.
  ASSERT_OK_AND_ASSIGN(QueryDigest d2, wm_->Query(q));
  EXPECT_EQ(ServedIds(d2), (std::set<std::string>{a}));
  EXPECT_NE(d2.retrieval_id, d.retrieval_id);
}

TEST_F(WorkflowMemoryTest, BudgetEdges) {
  for (int i = 0; i < 6; ++i) {
    AddDecisionRecord("Sensor fusion threshold variant " + std::to_string(i), "fusion");
  }
  Put(Layer::kDomain, Kind::kDocumentChunk,
      "Сенсорне злиття: поріг виявлення для сектору північ становить 0.7, перевіряти після кожної зміни екіпажу");
  // Budget 0: nothing, not even a footer, yet the retrieval is logged.
  ASSERT_OK_AND_ASSIGN(QueryDigest zero, wm_->Query(Q("sensor fusion threshold сенсорне злиття", QueryScope::kAll, 0)));
  EXPECT_EQ(zero.markdown, "");
  EXPECT_EQ(zero.tokens_used, 0u);
  EXPECT_TRUE(zero.served.empty());
  EXPECT_EQ(zero.left_out.size(), 7u);
  ASSERT_OK_AND_ASSIGN(Memory log, engine_->Get(mission_, zero.retrieval_id));
  EXPECT_EQ(json::parse(log.body_json)["left_out"], 7);
  // Smaller than one entry: something short, within budget, saying what was left out.
  ASSERT_OK_AND_ASSIGN(QueryDigest tiny, wm_->Query(Q("sensor fusion threshold", QueryScope::kAll, 100)));
  EXPECT_LE(tiny.tokens_used, 100u);
  EXPECT_LT(tiny.served.size(), 7u);
  EXPECT_FALSE(tiny.markdown.empty());
  EXPECT_TRUE(Contains(tiny.markdown, "left out")) << tiny.markdown;
  // Cyrillic entries, exact counts.
  ASSERT_OK_AND_ASSIGN(QueryDigest cyr, wm_->Query(Q("сенсорне злиття поріг", QueryScope::kDomain, 8000)));
  ASSERT_EQ(cyr.served.size(), 1u);
  EXPECT_TRUE(Contains(cyr.markdown, "Сенсорне злиття"));
  EXPECT_EQ(cyr.tokens_used, wm_->counter().Count(cyr.markdown));
  // Property: never over the budget, for many random budgets (fixed seed).
  std::mt19937 rng(7);
  for (int i = 0; i < 25; ++i) {
    const int64_t budget = static_cast<int64_t>(rng() % 700);
    ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(Q("sensor fusion threshold сенсорне", QueryScope::kAll, budget)));
    ASSERT_LE(d.tokens_used, static_cast<size_t>(budget)) << "budget " << budget;
    ASSERT_EQ(d.tokens_used, wm_->counter().Count(d.markdown));
    ASSERT_TRUE(IsValidUtf8(d.markdown));
    ASSERT_EQ(d.served.size() + d.left_out.size(), 7u);
  }
  EXPECT_FALSE(wm_->Query(Q("x", QueryScope::kAll, -1)).ok());
  EXPECT_FALSE(wm_->Query(Q("   ")).ok());
}

TEST_F(WorkflowMemoryTest, CorrectionsLinkedToRetrievalsPerWeek) {
  AddDecisionRecord("Landing zone selection near the river", "nav");
  std::vector<std::string> week1, week2;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(Q("landing zone river")));
    week1.push_back(d.retrieval_id);
  }
  AddCorrectionRecord("ann", week1[0], "missing_context", "nav");
  AddCorrectionRecord("ann", "", "style", "nav");  // names no retrieval
  clock_->Advance(7 * kMsPerDay);
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(Q("landing zone river")));
    week2.push_back(d.retrieval_id);
  }
  AddCorrectionRecord("bob", week2[0], "missing_context", "nav");
  AddCorrectionRecord("bob", week2[1], "stale_context", "comms");
  AddCorrectionRecord("ann", week2[1], "missing_context", "nav");

  ASSERT_OK_AND_ASSIGN(CorrectionsReport r, wm_->Corrections(mission_, 0, 0));
  EXPECT_EQ(r.retrievals, 5);
  EXPECT_EQ(r.linked_corrections, 4);
  EXPECT_EQ(r.unlinked_corrections, 1);
  EXPECT_DOUBLE_EQ(r.rate, 4.0 / 5.0);
  ASSERT_EQ(r.weeks.size(), 2u);
  EXPECT_EQ(r.weeks[0].week, "2026-W02");
  EXPECT_EQ(r.weeks[0].retrievals, 3);
  EXPECT_EQ(r.weeks[0].corrections, 1);
  EXPECT_DOUBLE_EQ(r.weeks[0].rate, 1.0 / 3.0);
  EXPECT_EQ(r.weeks[1].week, "2026-W03");
  EXPECT_EQ(r.weeks[1].retrievals, 2);
  EXPECT_EQ(r.weeks[1].corrections, 3);
  EXPECT_EQ(r.weeks[1].corrected_retrievals, 2);
  EXPECT_DOUBLE_EQ(r.weeks[1].rate, 1.5);
  ASSERT_EQ(r.components.size(), 2u);
  EXPECT_EQ(r.components[0].component, "nav");
  EXPECT_EQ(r.components[0].corrections, 3);
  EXPECT_EQ(r.components[1].component, "comms");

  std::ostringstream out;
  ASSERT_OK_AND_ASSIGN(int64_t lines, wm_->ExportCorrectionPairs(mission_, 0, 0, out));
  EXPECT_EQ(lines, 4);
  std::istringstream in(out.str());
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const json j = json::parse(line);
    EXPECT_EQ(j["query"], "landing zone river");
    ASSERT_EQ(j["served"].size(), 1u);
    EXPECT_TRUE(Contains(j["served"][0]["text"].get<std::string>(), "Landing zone selection"));
    EXPECT_FALSE(j["corrected_to"]["class"].get<std::string>().empty());
    EXPECT_EQ(j["corrected_to"]["summary"], "The route ignored the closed sector.");
    ++n;
  }
  EXPECT_EQ(n, 4);
  // The period limits the retrievals (and so the linked corrections).
  ASSERT_OK_AND_ASSIGN(CorrectionsReport w2, wm_->Corrections(mission_, *ParseIso8601("2026-01-12"), 0));
  EXPECT_EQ(w2.retrievals, 2);
  EXPECT_EQ(w2.linked_corrections, 3);
}

TEST_F(WorkflowMemoryTest, RedundancyPerSession) {
  for (int i = 0; i < 4; ++i) AddDecisionRecord("Patrol route option " + std::to_string(i), "nav");
  MissionQuery q = Q("patrol route option");
  q.mission.session = "s1";
  ASSERT_OK_AND_ASSIGN(QueryDigest d1, wm_->Query(q));
  ASSERT_EQ(d1.served.size(), 4u);
  q.mission.session = "s2";
  ASSERT_OK_AND_ASSIGN(QueryDigest d2, wm_->Query(q));

  ASSERT_OK_AND_ASSIGN(MarkUsedResult m, wm_->MarkUsed(mission_, d1.retrieval_id, {d1.served[0].id}, "tester"));
  EXPECT_EQ(m.used.size(), 1u);
  // Marks accumulate and repeat harmlessly.
  ASSERT_OK_AND_ASSIGN(m, wm_->MarkUsed(mission_, d1.retrieval_id, {d1.served[0].id, d1.served[1].id}, "tester"));
  EXPECT_EQ(m.used.size(), 2u);
  EXPECT_EQ(m.served, 4u);
  // Only served entries can be marked; unknown retrievals are NotFound.
  EXPECT_EQ(wm_->MarkUsed(mission_, d1.retrieval_id, {"not-served"}, "tester").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(wm_->MarkUsed(mission_, "01890000-0000-7000-8000-000000000000", {d1.served[0].id}, "tester").status().code(),
            StatusCode::kNotFound);

  ASSERT_OK_AND_ASSIGN(RedundancyReport r, wm_->Redundancy(mission_, 0, 0));
  ASSERT_EQ(r.sessions.size(), 2u);
  const RedundancySession& s1 = r.sessions[0];
  EXPECT_EQ(s1.session, "s1");
  EXPECT_EQ(s1.served_entries, 4);
  EXPECT_EQ(s1.used_entries, 2);
  EXPECT_EQ(s1.marked_retrievals, 1);
  EXPECT_DOUBLE_EQ(s1.unused_share_count, 0.5);
  const int64_t used_tokens = static_cast<int64_t>(d1.served[0].tokens + d1.served[1].tokens);
  int64_t served_tokens = 0;
  for (const DigestEntry& e : d1.served) served_tokens += static_cast<int64_t>(e.tokens);
  EXPECT_EQ(s1.served_tokens, served_tokens);
  EXPECT_EQ(s1.used_tokens, used_tokens);
  EXPECT_DOUBLE_EQ(s1.unused_share_tokens, static_cast<double>(served_tokens - used_tokens) / served_tokens);
  const RedundancySession& s2 = r.sessions[1];
  EXPECT_EQ(s2.session, "s2");
  EXPECT_EQ(s2.used_entries, 0);
  EXPECT_DOUBLE_EQ(s2.unused_share_count, 1.0);
  EXPECT_EQ(r.total.served_entries, static_cast<int64_t>(d1.served.size() + d2.served.size()));
  EXPECT_EQ(r.total.used_entries, 2);
}

TEST_F(WorkflowMemoryTest, ConcurrentMarksAreNeverLost) {
  for (int i = 0; i < 4; ++i) AddDecisionRecord("Convoy spacing rule " + std::to_string(i), "logistics");
  ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(Q("convoy spacing rule")));
  ASSERT_EQ(d.served.size(), 4u);
  // Four threads mark one entry each, at once: every mark is a
  // compare-and-swap on the same log record, retried on conflict.
  std::vector<std::thread> threads;
  std::vector<Status> results(4);
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      results[t] = wm_->MarkUsed(mission_, d.retrieval_id, {d.served[t].id}, "tester").status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_OK_AND_ASSIGN(Memory log, engine_->Get(mission_, d.retrieval_id));
  const json used = json::parse(log.body_json)["used"];
  EXPECT_EQ(used.size(), 4u);
}

TEST_F(WorkflowMemoryTest, EventsValidateAndLink) {
  const std::string a = Event("incident", "comms", "Link to relay 3 lost");
  EventRequest bad;
  bad.mission = mission_;
  bad.type = "gossip";
  bad.component = "comms";
  bad.text = "x";
  EXPECT_EQ(wm_->AddEvent(bad).status().code(), StatusCode::kInvalidArgument);
  bad.type = "retrieval";
  EXPECT_EQ(wm_->AddEvent(bad).status().code(), StatusCode::kInvalidArgument);
  bad.type = "alert";
  bad.cause_id = "01890000-0000-7000-8000-000000000000";
  EXPECT_EQ(wm_->AddEvent(bad).status().code(), StatusCode::kInvalidArgument);
  bad.cause_id.clear();
  bad.component = "two words";
  EXPECT_EQ(wm_->AddEvent(bad).status().code(), StatusCode::kInvalidArgument);
  clock_->Advance(1000);  // events of the same millisecond are ordered by id
  const std::string b = Event("alert", "comms", "Relay 3 battery low", Criticality::kHigh, a);
  ASSERT_OK_AND_ASSIGN(std::vector<MissionEvent> events, wm_->Events(mission_, 0, 0, std::nullopt));
  ASSERT_EQ(events.size(), 2u);  // retrieval logs are not mission events
  EXPECT_EQ(events[1].id, b);
  EXPECT_EQ(events[1].cause_id, a);
  EXPECT_EQ(events[1].criticality, Criticality::kHigh);
}

TEST_F(WorkflowMemoryTest, DegradedModeRanksByCriticalityUnderLoad) {
  const std::string strong = AddDecisionRecord("Thermal camera drift correction procedure", "sensors");
  Put(Layer::kWorkflow, Kind::kArtifact, "Filler note about unrelated logistics", 0, Criticality::kLow);
  const std::string urgent =
      Put(Layer::kWorkflow, Kind::kArtifact, "Evacuate relay tower: structural damage", 0, Criticality::kCritical);
  const MissionQuery q = Q("thermal camera drift correction", QueryScope::kWorkflow);
  ASSERT_OK_AND_ASSIGN(QueryDigest calm, wm_->Query(q));
  EXPECT_FALSE(calm.load.degraded);
  ASSERT_FALSE(calm.served.empty());
  EXPECT_EQ(calm.served[0].id, strong);
  EXPECT_FALSE(Contains(calm.markdown, "Degraded mode"));

  // 20 events in the last 2 minutes: 10/min against a capacity of 5 -> alpha 1.
  for (int i = 0; i < 20; ++i) {
    Event("alert", "comms", "Alert number " + std::to_string(i));
    clock_->Advance(5000);
  }
  ASSERT_OK_AND_ASSIGN(LoadState load, wm_->Load(mission_, std::nullopt));
  EXPECT_EQ(load.events_in_window, 20);
  EXPECT_DOUBLE_EQ(load.rate_per_min, 10.0);
  EXPECT_DOUBLE_EQ(load.alpha, 1.0);
  ASSERT_OK_AND_ASSIGN(QueryDigest hot, wm_->Query(q));
  EXPECT_TRUE(hot.load.degraded);
  ASSERT_FALSE(hot.served.empty());
  EXPECT_EQ(hot.served[0].id, urgent);  // critical first, though it shares no word with the query
  EXPECT_TRUE(Contains(hot.markdown, "Degraded mode"));
  EXPECT_TRUE(Contains(hot.markdown, "1.00 × criticality"));
  const json j = json::parse(hot.json);
  EXPECT_EQ(j["degraded"]["active"], true);
  EXPECT_DOUBLE_EQ(j["degraded"]["alpha"].get<double>(), 1.0);
  ASSERT_OK_AND_ASSIGN(Memory log, engine_->Get(mission_, hot.retrieval_id));
  EXPECT_EQ(json::parse(log.body_json)["degraded"], true);

  // Later the window holds fewer events: 7 in 2 minutes is 3.5/min, below capacity.
  clock_->Advance(10 * kMinute);
  for (int i = 0; i < 7; ++i) Event("alert", "comms", "Quiet alert " + std::to_string(i));
  ASSERT_OK_AND_ASSIGN(QueryDigest cooled, wm_->Query(q));
  EXPECT_FALSE(cooled.load.degraded);
  EXPECT_EQ(cooled.served[0].id, strong);
}

// Issue 19: under a budget the top-ranked entries come first (as excerpts
// when they do not fit whole); a lower entry is never served while a higher
// one is left out.
TEST_F(WorkflowMemoryTest, BudgetKeepsTheTopRankedFirst) {
  std::string long_context;
  for (int i = 0; i < 60; ++i) {
    long_context += "Backend plugins called many HTTP packages (axios, got, request) and each one needed upkeep, line " +
                    std::to_string(i) + ".\n";
  }
  Decision big;
  big.title = "HTTP client library for backend plugins: use node-fetch";
  big.context = long_context;
  big.decision = "A new backend plugin uses node-fetch as its HTTP client library.";
  ASSERT_OK_AND_ASSIGN(Decision top, AddDecision(*engine_, mission_, big, "tester"));
  AddDecisionRecord("Plugin packaging layout", "plugins");
  Put(Layer::kWorkflow, Kind::kArtifact, "A backend plugin note: keep its README short.");
  const std::string task = "which HTTP client library should a new backend plugin use?";
  for (int64_t budget : {150, 200, 300, 400, 500, 800, 1500, 4000}) {
    ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(Q(task, QueryScope::kWorkflow, budget)));
    ASSERT_LE(d.tokens_used, static_cast<size_t>(budget));
    double lowest_served = 2.0, highest_left = -1.0;
    for (const DigestEntry& e : d.served) lowest_served = std::min(lowest_served, e.score);
    for (const DigestEntry& e : d.left_out) highest_left = std::max(highest_left, e.score);
    if (!d.served.empty() && !d.left_out.empty()) {
      EXPECT_GE(lowest_served, highest_left) << "budget " << budget << "\n" << d.markdown;
    }
    if (budget >= 200) {
      ASSERT_FALSE(d.served.empty()) << "budget " << budget << "\n" << d.markdown;
      EXPECT_EQ(d.served[0].id, top.id) << "budget " << budget;
    }
    if (budget <= 800 && !d.served.empty()) {
      // Too large to fit whole: an excerpt with the matching passage and a
      // pointer to the full record.
      EXPECT_TRUE(d.served[0].truncated) << "budget " << budget;
      EXPECT_TRUE(Contains(d.markdown, "full record: msp get " + top.id)) << d.markdown;
    }
  }
  ASSERT_OK_AND_ASSIGN(QueryDigest roomy, wm_->Query(Q(task, QueryScope::kWorkflow, 4000)));
  EXPECT_FALSE(roomy.served[0].truncated);
}

// A nonsense task gets nothing rather than the budget filled with noise;
// twelve near-identical alerts take one entry with their count and span.
TEST_F(WorkflowMemoryTest, RelevanceFloorAndNearDuplicates) {
  AddDecisionRecord("Relay channel plan for the north sector", "comms");
  const TimeMs first = clock_->NowMs();
  for (int i = 0; i < 12; ++i) {
    Event("alert", "ci", "CI pipeline failed on main: job " + std::to_string(4100 + i) + " exited with code 1");
    clock_->Advance(5 * kMinute);
  }
  const std::string distinct = Event("alert", "ci", "CI pipeline runner disk is full on the build host");
  ASSERT_OK_AND_ASSIGN(QueryDigest noise, wm_->Query(Q("zqxj vlorp frimble")));
  EXPECT_TRUE(noise.served.empty()) << noise.markdown;
  EXPECT_TRUE(Contains(noise.markdown, "no matching records")) << noise.markdown;

  ASSERT_OK_AND_ASSIGN(QueryDigest ci, wm_->Query(Q("CI pipeline failed on main")));
  int collapsed = 0;
  for (const DigestEntry& e : ci.served) {
    if (e.duplicates > 1) {
      ++collapsed;
      EXPECT_EQ(e.duplicates, 12);
      EXPECT_EQ(e.duplicate_ids.size(), 11u);
      EXPECT_EQ(e.first_at, first);
      EXPECT_EQ(e.last_at, first + 11 * 5 * kMinute);
    }
  }
  EXPECT_EQ(collapsed, 1) << ci.markdown;
  EXPECT_TRUE(Contains(ci.markdown, "×12 near-identical")) << ci.markdown;
  EXPECT_EQ(ServedIds(ci).count(distinct), 1u);  // a different alert stays its own entry
  // Each of the twelve is served once, inside that entry: none twice.
  EXPECT_LE(ci.served.size(), 3u);
}

// Degraded mode set by hand, and resolved items no longer count.
TEST_F(WorkflowMemoryTest, DegradedModeByHandAndResolvedEventsStopCounting) {
  const std::string threat =
      Event("threat", "perimeter", "Hostile drone swarm near the east gate", Criticality::kCritical);
  Event("resolution", "perimeter", "The swarm left; east gate clear", Criticality::kNormal, "", threat);
  for (int i = 0; i < 20; ++i) {
    Event("alert", "comms", "Alert number " + std::to_string(i));
    clock_->Advance(5000);
  }
  const std::string open_threat =
      Event("threat", "logistics", "Fuel convoy ambush risk on route B", Criticality::kCritical);
  ASSERT_OK_AND_ASSIGN(QueryDigest hot, wm_->Query(Q("thermal camera drift correction", QueryScope::kWorkflow)));
  ASSERT_TRUE(hot.load.degraded);
  EXPECT_EQ(ServedIds(hot).count(threat), 0u) << hot.markdown;   // resolved: not triaged
  EXPECT_EQ(ServedIds(hot).count(open_threat), 1u) << hot.markdown;
  // The resolved threat is not counted in the rate (22 events, 1 resolved).
  ASSERT_OK_AND_ASSIGN(LoadState load, wm_->Load(mission_, std::nullopt));
  EXPECT_EQ(load.events_in_window, 22);

  MissionOptions normal = options_.mission;
  normal.degraded_mode = "normal";
  WorkflowMemory calm(*engine_, normal, clock_);
  ASSERT_OK_AND_ASSIGN(LoadState off, calm.Load(mission_, std::nullopt));
  EXPECT_FALSE(off.degraded);
  EXPECT_EQ(off.alpha, 0.0);
  EXPECT_EQ(off.mode, "normal");

  clock_->Advance(60 * kMinute);  // the window is empty now
  MissionOptions forced = options_.mission;
  forced.degraded_mode = "degraded";
  WorkflowMemory triage(*engine_, forced, clock_);
  ASSERT_OK_AND_ASSIGN(QueryDigest d, triage.Query(Q("thermal camera drift correction", QueryScope::kWorkflow)));
  EXPECT_TRUE(d.load.degraded);
  EXPECT_DOUBLE_EQ(d.load.alpha, 0.5);
  EXPECT_TRUE(Contains(d.markdown, "set by hand")) << d.markdown;
  EXPECT_EQ(ServedIds(d).count(open_threat), 1u);
}

// Issue 19: after a supersede and an open question the handoff served the
// superseded decision and left out its successor and the question.
TEST_F(WorkflowMemoryTest, HandoffNeverServesASupersededDecisionAlone) {
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "Detail " + std::to_string(i) + " of the fetch library comparison.\n";
  Decision old_d;
  old_d.title = "ADR013: use node-fetch";
  old_d.context = long_text;
  old_d.decision = "Backend packages use node-fetch.";
  ASSERT_OK_AND_ASSIGN(Decision adr13, AddDecision(*engine_, mission_, old_d, "tester"));
  clock_->Advance(1000);
  Decision new_d = old_d;
  new_d.title = "ADR014: use the native fetch";
  new_d.decision = "Use the native fetch.";
  ASSERT_OK_AND_ASSIGN(Decision adr14, AddDecision(*engine_, mission_, new_d, "tester"));
  ASSERT_OK(SupersedeDecision(*engine_, mission_, adr13.id, adr14.id, "tester").status());
  clock_->Advance(1000);
  const std::string question = Event("question", "plugins", "Do frontend plugins keep cross-fetch?");
  HandoffRequest h;
  h.mission = mission_;
  h.from_operator = "ann";
  h.to_operator = "bob";
  for (int64_t budget : {120, 200, 300, 400, 600, 1000, 3000}) {
    h.token_budget = budget;
    ASSERT_OK_AND_ASSIGN(HandoffDigest d, wm_->Handoff(h));
    EXPECT_LE(d.tokens_used, static_cast<size_t>(budget));
    // The superseded one is never an entry of its own.
    for (const std::string& id : d.timeline) EXPECT_NE(id, adr13.id) << budget;
    const bool shows_decision = std::find(d.timeline.begin(), d.timeline.end(), adr14.id) != d.timeline.end();
    const bool shows_question = Contains(d.markdown, "Do frontend plugins keep cross-fetch?");
    // Open questions come before history.
    if (shows_decision) {
      EXPECT_TRUE(shows_question) << budget << "\n" << d.markdown;
    }
    if (budget >= 600) {
      EXPECT_TRUE(shows_decision) << budget << "\n" << d.markdown;
      EXPECT_TRUE(Contains(d.markdown, "Replaces (superseded): ADR013: use node-fetch")) << d.markdown;
    }
    if (budget >= 200) {
      EXPECT_TRUE(shows_question) << budget << "\n" << d.markdown;
    }
  }
}

TEST_F(WorkflowMemoryTest, HandoffOrdersCausesBeforeEffects) {
  SetClearance("ann", 3);
  SetClearance("bob", 3);
  const TimeMs since = clock_->NowMs() - 5 * kMinute;
  const std::string jam = Event("incident", "comms", "Jamming detected on channel 4", Criticality::kHigh);
  clock_->Advance(kMinute);
  const std::string threat = Event("threat", "comms", "Relay may be spoofed", Criticality::kCritical, jam);
  clock_->Advance(kMinute);
  const std::string q1 = Event("question", "nav", "Should the patrol avoid sector 7?");
  clock_->Advance(kMinute);
  const std::string old_threat = Event("threat", "power", "Generator overheating");
  clock_->Advance(kMinute);
  Event("resolution", "power", "Generator replaced", Criticality::kNormal, "", old_threat);
  // A decision recorded as made before the incident that caused it (its
  // decided_at is backdated), yet it comes after its cause.
  const std::string dec =
      AddDecisionRecord("Switch relay to channel 9", "comms", 0, {{"event", jam, "cause"}}, since + 4 * kMinute);
  // An effect stamped earlier than its cause: another process's clock lags.
  clock_->Advance(kMinute);
  const TimeMs t = clock_->NowMs();
  const std::string cause = Event("incident", "sensors", "Camera feed frozen");
  clock_->Set(t - 30000);
  const std::string effect = Event("alert", "sensors", "Target track lost", Criticality::kHigh, cause);
  clock_->Set(t + kMinute);
  AddCorrectionRecord("ann", "", "missing_context", "comms");
  AddCorrectionRecord("ann", "", "missing_context", "nav");
  AddCorrectionRecord("ann", "", "wrong_priority", "comms");
  AddCorrectionRecord("bob", "", "style", "ui");

  HandoffRequest h;
  h.mission = mission_;
  h.from_operator = "ann";
  h.to_operator = "bob";
  h.since = since;
  ASSERT_OK_AND_ASSIGN(HandoffDigest d, wm_->Handoff(h));
  EXPECT_LE(d.tokens_used, 8000u);
  EXPECT_EQ(d.open_threats, (std::vector<std::string>{threat}));  // the power threat was resolved
  EXPECT_EQ(d.open_questions, (std::vector<std::string>{q1}));
  EXPECT_EQ(d.decisions, (std::vector<std::string>{dec}));
  auto pos = [&](const std::string& id) {
    return std::find(d.timeline.begin(), d.timeline.end(), id) - d.timeline.begin();
  };
  ASSERT_EQ(d.timeline.size(), 8u);
  // jam, then its effects by time (dec is stamped before jam), then the rest
  // by time, the frozen camera before the lost track stamped earlier.
  EXPECT_EQ(d.timeline[0], jam);
  EXPECT_EQ(d.timeline[1], dec);
  EXPECT_EQ(d.timeline[2], threat);
  EXPECT_EQ(d.timeline[3], q1);
  EXPECT_EQ(d.timeline[4], old_threat);
  EXPECT_LT(pos(cause), pos(effect));
  EXPECT_EQ(d.timeline[7], effect);
  // Reasons and rejected alternatives are in the digest.
  EXPECT_TRUE(Contains(d.markdown, "Why: Context for Switch relay to channel 9"));
  EXPECT_TRUE(Contains(d.markdown, "- Do nothing: the risk stays"));
  EXPECT_TRUE(Contains(d.markdown, "caused by: incident " + jam));
  EXPECT_TRUE(Contains(d.markdown, "## Unresolved threats"));
  EXPECT_FALSE(Contains(d.markdown, "Generator overheating (raised"));
  // The predecessor's profile: ann's corrections only.
  ASSERT_EQ(d.correction_classes.size(), 2u);
  EXPECT_EQ(d.correction_classes[0].name, "missing_context");
  EXPECT_EQ(d.correction_classes[0].count, 2);
  ASSERT_FALSE(d.attention_components.empty());
  EXPECT_EQ(d.attention_components[0].name, "comms");
  EXPECT_EQ(d.attention_components[0].count, 2);
  EXPECT_FALSE(Contains(d.markdown, "style"));
  const json j = json::parse(d.json);
  ASSERT_EQ(j["timeline"].size(), 8u);
  EXPECT_EQ(j["open_threats"][0]["id"], threat);
  EXPECT_EQ(j["correction_profile"]["classes"][0]["name"], "missing_context");
}

TEST_F(WorkflowMemoryTest, HandoffShowsEscalationAndKeepsItsBudget) {
  options_.mission.escalation_window_min = 10;
  options_.mission.escalation_min_events = 3;
  options_.mission.capacity_events_per_min = 1000;
  WorkflowMemory wm(*engine_, options_.mission, clock_);
  Event("incident", "radar", "Radar blip early");
  Event("incident", "nav", "Nav drift early");
  clock_->Advance(15 * kMinute);
  for (int i = 0; i < 4; ++i) {
    Event("incident", "radar", "Radar blip " + std::to_string(i));
    clock_->Advance(kMinute);
  }
  Event("incident", "nav", "Nav drift later");
  HandoffRequest h;
  h.mission = mission_;
  h.from_operator = "ann";
  h.to_operator = "bob";
  ASSERT_OK_AND_ASSIGN(HandoffDigest d, wm.Handoff(h));
  ASSERT_EQ(d.escalating.size(), 1u);
  EXPECT_EQ(d.escalating[0].component, "radar");
  EXPECT_EQ(d.escalating[0].recent, 4);
  EXPECT_EQ(d.escalating[0].earlier, 1);
  EXPECT_TRUE(Contains(d.markdown, "## Escalating"));
  EXPECT_TRUE(Contains(d.markdown, "- radar: 4 events in the last 10 min"));
  std::mt19937 rng(11);
  for (int i = 0; i < 20; ++i) {
    h.token_budget = static_cast<int64_t>(rng() % 400);
    ASSERT_OK_AND_ASSIGN(HandoffDigest b, wm.Handoff(h));
    ASSERT_LE(b.tokens_used, static_cast<size_t>(h.token_budget));
    ASSERT_EQ(b.tokens_used, wm.counter().Count(b.markdown));
  }
  h.token_budget = 0;
  ASSERT_OK_AND_ASSIGN(HandoffDigest z, wm.Handoff(h));
  EXPECT_EQ(z.markdown, "");
  EXPECT_GT(z.left_out, 0u);
}

}  // namespace
}  // namespace msp
