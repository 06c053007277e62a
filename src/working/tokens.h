// Token counting for working-memory packing and digests.
//
// A TokenCounter says how many model tokens a text costs. Two exist:
//   "cl100k"    exact cl100k_base counts (Cl100kTokenCounter), from the
//               vocabulary js-tiktoken ships (src/working/cl100k.h);
//   "estimate"  an approximation without a vocabulary (EstimateTokenCounter).
// msp uses one counter everywhere (working memory, digests, budgets), chosen
// by the tokens.* settings (MakeTokenCounter(TokenOptions)); every reported
// figure carries the counter's name().
#ifndef MSP_WORKING_TOKENS_H_
#define MSP_WORKING_TOKENS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"

namespace msp {

// Counts tokens. Implementations are immutable after construction, so one
// instance may be shared by threads.
class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  // The number of tokens `text` costs. Count("") == 0. Any bytes are
  // accepted (invalid UTF-8 is counted, never rejected).
  virtual size_t Count(std::string_view text) const = 0;
  // A stable name for reports and configuration ("estimate").
  virtual std::string_view name() const = 0;
};

// An estimate of cl100k_base token counts, built to be cheap, monotone and
// usually a little above the real count, so that a budget kept with it is
// rarely exceeded by the real tokenizer. The text is cut into runs of one
// character class, as the cl100k pre-tokenizer does, and each run costs:
//   - ASCII letters: the run is cut before each lower-to-upper case change
//     ("getUserName" -> get|User|Name); each piece of n letters costs 1 when
//     n <= 6 (common words are one token), else ceil(n / 5)
//   - ASCII digits, n of them:           ceil(n / 3)  (cl100k groups digits by 3)
//   - punctuation and symbols, n of them: ceil(n / 2)  (pairs like "::" merge)
//   - newlines, n of them:               ceil(n / 2)
//   - spaces and tabs, n of them:        0 when n == 1 (a single space joins the
//                                        next word), else ceil(n / 8)
//   - non-ASCII bytes: ceil(w / 3), w = the bytes plus 2 more for each byte
//     that starts a 4-byte sequence (about 1 token per CJK character, 2 per
//     3 Cyrillic letters, 2 per emoji)
// Measured against cl100k_base it gives 1.1-1.2x the real count on English
// prose and Russian/Ukrainian text, 1.2-1.4x on C++ and JSON, about 1.0x on
// hex ids, and undercounts random mixed-case strings (base64) by ~30%.
// Monotone: appending text never lowers the count (each piece's cost never
// falls as it grows, and splitting a piece never costs less than keeping it).
class EstimateTokenCounter final : public TokenCounter {
 public:
  size_t Count(std::string_view text) const override;
  std::string_view name() const override { return "estimate"; }
};

class Cl100kVocabulary;

// Exact cl100k_base counts. Shares its (immutable) vocabulary.
class Cl100kTokenCounter final : public TokenCounter {
 public:
  explicit Cl100kTokenCounter(std::shared_ptr<const Cl100kVocabulary> vocabulary);
  size_t Count(std::string_view text) const override;
  std::string_view name() const override { return "cl100k"; }
  const Cl100kVocabulary& vocabulary() const { return *vocabulary_; }

 private:
  std::shared_ptr<const Cl100kVocabulary> vocabulary_;
};

// Where the cl100k vocabulary is looked for when tokens.vocabulary_path is
// empty, in order: the install of scripts/deps.sh in this source tree
// (data/tokenizer/node_modules/js-tiktoken/dist/ranks/cl100k_base.js), then
// the copy `cmake --install` puts in /usr/local/share/msp or /usr/share/msp,
// then js-tiktoken installed globally by npm (/usr/local/lib/node_modules,
// /usr/lib/node_modules).
std::vector<std::string> Cl100kVocabularyCandidates();

// The vocabulary file to use: `configured` when set (NotFound when it does
// not exist), else the first candidate that exists (NotFound listing where
// it looked and how to install it).
Result<std::string> FindCl100kVocabulary(const std::string& configured);

// The counter msp uses when nothing is configured: cl100k when its
// vocabulary is found at a candidate place, else the estimate. The
// vocabulary is loaded once per process.
std::unique_ptr<TokenCounter> DefaultTokenCounter();

// A counter by name: "estimate", "cl100k" (vocabulary at a candidate place)
// or "auto" (as DefaultTokenCounter). Anything else is InvalidArgument
// naming the known counters.
Result<std::unique_ptr<TokenCounter>> MakeTokenCounter(std::string_view name);

// The counter the tokens.* settings ask for (TokenOptions in msp/options.h).
// counter "auto": cl100k when a vocabulary is found, else the estimate;
// "cl100k": an error when none is found; "estimate". For auto and cl100k a
// vocabulary_path that is set must exist and load (else the error names
// it); a file found at a candidate place that fails to load is an error
// too, naming it (a broken install is not hidden behind the estimate).
Result<std::unique_ptr<TokenCounter>> MakeTokenCounter(const TokenOptions& options);

}  // namespace msp

#endif  // MSP_WORKING_TOKENS_H_
