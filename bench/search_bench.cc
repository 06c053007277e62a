// Retrieval latency at 10,000 records in one namespace on the embedded
// default: hybrid top-10 (BM25 + cosine, fused), the query's embedding alone,
// and the cost of access bookkeeping. Queries are LoCoMo's questions.
//   build/bench/bench/search_bench --benchmark_counters_tabular=true
// --retrievals=N runs the BM_Retrieve rows for exactly N retrievals (the
// first N questions), so instruction counts of two builds compare the same
// work (bench/README.md, "Instructions per retrieval").
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string_view>

#include "bench_data.h"
#include "retrieve_timing.h"
#include "embed/dot.h"
#include "embed/embedder.h"
#include "index/index.h"
#include "msp/memory.h"

namespace msp::bench {
namespace {

struct Fixture {
  std::string dir;
  std::unique_ptr<MemoryLayer> mem;
  Corpus corpus;
  size_t records = 0;
};

Fixture& Data(size_t n) {
  static std::map<size_t, std::unique_ptr<Fixture>> fixtures;
  auto& slot = fixtures[n];
  if (slot) return *slot;
  slot = std::make_unique<Fixture>();
  auto c = LoadLocomo();
  if (!c.ok()) {
    fprintf(stderr, "%s\n", c.status().ToString().c_str());
    std::exit(1);
  }
  slot->corpus = std::move(c).value();
  std::string tmpl = (std::filesystem::temp_directory_path() / "msp-search-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) std::abort();
  slot->dir = tmpl;
  Options o;
  o.store.data_dir = tmpl;
  o.store.synchronous = "normal";
  o.policy.max_items_per_user = 0;
  o.policy.min_chars = 0;  // LoCoMo turns include short replies ("Sure!")
  o.policy.trivial_phrases.clear();
  auto m = MemoryLayer::Open(o);
  if (!m.ok()) std::abort();
  slot->mem = std::move(m).value();
  auto texts = SyntheticRecords(slot->corpus, n, 7);
  // Mix real LoCoMo turns in, so questions have true matches among the noise.
  for (size_t i = 0; i < slot->corpus.turns.size() && i < n; i += 2) texts[i] = slot->corpus.turns[i];
  for (size_t i = 0; i < texts.size(); i += 1000) {
    std::vector<WriteRequest> batch;
    for (size_t j = i; j < std::min(texts.size(), i + 1000); ++j) {
      WriteRequest r;
      r.ns.tenant = "bench";
      r.ns.user = "u1";
      r.kind = Kind::kArtifact;
      r.text = texts[j];
      r.tags = {"profile"};
      batch.push_back(std::move(r));
    }
    if (auto w = slot->mem->WriteMany(batch); !w.ok()) {
      fprintf(stderr, "%s\n", w.status().ToString().c_str());
      std::abort();
    }
  }
  Namespace scope;
  scope.tenant = "bench";
  if (!slot->mem->GetStats(scope).ok()) std::abort();  // indexes caught up before timing
  slot->records = n;
  return *slot;
}

void BM_Retrieve(benchmark::State& state) {
  Fixture& f = Data(static_cast<size_t>(state.range(0)));
  const bool access = state.range(1) != 0;
  RetrieveRequest r;
  r.scope.tenant = "bench";
  r.scope.user = std::string("u1");
  r.top_k = 10;
  r.record_access = access;
  TimeRetrievals(state, *f.mem, f.corpus.questions, r);
  state.SetLabel(access ? "with access bookkeeping" : "read-only");
}

void BM_EmbedQuery(benchmark::State& state) {
  Fixture& f = Data(10000);
  auto e = MakeEmbedder(EmbedderOptions{});
  if (!e.ok()) std::abort();
  std::vector<double> us;
  size_t i = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto v = (*e)->Embed({f.corpus.questions[i++ % f.corpus.questions.size()]});
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(v);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  ReportLatency(state, us);
}
BENCHMARK(BM_EmbedQuery)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The vector index alone over the same 10,000 texts' embeddings (no engine,
// no store): exact scan, top `range(0)` (200 = the engine's candidates).
void BM_VectorSearch(benchmark::State& state) {
  Fixture& f = Data(10000);
  static std::unique_ptr<VectorIndex> index;
  static std::vector<std::vector<float>> queries;
  auto e = MakeEmbedder(EmbedderOptions{});
  if (!e.ok()) std::abort();
  if (!index) {
    auto texts = SyntheticRecords(f.corpus, f.records, 7);
    for (size_t i = 0; i < f.corpus.turns.size() && i < f.records; i += 2) texts[i] = f.corpus.turns[i];
    auto vecs = (*e)->Embed(texts);
    auto qs = (*e)->Embed(f.corpus.questions);
    if (!vecs.ok() || !qs.ok()) std::abort();
    queries = std::move(qs).value();
    index = MakeExactVectorIndex((*e)->dimension());
    std::vector<Memory> recs(texts.size());
    for (size_t i = 0; i < recs.size(); ++i) {
      recs[i].id = "r" + std::to_string(i);
      recs[i].ns.tenant = "bench";
      recs[i].ns.user = "u1";
      recs[i].embedding = std::move((*vecs)[i]);
    }
    if (!index->Apply(recs, {}, 1).ok()) std::abort();
  }
  IndexQuery q;
  q.scope.tenant = "bench";
  q.scope.user = std::string("u1");
  q.limit = static_cast<int>(state.range(0));
  std::vector<double> us;
  size_t i = 0;
  for (auto _ : state) {
    const auto& qv = queries[i++ % queries.size()];
    auto t0 = std::chrono::steady_clock::now();
    auto hits = index->Search(qv, q);
    auto t1 = std::chrono::steady_clock::now();
    if (!hits.ok()) state.SkipWithError(hits.status().ToString().c_str());
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  ReportLatency(state, us);
  state.SetLabel("exact, dot kernel " + ActiveDotKernel().name);
}
BENCHMARK(BM_VectorSearch)->Arg(10)->Arg(200)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace msp::bench

int main(int argc, char** argv) {
  // --retrievals=N (ours, removed before Google Benchmark sees the flags).
  long retrievals = 0;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    constexpr std::string_view kFlag = "--retrievals=";
    const std::string_view arg = argv[i];
    if (arg.substr(0, kFlag.size()) == kFlag) {
      retrievals = std::strtol(argv[i] + kFlag.size(), nullptr, 10);
      if (retrievals <= 0) {
        fprintf(stderr, "--retrievals wants a positive count, got '%s'\n", argv[i] + kFlag.size());
        return 2;
      }
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  auto* retrieve = benchmark::RegisterBenchmark("BM_Retrieve", msp::bench::BM_Retrieve);
  retrieve->Args({10000, 0})->Args({10000, 1})->Unit(benchmark::kMicrosecond)->UseRealTime();
  if (retrievals > 0) retrieve->Iterations(retrievals);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
