// The fixture of the WorkflowMemory tests (workflow_memory_*test.cc): a real
// engine (SQLite store, Xapian, hashing embedder) in a temp directory with a
// fake clock, one mission, and helpers that write its records and events
// and build its queries.
#ifndef MSP_MISSION_WORKFLOW_MEMORY_TEST_UTIL_H_
#define MSP_MISSION_WORKFLOW_MEMORY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "msp/digest.h"
#include "msp/memory.h"
#include "msp/mission.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {

inline constexpr TimeMs kMinute = 60000;

class WorkflowMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("workflow-memory");
    ASSERT_FALSE(dir_.empty());
    clock_ = std::make_shared<testing::FakeClock>(*ParseIso8601("2026-01-05T09:00:00Z"));  // a Monday
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
  std::shared_ptr<testing::FakeClock> clock_;
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<WorkflowMemory> wm_;
  Namespace mission_;
};

}  // namespace msp

#endif  // MSP_MISSION_WORKFLOW_MEMORY_TEST_UTIL_H_
