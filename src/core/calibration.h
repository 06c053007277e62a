// Calibrated scores (retrieval.scores = "calibrated"): a hit's score as an
// estimate of the chance that it is relevant, comparable across queries.
//
// A retrieval ranks by a relative score (the fused score, the lexical part
// over the query's best), which says nothing about whether the best is any
// good: a query that nothing in memory is about still has a best hit, at 1.
// The calibration adds what the relative score lacks, how well the query is
// matched at all: `match`, the share of the query terms' inverse document
// frequency that the best hit holds (LexicalHit::query_match; a word no
// record holds counts its most), which is low when the best hit shares
// only a common word or two of the query, and the hit's rank. The score is
// a logistic curve of the three, fitted on LoCoMo's tuning half
// (conversations 0-4) against relevance (a hit from a session that holds
// the answer), with questions asked of the wrong conversation and word
// salad as negatives (bench/README.md, "Calibrated scores"). It rises with
// `relative` and falls with the rank, so the order of a query's hits never
// changes.
#ifndef MSP_CORE_CALIBRATION_H_
#define MSP_CORE_CALIBRATION_H_

#include <cstddef>

namespace msp {

// The calibrated score, in (0, 1), of the hit at `rank` (0: the best) with
// relative score `relative` (in [0, 1]) in a query whose best hit holds
// `match` of its terms' idf (in [0, 1]; 0 when no lexical hit).
double CalibratedScore(double relative, double match, size_t rank);

}  // namespace msp

#endif  // MSP_CORE_CALIBRATION_H_
