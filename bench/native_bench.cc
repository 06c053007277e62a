// The native embedder (src/embed/native/) on a model directory: load time,
// single-text latency at 32 tokens, batch-of-32 throughput at 128 tokens,
// peak memory; JSON on stdout. bench/native_bench.sh runs it beside torch on
// the same MiniLM-shaped random model (bench/README.md, "Native embedder").
//
//   native_bench MODEL_DIR [THREADS]
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "embed/native/gemm.h"
#include "embed/native/native_embedder.h"

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A text of `words` vocabulary words ("w1000" ...): words + 2 tokens.
std::string Text(int words, int seed) {
  std::string s;
  for (int i = 0; i < words; ++i) s += "w" + std::to_string(1000 + (seed * 7919 + i * 104729) % 29000) + " ";
  return s;
}

// CPU seconds of the whole process (all threads).
double CpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: native_bench MODEL_DIR [THREADS]\n");
    return 2;
  }
  msp::native::NativeOptions options;
  options.model_dir = argv[1];
  options.threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const long rss_start = PeakRssKb();
  std::vector<double> loads;
  std::unique_ptr<msp::native::NativeEmbedder> e;
  for (int i = 0; i < 5; ++i) {
    e.reset();
    const double t0 = Now();
    auto opened = msp::native::NativeEmbedder::Open(options);
    loads.push_back(Now() - t0);
    if (!opened.ok()) {
      std::fprintf(stderr, "native_bench: %s\n", opened.status().ToString().c_str());
      return 1;
    }
    e = std::move(*opened);
  }
  std::sort(loads.begin(), loads.end());
  const std::string one = Text(30, 1);
  for (int i = 0; i < 3; ++i) (void)e->Embed({one});
  std::vector<double> lat, lat_cpu;
  for (int i = 0; i < 200; ++i) {
    const double t0 = Now(), c0 = CpuNow();
    auto v = e->Embed({one});
    lat.push_back(Now() - t0);
    lat_cpu.push_back(CpuNow() - c0);
    if (!v.ok()) return 1;
  }
  std::sort(lat.begin(), lat.end());
  std::sort(lat_cpu.begin(), lat_cpu.end());
  std::vector<std::string> batch;
  for (int i = 0; i < 32; ++i) batch.push_back(Text(126, i));
  (void)e->Embed(batch);
  const int rounds = 5;
  const double t0 = Now(), c0 = CpuNow();
  for (int r = 0; r < rounds; ++r) {
    if (!e->Embed(batch).ok()) return 1;
  }
  const double per_batch = (Now() - t0) / rounds;
  const double per_batch_cpu = (CpuNow() - c0) / rounds;
  std::printf(
      "{\"backend\": \"%s\", \"threads\": %d, \"load_ms_median\": %.2f, \"load_ms_first\": %.2f, "
      "\"latency_p50_ms_seq32\": %.3f, \"latency_p50_cpu_ms_seq32\": %.3f, \"batch32_seq128_texts_per_s\": %.2f, "
      "\"batch32_seq128_texts_per_cpu_s\": %.2f, \"weights_mb\": %.1f, "
      "\"peak_rss_mb\": %.1f, \"rss_before_load_mb\": %.1f}\n",
      msp::native::LinearBackend(), options.threads, loads[loads.size() / 2] * 1e3, loads[0] * 1e3,
      lat[lat.size() / 2] * 1e3, lat_cpu[lat_cpu.size() / 2] * 1e3, 32 / per_batch, 32 / per_batch_cpu, static_cast<double>(e->model().file().file_bytes()) / 1e6,
      static_cast<double>(PeakRssKb()) / 1024, static_cast<double>(rss_start) / 1024);
  return 0;
}
