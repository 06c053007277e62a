// Vector search at scale (default 1,000,000 records in one namespace):
// exact scan and HNSW graph (MakeVectorIndex) latency, the graph's
// recall@10 against the exact scan, memory per record; with --hybrid also
// the engine's full hybrid retrieval over the same records and the store's
// bytes per record. Records are synthetic sentences from LoCoMo's
// vocabulary with the built-in hashing embedder; queries are LoCoMo's
// questions. Building takes minutes; bench/README.md has the commands.
//   build/bench/bench/scale_bench [--records N] [--hybrid] [--ef N] [--m N] [--ef-construction N]
//                                 --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench_data.h"
#include "retrieve_timing.h"
#include "consolidate/extractor.h"
#include "core/engine.h"
#include "embed/dot.h"
#include "embed/embedder.h"
#include "index/index.h"
#include "msp/memory.h"
#include "store/store.h"

namespace msp::bench {
namespace {

struct Settings {
  size_t records = 1000000;
  bool hybrid = false;
  int ef = 160;
  int m = VectorIndexOptions().graph_m;
  int ef_construction = VectorIndexOptions().graph_ef_construction;
  size_t recall_queries = 300;
};
Settings settings;
std::string engine_dir;  // removed at exit

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Resident set size in bytes (/proc/self/statm).
double RssBytes() {
  std::ifstream in("/proc/self/statm");
  double pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE));
}

std::vector<std::string> Texts(const Corpus& corpus, size_t n) {
  auto texts = SyntheticRecords(corpus, n, 11);
  // Real turns among them, so questions have true matches among the noise.
  for (size_t i = 0; i < corpus.turns.size() && 2 * i < n; ++i) texts[2 * i] = corpus.turns[i];
  return texts;
}

Memory Record(size_t i, std::vector<float> embedding) {
  Memory m;
  m.id = "r" + std::to_string(1000000000 + i);  // same length as a real id's order of magnitude
  m.ns.tenant = "bench";
  m.ns.user = "u1";
  m.kind = Kind::kArtifact;
  m.embedding = std::move(embedding);
  return m;
}

struct VectorFixture {
  Corpus corpus;
  std::vector<std::vector<float>> queries;
  std::unique_ptr<VectorIndex> exact, graph;
  std::vector<std::vector<std::string>> truth;  // exact top 10 of the first queries
};

VectorFixture& Vectors() {
  static std::unique_ptr<VectorFixture> f;
  if (f) return *f;
  f = std::make_unique<VectorFixture>();
  auto c = LoadLocomo();
  if (!c.ok()) {
    fprintf(stderr, "%s\n", c.status().ToString().c_str());
    std::exit(1);
  }
  f->corpus = std::move(c).value();
  auto e = MakeEmbedder(EmbedderOptions{});
  if (!e.ok()) std::abort();
  auto qs = (*e)->Embed(f->corpus.questions);
  if (!qs.ok()) std::abort();
  f->queries = std::move(qs).value();

  const size_t n = settings.records;
  auto t0 = std::chrono::steady_clock::now();
  const auto texts = Texts(f->corpus, n);
  std::vector<Memory> records;
  records.reserve(n);
  constexpr size_t kChunk = 10000;
  for (size_t i = 0; i < n; i += kChunk) {
    std::vector<std::string> part(texts.begin() + static_cast<long>(i),
                                  texts.begin() + static_cast<long>(std::min(n, i + kChunk)));
    auto v = (*e)->Embed(part);
    if (!v.ok()) std::abort();
    for (size_t j = 0; j < v->size(); ++j) records.push_back(Record(i + j, std::move((*v)[j])));
  }
  fprintf(stderr, "scale_bench: %zu records embedded in %.1f s\n", n, Seconds(t0));

  const double rss0 = RssBytes();
  t0 = std::chrono::steady_clock::now();
  f->exact = MakeExactVectorIndex((*e)->dimension());
  if (!f->exact->Apply(records, {}, 1).ok()) std::abort();
  const double exact_s = Seconds(t0), rss1 = RssBytes();
  t0 = std::chrono::steady_clock::now();
  VectorIndexOptions o;
  o.graph_ef_search = settings.ef;
  o.graph_m = settings.m;
  o.graph_ef_construction = settings.ef_construction;
  f->graph = MakeVectorIndex((*e)->dimension(), o);
  if (auto s = f->graph->Apply(records, {}, 1); !s.ok()) {
    fprintf(stderr, "%s\n", s.ToString().c_str());
    std::abort();
  }
  if (auto s = f->graph->ExtendGraph(SIZE_MAX); !s.ok()) {  // Apply never builds the graph
    fprintf(stderr, "%s\n", s.ToString().c_str());
    std::abort();
  }
  const double graph_s = Seconds(t0), rss2 = RssBytes();
  fprintf(stderr,
          "scale_bench: exact index %.1f s, %.0f bytes/record; graph index (exact part + HNSW M=%d "
          "ef_construction=%d) %.1f s, %.0f bytes/record\n",
          exact_s, (rss1 - rss0) / static_cast<double>(n), o.graph_m, o.graph_ef_construction, graph_s,
          (rss2 - rss1) / static_cast<double>(n));

  IndexQuery q;
  q.scope.tenant = "bench";
  q.limit = 10;
  for (size_t i = 0; i < std::min(settings.recall_queries, f->queries.size()); ++i) {
    auto hits = f->exact->Search(f->queries[i], q);
    if (!hits.ok()) std::abort();
    std::vector<std::string> ids;
    for (const auto& h : *hits) ids.push_back(h.id);
    f->truth.push_back(std::move(ids));
  }
  return *f;
}

