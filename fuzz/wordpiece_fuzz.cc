// Fuzz target: text through the native embedder's WordPiece tokenizer
// (embed/native/wordpiece.h): cleaning, CJK split, lower case and accent
// stripping, punctuation split, WordPiece, the cut at the maximum length;
// uncased and cased. Every id must come from the vocabulary.
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "embed/native/wordpiece.h"
#include "fuzz/fuzz_util.h"

namespace {

const msp::native::WordPieceTokenizer& Tokenizer(bool lower) {
  auto make = [](bool lc) {
    std::unordered_map<std::string, int32_t> vocab;
    int32_t id = 0;
    for (const char* t : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "un", "##aff", "##able", "σας", "中", "i",
                          "##s", "cafe", "Café", "##ing", "a", "##a", "ß", "ss"}) {
      vocab[t] = id++;
    }
    msp::native::WordPieceOptions o;
    o.lower_case = lc;
    o.strip_accents = lc;
    auto t = msp::native::WordPieceTokenizer::FromVocab(vocab, o);
    if (!t.ok()) std::abort();
    return *t;
  };
  static const msp::native::WordPieceTokenizer uncased = make(true), cased = make(false);
  return lower ? uncased : cased;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = msp::fuzz::Text(data, size);
  for (bool lower : {true, false}) {
    const auto& t = Tokenizer(lower);
    auto ids = t.Encode(text, 2 + size % 64);
    if (ids.ok()) {
      if (ids->size() < 2 || ids->size() > 2 + size % 64) std::abort();
      for (int32_t id : *ids) {
        if (id < 0 || id > t.max_id()) std::abort();
      }
    }
    (void)t.BasicTokenize(text);
  }
  return 0;
}
