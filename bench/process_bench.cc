// msp as a process, where hooks and scripts meet it: the wall and CPU time
// of `msp search` against `msp version` (the floor: starting msp at all),
// run alternately in one run so machine load hits both alike, and the first
// `msp search` after the store was written (what a new process pays to
// open the indexes). The store is made here with the engine (synthetic
// LoCoMo-vocabulary records, the built-in embedder), as `msp import` leaves
// it: both indexes caught up and the vector index persisted.
//   build/bench/process_bench --msp build/src/cli/msp [--records N] [--runs N] [--data-dir DIR]
//                             [--keep] [--extra "ARGS"] [--resident | --direct]
// Without either: msp as a user meets it. The first search finds no server
// on the store's socket, answers itself and starts one in the background
// (server.resident_autostart: at 10,000 changes and more), and the timed
// searches meet that server once it is up (docs/cli.md, "The resident
// path").
// --resident: a user's `msp serve` runs on the store during the timed runs,
// so each `msp search` is answered over the resident path; the first search
// (before the loop) still opens the store itself.
// --direct: no server at all (MSP_SERVER_RESIDENT_AUTOSTART=0): each search
// opens the store itself.
// DIR defaults to a temporary folder (removed unless --keep); an existing
// store of N records in DIR is reused.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_data.h"
#include "process_timer.h"
#include "serve_process.h"
#include "local/local_socket.h"
#include "msp/memory.h"

