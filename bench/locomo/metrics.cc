// Recall counting and the report table.
#include "metrics.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

namespace msp::locomo {
namespace {

double Fraction(int64_t part, int64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

std::string RowLabel(int row) {
  return row == 0 ? std::string("overall") : std::to_string(row) + " " + std::string(CategoryName(row));
}

std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string PadRight(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

void AppendCells(std::string* out, const std::array<int64_t, kCutoffs.size()>& hits, int64_t n) {
  char buf[32];
  for (int64_t h : hits) {
    std::snprintf(buf, sizeof buf, " %5.3f", Fraction(h, n));
    *out += buf;
  }
  *out += " |";
}

nlohmann::json AtK(const std::array<int64_t, kCutoffs.size()>& hits, int64_t n) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kCutoffs.size(); ++i) j[std::to_string(kCutoffs[i])] = Fraction(hits[i], n);
  return j;
}

}  // namespace

std::vector<std::string> DistinctSessions(const std::vector<std::string>& ranked_turns) {
  std::vector<std::string> out;
  for (const std::string& t : ranked_turns) {
    std::string s(SessionOf(t));
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  }
  return out;
}

bool AnyInTop(const std::vector<std::string>& ranked, size_t k, const std::vector<std::string>& wanted) {
  const auto end = ranked.begin() + static_cast<std::ptrdiff_t>(std::min(k, ranked.size()));
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return std::find(ranked.begin(), end, w) != end; });
}

bool AllInTop(const std::vector<std::string>& ranked, size_t k, const std::vector<std::string>& wanted) {
  const auto end = ranked.begin() + static_cast<std::ptrdiff_t>(std::min(k, ranked.size()));
  return std::all_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return std::find(ranked.begin(), end, w) != end; });
}

Scoreboard::Scoreboard(std::string name, std::string description, bool turn_level)
    : name_(std::move(name)), description_(std::move(description)), turn_level_(turn_level) {}

void Scoreboard::AddTurnRanking(int category, const std::vector<std::string>& evidence,
                                const std::vector<std::string>& ranked_turns, double tokens_at_10,
                                double latency_ms) {
  Count(category, evidence, &ranked_turns, DistinctSessions(ranked_turns), tokens_at_10, latency_ms);
}

void Scoreboard::AddSessionRanking(int category, const std::vector<std::string>& evidence,
                                   const std::vector<std::string>& ranked_sessions, double latency_ms) {
  Count(category, evidence, nullptr, ranked_sessions, 0.0, latency_ms);
}

void Scoreboard::Count(int category, const std::vector<std::string>& evidence,
                       const std::vector<std::string>* ranked_turns,
                       const std::vector<std::string>& ranked_sessions, double tokens_at_10,
                       double latency_ms) {
  std::vector<std::string> evidence_sessions;
  for (const std::string& e : evidence) {
    std::string s(SessionOf(e));
    if (std::find(evidence_sessions.begin(), evidence_sessions.end(), s) == evidence_sessions.end()) {
      evidence_sessions.push_back(std::move(s));
    }
  }
  double sessions_at_10 = 0;
  if (ranked_turns) {
    const size_t n = std::min<size_t>(10, ranked_turns->size());
    sessions_at_10 = static_cast<double>(
        DistinctSessions(std::vector<std::string>(ranked_turns->begin(), ranked_turns->begin() + static_cast<std::ptrdiff_t>(n)))
            .size());
  }
  for (RowCounts* row : {&rows_[0], &rows_[static_cast<size_t>(category)]}) {
    ++row->questions;
    row->tokens_at_10 += tokens_at_10;
    row->sessions_at_10 += sessions_at_10;
    for (size_t i = 0; i < kCutoffs.size(); ++i) {
      const size_t k = static_cast<size_t>(kCutoffs[i]);
      if (ranked_turns) {
        row->turn_any[i] += AnyInTop(*ranked_turns, k, evidence);
        row->turn_all[i] += AllInTop(*ranked_turns, k, evidence);
      }
      row->session_any[i] += AnyInTop(ranked_sessions, k, evidence_sessions);
      row->session_all[i] += AllInTop(ranked_sessions, k, evidence_sessions);
    }
  }
  latencies_ms_.push_back(latency_ms);
}

