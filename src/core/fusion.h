// Reciprocal-rank fusion of the lexical and vector signals into one ranked
// list with a normalised score (see SearchHit::score) and, on request, each
// signal's contribution.
#ifndef MSP_CORE_FUSION_H_
#define MSP_CORE_FUSION_H_

#include <string>
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
  std::string id;
  double score = 0.0;            // in [0, 1]
  std::vector<SignalContribution> contributions;  // one per signal, in signal order
};

// score(d) = sum_s w_s / (k + rank_s(d)) over the signals that found d,
// divided by sum_s w_s / (k + 1), so a record ranked first by every signal
// scores 1.0. Ties keep the order of first appearance. REQUIRES: k > 0.
std::vector<FusedHit> FuseReciprocalRank(const std::vector<RankedSignal>& signals, int k);

}  // namespace msp

#endif  // MSP_CORE_FUSION_H_