namespace msp::bench {
namespace {

struct Settings {
  std::string msp;
  size_t records = 100000;
  int runs = 30;
  std::string data_dir;
  bool keep = false;
  std::vector<std::string> extra;  // more arguments for `msp search`
  bool resident = false;            // `msp serve` on the store during the runs
  bool direct = false;              // no server: each search opens the store
};

// Waits (up to 30 s) until a server answers on `data_dir`'s socket, as the
// one the first search started does once it has opened the store (it
// declines until warm: the runs wait for that as with --resident).
bool WaitForResident(const std::string& data_dir) {
  const std::string path = local::SocketPath(data_dir);
  for (int i = 0; i < 3000; ++i) {
    Result<std::optional<nlohmann::json>> r = local::Call(path, nlohmann::json{{"v", 1}}, std::chrono::seconds(5));
    if (r.ok() && r->has_value()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Runs argv to completion (standard output discarded); exits the bench when
// it fails, naming the command.
ProcessSample Run(const std::vector<std::string>& args) {
  ProcessSample s;
  if (!TimeProcess(args, "", &s)) {
    std::fprintf(stderr, "process_bench: %s failed\n", args[0].c_str());
    std::exit(1);
  }
  return s;
}

Options StoreOptionsAt(const std::string& dir) {
  Options o;
  o.store.data_dir = dir;
  o.store.synchronous = "normal";
  o.consolidation.every_n_episodes = 0;
  o.policy.min_chars = 0;
  o.policy.max_items_per_user = 0;
  o.policy.require_stable_tag = false;
  o.policy.trivial_phrases.clear();
  return o;
}

// Makes (or reuses) a store of `n` records at `dir`, as `msp import` leaves
// one. Returns the seconds it took (0 when reused).
double MakeStore(const Corpus& corpus, const std::string& dir, size_t n) {
  auto mem = MemoryLayer::Open(StoreOptionsAt(dir));
  if (!mem.ok()) {
    std::fprintf(stderr, "process_bench: %s\n", mem.status().ToString().c_str());
    std::exit(1);
  }
  Namespace ns;
  ns.tenant = "default";
  auto stats = (*mem)->GetStats(ns);
  if (stats.ok() && stats->records >= static_cast<int64_t>(n)) return 0;
  const auto start = std::chrono::steady_clock::now();
  auto texts = SyntheticRecords(corpus, n, 11);
  for (size_t i = 0; i < corpus.turns.size() && 2 * i < n; ++i) texts[2 * i] = corpus.turns[i];
  constexpr size_t kBatch = 1000;
  for (size_t i = 0; i < texts.size(); i += kBatch) {
    std::vector<WriteRequest> batch;
    for (size_t j = i; j < std::min(texts.size(), i + kBatch); ++j) {
      WriteRequest r;
      r.ns = ns;
      r.kind = Kind::kArtifact;
      r.text = texts[j];
      batch.push_back(std::move(r));
    }
    auto written = (*mem)->WriteMany(batch);
    if (!written.ok()) {
      std::fprintf(stderr, "process_bench: %s\n", written.status().ToString().c_str());
      std::exit(1);
    }
  }
  // What `msp import` does at its end: indexes caught up, vectors saved.
  if (Status s = (*mem)->Reindex(); !s.ok()) {
    std::fprintf(stderr, "process_bench: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> v) { return Percentile(v, 50); }

std::string LoadNow() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

int Main(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "process_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--msp") {
      s.msp = next();
    } else if (a == "--records") {
      s.records = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--runs") {
      s.runs = std::atoi(next().c_str());
    } else if (a == "--data-dir") {
      s.data_dir = next();
    } else if (a == "--keep") {
      s.keep = true;
    } else if (a == "--resident") {
      s.resident = true;
    } else if (a == "--direct") {
      s.direct = true;
    } else if (a == "--extra") {
      std::istringstream words(next());
      for (std::string w; words >> w;) s.extra.push_back(w);
    } else {
      std::fprintf(stderr, "usage: process_bench --msp PATH [--records N] [--runs N] [--data-dir DIR] [--keep] [--extra ARGS] [--resident | --direct]\n");
      return 2;
    }
  }
  if (s.resident && s.direct) {
    std::fprintf(stderr, "process_bench: --resident and --direct exclude each other\n");
    return 2;
  }
  // The commands' environment: no server started by a command with
  // --direct, nor beside the user's with --resident.
  if (s.direct || s.resident) setenv("MSP_SERVER_RESIDENT_AUTOSTART", "0", 1);
  if (s.msp.empty() || s.runs < 1) {
    std::fprintf(stderr, "process_bench: --msp PATH (the msp binary) is required\n");
    return 2;
  }
  const bool temporary = s.data_dir.empty();
  if (temporary) {
    char tmpl[] = "/tmp/msp-process-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return 1;
    s.data_dir = tmpl;
  }
  auto corpus = LoadLocomo();
  if (!corpus.ok()) {
    std::fprintf(stderr, "process_bench: %s\n", corpus.status().ToString().c_str());
    return 1;
  }
  std::printf("load before: %s\n", LoadNow().c_str());
  const double made = MakeStore(*corpus, s.data_dir, s.records);
  if (made > 0) std::printf("store of %zu records made in %.1f s at %s\n", s.records, made, s.data_dir.c_str());

  auto search = [&](size_t q) {
    std::vector<std::string> args{s.msp, "search", corpus->questions[q % corpus->questions.size()], "--data-dir",
                                  s.data_dir};
    args.insert(args.end(), s.extra.begin(), s.extra.end());
    return args;
  };
  const ProcessSample first = Run(search(0));
  std::printf("first search after the store was written: %.1f ms wall, %.1f ms CPU\n", first.wall_ms,
              first.cpu_ms);

  std::unique_ptr<ServeProcess> server;
  if (s.resident) {
    server = std::make_unique<ServeProcess>(
        s.msp, std::vector<std::string>{"--data-dir", s.data_dir, "--port", "0", "--allow-anonymous", "true",
                                        "--access-log", "false"});
    // The server's first query pays its own open; not a command's cost.
    // Its warm-up (MemoryLayer::WarmUp: the docid map, the vector file's
    // pages, the store's cache filled) runs in the background for well
    // under a second at 100,000 records: the runs start after it, as they
    // meet a server that has been up a while.
    Run(search(0));
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::printf("resident: msp serve on %s/msp.sock answers the searches\n", s.data_dir.c_str());
  } else if (s.direct) {
    std::printf("direct: no server; each search opens the store\n");
  } else {
    // As in --resident, the runs start after the server's warm-up.
    if (!WaitForResident(s.data_dir)) {
      std::printf("as a user meets it: no server answers on %s/msp.sock (the store has fewer changes than "
                  "server.resident_autostart?): each search opens the store\n",
                  s.data_dir.c_str());
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      std::printf("as a user meets it: the server the first search started answers the searches\n");
    }
  }
  std::vector<double> version_wall, version_cpu, search_wall, search_cpu, ratio;
  for (int r = 0; r < s.runs; ++r) {
    const ProcessSample v = Run({s.msp, "version"});
    const ProcessSample q = Run(search(static_cast<size_t>(r) + 1));
    version_wall.push_back(v.wall_ms);
    version_cpu.push_back(v.cpu_ms);
    search_wall.push_back(q.wall_ms);
    search_cpu.push_back(q.cpu_ms);
    ratio.push_back(q.wall_ms / v.wall_ms);
  }
  std::printf("%d runs each, alternating, at %zu records:\n", s.runs, s.records);
  std::printf("  msp version: wall p50 %.1f ms, CPU p50 %.1f ms\n", Median(version_wall), Median(version_cpu));
  std::printf("  msp search:  wall p50 %.1f ms (p90 %.1f), CPU p50 %.1f ms\n", Median(search_wall),
              Percentile(search_wall, 90), Median(search_cpu));
  std::printf("  search / version, wall, median of the pairs: %.2fx\n", Median(ratio));
  std::printf("load after: %s\n", LoadNow().c_str());
  server.reset();
  // A server a search started gives its socket up when asked (as to a
  // user's `msp serve`) and stops.
  if (!s.resident && !s.direct) (void)local::Call(local::SocketPath(s.data_dir), local::ResignCall(), std::chrono::seconds(5));
  if (temporary && !s.keep) std::filesystem::remove_all(s.data_dir);
  return 0;
}

}  // namespace
}  // namespace msp::bench

int main(int argc, char** argv) { return msp::bench::Main(argc, argv); }
