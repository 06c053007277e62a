// The hashing embedder: word, word-pair and character n-gram features hashed
// into a fixed number of signed buckets (see hashing_embedder.h).
#include "embed/hashing/hashing_embedder.h"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace msp {
namespace {

// Seeds keep the three feature families apart: the word "the" and the
// trigram "the" land in different buckets.
constexpr uint64_t kSeedWord = 0x243f6a8885a308d3ULL;
constexpr uint64_t kSeedPair = 0x13198a2e03707344ULL;
constexpr uint64_t kSeedGram = 0xa4093822299f31d0ULL;

constexpr float kWordWeight = 1.0f;
constexpr float kStopWordWeight = 0.2f;
constexpr float kPairWeight = 0.6f;
// The n-grams of one word share this much weight (each gets kGramWeight /
// sqrt(n-grams of the word)), so long words do not drown short ones.
constexpr float kGramWeight = 1.0f;
constexpr int kMinGram = 3;
constexpr int kMaxGram = 5;

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// Little-endian load of n <= 8 bytes: the same value on every platform.
inline uint64_t LoadLe(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

inline uint64_t MixBlock(uint64_t k) {
  k *= kC1;
  k = Rotl(k, 31);
  return k * kC2;
}

// A murmur-style 64-bit hash of p[0..n).
uint64_t Hash(const unsigned char* p, size_t n, uint64_t seed) {
  uint64_t h = seed;
  const size_t len = n;
  while (n >= 8) {
    h ^= MixBlock(LoadLe(p, 8));
    h = Rotl(h, 27) * 5 + 0x52dce729;
    p += 8;
    n -= 8;
  }
  if (n > 0) h ^= MixBlock(LoadLe(p, n));
  h ^= len;
  return Fmix(h);
}

uint64_t HashWord(std::string_view w) {
  return Hash(reinterpret_cast<const unsigned char*>(w.data()), w.size(), kSeedWord);
}

// English function words: little weight, no n-grams.
constexpr std::string_view kStopWords[] = {
    "a",     "about", "also",  "am",    "an",    "and",   "any",   "are",   "as",    "at",
    "be",    "been",  "being", "but",   "by",    "can",   "could", "did",   "do",    "does",
    "for",   "from",  "had",   "has",   "have",  "he",    "her",   "here",  "him",   "his",
    "how",   "i",     "if",    "in",    "into",  "is",    "it",    "its",   "just",  "may",
    "me",    "might", "must",  "my",    "no",    "not",   "of",    "on",    "or",    "our",
    "out",   "over",  "s",     "shall", "she",   "should", "so",   "some",  "t",     "than",
    "that",  "the",   "their", "them",  "then",  "there", "these", "they",  "this",  "those",
    "to",    "up",    "us",    "very",  "was",   "we",    "were",  "what",  "when",  "where",
    "which", "who",   "whom",  "why",   "will",  "with",  "would", "you",   "your",  "yours",
    "ours",  "don",   "ll",    "ve",    "re",    "m",
};

// The sorted word hashes of kStopWords (a 64-bit collision with a real word
// is not a practical concern).
const std::vector<uint64_t>& StopWordHashes() {
  static const std::vector<uint64_t> hashes = [] {
    std::vector<uint64_t> v;
    v.reserve(std::size(kStopWords));
    for (std::string_view w : kStopWords) v.push_back(HashWord(w));
    std::sort(v.begin(), v.end());
    return v;
  }();
  return hashes;
}

inline bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

inline unsigned char Lower(unsigned char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c + ('a' - 'A')) : c;
}

// A distinct word or word pair of the text, and how often it occurs.
struct Term {
  uint64_t key;    // 0: empty slot
  uint32_t count;
  int32_t word;    // index into Scratch::words of its first occurrence; -1: a pair
};

struct Word {
  uint32_t offset;  // of the '<' mark in Scratch::buf
  uint32_t length;  // bytes, without the marks
  uint32_t marked_code_points;  // code points including both marks
  uint64_t hash;
  bool stop;
};

// Per-thread working memory, reused across calls so embedding allocates
// nothing in the steady state.
struct Scratch {
  std::string buf;  // every word as "<word>", lowercased, back to back
  std::vector<Word> words;
  std::vector<uint32_t> code_points;  // starts of the code points of one marked word
  std::vector<Term> table;            // open addressing, power-of-two size
  std::vector<uint32_t> used;         // occupied slots of `table`, in insertion order
  uint64_t mask = 0;

  void Reset(size_t max_terms) {
    size_t size = 16;
    while (size < 2 * max_terms) size <<= 1;
    table.assign(size, Term{0, 0, 0});
    mask = size - 1;
    used.clear();
  }

