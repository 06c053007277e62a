// REST over real sockets: a real `msp serve` process on a fresh temporary
// data directory (SQLite), driven by keep-alive cpp-httplib clients with
// TCP_NODELAY, each figure beside a floor measured in the same run:
//   GET /healthz p50/p99         floor: a bare cpp-httplib server in this
//                                process answering the same bytes
//   POST /v1/memories p50/p99    floors: the in-process engine write of the
//                                same request (parsed by the same code), and
//                                the bare server answering the same sizes
//   POST /v1/search p50/p99      the same two floors, at N records (10,000)
//   W concurrent writers, writes/s at synchronous = normal and full
//                                floor: W threads writing through one
//                                in-process engine
//
//   rest_bench --msp build/release/src/cli/msp [--records 10000]
//              [--requests 2000] [--writers 16] [--writes-per-writer 250]
//              [--kind artifact]
//
// Texts are the bench corpus's synthetic records (LoCoMo's vocabulary,
// bench_data.h; needs ../shared/bench-data/locomo10.json or $MSP_LOCOMO);
// queries are LoCoMo's questions. bench/README.md, "REST over sockets".
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench_data.h"
#include "serve_process.h"
#include "msp/memory.h"
#include "api/operations.h"
#include "rest/request_json.h"

extern char** environ;

namespace msp::bench {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Flags {
  std::string msp;
  size_t records = 10000;
  size_t requests = 2000;
  size_t writers = 16;
  size_t writes_per_writer = 250;
  std::string kind = "artifact";
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "rest_bench: %s\n", what.c_str());
  std::exit(1);
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) Die("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--msp") f.msp = v;
    else if (a == "--records") f.records = std::stoul(v);
    else if (a == "--requests") f.requests = std::stoul(v);
    else if (a == "--writers") f.writers = std::stoul(v);
    else if (a == "--writes-per-writer") f.writes_per_writer = std::stoul(v);
    else if (a == "--kind") f.kind = v;
    else Die("unknown flag " + a);
  }
  if (f.msp.empty()) Die("--msp PATH is required (the msp binary)");
  return f;
}

struct TempDir {
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "msp-rest-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) Die("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path;
};

struct Latency {
  double p50_ms = 0;
  double p99_ms = 0;
};

// Times `n` rounds of `calls` (each returns false on failure), taking the
// calls in turn within a round so that the machine's load falls on a figure
// and its floors alike. One Latency per call.
std::vector<Latency> Time(size_t n, const std::vector<std::function<bool(size_t)>>& calls) {
  std::vector<std::vector<double>> ms(calls.size());
  for (size_t i = 0; i < n; ++i) {
    for (size_t c = 0; c < calls.size(); ++c) {
      const auto t0 = Clock::now();
      if (!calls[c](i)) Die("a timed call failed");
      ms[c].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  }
  std::vector<Latency> out;
  for (std::vector<double>& samples : ms) out.push_back({Percentile(samples, 50), Percentile(samples, 99)});
  return out;
}

std::unique_ptr<httplib::Client> NewClient(int port) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  c->set_read_timeout(120, 0);
  return c;
}

