// PostgreSQL beside SQLite: write throughput, search latency, a new
// server's catch-up from the change sequence, and how long a write through
// one server takes to be found through another (on SQLite: two processes on
// one data directory).
//
//   eval "$(scripts/pg.sh start)"          # or any database: --postgres-url
//   build/bench/bench/pg_bench --records 10000
//   build/bench/bench/pg_bench --records 1000000 --backend postgres
//
// Each backend gets a fresh store (a temporary directory; a new schema,
// dropped at the end). Records are synthetic LoCoMo-like sentences written
// as artifacts (no deduplication) in WriteMany batches of 1000; queries are
// LoCoMo's questions.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench_data.h"
#include "msp/memory.h"
#include "store/postgres/pg_conn.h"

namespace msp::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "pg_bench: %s\n", what.c_str());
  std::exit(1);
}

struct Args {
  size_t records = 10000;
  size_t queries = 200;
  size_t single_writes = 1000;
  std::string backend = "both";  // sqlite, postgres or both
  std::string postgres_url;
};

Args Parse(int argc, char** argv) {
  Args a;
  if (const char* url = std::getenv("MSP_TEST_PG")) a.postgres_url = url;
  if (const char* url = std::getenv("MSP_POSTGRES_URL")) a.postgres_url = url;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Die("flag " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--records") {
      a.records = std::stoul(value);
    } else if (flag == "--queries") {
      a.queries = std::stoul(value);
    } else if (flag == "--single-writes") {
      a.single_writes = std::stoul(value);
    } else if (flag == "--backend") {
      a.backend = value;
    } else if (flag == "--postgres-url") {
      a.postgres_url = value;
    } else {
      Die("unknown flag " + flag + " (--records N --queries N --single-writes N --backend "
          "sqlite|postgres|both --postgres-url URL)");
    }
  }
  return a;
}

struct Result {
  std::string backend;
  double bulk_records_per_s = 0;
  double single_records_per_s = 0;
  double first_query_s = 0;  // the writer's first query: its indexes catch up
  double search_p50_ms = 0, search_p95_ms = 0;
  double new_server_open_s = 0;     // open an engine on an empty data directory
  double new_server_catchup_s = 0;  // its first query: every change replayed
  double cross_p50_ms = 0, cross_p95_ms = 0;  // write on A, found by a query on B
};

std::unique_ptr<MemoryLayer> Open(const Options& o) {
  auto m = MemoryLayer::Open(o);
  if (!m.ok()) Die(m.status().ToString());
  return std::move(m).value();
}

std::vector<WriteRequest> Requests(const Corpus& corpus, size_t n, uint64_t seed) {
  std::vector<WriteRequest> out;
  out.reserve(n);
  for (auto& text : SyntheticRecords(corpus, n, seed)) {
    WriteRequest r;
    r.ns.tenant = "bench";
    r.ns.user = "u1";
    r.kind = Kind::kArtifact;
    r.text = std::move(text);
    r.tags = {"profile"};
    out.push_back(std::move(r));
  }
  return out;
}

double Query(MemoryLayer& m, const std::string& q) {
  RetrieveRequest r;
  r.scope.tenant = "bench";
  r.scope.user = "u1";
  r.query = q;
  r.top_k = 10;
  r.record_access = false;
  const auto t = Clock::now();
  auto hits = m.Retrieve(r);
  if (!hits.ok()) Die(hits.status().ToString());
  return Seconds(t);
}