// range(0): 0 exact scan, 1 graph. Recall@10 is over the first
// `recall_queries` questions against the exact scan's top 10.
void BM_VectorSearchAtScale(benchmark::State& state) {
  VectorFixture& f = Vectors();
  const bool use_graph = state.range(0) != 0;
  const VectorIndex& index = use_graph ? *f.graph : *f.exact;
  IndexQuery q;
  q.scope.tenant = "bench";
  q.limit = static_cast<int>(state.range(1));
  std::vector<double> us;
  size_t i = 0, found = 0, wanted = 0;
  for (auto _ : state) {
    const size_t qi = i++ % f.queries.size();
    auto t0 = std::chrono::steady_clock::now();
    auto hits = index.Search(f.queries[qi], q);
    auto t1 = std::chrono::steady_clock::now();
    if (!hits.ok()) state.SkipWithError(hits.status().ToString().c_str());
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (qi < f.truth.size() && hits.ok()) {
      for (const auto& id : f.truth[qi]) {
        ++wanted;
        for (size_t r = 0; r < hits->size() && r < 10; ++r) found += (*hits)[r].id == id;
      }
    }
  }
  ReportLatency(state, us);
  if (wanted > 0) state.counters["recall@10"] = static_cast<double>(found) / static_cast<double>(wanted);
  state.SetLabel(std::string(use_graph ? "graph" : "exact") + ", " + std::to_string(settings.records) +
                 " records, dot " + ActiveDotKernel().name);
}

// ---- --hybrid: the engine over the same number of records ------------------

struct EngineFixture {
  std::string dir;
  std::unique_ptr<MemoryLayer> mem;
  Corpus corpus;
};

