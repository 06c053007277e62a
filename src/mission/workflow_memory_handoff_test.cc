// WorkflowMemory's handoff digests over a real engine
// (workflow_memory_test_util.h): a superseded decision never served alone,
// causes before effects, escalation within the budget.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "mission/workflow_memory_test_util.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "tests/support/test_util.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

using testing::Contains;

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
    ASSERT_EQ(b.tokens_used, wm.CountTokens(b.markdown));
  }
  h.token_budget = 0;
  ASSERT_OK_AND_ASSIGN(HandoffDigest z, wm.Handoff(h));
  EXPECT_EQ(z.markdown, "");
  EXPECT_GT(z.left_out, 0u);
}

}  // namespace
}  // namespace msp
