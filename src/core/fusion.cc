// Score and reciprocal-rank fusion (see fusion.h).
#include "core/fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace msp {
namespace {

// The part both fusions share: slots every hit by id (first appearance
// first), counts a signal once per id (its best rank: hits are best first),
// adds contribution(signal, hit, rank) to the hit's score, records the
// contributions when asked, and sorts best first (stable: ties keep the order
// of first appearance).
template <typename Contribution>
std::vector<FusedHit> Fuse(const std::vector<RankedSignal>& signals, bool with_contributions,
                           Contribution contribution) {
  size_t total = 0;
  for (const auto& s : signals) total += s.hits.size();
  std::vector<FusedHit> out;
  out.reserve(total);
  std::vector<uint32_t> seen;  // per fused hit: a bit per signal that listed it
  seen.reserve(total);
  std::unordered_map<std::string_view, uint32_t> slot;
  slot.reserve(total);
  for (size_t si = 0; si < signals.size(); ++si) {
    const RankedSignal& s = signals[si];
    const uint32_t bit = uint32_t{1} << si;
    for (size_t r = 0; r < s.hits.size(); ++r) {
      const IndexHit& h = s.hits[r];
      auto [it, inserted] = slot.try_emplace(h.id, static_cast<uint32_t>(out.size()));
      if (inserted) {
        FusedHit f;
        f.id = h.id;
        if (with_contributions) {
          f.contributions.resize(signals.size());
          for (size_t j = 0; j < signals.size(); ++j) f.contributions[j].signal = signals[j].name;
        }
        out.push_back(std::move(f));
        seen.push_back(0);
      }
      if (seen[it->second] & bit) continue;  // keep the signal's best rank
      seen[it->second] |= bit;
      FusedHit& f = out[it->second];
      const int rank = static_cast<int>(r) + 1;
      const double c = contribution(s, h, rank);
      f.score += c;
      if (with_contributions) {
        SignalContribution& sc = f.contributions[si];
        sc.rank = rank;
        sc.raw = h.score;
        sc.contribution = c;
      }
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FusedHit& a, const FusedHit& b) { return a.score > b.score; });
  return out;
}

}  // namespace

std::vector<FusedHit> FuseReciprocalRank(const std::vector<RankedSignal>& signals, int k,
                                         bool with_contributions) {
  double max_score = 0.0;
  for (const auto& s : signals) max_score += s.weight / (k + 1.0);
  return Fuse(signals, with_contributions, [&](const RankedSignal& s, const IndexHit&, int rank) {
    return max_score > 0 ? s.weight / (k + rank) / max_score : 0.0;
  });
}

std::vector<FusedHit> FuseScores(const std::vector<RankedSignal>& signals, bool with_contributions) {
  double total_weight = 0.0;
  for (const auto& s : signals) total_weight += s.weight;
  return Fuse(signals, with_contributions, [&](const RankedSignal& s, const IndexHit& h, int) {
    return total_weight > 0 ? s.weight * std::clamp(h.score, 0.0, 1.0) / total_weight : 0.0;
  });
}

std::vector<FusedHit> FuseAlignedScores(const RankedSignal& first, const std::vector<AlignedScores>& others) {
  double total_weight = first.weight;
  for (const auto& o : others) total_weight += o.weight;
  const size_t n = first.hits.size();
  std::vector<double> score(n);
  for (size_t i = 0; i < n; ++i) {
    score[i] = total_weight > 0 ? first.weight * std::clamp(first.hits[i].score, 0.0, 1.0) / total_weight : 0.0;
  }
  for (const auto& o : others) {
    for (size_t i = 0; i < n; ++i) {
      const double v = o.scores[i];
      if (std::isnan(v)) continue;
      score[i] += total_weight > 0 ? o.weight * std::clamp(v, 0.0, 1.0) / total_weight : 0.0;
    }
  }
  // Sort positions, not hits: ties keep first.hits' order, as in Fuse.
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return score[a] > score[b]; });
  std::vector<FusedHit> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].id = first.hits[order[i]].id;
    out[i].score = score[order[i]];
  }
  return out;
}

}  // namespace msp
