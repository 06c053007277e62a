// Reciprocal-rank fusion.
#include "core/fusion.h"

#include <algorithm>
#include <unordered_map>

namespace msp {

std::vector<FusedHit> FuseReciprocalRank(const std::vector<RankedSignal>& signals, int k) {
  double max_score = 0.0;
  for (const auto& s : signals) max_score += s.weight / (k + 1.0);
  std::vector<FusedHit> out;
  std::unordered_map<std::string, size_t> slot;
  for (size_t si = 0; si < signals.size(); ++si) {
    const RankedSignal& s = signals[si];
    for (size_t r = 0; r < s.hits.size(); ++r) {
      const IndexHit& h = s.hits[r];
      auto [it, inserted] = slot.try_emplace(h.id, out.size());
      if (inserted) {
        FusedHit f;
        f.id = h.id;
        f.contributions.resize(signals.size());
        for (size_t j = 0; j < signals.size(); ++j) f.contributions[j].signal = signals[j].name;
        out.push_back(std::move(f));
      }
      FusedHit& f = out[it->second];
      SignalContribution& c = f.contributions[si];
      if (c.rank != 0) continue;  // a signal lists an id once; keep its best rank
      const int rank = static_cast<int>(r) + 1;
      c.rank = rank;
      c.raw = h.score;
      c.contribution = max_score > 0 ? s.weight / (k + rank) / max_score : 0.0;
      f.score += c.contribution;
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FusedHit& a, const FusedHit& b) { return a.score > b.score; });
  return out;
}

}  // namespace msp