double Scoreboard::MeanLatencyMs() const {
  if (latencies_ms_.empty()) return 0;
  double sum = 0;
  for (double l : latencies_ms_) sum += l;
  return sum / static_cast<double>(latencies_ms_.size());
}

double Scoreboard::LatencyPercentileMs(double p) const {
  if (latencies_ms_.empty()) return 0;
  std::vector<double> v = latencies_ms_;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

std::string Scoreboard::Table() const {
  std::string out = name_ + ": " + description_ + "\n";
  std::string cutoffs;
  for (int k : kCutoffs) cutoffs += " " + PadLeft("@" + std::to_string(k), 5);
  const char* groups[] = {"turn recall_any", "turn recall_all", "session recall_any", "session recall_all"};
  std::string head1 = PadRight("", 15) + " " + PadLeft("", 5) + " |";
  std::string head2 = PadRight("category", 15) + " " + PadLeft("n", 5) + " |";
  for (size_t g = turn_level_ ? 0 : 2; g < 4; ++g) {
    head1 += " " + PadRight(groups[g], 23) + " |";
    head2 += cutoffs + " |";
  }
  out += head1 + "\n" + head2 + "\n";
  for (int r : {1, 2, 3, 4, 5, 0}) {
    const RowCounts& row = rows_[static_cast<size_t>(r)];
    std::string line = PadRight(RowLabel(r), 15) + " " + PadLeft(std::to_string(row.questions), 5) + " |";
    if (turn_level_) {
      AppendCells(&line, row.turn_any, row.questions);
      AppendCells(&line, row.turn_all, row.questions);
    }
    AppendCells(&line, row.session_any, row.questions);
    AppendCells(&line, row.session_all, row.questions);
    out += line + "\n";
  }
  char buf[128];
  if (turn_level_) {
    const double n = static_cast<double>(std::max<int64_t>(1, rows_[0].questions));
    std::snprintf(buf, sizeof buf, "tokens@10 mean %.1f   distinct sessions@10 mean %.2f   ",
                  rows_[0].tokens_at_10 / n, rows_[0].sessions_at_10 / n);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "latency ms mean %.3f  p50 %.3f  p95 %.3f\n", MeanLatencyMs(),
                LatencyPercentileMs(50), LatencyPercentileMs(95));
  out += buf;
  return out;
}

nlohmann::json Scoreboard::ToJson() const {
  nlohmann::json j;
  j["description"] = description_;
  nlohmann::json cats = nlohmann::json::object();
  for (int r = 0; r <= kCategories; ++r) {
    const RowCounts& row = rows_[static_cast<size_t>(r)];
    nlohmann::json c;
    c["category"] = r;
    c["questions"] = row.questions;
    if (turn_level_) {
      c["turn"] = {{"recall_any", AtK(row.turn_any, row.questions)},
                   {"recall_all", AtK(row.turn_all, row.questions)}};
      c["tokens_at_10"] = row.questions ? row.tokens_at_10 / static_cast<double>(row.questions) : 0.0;
      c["distinct_sessions_at_10"] = row.questions ? row.sessions_at_10 / static_cast<double>(row.questions) : 0.0;
    }
    c["session"] = {{"recall_any", AtK(row.session_any, row.questions)},
                    {"recall_all", AtK(row.session_all, row.questions)}};
    cats[r == 0 ? std::string("overall") : std::string(CategoryName(r))] = std::move(c);
  }
  j["categories"] = std::move(cats);
  j["latency_ms"] = {{"mean", MeanLatencyMs()},
                     {"p50", LatencyPercentileMs(50)},
                     {"p95", LatencyPercentileMs(95)}};
  return j;
}

}  // namespace msp::locomo
