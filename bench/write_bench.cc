// Write throughput: records/s through the engine on the embedded default
// (SQLite + hashing embedder), for bulk batches, facts with deduplication,
// one write per transaction, and the index catch-up that follows.
//   build/bench/bench/write_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "bench_data.h"
#include "msp/memory.h"

namespace msp::bench {
namespace {

const Corpus& TheCorpus() {
  static const Corpus corpus = [] {
    auto c = LoadLocomo();
    if (!c.ok()) {
      fprintf(stderr, "%s\n", c.status().ToString().c_str());
      std::exit(1);
    }
    return std::move(c).value();
  }();
  return corpus;
}

struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "msp-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

std::unique_ptr<MemoryLayer> OpenAt(const std::string& dir, const std::string& sync = "full") {
  Options o;
  o.store.data_dir = dir;
  o.store.synchronous = sync;
  o.policy.max_items_per_user = 0;
  auto m = MemoryLayer::Open(o);
  if (!m.ok()) {
    fprintf(stderr, "%s\n", m.status().ToString().c_str());
    std::abort();
  }
  return std::move(m).value();
}

std::vector<WriteRequest> Requests(Kind kind, size_t n, uint64_t seed) {
  std::vector<WriteRequest> out;
  for (auto& text : SyntheticRecords(TheCorpus(), n, seed)) {
    WriteRequest r;
    r.ns.tenant = "bench";
    r.ns.user = "u1";
    r.kind = kind;
    r.text = std::move(text);
    r.tags = {"profile"};
    out.push_back(std::move(r));
  }
  return out;
}

// Writes batches of state.range(0) requests of `kind`, one WriteMany (one
// transaction) per iteration; with `catch_up`, the derived indexes then catch
// up too (what the next query would pay).
void RunBatches(benchmark::State& state, Kind kind, uint64_t seed, bool catch_up) {
  TempDir dir;
  auto mem = OpenAt(dir.path);
  const size_t batch = static_cast<size_t>(state.range(0));
  auto reqs = Requests(kind, batch * 8, seed);
  Namespace scope;
  scope.tenant = "bench";
  size_t i = 0, written = 0;
  for (auto _ : state) {
    std::vector<WriteRequest> chunk(reqs.begin() + static_cast<long>((i % 8) * batch),
                                    reqs.begin() + static_cast<long>((i % 8 + 1) * batch));
    auto r = mem->WriteMany(chunk);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    if (catch_up && !mem->GetStats(scope).ok()) state.SkipWithError("index catch-up failed");
    written += batch;
    ++i;
  }
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(written), benchmark::Counter::kIsRate);
}

// Batches of artifacts (no deduplication) per transaction.
void BM_WriteManyBatch(benchmark::State& state) { RunBatches(state, Kind::kArtifact, 1, false); }
BENCHMARK(BM_WriteManyBatch)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same batches, then the derived indexes catching up: the full cost of
// getting records searchable.
void BM_WriteManyAndIndex(benchmark::State& state) { RunBatches(state, Kind::kArtifact, 2, true); }
BENCHMARK(BM_WriteManyAndIndex)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Facts in batches: each is compared with the user's facts for deduplication.
void BM_FactBatch(benchmark::State& state) { RunBatches(state, Kind::kFact, 3, false); }
BENCHMARK(BM_FactBatch)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(8);

// One record per transaction, synchronous=full (fsync per write) and normal.
void BM_SingleWrite(benchmark::State& state) {
  TempDir dir;
  auto mem = OpenAt(dir.path, state.range(0) ? "full" : "normal");
  auto reqs = Requests(Kind::kArtifact, 2000, 4);
  size_t i = 0;
  for (auto _ : state) {
    auto r = mem->Write(reqs[i++ % reqs.size()]);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
  }
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(i), benchmark::Counter::kIsRate);
  state.SetLabel(state.range(0) ? "synchronous=full" : "synchronous=normal");
}
BENCHMARK(BM_SingleWrite)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace msp::bench

BENCHMARK_MAIN();
