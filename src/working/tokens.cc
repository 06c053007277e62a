// The estimated cl100k_base token counter, the exact one, and the counter
// factory.
#include "working/tokens.h"

#include <string>
#include <utility>

#include "util/data_file.h"
#include "working/cl100k.h"

namespace msp {
namespace {

enum class CharClass { kLetter, kDigit, kSpace, kNewline, kNonAscii, kOther };

CharClass Classify(unsigned char c) {
  if (c >= 0x80) return CharClass::kNonAscii;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::kLetter;
  if (c >= '0' && c <= '9') return CharClass::kDigit;
  if (c == '\n' || c == '\r') return CharClass::kNewline;
  if (c == ' ' || c == '\t' || c == '\v' || c == '\f') return CharClass::kSpace;
  return CharClass::kOther;  // punctuation, symbols, control characters
}

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }

size_t CeilDiv(size_t n, size_t d) { return (n + d - 1) / d; }

size_t LetterPieceCost(size_t n) { return n <= 6 ? 1 : CeilDiv(n, 5); }

// The cost of `run`, all of one class (see tokens.h).
size_t RunCost(CharClass cls, std::string_view run) {
  const size_t n = run.size();
  switch (cls) {
    case CharClass::kLetter: {
      size_t cost = 0;
      size_t piece_start = 0;
      for (size_t i = 1; i <= n; ++i) {
        if (i == n || (IsLower(run[i - 1]) && IsUpper(run[i]))) {
          cost += LetterPieceCost(i - piece_start);
          piece_start = i;
        }
      }
      return cost;
    }
    case CharClass::kDigit:
      return CeilDiv(n, 3);
    case CharClass::kSpace:
      return n <= 1 ? 0 : CeilDiv(n, 8);
    case CharClass::kNewline:
    case CharClass::kOther:
      return CeilDiv(n, 2);
    case CharClass::kNonAscii: {
      size_t weight = n;
      for (char c : run) {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0xF0 && b <= 0xF4) weight += 2;  // starts a 4-byte sequence
      }
      return CeilDiv(weight, 3);
    }
  }
  return n;
}

}  // namespace

size_t EstimateTokenCounter::Count(std::string_view text) const {
  size_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const CharClass cls = Classify(static_cast<unsigned char>(text[i]));
    size_t j = i + 1;
    while (j < text.size() && Classify(static_cast<unsigned char>(text[j])) == cls) ++j;
    total += RunCost(cls, text.substr(i, j - i));
    i = j;
  }
  return total;
}

Cl100kTokenCounter::Cl100kTokenCounter(std::shared_ptr<const Cl100kVocabulary> vocabulary)
    : vocabulary_(std::move(vocabulary)) {}

size_t Cl100kTokenCounter::Count(std::string_view text) const { return vocabulary_->Count(text); }

std::vector<std::string> Cl100kVocabularyCandidates() {
  const std::string rel = "js-tiktoken/dist/ranks/cl100k_base.js";
  std::vector<std::string> out;
#ifdef MSP_SOURCE_DIR
  out.push_back(std::string(MSP_SOURCE_DIR) + "/data/tokenizer/node_modules/" + rel);
#endif
  out.push_back("/usr/local/share/msp/cl100k_base.js");  // cmake --install
  out.push_back("/usr/share/msp/cl100k_base.js");
  out.push_back("/usr/local/lib/node_modules/" + rel);
  out.push_back("/usr/lib/node_modules/" + rel);
  return out;
}

Result<std::string> FindCl100kVocabulary(const std::string& configured) {
  return FindDataFile(configured, Cl100kVocabularyCandidates(),
                      {.setting = "tokens.vocabulary_path",
                       .what = "cl100k vocabulary",
                       .expected = "js-tiktoken's dist/ranks/cl100k_base.js",
                       .how_to_install = "install it with scripts/deps.sh (npm ci in data/tokenizer) or set "
                                         "tokens.vocabulary_path to js-tiktoken's dist/ranks/cl100k_base.js"});
}

std::unique_ptr<TokenCounter> DefaultTokenCounter() {
  Result<std::unique_ptr<TokenCounter>> c = MakeTokenCounter(TokenOptions{});
  if (c.ok()) return std::move(c).value();
  return std::make_unique<EstimateTokenCounter>();
}

Result<std::unique_ptr<TokenCounter>> MakeTokenCounter(const TokenOptions& options) {
  if (options.counter == "estimate") {
    return std::unique_ptr<TokenCounter>(std::make_unique<EstimateTokenCounter>());
  }
  if (options.counter != "estimate" && options.counter != "cl100k" && options.counter != "auto") {
    return Status::InvalidArgument("tokens.counter: unknown token counter '" + options.counter +
                                   "'; known counters: auto, cl100k, estimate");
  }
  Result<std::string> path = FindCl100kVocabulary(options.vocabulary_path);
  if (!path.ok()) {
    if (options.counter == "auto" && options.vocabulary_path.empty()) {
      return std::unique_ptr<TokenCounter>(std::make_unique<EstimateTokenCounter>());
    }
    return path.status();
  }
  Result<std::shared_ptr<const Cl100kVocabulary>> vocabulary = Cl100kVocabulary::LoadShared(*path);
  if (!vocabulary.ok()) return vocabulary.status().WithContext("tokens");
  return std::unique_ptr<TokenCounter>(std::make_unique<Cl100kTokenCounter>(std::move(vocabulary).value()));
}

Result<std::unique_ptr<TokenCounter>> MakeTokenCounter(std::string_view name) {
  if (name == "estimate" || name == "cl100k" || name == "auto") {
    TokenOptions options;
    options.counter = std::string(name);
    return MakeTokenCounter(options);
  }
  return Status::InvalidArgument("unknown token counter '" + std::string(name) +
                                 "'; known counters: auto, cl100k, estimate");
}

}  // namespace msp
