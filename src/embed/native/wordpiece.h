// WordPieceTokenizer: BERT's tokenizer (BertTokenizer / tokenizers'
// BertNormalizer + BertPreTokenizer + WordPiece), from a model's vocab.txt
// (with tokenizer_config.json's do_lower_case) or tokenizer.json.
//
// Text to ids, as BertTokenizer does it:
//   1. cleaning: NUL, U+FFFD and control characters (category C*, except
//      tab, newline, return) removed, whitespace (Zs, tab, newline, return)
//      made a space;
//   2. a space around each CJK ideograph (each one is a word);
//   3. split at whitespace; each word lower-cased (str.lower(), final sigma
//      included) and its accents stripped (NFD, then nonspacing marks Mn
//      removed) when the model is uncased, then split around punctuation
//      (P*, and every ASCII symbol);
//   4. WordPiece: the longest vocabulary entry from the start, then the
//      longest "##" entry from where it ended, ...; a word with a part no entry
//      matches, or longer than 100 characters, is [UNK];
//   5. [CLS] ids [SEP], cut to the model's maximum length (the last id kept
//      is always [SEP]).
// Before step 1, special tokens written in the text exactly ([PAD], [UNK],
// [CLS], [SEP], [MASK], or tokenizer.json's special added tokens) are split
// out and kept whole, as BertTokenizer and tokenizers do.
// The Unicode data are Python's (Unicode 14, unicode_tables.h); the
// NFC step that recent Python transformers add before step 3 is not done
// (it changes nothing for the uncased models msp was shaped for).
// Immutable after Load; thread-safe.
#ifndef MSP_EMBED_NATIVE_WORDPIECE_H_
#define MSP_EMBED_NATIVE_WORDPIECE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "msp/status.h"

namespace msp::native {

struct WordPieceOptions {
  bool lower_case = true;
  bool strip_accents = true;     // BertTokenizer: follows lower_case unless set
  bool split_cjk = true;         // tokenize_chinese_chars / handle_chinese_chars
  size_t max_chars_per_word = 100;
  std::string unk_token = "[UNK]";
  std::string prefix = "##";     // continuing_subword_prefix
};

class WordPieceTokenizer {
 public:
  // From `dir`: tokenizer.json when it is there (vocabulary and normalizer
  // settings), else vocab.txt (one token a line, its id the line number) with
  // do_lower_case / strip_accents / tokenize_chinese_chars from
  // tokenizer_config.json when present. InvalidArgument naming the file and
  // what is wrong (no vocabulary, a missing [CLS]/[SEP]/[UNK], an unsupported
  // normalizer or model type).
  static Result<WordPieceTokenizer> Load(const std::string& dir);
  // From a vocabulary (token -> id) and settings.
  // The special tokens are [PAD], [UNK], [CLS], [SEP] and [MASK] where the
  // vocabulary has them, unless `specials` names others.
  static Result<WordPieceTokenizer> FromVocab(std::unordered_map<std::string, int32_t> vocab,
                                              WordPieceOptions options,
                                              std::vector<std::pair<std::string, int32_t>> specials = {});

  // [CLS] pieces [SEP], at most max_tokens ids (REQUIRES: max_tokens >= 2).
  // InvalidArgument when `text` is not valid UTF-8.
  Result<std::vector<int32_t>> Encode(std::string_view text, size_t max_tokens) const;

  // Steps 1-3: the words WordPiece sees (UTF-8).
  std::vector<std::string> BasicTokenize(std::string_view text) const;

  const WordPieceOptions& options() const { return options_; }
  size_t vocab_size() const { return vocab_.size(); }
  // The largest id in the vocabulary.
  int32_t max_id() const { return max_id_; }

 private:
  WordPieceTokenizer() = default;
  // Appends the pieces of `word` (code points) to `ids`.
  void WordPiece(const std::u32string& word, std::vector<int32_t>* ids) const;
  // Calls emit(word) for each word of steps 1-3; stops when emit returns false.
  template <typename Emit>
  void ForEachWord(std::string_view text, Emit&& emit) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::pair<std::string, int32_t>> specials_;  // kept whole where the text has them
  WordPieceOptions options_;
  int32_t cls_ = 0, sep_ = 0, unk_ = 0, max_id_ = 0;
};

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_WORDPIECE_H_
