// Okapi BM25 over an in-memory inverted index.
#include "bm25.h"

#include <algorithm>
#include <cmath>

namespace msp::locomo {

std::vector<std::string> Bm25Tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : text) {
    char c = ch;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

void Bm25Index::Add(std::string_view text) {
  const size_t doc = doc_length_.size();
  std::unordered_map<std::string, int> tf;
  const std::vector<std::string> tokens = Bm25Tokens(text);
  for (const auto& t : tokens) ++tf[t];
  for (auto& [term, n] : tf) postings_[term].push_back({doc, n});
  doc_length_.push_back(static_cast<int>(tokens.size()));
  total_length_ += tokens.size();
}

std::vector<size_t> Bm25Index::Search(std::string_view query, size_t k) const {
  const size_t n = doc_length_.size();
  if (n == 0 || k == 0) return {};
  const double avg_length = static_cast<double>(total_length_) / static_cast<double>(n);
  std::vector<double> score(n, 0.0);
  std::vector<bool> matched(n, false);
  for (const std::string& term : Bm25Tokens(query)) {
    auto it = postings_.find(term);
    if (it == postings_.end()) continue;
    const double df = static_cast<double>(it->second.size());
    const double idf = std::log(1.0 + (static_cast<double>(n) - df + 0.5) / (df + 0.5));
    for (const Posting& p : it->second) {
      const double tf = p.tf;
      const double norm = 1.0 - b_ + b_ * doc_length_[p.doc] / avg_length;
      score[p.doc] += idf * tf * (k1_ + 1.0) / (tf + k1_ * norm);
      matched[p.doc] = true;
    }
  }
  std::vector<size_t> docs;
  for (size_t d = 0; d < n; ++d) {
    if (matched[d]) docs.push_back(d);
  }
  const auto better = [&](size_t a, size_t b) { return score[a] != score[b] ? score[a] > score[b] : a < b; };
  const size_t keep = std::min(k, docs.size());
  std::partial_sort(docs.begin(), docs.begin() + static_cast<std::ptrdiff_t>(keep), docs.end(), better);
  docs.resize(keep);
  return docs;
}

}  // namespace msp::locomo
