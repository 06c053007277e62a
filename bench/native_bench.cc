// The native embedder (src/embed/native/) on a model directory: load time,
// single-text latency at 32 tokens, batch-of-32 throughput at 128 tokens,
// peak memory; JSON on stdout. bench/native_bench.sh runs it beside torch on
// the same MiniLM-shaped random model (bench/README.md, "Native embedder").
// With int8 (embedder.quantize), also the cosine of its vectors to fp32's.
//
//   native_bench MODEL_DIR [THREADS [none|int8]]
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "embed/native/gemm.h"
#include "embed/native/native_embedder.h"
#include "embed/native/quant.h"

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

// Resident memory now (VmRSS), MB.
double RssMb() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * 4096 / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: native_bench MODEL_DIR [THREADS [none|int8]]\n");
    return 2;
  }
  msp::native::NativeOptions options;
  options.model_dir = argv[1];
  options.threads = argc > 2 ? std::atoi(argv[2]) : 1;
  options.quantize = argc > 3 ? argv[3] : "none";
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
  const double rss_loaded = RssMb();
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
  const double rss_after = RssMb();
  const long peak_kb = PeakRssKb();  // before the fp32 model of the cosine below
  // int8: cosine to fp32 over the batch's texts and 40 shorter ones.
  double cos_min = 1, cos_sum = 0;
  int cos_n = 0;
  std::string backend = msp::native::LinearBackend();
  if (options.quantize == "int8") {
    backend += std::string("+int8-") + msp::native::Int8KernelName(msp::native::BestInt8Kernel());
    msp::native::NativeOptions fp = options;
    fp.quantize = "none";
    auto f = msp::native::NativeEmbedder::Open(fp);
    if (!f.ok()) return 1;
    std::vector<std::string> texts = batch;
    for (int i = 0; i < 40; ++i) texts.push_back(Text(1 + i * 3, 100 + i));
    auto want = (*f)->Embed(texts);
    auto got = e->Embed(texts);
    if (!want.ok() || !got.ok()) return 1;
    for (size_t i = 0; i < texts.size(); ++i) {
      double xy = 0, xx = 0, yy = 0;
      for (size_t d = 0; d < (*got)[i].size(); ++d) {
        xy += static_cast<double>((*got)[i][d]) * (*want)[i][d];
        xx += static_cast<double>((*got)[i][d]) * (*got)[i][d];
        yy += static_cast<double>((*want)[i][d]) * (*want)[i][d];
      }
      const double c = xy / std::sqrt(xx * yy);
      cos_min = std::min(cos_min, c);
      cos_sum += c;
      ++cos_n;
    }
  }
  std::printf(
      "{\"backend\": \"%s\", \"threads\": %d, \"load_ms_median\": %.2f, \"load_ms_first\": %.2f, "
      "\"latency_p50_ms_seq32\": %.3f, \"latency_p50_cpu_ms_seq32\": %.3f, \"batch32_seq128_texts_per_s\": %.2f, "
      "\"batch32_seq128_texts_per_cpu_s\": %.2f, \"weights_mb\": %.1f, "
      "\"peak_rss_mb\": %.1f, \"rss_before_load_mb\": %.1f, \"rss_loaded_mb\": %.1f, \"rss_after_mb\": %.1f, "
      "\"int8_mb\": %.1f, \"cosine_to_fp32_min\": %.5f, \"cosine_to_fp32_mean\": %.5f, \"cosine_texts\": %d}\n",
      backend.c_str(), options.threads, loads[loads.size() / 2] * 1e3, loads[0] * 1e3,
      lat[lat.size() / 2] * 1e3, lat_cpu[lat_cpu.size() / 2] * 1e3, 32 / per_batch, 32 / per_batch_cpu, static_cast<double>(e->model().file().file_bytes()) / 1e6,
      static_cast<double>(peak_kb) / 1024, static_cast<double>(rss_start) / 1024, rss_loaded, rss_after,
      static_cast<double>(e->model().int8_bytes()) / 1e6, cos_min, cos_n > 0 ? cos_sum / cos_n : 1.0, cos_n);
  return 0;
}
