// Benchmark corpora from LoCoMo.
#include "bench_data.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

namespace msp::bench {

Result<Corpus> LoadLocomo() {
  const char* env = std::getenv("MSP_LOCOMO");
  const std::string path = env ? env : std::string(MSP_SOURCE_DIR) + "/../shared/bench-data/locomo10.json";
  std::ifstream in(path);
  if (!in) return Status::NotFound("LoCoMo not found at " + path + "; set MSP_LOCOMO to locomo10.json");
  nlohmann::json data = nlohmann::json::parse(in, nullptr, false);
  if (data.is_discarded() || !data.is_array()) return Status::InvalidArgument(path + " is not LoCoMo JSON");
  Corpus c;
  for (const auto& sample : data) {
    const auto& conv = sample.at("conversation");
    for (auto it = conv.begin(); it != conv.end(); ++it) {
      if (it.key().rfind("session_", 0) != 0 || !it.value().is_array()) continue;
      for (const auto& turn : it.value()) {
        if (turn.contains("text") && turn["text"].is_string()) c.turns.push_back(turn["text"]);
      }
    }
    for (const auto& qa : sample.at("qa")) {
      if (qa.contains("question") && qa["question"].is_string()) c.questions.push_back(qa["question"]);
    }
  }
  return c;
}

std::vector<std::string> SyntheticRecords(const Corpus& corpus, size_t n, uint64_t seed) {
  std::map<std::string, double> freq;
  for (const auto& t : corpus.turns) {
    std::string w;
    for (char ch : t + " ") {
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '\'') {
        w.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
      } else if (!w.empty()) {
        freq[w] += 1;
        w.clear();
      }
    }
  }
  std::vector<std::string> words;
  std::vector<double> weights;
  for (const auto& [w, f] : freq) {
    words.push_back(w);
    weights.push_back(f);
  }
  std::mt19937_64 rng(seed);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  std::uniform_int_distribution<int> len(8, 30);
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string s;
    for (int k = len(rng); k > 0; --k) {
      if (!s.empty()) s.push_back(' ');
      s += words[pick(rng)];
    }
    out.push_back(std::move(s));
  }
  return out;
}

double Percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = p / 100.0 * static_cast<double>(samples.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  return samples[lo] + (samples[hi] - samples[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace msp::bench
