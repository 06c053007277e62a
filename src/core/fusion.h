// Fusion of the lexical and vector signals into one ranked list with a
// normalised score (see SearchHit::score) and, on request, each signal's
// contribution: by score (a weighted mean) or by reciprocal rank.
#ifndef MSP_CORE_FUSION_H_
#define MSP_CORE_FUSION_H_

#include <string>
#include <string_view>
#include <vector>

#include "index/index.h"
#include "msp/types.h"

namespace msp {

struct RankedSignal {
  std::string name;              // "bm25", "cosine"
  double weight = 1.0;
  std::vector<IndexHit> hits;    // best first
};

struct FusedHit {
  std::string_view id;           // views the id of a hit of the signals passed in
  double score = 0.0;            // in [0, 1]
  // One per signal, in signal order; empty unless asked for.
  std::vector<SignalContribution> contributions;
};

// score(d) = sum_s w_s / (k + rank_s(d)) over the signals that found d,
// divided by sum_s w_s / (k + 1), so a record ranked first by every signal
// scores 1.0. A signal that lists an id twice counts its best rank. Ties
// keep the order of first appearance. Each hit's `id` views the signals'
// hits: `signals` must outlive the result (hence no temporaries). With
// `with_contributions`, each hit carries every signal's rank, raw score and
// share of the score (they sum to it). REQUIRES: k > 0; at most 32 signals.
std::vector<FusedHit> FuseReciprocalRank(const std::vector<RankedSignal>& signals, int k,
                                         bool with_contributions = true);
std::vector<FusedHit> FuseReciprocalRank(std::vector<RankedSignal>&& signals, int k,
                                         bool with_contributions = true) = delete;

// score(d) = sum_s w_s * clamp(score_s(d), 0, 1) / sum_s w_s over the
// signals that found d: the weighted mean of scores the caller put on
// [0, 1] (a record a signal did not find counts 0 there). Ranks, ties,
// repeats, ids and contributions as FuseReciprocalRank.
std::vector<FusedHit> FuseScores(const std::vector<RankedSignal>& signals, bool with_contributions = true);
std::vector<FusedHit> FuseScores(std::vector<RankedSignal>&& signals, bool with_contributions = true) = delete;

// Another signal's scores of the first signal's hits: scores[i] scores
// first.hits[i]; NaN where the signal did not find that hit.
struct AlignedScores {
  double weight = 1.0;
  std::vector<double> scores;
};

// FuseScores({first, others...}, false) for signals that found only hits of
// `first`, each once, given as scores aligned with first.hits: the same
// scores (added in the same order) and the same ranking, without hashing
// ids. The hits view first.hits' ids. REQUIRES: first.hits' ids distinct;
// every others[j].scores has first.hits.size() entries.
std::vector<FusedHit> FuseAlignedScores(const RankedSignal& first, const std::vector<AlignedScores>& others);
std::vector<FusedHit> FuseAlignedScores(RankedSignal&& first, const std::vector<AlignedScores>& others) = delete;

}  // namespace msp

#endif  // MSP_CORE_FUSION_H_
