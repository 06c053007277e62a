// Causal ordering and escalation (see timeline.h).
#include "mission/timeline.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

namespace msp {

std::vector<size_t> CausalOrder(const std::vector<TimelineNode>& nodes) {
  const size_t n = nodes.size();
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) index.emplace(nodes[i].id, i);
  std::vector<std::vector<size_t>> effects(n);
  std::vector<size_t> pending(n, 0);  // causes not yet placed
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> seen;
    for (const std::string& c : nodes[i].causes) {
      auto it = index.find(c);
      if (it == index.end() || it->second == i) continue;
      if (std::find(seen.begin(), seen.end(), it->second) != seen.end()) continue;
      seen.push_back(it->second);
      effects[it->second].push_back(i);
      ++pending[i];
    }
  }
  auto later = [&](size_t a, size_t b) {
    return std::tie(nodes[a].at, nodes[a].id) > std::tie(nodes[b].at, nodes[b].id);
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> ready(later);
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<bool> placed(n, false);
  std::vector<size_t> order;
  order.reserve(n);
  while (order.size() < n) {
    if (ready.empty()) {
      // A cycle: release the earliest node not yet placed.
      size_t best = n;
      for (size_t i = 0; i < n; ++i) {
        if (!placed[i] && (best == n || later(best, i))) best = i;
      }
      pending[best] = 0;
      ready.push(best);
    }
    const size_t i = ready.top();
    ready.pop();
    if (placed[i]) continue;
    placed[i] = true;
    order.push_back(i);
    for (size_t e : effects[i]) {
      if (!placed[e] && pending[e] > 0 && --pending[e] == 0) ready.push(e);
    }
  }
  return order;
}

std::vector<Escalation> DetectEscalation(const std::vector<ComponentEvent>& events, TimeMs now,
                                         const MissionOptions& options) {
  std::vector<Escalation> out;
  if (options.escalation_window_min <= 0) return out;
  const TimeMs w = static_cast<TimeMs>(options.escalation_window_min) * 60000;
  std::map<std::string, Escalation> by_component;
  for (const ComponentEvent& e : events) {
    if (e.at > now || e.at <= now - 2 * w) continue;
    Escalation& s = by_component[e.component];
    s.component = e.component;
    (e.at > now - w ? s.recent : s.earlier) += 1;
  }
  for (const auto& [component, s] : by_component) {
    if (s.recent >= options.escalation_min_events &&
        static_cast<double>(s.recent) >= options.escalation_factor * static_cast<double>(s.earlier)) {
      out.push_back(s);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Escalation& a, const Escalation& b) {
    return a.recent > b.recent;
  });
  return out;
}

}  // namespace msp
