// WorkflowMemory's retrieval log over a real engine
// (workflow_memory_test_util.h): what a query logs, corrections linked to
// retrievals per week, redundancy per session, concurrent marks.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "mission/retrieval_log.h"
#include "mission/workflow_memory_test_util.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

using nlohmann::json;

using testing::Contains;

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

}  // namespace
}  // namespace msp
