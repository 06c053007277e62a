// The refresh priority: monotone in each signal, the 24 h / 7 day clamp, and
// the queue order (degraded mode: criticality first).
#include <gtest/gtest.h>

#include "orchestrate/orchestrate_test_util.h"
#include "orchestrate/priority.h"

namespace msp {
namespace {

using testing::kDay;
using testing::kHour;

RefreshSignals Signals(int64_t commits, int64_t comments, TimeMs since_pull, TimeMs since_refresh) {
  RefreshSignals s;
  s.commits = commits;
  s.comments = comments;
  s.since_pull_ms = since_pull;
  s.since_refresh_ms = since_refresh;
  return s;
}

TEST(PriorityTest, MonotoneInEachSignal) {
  const PriorityOptions o;
  for (int64_t base = 0; base < 5; ++base) {
    for (TimeMs t : {TimeMs{0}, kHour, 3 * kDay}) {
      const double p = RefreshPriority(Signals(base, base, t, t), o);
      EXPECT_GT(RefreshPriority(Signals(base + 1, base, t, t), o), p);
      EXPECT_GT(RefreshPriority(Signals(base, base + 1, t, t), o), p);
      EXPECT_GT(RefreshPriority(Signals(base, base, t + kHour, t), o), p);
    }
  }
  // Due-ness is monotone too: more activity never makes a due task not due.
  for (TimeMs since = 0; since <= 8 * kDay; since += 6 * kHour) {
    bool was_due = false;
    for (int64_t commits = 0; commits < 10; ++commits) {
      const bool due = DecideRefresh(Signals(commits, 0, since, since), o).due;
      EXPECT_TRUE(due || !was_due) << "commits " << commits << " since " << since;
      was_due = due;
    }
  }
}

TEST(PriorityTest, FormulaMatchesTheDocumentedWeights) {
  PriorityOptions o;
  o.commit_weight = 0.5;
  o.comment_weight = 0.2;
  o.pull_weight_per_day = 0.1;
  EXPECT_DOUBLE_EQ(RefreshPriority(Signals(3, 2, 5 * kDay, 0), o), 0.5 * 3 + 0.2 * 2 + 0.1 * 5);
}

TEST(PriorityTest, ClampedToAtMostOncePer24Hours) {
  const PriorityOptions o;
  // However busy the task, within 24 h of its last refresh it is not due.
  RefreshDecision d = DecideRefresh(Signals(1000, 1000, 23 * kHour, 24 * kHour - 1), o);
  EXPECT_FALSE(d.due);
  EXPECT_EQ(d.reason, DueReason::kTooSoon);
  EXPECT_GT(d.priority, o.threshold);
  d = DecideRefresh(Signals(1000, 1000, 23 * kHour, 24 * kHour), o);
  EXPECT_TRUE(d.due);
  EXPECT_EQ(d.reason, DueReason::kActivity);
  // A task never refreshed has no lower clamp.
  RefreshSignals fresh = Signals(10, 0, kHour, kHour);
  fresh.never_refreshed = true;
  EXPECT_TRUE(DecideRefresh(fresh, o).due);
}

TEST(PriorityTest, ClampedToAtLeastOncePer7Days) {
  const PriorityOptions o;
  RefreshDecision d = DecideRefresh(Signals(0, 0, 0, 7 * kDay - 1), o);
  EXPECT_FALSE(d.due);
  EXPECT_EQ(d.reason, DueReason::kBelowThreshold);
  d = DecideRefresh(Signals(0, 0, 0, 7 * kDay), o);
  EXPECT_TRUE(d.due);
  EXPECT_EQ(d.reason, DueReason::kMaxInterval);
  // An idle task (no commits or comments, pulled just now) is due at 7 days
  // and not before.
  for (TimeMs since = 0; since < 7 * kDay; since += kHour) {
    EXPECT_FALSE(DecideRefresh(Signals(0, 0, since, since), o).due) << since;
  }
}

TEST(PriorityTest, ActivityMakesATaskDueBetweenTheClamps) {
  const PriorityOptions o;
  // Two days after a refresh: 3 commits + 2 days (0.75 + 0.2) is not enough,
  // 4 commits (1.0 + 0.2) is.
  EXPECT_FALSE(DecideRefresh(Signals(3, 0, 2 * kDay, 2 * kDay), o).due);
  EXPECT_TRUE(DecideRefresh(Signals(4, 0, 2 * kDay, 2 * kDay), o).due);
  // A recent pull lowers the priority.
  EXPECT_TRUE(DecideRefresh(Signals(2, 1, 5 * kDay, 5 * kDay), o).due);
  EXPECT_FALSE(DecideRefresh(Signals(2, 1, kHour, 5 * kDay), o).due);
}

TEST(PriorityTest, QueueOrderAndDegradedMode) {
  std::vector<QueueEntry> q = {{"a", Criticality::kLow, 5.0},
                               {"b", Criticality::kCritical, 1.0},
                               {"c", Criticality::kHigh, 3.0},
                               {"d", Criticality::kHigh, 3.0},
                               {"e", Criticality::kNormal, 4.0}};
  std::vector<QueueEntry> normal = q;
  OrderQueue(&normal, false);
  std::vector<std::string> ids;
  for (const QueueEntry& e : normal) ids.push_back(e.task_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "e", "c", "d", "b"}));
  OrderQueue(&q, true);
  ids.clear();
  for (const QueueEntry& e : q) ids.push_back(e.task_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"b", "c", "d", "e", "a"}));
}

}  // namespace
}  // namespace msp
