// Recall metrics of the LoCoMo retrieval evaluation, by question category:
// recall_any@k (at least one evidence turn in the top k) and recall_all@k
// (every evidence turn in the top k), at turn level and at session level,
// plus tokens served at k = 10 and latency. See bench/README.md.
#ifndef MSP_BENCH_LOCOMO_METRICS_H_
#define MSP_BENCH_LOCOMO_METRICS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataset.h"

namespace msp::locomo {

inline constexpr std::array<int, 4> kCutoffs = {1, 5, 10, 20};
// Hits asked of every system per question (the largest cutoff).
inline constexpr int kTopK = 20;

// Sessions in order of first appearance among `ranked_turns` (dia_ids, best
// first): the session ranking a turn ranking implies.
std::vector<std::string> DistinctSessions(const std::vector<std::string>& ranked_turns);

// Whether any / every id of `wanted` is among the first `k` of `ranked`.
// REQUIRES: wanted is not empty.
bool AnyInTop(const std::vector<std::string>& ranked, size_t k, const std::vector<std::string>& wanted);
bool AllInTop(const std::vector<std::string>& ranked, size_t k, const std::vector<std::string>& wanted);

// The counts behind one row of the table.
struct RowCounts {
  int64_t questions = 0;
  std::array<int64_t, kCutoffs.size()> turn_any{}, turn_all{}, session_any{}, session_all{};
  double tokens_at_10 = 0;  // summed over questions
  // Distinct sessions among the first 10 turns, summed over questions
  // (turn rankings only): how many conversations the top 10 draws from.
  double sessions_at_10 = 0;
};

// The scores of one system over the questions it was given.
class Scoreboard {
 public:
  // `turn_level` is false for a system that ranks whole sessions.
  Scoreboard(std::string name, std::string description, bool turn_level);

  // A question answered with a turn ranking (dia_ids, best first).
  // REQUIRES: turn_level; 1 <= category <= kCategories; evidence not empty.
  void AddTurnRanking(int category, const std::vector<std::string>& evidence,
                      const std::vector<std::string>& ranked_turns, double tokens_at_10,
                      double latency_ms);
  // A question answered with a session ranking ("D3", best first).
  // REQUIRES: !turn_level; as above.
  void AddSessionRanking(int category, const std::vector<std::string>& evidence,
                         const std::vector<std::string>& ranked_sessions, double latency_ms);

  const std::string& name() const { return name_; }
  // Row 0 is every category together; rows 1..kCategories one category each.
  const RowCounts& row(int i) const { return rows_[static_cast<size_t>(i)]; }
  double MeanLatencyMs() const;
  double LatencyPercentileMs(double p) const;

  // The readable table (rows: categories + overall).
  std::string Table() const;
  // Every number, as fractions (recall) and means (tokens, latency).
  nlohmann::json ToJson() const;

 private:
  void Count(int category, const std::vector<std::string>& evidence,
             const std::vector<std::string>* ranked_turns,
             const std::vector<std::string>& ranked_sessions, double tokens_at_10, double latency_ms);

  std::string name_;
  std::string description_;
  bool turn_level_;
  std::array<RowCounts, kCategories + 1> rows_{};
  std::vector<double> latencies_ms_;
};

}  // namespace msp::locomo

#endif  // MSP_BENCH_LOCOMO_METRICS_H_