// A bare cpp-httplib server in this process answering fixed bodies: the
// floor of an HTTP round trip with the same request and reply sizes.
class BareServer {
 public:
  BareServer(std::string healthz, std::string write, std::string search) {
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_max_count(100);
    server_.set_keep_alive_timeout(5);
    server_.Get("/healthz", [body = std::move(healthz)](const httplib::Request&, httplib::Response& res) {
      res.set_content(body, "application/json");
    });
    server_.Post("/v1/memories", [body = std::move(write)](const httplib::Request&, httplib::Response& res) {
      res.status = 201;
      res.set_content(body, "application/json");
    });
    server_.Post("/v1/search", [body = std::move(search)](const httplib::Request&, httplib::Response& res) {
      res.set_content(body, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) Die("the bare server cannot bind");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~BareServer() {
    server_.stop();
    thread_.join();
  }
  BareServer(const BareServer&) = delete;
  BareServer& operator=(const BareServer&) = delete;
  int port() const { return port_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

std::unique_ptr<MemoryLayer> OpenEngine(const std::string& dir, const std::string& synchronous) {
  // What `msp serve` opens with no configuration but these flags.
  Options o;
  o.store.data_dir = dir;
  o.store.synchronous = synchronous;
  auto m = MemoryLayer::Open(o);
  if (!m.ok()) Die(m.status().ToString());
  return std::move(m).value();
}

class Bench {
 public:
  explicit Bench(Flags flags) : flags_(std::move(flags)) {
    auto corpus = LoadLocomo();
    if (!corpus.ok()) Die(corpus.status().ToString());
    questions_ = corpus->questions;
    texts_ = SyntheticRecords(*corpus, flags_.records + flags_.requests + 2000, 21);
  }

  json WriteBody(size_t i) const {
    return json{{"kind", flags_.kind}, {"text", texts_[i % texts_.size()]}, {"tags", {"profile"}},
                {"namespace", {{"user", "u1"}}}};
  }
  json SearchBody(size_t i) const {
    return json{{"query", questions_[i % questions_.size()]}, {"top_k", 10}, {"namespace", {{"user", "u1"}}}};
  }
  // SearchBody(i) as the engine's request.
  RetrieveRequest SearchRequest(size_t i) const {
    RetrieveRequest q;
    q.scope.tenant = "default";
    q.scope.user = "u1";
    q.query = questions_[i % questions_.size()];
    q.top_k = 10;
    return q;
  }
  static WriteRequest ParsedWrite(const json& body) {
    // As POST /v1/memories reads a record (memory_write's field table).
    api::CallContext context;
    context.ns.tenant = "default";
    auto w = api::DecodeWrite(context, body, "");
    if (!w.ok()) Die(w.status().ToString());
    return std::move(w).value();
  }

  static bool Post(httplib::Client& c, const char* path, const json& body, int want, std::string* reply = nullptr) {
    auto r = c.Post(path, body.dump(), "application/json");
    if (!r || r->status != want) {
      std::fprintf(stderr, "POST %s: %s\n", path, r ? (std::to_string(r->status) + " " + r->body).c_str() : "no answer");
      return false;
    }
    if (reply) *reply = r->body;
    return true;
  }

  // Writes records [from, to) through `c` in batches of 500 (untimed).
  void Fill(httplib::Client& c, size_t from, size_t to) const {
    for (size_t i = from; i < to; i += 500) {
      json batch = json::array();
      for (size_t j = i; j < std::min(to, i + 500); ++j) batch.push_back(WriteBody(j));
      if (!Post(c, "/v1/memories", json{{"memories", batch}}, 201)) Die("batch write failed");
    }
  }
  void Fill(MemoryLayer& m, size_t from, size_t to) const {
    for (size_t i = from; i < to; i += 500) {
      std::vector<WriteRequest> batch;
      for (size_t j = i; j < std::min(to, i + 500); ++j) batch.push_back(ParsedWrite(WriteBody(j)));
      if (!m.WriteMany(batch).ok()) Die("in-process batch write failed");
    }
  }

  // Writers threads, each with its own keep-alive connection, writing
  // writes_per_writer records from `first` on; returns writes/s.
  double ConcurrentHttp(int port, size_t first) const {
    std::vector<std::thread> threads;
    std::atomic<bool> failed{false};
    const auto t0 = Clock::now();
    for (size_t w = 0; w < flags_.writers; ++w) {
      threads.emplace_back([&, w] {
        auto c = NewClient(port);
        for (size_t i = 0; i < flags_.writes_per_writer; ++i) {
          if (!Post(*c, "/v1/memories", WriteBody(first + w * flags_.writes_per_writer + i), 201)) failed = true;
        }
      });
    }
    for (auto& t : threads) t.join();
    if (failed) Die("a concurrent write failed");
    return Rate(t0);
  }
  double ConcurrentEngine(MemoryLayer& m, size_t first) const {
    std::vector<WriteRequest> requests;
    for (size_t i = 0; i < flags_.writers * flags_.writes_per_writer; ++i) requests.push_back(ParsedWrite(WriteBody(first + i)));
    std::vector<std::thread> threads;
    std::atomic<bool> failed{false};
    const auto t0 = Clock::now();
    for (size_t w = 0; w < flags_.writers; ++w) {
      threads.emplace_back([&, w] {
        for (size_t i = 0; i < flags_.writes_per_writer; ++i) {
          if (!m.Write(requests[w * flags_.writes_per_writer + i]).ok()) failed = true;
        }
      });
    }
    for (auto& t : threads) t.join();
    if (failed) Die("a concurrent in-process write failed");
    return Rate(t0);
  }
  double Rate(Clock::time_point t0) const {
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return static_cast<double>(flags_.writers * flags_.writes_per_writer) / s;
  }

  void Run() {
    std::printf("msp serve: %s\nkind %s; %zu timed requests a figure; %zu writers x %zu writes; search at %zu records\n",
                flags_.msp.c_str(), flags_.kind.c_str(), flags_.requests, flags_.writers, flags_.writes_per_writer,
                flags_.records);
    PrintLoad("load before");
    const size_t threads = std::max<size_t>(32, flags_.writers + 4);
    for (const char* sync : {"normal", "full"}) {
      std::printf("\n== store.synchronous = %s ==\n", sync);
      TempDir serve_dir, engine_dir;
      // Anonymous on 127.0.0.1, any port.
      ServeProcess serve(flags_.msp, {"--data-dir", serve_dir.path + "/data", "--port", "0", "--allow-anonymous", "true",
                                      "--access-log", "false", "--synchronous", sync, "--server-threads",
                                      std::to_string(threads)});
      auto engine = OpenEngine(engine_dir.path + "/data", sync);
      auto client = NewClient(serve.port());
      size_t next = 0;  // the next text index (the same in both stores)

      // Warm up and take one reply of each kind for the bare server's bodies.
      std::string healthz_body, write_body, search_body;
      auto h = client->Get("/healthz");
      if (!h || h->status != 200) Die("GET /healthz failed");
      healthz_body = h->body;
      for (int i = 0; i < 50; ++i) {
        if (!Post(*client, "/v1/memories", WriteBody(next), 201, &write_body)) Die("warm-up write failed");
        if (!engine->Write(ParsedWrite(WriteBody(next))).ok()) Die("warm-up in-process write failed");
        ++next;
      }
      if (!Post(*client, "/v1/search", SearchBody(0), 200, &search_body)) Die("warm-up search failed");
      BareServer bare(healthz_body, write_body, search_body);
      auto bare_client = NewClient(bare.port());

      if (std::string(sync) == "normal") {
        const std::vector<Latency> l = Time(flags_.requests, {[&](size_t) {
                                                                auto r = client->Get("/healthz");
                                                                return r && r->status == 200;
                                                              },
                                                              [&](size_t) {
                                                                auto r = bare_client->Get("/healthz");
                                                                return r && r->status == 200;
                                                              }});
        Row("GET /healthz", l[0], {{"bare cpp-httplib, same reply", l[1]}});
      }

      const size_t first = next;
      std::vector<WriteRequest> parsed;
      for (size_t i = 0; i < flags_.requests; ++i) parsed.push_back(ParsedWrite(WriteBody(first + i)));
      const std::vector<Latency> w = Time(
          flags_.requests, {[&](size_t i) { return Post(*client, "/v1/memories", WriteBody(first + i), 201); },
                            [&](size_t i) { return engine->Write(parsed[i]).ok(); },
                            [&](size_t i) { return Post(*bare_client, "/v1/memories", WriteBody(first + i), 201); }});
      next += flags_.requests;
      Row("POST /v1/memories (one record)", w[0],
          {{"in-process engine Write", w[1]}, {"bare cpp-httplib, same sizes", w[2]}}, w[1].p50_ms + w[2].p50_ms);

      const double http_rate = ConcurrentHttp(serve.port(), next);
      const double engine_rate = ConcurrentEngine(*engine, next);
      next += flags_.writers * flags_.writes_per_writer;
      std::printf("%-34s %9.0f writes/s   in-process engine, %zu threads: %.0f writes/s   ratio %.2f\n",
                  (std::to_string(flags_.writers) + " concurrent writers").c_str(), http_rate, flags_.writers,
                  engine_rate, http_rate / engine_rate);

      if (std::string(sync) != "normal") continue;
      if (next < flags_.records) {
        Fill(*client, next, flags_.records);
        Fill(*engine, next, flags_.records);
        next = flags_.records;
      }
      for (size_t i = 0; i < 20; ++i) {
        if (!Post(*client, "/v1/search", SearchBody(i), 200)) Die("warm-up search failed");
      }
      std::vector<RetrieveRequest> queries;
      for (size_t i = 0; i < flags_.requests; ++i) {
        queries.push_back(SearchRequest(i));
      }
      for (size_t i = 0; i < 20; ++i) (void)engine->Retrieve(queries[i]);
      const std::vector<Latency> q =
          Time(flags_.requests, {[&](size_t i) { return Post(*client, "/v1/search", SearchBody(i), 200); },
                                 [&](size_t i) { return engine->Retrieve(queries[i]).ok(); },
                                 [&](size_t i) { return Post(*bare_client, "/v1/search", SearchBody(i), 200); }});
      Row("POST /v1/search at " + std::to_string(next) + " records", q[0],
          {{"in-process engine Retrieve", q[1]}, {"bare cpp-httplib, same sizes", q[2]}}, q[1].p50_ms + q[2].p50_ms);
    }
    PrintLoad("\nload after");
  }

 private:
  // A figure, its floors and the ratios of the p50s; `sum_floor` > 0 adds
  // the ratio to the sum of the floors (engine + bare round trip).
  static void Row(const std::string& what, const Latency& l, const std::vector<std::pair<std::string, Latency>>& floors,
                  double sum_floor = 0) {
    std::printf("%-34s p50 %8.3f ms  p99 %8.3f ms\n", what.c_str(), l.p50_ms, l.p99_ms);
    for (const auto& [name, f] : floors) {
      std::printf("  floor: %-30s p50 %8.3f ms  p99 %8.3f ms   ratio p50 %.2f\n", name.c_str(), f.p50_ms, f.p99_ms,
                  l.p50_ms / f.p50_ms);
    }
    if (sum_floor > 0) std::printf("  floor: sum of the two p50s            %8.3f ms   ratio p50 %.2f\n", sum_floor, l.p50_ms / sum_floor);
  }
  static void PrintLoad(const char* label) {
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) == 3) std::printf("%s: load average %.2f %.2f %.2f\n", label, load[0], load[1], load[2]);
  }

  Flags flags_;
  std::vector<std::string> questions_;
  std::vector<std::string> texts_;
};

}  // namespace
}  // namespace msp::bench

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  msp::bench::Bench bench(msp::bench::ParseFlags(argc, argv));
  bench.Run();
  return 0;
}