Result Run(const std::string& backend, const Args& args, const Corpus& corpus, const std::string& dir,
           const std::string& schema) {
  Result res;
  res.backend = backend;
  Options o;
  o.store.backend = backend == "postgres" ? StoreBackend::kPostgres : StoreBackend::kSqlite;
  o.store.data_dir = dir + "/a";
  o.store.synchronous = "full";
  o.store.postgres_url = args.postgres_url;
  o.store.postgres_schema = schema;
  o.policy.max_items_per_user = 0;
  auto a = Open(o);

  // Bulk: WriteMany batches of 1000.
  auto reqs = Requests(corpus, args.records, 7);
  auto t = Clock::now();
  for (size_t i = 0; i < reqs.size(); i += 1000) {
    std::vector<WriteRequest> chunk(reqs.begin() + static_cast<long>(i),
                                    reqs.begin() + static_cast<long>(std::min(reqs.size(), i + 1000)));
    auto w = a->WriteMany(chunk);
    if (!w.ok()) Die(w.status().ToString());
  }
  res.bulk_records_per_s = static_cast<double>(reqs.size()) / Seconds(t);
  res.first_query_s = Query(*a, "warm up");

  // One record per transaction.
  auto singles = Requests(corpus, args.single_writes, 8);
  t = Clock::now();
  for (const WriteRequest& r : singles) {
    auto w = a->Write(r);
    if (!w.ok()) Die(w.status().ToString());
  }
  res.single_records_per_s = static_cast<double>(singles.size()) / Seconds(t);
  (void)Query(*a, "warm up");

  std::vector<double> ms;
  for (size_t i = 0; i < args.queries; ++i) {
    ms.push_back(1000 * Query(*a, corpus.questions[i % corpus.questions.size()]));
  }
  res.search_p50_ms = Percentile(ms, 50);
  res.search_p95_ms = Percentile(ms, 95);

  // A new server: on PostgreSQL an empty data directory on the same
  // database; on SQLite (whose store lives in the data directory) the same
  // directory with the lexical index deleted, so both replay every change.
  Options ob = o;
  if (backend == "sqlite") {
    a.reset();
    std::filesystem::remove_all(o.store.data_dir + "/lexical");
  } else {
    ob.store.data_dir = dir + "/b";
  }
  t = Clock::now();
  auto b = Open(ob);
  res.new_server_open_s = Seconds(t);
  res.new_server_catchup_s = Query(*b, "what did they talk about");
  if (!a) a = Open(o);  // SQLite: a second process on the same directory

  // A write through a, then a query through b that must find it.
  auto probes = Requests(corpus, 50, 9);
  std::vector<double> cross;
  // A word no other record has, which stemming leaves alone: "zqx", the
  // probe's number in consonants, "q".
  auto marker = [](size_t i) {
    constexpr std::string_view kLetters = "bcdfghjklmnpqrtvwxz";
    std::string word = "zqx";
    do {
      word += kLetters[i % kLetters.size()];
      i /= kLetters.size();
    } while (i > 0);
    return word + "q";
  };
  for (WriteRequest& r : probes) {
    r.text += " " + marker(cross.size());
    auto w = a->Write(r);
    if (!w.ok()) Die(w.status().ToString());
    RetrieveRequest q;
    q.scope.tenant = "bench";
    q.query = marker(cross.size());
    q.top_k = 1;
    q.record_access = false;
    const auto tq = Clock::now();
    auto hits = b->Retrieve(q);
    cross.push_back(1000 * Seconds(tq));
    if (!hits.ok() || hits->empty() || hits->front().memory.id != w->id) {
      Die("server b did not find the write of server a: " +
          (hits.ok() ? std::to_string(hits->size()) + " hits, first " +
                           (hits->empty() ? std::string("-") : hits->front().memory.text)
                     : hits.status().ToString()) + "; wrote " + r.text);
    }
  }
  res.cross_p50_ms = Percentile(cross, 50);
  res.cross_p95_ms = Percentile(cross, 95);
  return res;
}

void DropSchema(const std::string& url, const std::string& schema) {
  PgConnectOptions c;
  c.conninfo = url;
  c.schema = "public";
  c.describe = "the benchmark database";
  auto conn = PgConnection::Connect(c);
  if (conn.ok()) {
    (void)(*conn)->Script("DROP SCHEMA IF EXISTS " + PgQuoteIdent(schema) + " CASCADE", "drop schema");
  }
}

}  // namespace
}  // namespace msp::bench

int main(int argc, char** argv) {
  using namespace msp::bench;
  const Args args = Parse(argc, argv);
  auto corpus = LoadLocomo();
  if (!corpus.ok()) Die(corpus.status().ToString());
  std::vector<std::string> backends;
  if (args.backend == "sqlite" || args.backend == "both") backends.push_back("sqlite");
  if (args.backend == "postgres" || args.backend == "both") {
    if (args.postgres_url.empty()) Die("no database: pass --postgres-url or set MSP_TEST_PG");
    backends.push_back("postgres");
  }
  std::printf("records %zu, single writes %zu, queries %zu (top 10)\n", args.records, args.single_writes,
              args.queries);
  std::printf("%-9s %12s %12s %10s %10s %10s %10s %12s %10s %10s\n", "backend", "bulk rec/s", "single rec/s",
              "1st query", "p50 ms", "p95 ms", "new open", "new catchup", "cross p50", "cross p95");
  for (const std::string& backend : backends) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "msp-pgbench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) Die("cannot make a temporary directory");
    const std::string schema = "bench_" + std::to_string(getpid());
    const Result r = Run(backend, args, *corpus, tmpl, schema);
    std::filesystem::remove_all(tmpl);
    if (backend == "postgres") DropSchema(args.postgres_url, schema);
    std::printf("%-9s %12.0f %12.0f %9.2fs %10.2f %10.2f %9.2fs %11.2fs %10.2f %10.2f\n", r.backend.c_str(),
                r.bulk_records_per_s, r.single_records_per_s, r.first_query_s, r.search_p50_ms, r.search_p95_ms,
                r.new_server_open_s, r.new_server_catchup_s, r.cross_p50_ms, r.cross_p95_ms);
    std::fflush(stdout);
  }
  return 0;
}