EngineFixture& Engine() {
  static std::unique_ptr<EngineFixture> f;
  if (f) return *f;
  f = std::make_unique<EngineFixture>();
  f->corpus = Vectors().corpus;
  std::string tmpl = (std::filesystem::temp_directory_path() / "msp-scale-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) std::abort();
  f->dir = tmpl;
  engine_dir = tmpl;
  Options o;
  o.store.data_dir = tmpl;
  o.store.synchronous = "normal";
  o.policy.max_items_per_user = 0;
  o.policy.min_chars = 0;
  o.policy.trivial_phrases.clear();
  EngineParts parts;
  auto store = OpenStore(o.store);
  auto embedder = MakeEmbedder(o.embedder);
  auto lexical = OpenLexicalIndex(o.store.data_dir + "/lexical", o.retrieval);
  auto extractor = MakeExtractor(o.consolidation);
  if (!store.ok() || !embedder.ok() || !lexical.ok() || !extractor.ok()) std::abort();
  parts.store = std::move(store).value();
  parts.embedder = std::move(embedder).value();
  parts.lexical = std::move(lexical).value();
  VectorIndexOptions vo;
  vo.graph_ef_search = settings.ef;
  vo.graph_m = settings.m;
  vo.graph_ef_construction = settings.ef_construction;
  parts.vector = MakeVectorIndex(parts.embedder->dimension(), vo);
  parts.extractor = std::move(extractor).value();
  parts.clock = SystemClock();
  auto m = MakeEngine(o, std::move(parts));
  if (!m.ok()) {
    fprintf(stderr, "%s\n", m.status().ToString().c_str());
    std::abort();
  }
  f->mem = std::move(m).value();

  const size_t n = settings.records;
  const auto texts = Texts(f->corpus, n);
  auto t0 = std::chrono::steady_clock::now();
  constexpr size_t kBatch = 5000;
  for (size_t i = 0; i < n; i += kBatch) {
    std::vector<WriteRequest> batch;
    for (size_t j = i; j < std::min(n, i + kBatch); ++j) {
      WriteRequest r;
      r.ns.tenant = "bench";
      r.ns.user = "u1";
      r.kind = Kind::kArtifact;
      r.text = texts[j];
      batch.push_back(std::move(r));
    }
    if (auto w = f->mem->WriteMany(batch); !w.ok()) {
      fprintf(stderr, "%s\n", w.status().ToString().c_str());
      std::abort();
    }
  }
  const double write_s = Seconds(t0);
  t0 = std::chrono::steady_clock::now();
  Namespace scope;
  scope.tenant = "bench";
  if (!f->mem->GetStats(scope).ok()) std::abort();  // indexes caught up before timing
  const double catchup_s = Seconds(t0);
  uintmax_t store_bytes = 0, lexical_bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(f->dir)) {
    if (!entry.is_regular_file()) continue;
    const bool lexical_file = entry.path().string().find("/lexical") != std::string::npos;
    (lexical_file ? lexical_bytes : store_bytes) += entry.file_size();
  }
  fprintf(stderr,
          "scale_bench: engine: %zu records written in %.1f s (%.0f/s), indexes caught up in %.1f s; "
          "store files %.0f bytes/record, lexical index %.0f bytes/record\n",
          n, write_s, static_cast<double>(n) / write_s, catchup_s,
          static_cast<double>(store_bytes) / static_cast<double>(n),
          static_cast<double>(lexical_bytes) / static_cast<double>(n));
  return *f;
}

void BM_HybridRetrieveAtScale(benchmark::State& state) {
  EngineFixture& f = Engine();
  RetrieveRequest r;
  r.scope.tenant = "bench";
  r.scope.user = std::string("u1");
  r.top_k = 10;
  r.record_access = false;
  TimeRetrievals(state, *f.mem, f.corpus.questions, r);
  state.SetLabel(std::to_string(settings.records) + " records, query embedding included");
}

}  // namespace
}  // namespace msp::bench

int main(int argc, char** argv) {
  using msp::bench::settings;
  // Our flags first; the rest go to Google Benchmark.
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) {
      settings.records = std::stoul(argv[++i]);
    } else if (a == "--ef" && i + 1 < argc) {
      settings.ef = std::stoi(argv[++i]);
    } else if (a == "--m" && i + 1 < argc) {
      settings.m = std::stoi(argv[++i]);
    } else if (a == "--ef-construction" && i + 1 < argc) {
      settings.ef_construction = std::stoi(argv[++i]);
    } else if (a == "--hybrid") {
      settings.hybrid = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  benchmark::RegisterBenchmark("BM_VectorSearchAtScale/exact/top10", msp::bench::BM_VectorSearchAtScale)
      ->Args({0, 10})->Unit(benchmark::kMicrosecond)->UseRealTime()->Iterations(200);
  benchmark::RegisterBenchmark("BM_VectorSearchAtScale/graph/top10", msp::bench::BM_VectorSearchAtScale)
      ->Args({1, 10})->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2.0);
  // The engine asks the vector index for `candidates` (200) hits; a larger
  // limit also widens the graph search (2 x limit), trading time for recall.
  for (int limit : {200, 500}) {
    benchmark::RegisterBenchmark(("BM_VectorSearchAtScale/graph/top" + std::to_string(limit)).c_str(),
                                 msp::bench::BM_VectorSearchAtScale)
        ->Args({1, limit})->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2.0);
  }
  if (settings.hybrid) {
    benchmark::RegisterBenchmark("BM_HybridRetrieveAtScale/top10", msp::bench::BM_HybridRetrieveAtScale)
        ->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2.0);
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!msp::bench::engine_dir.empty()) std::filesystem::remove_all(msp::bench::engine_dir);
  return 0;
}
