// Encryption at rest (docs/encryption.md): the same work on a plain store and
// on an encrypted one in one run, alternating rounds, each figure beside its
// plain floor as a ratio. Measures:
//   write   batches of 100 records (WriteMany, synchronous=full) and single
//           writes (synchronous=normal), records/s
//   search  Retrieve top 10 over N records (LoCoMo questions), p50 / p95
//   open    MemoryLayer::Open of an N-record store and its first search
//           (encrypted: the in-memory indexes are rebuilt from the store;
//           plain: they are read from lexical/ and vector/index.msv)
//   build/rel/bench/encryption_bench [records=10000] [rounds=3]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_data.h"
#include "msp/memory.h"

namespace msp::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kKey[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "msp-encbench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

Options Make(const std::string& dir, bool encrypted, const std::string& sync) {
  Options o;
  o.store.data_dir = dir;
  o.store.synchronous = sync;
  if (encrypted) o.store.encryption_key = kKey;
  o.policy.max_items_per_user = 0;
  o.policy.min_chars = 0;
  o.policy.trivial_phrases.clear();
  return o;
}

std::unique_ptr<MemoryLayer> OpenOrDie(const Options& o) {
  auto m = MemoryLayer::Open(o);
  if (!m.ok()) {
    fprintf(stderr, "%s\n", m.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(m).value();
}

std::vector<WriteRequest> Requests(const std::vector<std::string>& texts) {
  std::vector<WriteRequest> out;
  for (const auto& t : texts) {
    WriteRequest r;
    r.ns.tenant = "bench";
    r.ns.user = "u1";
    r.kind = Kind::kArtifact;
    r.text = t;
    r.tags = {"profile"};
    out.push_back(std::move(r));
  }
  return out;
}

void Check(const Status& s) {
  if (!s.ok()) {
    fprintf(stderr, "%s\n", s.ToString().c_str());
    std::exit(1);
  }
}

// Records/s writing `reqs` in batches of 100 into a new store.
double WriteBatches(bool encrypted, const std::vector<WriteRequest>& reqs) {
  TempDir dir;
  auto mem = OpenOrDie(Make(dir.path, encrypted, "full"));
  const auto start = Clock::now();
  for (size_t i = 0; i < reqs.size(); i += 100) {
    std::vector<WriteRequest> chunk(reqs.begin() + static_cast<long>(i),
                                    reqs.begin() + static_cast<long>(std::min(reqs.size(), i + 100)));
    Check(mem->WriteMany(chunk).status());
  }
  return static_cast<double>(reqs.size()) / (Ms(Clock::now() - start) / 1000);
}

// Records/s, one Write (one transaction) each, synchronous=normal.
double WriteSingles(bool encrypted, const std::vector<WriteRequest>& reqs) {
  TempDir dir;
  auto mem = OpenOrDie(Make(dir.path, encrypted, "normal"));
  const auto start = Clock::now();
  for (const auto& r : reqs) Check(mem->Write(r).status());
  return static_cast<double>(reqs.size()) / (Ms(Clock::now() - start) / 1000);
}

struct Store {
  TempDir dir;
  bool encrypted = false;
};

void Fill(Store& s, const std::vector<WriteRequest>& reqs) {
  auto mem = OpenOrDie(Make(s.dir.path, s.encrypted, "normal"));
  for (size_t i = 0; i < reqs.size(); i += 1000) {
    std::vector<WriteRequest> chunk(reqs.begin() + static_cast<long>(i),
                                    reqs.begin() + static_cast<long>(std::min(reqs.size(), i + 1000)));
    Check(mem->WriteMany(chunk).status());
  }
  Namespace scope;
  scope.tenant = "bench";
  Check(mem->GetStats(scope).status());  // indexes caught up (and, plain, saved at close)
}

RetrieveRequest Query(const std::string& text) {
  RetrieveRequest r;
  r.scope.tenant = "bench";
  r.scope.user = std::string("u1");
  r.top_k = 10;
  r.record_access = false;
  r.query = text;
  return r;
}

// Open, then the first search (what a short-lived process pays), in ms.
double OpenAndSearch(const Store& s, const std::string& question) {
  const auto start = Clock::now();
  auto mem = OpenOrDie(Make(s.dir.path, s.encrypted, "normal"));
  Check(mem->Retrieve(Query(question)).status());
  return Ms(Clock::now() - start);
}

// Retrieve latencies (ms) over the questions, on an open store.
std::vector<double> Searches(const Store& s, const std::vector<std::string>& questions) {
  auto mem = OpenOrDie(Make(s.dir.path, s.encrypted, "normal"));
  Check(mem->Retrieve(Query(questions[0])).status());  // warm
  std::vector<double> out;
  for (const auto& q : questions) {
    const auto start = Clock::now();
    Check(mem->Retrieve(Query(q)).status());
    out.push_back(Ms(Clock::now() - start));
  }
  return out;
}

double Median(std::vector<double> v) { return Percentile(v, 50); }

}  // namespace
}  // namespace msp::bench

int main(int argc, char** argv) {
  using namespace msp::bench;
  const size_t records = argc > 1 ? std::stoul(argv[1]) : 10000;
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
  auto corpus = LoadLocomo();
  if (!corpus.ok()) {
    fprintf(stderr, "%s\n", corpus.status().ToString().c_str());
    return 1;
  }
  auto texts = SyntheticRecords(*corpus, records, 7);
  for (size_t i = 0; i < corpus->turns.size() && i < records; i += 2) texts[i] = corpus->turns[i];
  const auto reqs = Requests(texts);
  const std::vector<msp::WriteRequest> batch_reqs(reqs.begin(), reqs.begin() + static_cast<long>(std::min<size_t>(2000, reqs.size())));
  const std::vector<msp::WriteRequest> single_reqs(reqs.begin(), reqs.begin() + static_cast<long>(std::min<size_t>(500, reqs.size())));
  std::vector<std::string> questions(corpus->questions.begin(),
                                     corpus->questions.begin() + static_cast<long>(std::min<size_t>(300, corpus->questions.size())));

  Store plain, enc;
  enc.encrypted = true;
  Fill(plain, reqs);
  Fill(enc, reqs);

  std::vector<double> wb[2], ws[2], open[2], p50[2], p95[2];
  for (int r = 0; r < rounds; ++r) {
    for (int e = 0; e < 2; ++e) {  // plain then encrypted, every round
      const Store& s = e ? enc : plain;
      wb[e].push_back(WriteBatches(e, batch_reqs));
      ws[e].push_back(WriteSingles(e, single_reqs));
      open[e].push_back(OpenAndSearch(s, questions[static_cast<size_t>(r) % questions.size()]));
      std::vector<double> lat = Searches(s, questions);
      p50[e].push_back(Percentile(lat, 50));
      p95[e].push_back(Percentile(lat, 95));
    }
  }
  printf("encryption_bench: %zu records, %d rounds (medians of the rounds)\n", records, rounds);
  printf("%-44s %12s %12s %8s\n", "", "plain", "encrypted", "ratio");
  auto row = [](const char* name, const std::vector<double>& a, const std::vector<double>& b) {
    const double x = Median(a), y = Median(b);
    printf("%-44s %12.2f %12.2f %8.2f\n", name, x, y, y / x);
  };
  row("write, batches of 100, sync=full (rec/s)", wb[0], wb[1]);
  row("write, one per transaction, sync=normal (rec/s)", ws[0], ws[1]);
  row("search top 10, p50 (ms)", p50[0], p50[1]);
  row("search top 10, p95 (ms)", p95[0], p95[1]);
  row("open + first search (ms)", open[0], open[1]);
  return 0;
}
