// WorkflowMemory's events over a real engine (workflow_memory_test_util.h):
// their checks and links, and degraded mode, under load or set by hand,
// with resolved items no longer counting.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "mission/workflow_memory_test_util.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using nlohmann::json;

using testing::Contains;

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

}  // namespace
}  // namespace msp
