// Embedder: text to a fixed-dimension vector. Implementations: hashing/ (the
// built-in lexical hashing embedder, no model needed) and, outside this part
// so that it stays free of the network, provider/openai_embedder.h (any
// OpenAI-compatible embeddings server). provider/embedder_factory.h opens
// either by name; MakeEmbedder below knows the built-in one only.
#ifndef MSP_EMBED_EMBEDDER_H_
#define MSP_EMBED_EMBEDDER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"

namespace msp {

class Embedder {
 public:
  virtual ~Embedder() = default;
  virtual int dimension() const = 0;
  // Names the model and dimension, stored with each vector ("hashing-v1-384",
  // "openai:nomic-embed-text:768"). A store holds vectors of one id only.
  virtual std::string id() const = 0;
  // One vector per text, L2-normalised (an all-zero vector for text with no
  // features). Thread-safe.
  virtual Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) = 0;
};

Result<std::unique_ptr<Embedder>> MakeEmbedder(const EmbedderOptions& options);

// Dot product of two equal-length vectors (cosine for normalised vectors).
// The same bits on every CPU (dot.h says how); uses AVX-512 or AVX when the
// CPU has them.
float Dot(const float* a, const float* b, size_t n);

// out[r] = Dot(q, rows[r], n) for r < count, several rows at a time.
void DotRows(const float* q, const float* const* rows, size_t count, size_t n, float* out);

}  // namespace msp

#endif  // MSP_EMBED_EMBEDDER_H_
