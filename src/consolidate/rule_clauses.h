// The rule extractor's clause splitter: a user message cut into sentences
// and clauses, each clause normalised (openers, hedges and adverbs after "I"
// removed), and the small text helpers the matcher shares with it. Matching
// works on an ASCII-lowercased copy of the same length, so positions carry
// over to the original. Internal to consolidate/ (rule_extractor.cc).
#ifndef MSP_CONSOLIDATE_RULE_CLAUSES_H_
#define MSP_CONSOLIDATE_RULE_CLAUSES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/text.h"

namespace msp::rules {

// ---------------------------------------------------------------------------
// Text helpers.

bool IsAlnum(char c);
bool IsWordChar(char c);
bool IsDigit(char c);

// "a|b|c" -> {"a", "b", "c"}.
std::vector<std::string_view> SplitBar(std::string_view list);

// True when `word` is one of the words of `bar_list` ("a|b|c").
bool InList(std::string_view word, std::string_view bar_list);

// "(a|b) c (d|)" -> {"a c d", "a c", "b c d", "b c"} (spaces tidied).
std::vector<std::string> ExpandAlternatives(std::string_view pattern);

// True when `lower` has `phrase` at `pos` as whole words.
bool PhraseAt(std::string_view lower, size_t pos, std::string_view phrase);

// The first whole-word occurrence of `phrase` at or after `from`.
size_t FindPhrase(std::string_view lower, std::string_view phrase, size_t from = 0);

// The word (letters, digits, apostrophes) starting at `pos`.
std::string_view WordAt(std::string_view s, size_t pos);

size_t CountWords(std::string_view s);

// ---------------------------------------------------------------------------
// Clauses.

// A clause and its lowercased twin (same length, edited together).
struct Clause {
  std::string text;
  std::string lower;
  bool hedged = false;

  explicit Clause(std::string_view t) : text(t), lower(AsciiLower(t)) {}
  void Erase(size_t pos, size_t n) {
    text.erase(pos, n);
    lower.erase(pos, n);
  }
  void TrimFront() {
    size_t n = 0;
    while (n < text.size() && (IsAsciiSpace(text[n]) || text[n] == ',' || text[n] == '-' || text[n] == '"' ||
                               text[n] == '(' || text[n] == ':')) {
      ++n;
    }
    Erase(0, n);
  }
  void TrimBack() {
    while (!text.empty() && (IsAsciiSpace(text.back()) || text.back() == ',')) {
      text.pop_back();
      lower.pop_back();
    }
  }
  // Removes `phrase` (and the commas and spaces after it) when the clause
  // starts with it as whole words and holds more than it.
  bool StripLeading(std::string_view phrase) {
    if (!PhraseAt(lower, 0, phrase)) return false;
    if (phrase.size() == lower.size()) return false;  // the clause is only this word
    Erase(0, phrase.size());
    TrimFront();
    return true;
  }
};

// Cuts `text` into sentences; `question` marks those ending in '?'.
struct Sentence {
  std::string text;
  bool question = false;
};

// Curly quotes (U+2018, U+2019, U+201C, U+201D) made straight.
std::string NormalizeQuotes(std::string_view text);

// Cuts `text` into sentences at . ! ? ; and newlines (not inside "3.11",
// "e.g.", ...); a run of terminators ends one sentence.
std::vector<Sentence> SplitSentences(std::string_view text);

// Cuts a sentence into clauses at , ; : dashes and connectives followed by a
// subject; empty clauses are dropped.
std::vector<std::string> SplitClauses(std::string_view sentence);

// Strips openers, hedges and adverbs after "I" (see rule_extractor.h).
void Normalize(Clause* c);

// True when `lower` starts, as whole words, with one of the `n` phrases.
bool StartsWithAny(std::string_view lower, const std::string_view* list, size_t n);

}  // namespace msp::rules

#endif  // MSP_CONSOLIDATE_RULE_CLAUSES_H_