  void Count(uint64_t key, int32_t word) {
    if (key == 0) key = 1;
    uint64_t i = key & mask;
    while (true) {
      Term& t = table[i];
      if (t.key == key) {
        ++t.count;
        return;
      }
      if (t.key == 0) {
        t = Term{key, 1, word};
        used.push_back(static_cast<uint32_t>(i));
        return;
      }
      i = (i + 1) & mask;
    }
  }
};

// 1 + ln(tf) for tf = 1..16 as literals, so common counts do not depend on the
// platform's log().
constexpr float kSublinear[16] = {
    1.000000000f, 1.693147181f, 2.098612289f, 2.386294361f, 2.609437912f,
    2.791759469f, 2.945910149f, 3.079441542f, 3.197224577f, 3.302585093f,
    3.397895273f, 3.484906650f, 3.564949357f, 3.639057330f, 3.708050201f,
    3.772588722f,
};

inline float Sublinear(uint32_t tf) {
  return tf <= 16 ? kSublinear[tf - 1] : 1.0f + static_cast<float>(std::log(static_cast<double>(tf)));
}

inline uint32_t NumGrams(uint32_t marked_code_points) {
  uint32_t n = 0;
  for (int g = kMinGram; g <= kMaxGram; ++g) {
    if (marked_code_points >= static_cast<uint32_t>(g)) n += marked_code_points - g + 1;
  }
  return n;
}

}  // namespace

HashingEmbedder::HashingEmbedder(int dimension) : dimension_(dimension) {}

std::string HashingEmbedder::id() const { return "hashing-v1-" + std::to_string(dimension_); }

Result<std::vector<std::vector<float>>> HashingEmbedder::Embed(
    const std::vector<std::string>& texts) {
  std::vector<std::vector<float>> out(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    out[i].resize(static_cast<size_t>(dimension_));
    EmbedInto(texts[i], out[i].data());
  }
  return out;
}

void HashingEmbedder::EmbedInto(std::string_view text, float* out) const {
  const size_t dim = static_cast<size_t>(dimension_);
  std::fill(out, out + dim, 0.0f);
  thread_local Scratch s;

  // 1. Words, lowercased and marked.
  s.buf.clear();
  s.words.clear();
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const std::vector<uint64_t>& stop_hashes = StopWordHashes();
  for (size_t i = 0; i < n;) {
    if (!IsWordByte(p[i])) {
      ++i;
      continue;
    }
    Word w{};
    w.offset = static_cast<uint32_t>(s.buf.size());
    s.buf.push_back('<');
    uint32_t cps = 0;
    for (; i < n && IsWordByte(p[i]); ++i) {
      s.buf.push_back(static_cast<char>(Lower(p[i])));
      if ((p[i] & 0xC0) != 0x80) ++cps;
    }
    s.buf.push_back('>');
    w.length = static_cast<uint32_t>(s.buf.size() - w.offset - 2);
    w.marked_code_points = cps + 2;
    w.hash = HashWord(std::string_view(s.buf.data() + w.offset + 1, w.length));
    w.stop = std::binary_search(stop_hashes.begin(), stop_hashes.end(), w.hash);
    s.words.push_back(w);
  }
  if (s.words.empty()) return;

  // 2. Distinct words and word pairs, counted (term frequency).
  s.Reset(2 * s.words.size());
  for (size_t wi = 0; wi < s.words.size(); ++wi) {
    const Word& w = s.words[wi];
    s.Count(w.hash, static_cast<int32_t>(wi));
    if (wi > 0) {
      const Word& prev = s.words[wi - 1];
      if (!(prev.stop && w.stop)) s.Count(Fmix((Rotl(prev.hash, 23) * kC2) ^ w.hash ^ kSeedPair), -1);
    }
  }

  // 3. Each distinct term adds its features, scaled by 1 + ln(tf), to a
  // signed bucket; a word brings its character n-grams along.
  auto scatter = [out, dim](uint64_t key, float v) {
    const uint64_t low = static_cast<uint32_t>(key);
    const size_t bucket = static_cast<size_t>((low * dim) >> 32);
    out[bucket] += (key >> 63) ? -v : v;
  };
  const auto* b = reinterpret_cast<const unsigned char*>(s.buf.data());
  for (uint32_t slot : s.used) {
    const Term& t = s.table[slot];
    const float tf = Sublinear(t.count);
    if (t.word < 0) {
      scatter(t.key, kPairWeight * tf);
      continue;
    }
    const Word& w = s.words[static_cast<size_t>(t.word)];
    scatter(t.key, (w.stop ? kStopWordWeight : kWordWeight) * tf);
    if (w.stop) continue;
    // Code point starts of "<word>", plus the end.
    s.code_points.clear();
    const uint32_t end = w.offset + w.length + 2;
    for (uint32_t k = w.offset; k < end; ++k) {
      if ((b[k] & 0xC0) != 0x80) s.code_points.push_back(k);
    }
    s.code_points.push_back(end);
    const uint32_t m = w.marked_code_points;
    const float gram_weight =
        tf * kGramWeight / std::sqrt(static_cast<float>(std::max<uint32_t>(1, NumGrams(m))));
    for (uint32_t g = kMinGram; g <= static_cast<uint32_t>(kMaxGram) && g <= m; ++g) {
      for (uint32_t start = 0; start + g <= m; ++start) {
        const uint32_t from = s.code_points[start];
        const uint32_t to = s.code_points[start + g];
        scatter(Hash(b + from, to - from, kSeedGram), gram_weight);
      }
    }
  }

  // 4. L2 normalisation.
  double norm2 = 0.0;
  for (size_t i = 0; i < dim; ++i) norm2 += static_cast<double>(out[i]) * out[i];
  if (norm2 <= 0.0) return;  // every feature cancelled out: keep zeros
  const float scale = static_cast<float>(1.0 / std::sqrt(norm2));
  for (size_t i = 0; i < dim; ++i) out[i] *= scale;
}

}  // namespace msp
