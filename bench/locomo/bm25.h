// A plain Okapi BM25 index in memory: the baseline the LoCoMo evaluation
// compares msp against. Lowercase ASCII word tokens [a-z0-9]+, no stemming,
// no stop words; idf = ln(1 + (N - df + 0.5) / (df + 0.5)); every occurrence
// of a query term adds its weight (a repeated term counts again).
#ifndef MSP_BENCH_LOCOMO_BM25_H_
#define MSP_BENCH_LOCOMO_BM25_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace msp::locomo {

// The lowercase runs of [a-z0-9] in `text` (other bytes separate tokens).
std::vector<std::string> Bm25Tokens(std::string_view text);

// Not thread-safe while adding; Search is const and may run concurrently.
class Bm25Index {
 public:
  explicit Bm25Index(double k1 = 1.2, double b = 0.75) : k1_(k1), b_(b) {}

  // Adds a document; its id is the number of documents added before it.
  void Add(std::string_view text);
  size_t size() const { return doc_length_.size(); }

  // The ids of the best `k` documents for `query`, best first; equal scores
  // keep document order. Documents sharing no term with the query are left
  // out, so fewer than `k` may come back.
  std::vector<size_t> Search(std::string_view query, size_t k) const;

 private:
  struct Posting {
    size_t doc;
    int tf;
  };
  double k1_;
  double b_;
  std::vector<int> doc_length_;
  size_t total_length_ = 0;
  std::unordered_map<std::string, std::vector<Posting>> postings_;
};

}  // namespace msp::locomo

#endif  // MSP_BENCH_LOCOMO_BM25_H_
