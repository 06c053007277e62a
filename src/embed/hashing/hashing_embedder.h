// HashingEmbedder: the built-in embedder. It needs no model and no network.
//
// It is LEXICAL, not semantic: two texts are close when they share words,
// word pairs or word fragments ("running" and "runs" share "<ru", "run"), not
// when they mean the same thing in different words ("car" and "automobile"
// are unrelated to it). Use an OpenAI-compatible embedder for meaning.
//
// Features of a text, after lowercasing ASCII letters (bytes >= 0x80 are word
// characters, so UTF-8 words stay whole):
//   - each word (a run of [a-z0-9] or bytes >= 0x80),
//   - each pair of adjacent words,
//   - character n-grams of 3..5 code points of "<word>" (with boundary marks).
// A short list of English function words gets a small unigram weight and no
// n-grams. Term frequency is sublinear: a word or pair occurring tf times
// weighs w * (1 + ln tf), and a word's n-grams scale with it. Each feature is
// hashed (64-bit, our own murmur-style mix, fixed byte order) to a bucket and
// a sign; the vector is L2-normalised. Deterministic across runs and
// platforms. Cost is linear in the text: a 20-word sentence takes a few
// microseconds.
#ifndef MSP_EMBED_HASHING_HASHING_EMBEDDER_H_
#define MSP_EMBED_HASHING_HASHING_EMBEDDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.h"

namespace msp {

// Thread-safe (stateless apart from per-thread scratch space).
class HashingEmbedder final : public Embedder {
 public:
  // REQUIRES: 8 <= dimension <= 4096 (MakeEmbedder checks it).
  explicit HashingEmbedder(int dimension);

  int dimension() const override { return dimension_; }
  // "hashing-v1-<dimension>".
  std::string id() const override;
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;

  // Writes the embedding of `text` to out[0..dimension()). Never fails.
  void EmbedInto(std::string_view text, float* out) const;

 private:
  int dimension_;
};

}  // namespace msp

#endif  // MSP_EMBED_HASHING_HASHING_EMBEDDER_H_
