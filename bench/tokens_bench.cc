// Token counting speed: the exact cl100k_base counter and the estimate, on
// English prose, Russian prose, C++ code and a mixed text (bytes/s and
// tokens/s), plus the one-time vocabulary load. Run:
//   build/<dir>/bench/tokens_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <string>

#include "working/cl100k.h"
#include "working/tokens.h"

namespace msp {
namespace {

std::string Repeat(const std::string& s, size_t bytes) {
  std::string out;
  while (out.size() < bytes) out += s;
  return out;
}

const std::string& Text(int kind) {
  static const std::string english = Repeat(
      "The user reported that installing numpy on Windows 11 with Python 3.11 fails because the Microsoft "
      "Visual C++ 14.0 build tools are missing; the agent suggested a prebuilt wheel instead. ", 1 << 20);
  static const std::string russian = Repeat(
      "Пользователь сообщил, что установка пакета на Windows 11 завершается ошибкой, и агент предложил "
      "установить готовое колесо вместо сборки из исходников. ", 1 << 20);
  static const std::string code = Repeat(
      "int main(int argc, char** argv) {\n  std::vector<std::string> args(argv, argv + argc);\n  for (const auto& a "
      ": args) std::cout << a << \"\\n\";\n  return args.empty() ? 1 : 0;\n}\n", 1 << 20);
  static const std::string mixed = Repeat("東京 😀 {\"id\": 42, \"ok\": true}   \n\t Ünïcödé 12345678 ", 1 << 20);
  switch (kind) {
    case 0: return english;
    case 1: return russian;
    case 2: return code;
    default: return mixed;
  }
}

void Run(benchmark::State& state, const TokenCounter& counter) {
  const std::string& text = Text(static_cast<int>(state.range(0)));
  size_t tokens = 0;
  for (auto _ : state) {
    tokens = counter.Count(text);
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["bytes/token"] = static_cast<double>(text.size()) / static_cast<double>(tokens);
}

void BM_Cl100k(benchmark::State& state) {
  auto counter = MakeTokenCounter("cl100k");
  if (!counter.ok()) {
    state.SkipWithError(counter.status().ToString().c_str());
    return;
  }
  Run(state, **counter);
}

void BM_Estimate(benchmark::State& state) { Run(state, EstimateTokenCounter()); }

void BM_LoadVocabulary(benchmark::State& state) {
  Result<std::string> path = FindCl100kVocabulary("");
  if (!path.ok()) {
    state.SkipWithError(path.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    auto v = Cl100kVocabulary::Load(*path);
    benchmark::DoNotOptimize(v);
  }
}

// 0 English, 1 Russian, 2 C++, 3 mixed.
BENCHMARK(BM_Cl100k)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Estimate)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadVocabulary)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace msp

BENCHMARK_MAIN();
