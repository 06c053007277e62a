// The refresh priority of a LONG-TERM task (seed 003):
//
//   priority = commit_weight  * commits   (touching the task since its last refresh)
//            + comment_weight * comments  (on the task since its last refresh)
//            + pull_weight    * days since the last pull
//
// where the last pull is the latest of: the last refresh, the last
// workflow_memory_query whose task description names the task, the task's
// creation. Each term is non-decreasing in its signal (weights >= 0), so the
// priority is monotone in each.
//
// Due: the clamp comes first. A task refreshed less than min_interval ago
// (24 h) is never due; one whose last refresh (or, never refreshed, its
// creation) is max_interval (7 days) or more ago is always due; in between
// it is due when priority >= threshold. A task never refreshed has no lower
// clamp. The queue of due tasks is ordered by priority, highest first (ties
// by task id); in degraded mode by criticality first (critical, high,
// normal, low), then priority.
#ifndef MSP_ORCHESTRATE_PRIORITY_H_
#define MSP_ORCHESTRATE_PRIORITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "msp/types.h"

namespace msp {

struct PriorityOptions {
  double commit_weight = 0.25;
  double comment_weight = 0.25;
  double pull_weight_per_day = 0.1;
  double threshold = 1.0;
  TimeMs min_interval_ms = 24LL * 3600 * 1000;
  TimeMs max_interval_ms = 7LL * 24 * 3600 * 1000;
};

struct RefreshSignals {
  int64_t commits = 0;           // commits touching the task since its last refresh
  int64_t comments = 0;          // comments since its last refresh
  TimeMs since_pull_ms = 0;      // now - last pull (>= 0)
  // now - last refresh; for a task never refreshed, now - its creation.
  TimeMs since_refresh_ms = 0;
  bool never_refreshed = false;
};

enum class DueReason {
  kTooSoon,      // refreshed less than min_interval ago: clamped off
  kBelowThreshold,
  kActivity,     // priority >= threshold
  kMaxInterval,  // max_interval since the last refresh: forced
};
// "too_soon", "below_threshold", "activity", "max_interval".
std::string DueReasonName(DueReason r);

struct RefreshDecision {
  double priority = 0.0;
  bool due = false;
  DueReason reason = DueReason::kBelowThreshold;
};

double RefreshPriority(const RefreshSignals& s, const PriorityOptions& o);
RefreshDecision DecideRefresh(const RefreshSignals& s, const PriorityOptions& o);

// One task's place in the queue.
struct QueueEntry {
  std::string task_id;
  Criticality criticality = Criticality::kNormal;
  double priority = 0.0;
};
// Sorts `queue`: priority descending; degraded: criticality first. Ties by
// task id, so the order is deterministic.
void OrderQueue(std::vector<QueueEntry>* queue, bool degraded);

}  // namespace msp

#endif  // MSP_ORCHESTRATE_PRIORITY_H_
