// Timing helpers shared by the Google Benchmark programs: per-call latency
// percentiles as counters, and a timed loop of Retrieve calls over questions.
#ifndef MSP_BENCH_RETRIEVE_TIMING_H_
#define MSP_BENCH_RETRIEVE_TIMING_H_

#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include "bench_data.h"
#include "msp/memory.h"

namespace msp::bench {

// Sets the p50_us and p99_us counters from per-call microseconds.
inline void ReportLatency(benchmark::State& state, std::vector<double>& us) {
  state.counters["p50_us"] = Percentile(us, 50);
  state.counters["p99_us"] = Percentile(us, 99);
}

// One Retrieve per iteration with `request`, its query taken from
// `questions` in turn; reports the per-call latency percentiles.
inline void TimeRetrievals(benchmark::State& state, MemoryLayer& mem,
                           const std::vector<std::string>& questions, RetrieveRequest request) {
  std::vector<double> us;
  size_t i = 0;
  for (auto _ : state) {
    request.query = questions[i++ % questions.size()];
    const auto t0 = std::chrono::steady_clock::now();
    auto hits = mem.Retrieve(request);
    const auto t1 = std::chrono::steady_clock::now();
    if (!hits.ok()) state.SkipWithError(hits.status().ToString().c_str());
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  ReportLatency(state, us);
}

}  // namespace msp::bench

#endif  // MSP_BENCH_RETRIEVE_TIMING_H_
