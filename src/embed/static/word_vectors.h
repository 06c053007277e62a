// WordVectors: a read-only table of word vectors mapped from one file, the
// data of the built-in "static" embedder (static_embedder.h).
//
// The file ("MSPWVEC1", little-endian) is written by data/embeddings/
// convert.mjs from GloVe (scripts/deps.sh runs it) or by WriteWordVectors
// below; both must agree with this layout:
//
//   bytes 0..8    magic "MSPWVEC1"
//   8..12         u32 dimension (1..4096)
//   12..16        u32 count of words
//   16..20        u32 slots of the hash table (a power of two, > count)
//   20..24        u32 bytes of the word blob
//   24..64        the table's name, ASCII, zero-padded ("glove-6b-100d")
//   then          f32 scale[count]          row i = int8 values * scale[i]
//                 u32 offset[count + 1]     word i = blob[offset[i], offset[i+1])
//                 u32 table[slots]          0 empty, else word index + 1; a word
//                                           starts at slot FNV-1a-32(bytes) &
//                                           (slots - 1) and probes linearly
//                 i8  values[count * dimension]
//                 u8  blob[...]             the words, UTF-8, back to back
//
// Words are in frequency order (index 0 is the most frequent): the embedder
// weighs a word by its rank. Load checks every offset and table entry, so a
// damaged file is refused rather than read out of bounds.
#ifndef MSP_EMBED_STATIC_WORD_VECTORS_H_
#define MSP_EMBED_STATIC_WORD_VECTORS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"

namespace msp {

class WordVectors {
 public:
  // Maps `path` and checks it. Errors name the path and what is wrong.
  static Result<std::shared_ptr<const WordVectors>> Load(const std::string& path);
  ~WordVectors();
  WordVectors(const WordVectors&) = delete;
  WordVectors& operator=(const WordVectors&) = delete;

  int dimension() const { return static_cast<int>(dimension_); }
  size_t size() const { return count_; }
  const std::string& name() const { return name_; }

  // The index (frequency rank) of `word`, or -1 when the table lacks it.
  int64_t Find(std::string_view word) const;
  // Adds weight x row `index` to out[0..dimension()). REQUIRES: index < size().
  void AddScaled(size_t index, float weight, float* out) const;
  std::string_view Word(size_t index) const;

 private:
  WordVectors() = default;

  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint32_t dimension_ = 0;
  uint32_t count_ = 0;
  uint32_t slots_ = 0;
  std::string name_;
  const float* scales_ = nullptr;
  const uint32_t* offsets_ = nullptr;
  const uint32_t* table_ = nullptr;
  const int8_t* values_ = nullptr;
  const char* blob_ = nullptr;
};

// Writes a table in the layout above (int8 rows, each scaled by its largest
// magnitude). words[i] pairs with vectors[i]; the order is the frequency
// order. For tests and small custom tables; InvalidArgument on mismatched
// sizes, an empty or repeated word, or a name longer than 39 bytes.
Status WriteWordVectors(const std::string& path, const std::string& name,
                        const std::vector<std::string>& words,
                        const std::vector<std::vector<float>>& vectors);

}  // namespace msp

#endif  // MSP_EMBED_STATIC_WORD_VECTORS_H_
