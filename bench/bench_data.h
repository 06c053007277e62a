// Benchmark corpora: realistic text without shipping any. Records are
// sentences drawn from the word distribution of LoCoMo's conversations
// (../shared/bench-data/locomo10.json, or $MSP_LOCOMO), queries are LoCoMo's
// own questions; both are reproducible from a fixed seed.
#ifndef MSP_BENCH_BENCH_DATA_H_
#define MSP_BENCH_BENCH_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "msp/status.h"

namespace msp::bench {

struct Corpus {
  std::vector<std::string> turns;      // LoCoMo turn texts
  std::vector<std::string> questions;  // LoCoMo questions
};

// Loads LoCoMo from $MSP_LOCOMO or <source>/../shared/bench-data/locomo10.json.
Result<Corpus> LoadLocomo();

// `n` synthetic records: each a run of 8..30 words drawn (Zipf-like, by
// observed frequency) from the corpus's turns, deterministic for `seed`.
std::vector<std::string> SyntheticRecords(const Corpus& corpus, size_t n, uint64_t seed);

// Percentile (0..100) of `samples` (sorted in place), in the samples' unit.
double Percentile(std::vector<double>& samples, double p);

}  // namespace msp::bench

#endif  // MSP_BENCH_BENCH_DATA_H_
