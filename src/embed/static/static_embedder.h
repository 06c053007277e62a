// StaticEmbedder: the built-in SEMANTIC embedder. It needs no model server:
// a text's vector is the weighted mean of its words' pre-trained vectors
// (GloVe 6B 100d by default, a table scripts/deps.sh installs and converts;
// word_vectors.h), so "puppy" lands near "dog" and "favorite" near "fav",
// which the lexical signal and the hashing embedder cannot see.
//
// The method is SIF (Arora, Liang and Ma, "A Simple but Tough-to-Beat
// Baseline for Sentence Embeddings", ICLR 2017): each known word w weighs
// a / (a + p(w)), p(w) its unigram probability estimated from its frequency
// rank r by Zipf's law, p = 1 / ((r + 1) H) with H the table's harmonic
// number; the sum is L2-normalised. (SIF also removes the direction all
// texts share; on LoCoMo that lowered recall, 0.376 -> 0.348 turn
// recall_all@10 with this signal alone, so it is not done.) Words are runs of ASCII letters and digits (lowercased) or
// of bytes >= 0x80; a clitic after an apostrophe is dropped ("'s", "'ll"),
// "n't" reads as "not". Unknown words add nothing; a text with no known word
// embeds as the zero vector.
//
// Cost: one hash lookup and 100 multiply-adds per word (about a microsecond
// for a sentence). Deterministic on a given table; thread-safe.
#ifndef MSP_EMBED_STATIC_STATIC_EMBEDDER_H_
#define MSP_EMBED_STATIC_STATIC_EMBEDDER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.h"
#include "embed/static/word_vectors.h"

namespace msp {

class StaticEmbedder final : public Embedder {
 public:
  // The SIF smoothing constant a (smaller: frequent words count less).
  static constexpr float kDefaultSmoothing = 1e-3f;

  explicit StaticEmbedder(std::shared_ptr<const WordVectors> vectors, float smoothing = kDefaultSmoothing);

  int dimension() const override { return vectors_->dimension(); }
  // "static-v1-<table name>" ("static-v1-glove-6b-100d").
  std::string id() const override;
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;

  // Writes the embedding of `text` to out[0..dimension()). Never fails.
  void EmbedInto(std::string_view text, float* out) const;

 private:
  float WeightOf(size_t rank) const;

  std::shared_ptr<const WordVectors> vectors_;
  float smoothing_;
  float harmonic_;  // H of the table's size
};

// Where the table is looked for when embedder.vectors_path is empty: the
// file scripts/deps.sh makes (<source>/data/embeddings/glove-6b-100d.msv),
// then /usr/local/share/msp/ and /usr/share/msp/.
std::vector<std::string> WordVectorCandidates();
// `configured` when set (it must exist), else the first candidate that
// exists; NotFound names every place looked at and how to install the table.
Result<std::string> FindWordVectors(const std::string& configured);

}  // namespace msp

#endif  // MSP_EMBED_STATIC_STATIC_EMBEDDER_H_
