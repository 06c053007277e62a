// The time structure of a handoff: causal order over recorded cause links,
// and the escalation rule. Pure functions, no store.
#ifndef MSP_MISSION_TIMELINE_H_
#define MSP_MISSION_TIMELINE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "msp/digest.h"
#include "msp/options.h"
#include "msp/types.h"

namespace msp {

struct TimelineNode {
  std::string id;
  TimeMs at = 0;
  std::vector<std::string> causes;  // ids of the nodes that caused this one
};

// The indices of `nodes` in causal order: every node after each of its causes
// that is among `nodes` (a topological order of the cause links); among the
// nodes free to come next, the earliest (at, then id) first. Causes not in
// `nodes` are ignored. A cycle (causes are checked to exist before their
// effects, so only replaced records could make one) is broken by taking the
// earliest remaining node. Every index appears exactly once.
std::vector<size_t> CausalOrder(const std::vector<TimelineNode>& nodes);

struct ComponentEvent {
  std::string component;
  TimeMs at = 0;
};

// The escalation rule. With W = options.escalation_window_min minutes, a
// component's `recent` events are those in (now - W, now] and its `earlier`
// ones those in (now - 2W, now - W]. It escalates when
//   recent >= options.escalation_min_events  and
//   recent >= options.escalation_factor * earlier.
// Returned most recent events first, then by component.
std::vector<Escalation> DetectEscalation(const std::vector<ComponentEvent>& events, TimeMs now,
                                         const MissionOptions& options);

}  // namespace msp

#endif  // MSP_MISSION_TIMELINE_H_
