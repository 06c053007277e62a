// The refresh priority, the clamp and the queue order (priority.h).
#include "orchestrate/priority.h"

#include <algorithm>

namespace msp {

std::string DueReasonName(DueReason r) {
  switch (r) {
    case DueReason::kTooSoon: return "too_soon";
    case DueReason::kBelowThreshold: return "below_threshold";
    case DueReason::kActivity: return "activity";
    case DueReason::kMaxInterval: return "max_interval";
  }
  return "below_threshold";
}

double RefreshPriority(const RefreshSignals& s, const PriorityOptions& o) {
  const double days = static_cast<double>(std::max<TimeMs>(s.since_pull_ms, 0)) / 86400000.0;
  return o.commit_weight * static_cast<double>(std::max<int64_t>(s.commits, 0)) +
         o.comment_weight * static_cast<double>(std::max<int64_t>(s.comments, 0)) + o.pull_weight_per_day * days;
}

RefreshDecision DecideRefresh(const RefreshSignals& s, const PriorityOptions& o) {
  RefreshDecision d;
  d.priority = RefreshPriority(s, o);
  if (!s.never_refreshed && s.since_refresh_ms < o.min_interval_ms) {
    d.reason = DueReason::kTooSoon;
    return d;
  }
  if (s.since_refresh_ms >= o.max_interval_ms) {
    d.due = true;
    d.reason = DueReason::kMaxInterval;
    return d;
  }
  d.due = d.priority >= o.threshold;
  d.reason = d.due ? DueReason::kActivity : DueReason::kBelowThreshold;
  return d;
}

void OrderQueue(std::vector<QueueEntry>* queue, bool degraded) {
  std::stable_sort(queue->begin(), queue->end(), [degraded](const QueueEntry& a, const QueueEntry& b) {
    if (degraded && a.criticality != b.criticality) return a.criticality > b.criticality;
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.task_id < b.task_id;
  });
}

}  // namespace msp
