// WorkflowMemory's query over a real engine (workflow_memory_test_util.h):
// routing by scope, scores that do not depend on earlier searches, filters,
// clearance, budgets, the relevance floor and near-duplicates. The
// retrieval log is tested in workflow_memory_log_test.cc, events and
// degraded ranking in workflow_memory_events_test.cc, handoff digests in
// workflow_memory_handoff_test.cc.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "mission/workflow_memory_test_util.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "tests/support/test_util.h"
#include "util/utf8.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

using testing::Contains;

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
  EXPECT_EQ(cyr.tokens_used, wm_->CountTokens(cyr.markdown));
  // Property: never over the budget, for many random budgets (fixed seed).
  std::mt19937 rng(7);
  for (int i = 0; i < 25; ++i) {
    const int64_t budget = static_cast<int64_t>(rng() % 700);
    ASSERT_OK_AND_ASSIGN(QueryDigest d, wm_->Query(Q("sensor fusion threshold сенсорне", QueryScope::kAll, budget)));
    ASSERT_LE(d.tokens_used, static_cast<size_t>(budget)) << "budget " << budget;
    ASSERT_EQ(d.tokens_used, wm_->CountTokens(d.markdown));
    ASSERT_TRUE(IsValidUtf8(d.markdown));
    ASSERT_EQ(d.served.size() + d.left_out.size(), 7u);
  }
  EXPECT_FALSE(wm_->Query(Q("x", QueryScope::kAll, -1)).ok());
  EXPECT_FALSE(wm_->Query(Q("   ")).ok());
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

}  // namespace
}  // namespace msp
