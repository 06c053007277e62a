// The rule extractor's clause splitter (see rule_clauses.h): sentences,
// clauses, their normalisation and the text helpers.
#include "consolidate/rule_clauses.h"

#include <algorithm>
#include <utility>

#include "consolidate/rule_table.h"

namespace msp::rules {
namespace {

bool IsAbbreviationBefore(std::string_view text, size_t dot) {
  size_t start = dot;
  while (start > 0 && !IsAsciiSpace(text[start - 1]) && text[start - 1] != '(') --start;
  return InList(AsciiLower(text.substr(start, dot - start)), kAbbreviations);
}

// True when the word at `pos` of `lower` starts a new clause. After a comma
// a question word does too ("I use Python 3.11, how do I ...?").
bool StartsClause(std::string_view lower, size_t pos, bool after_punctuation) {
  const std::string_view word = WordAt(lower, pos);
  return InList(word, kSubjects) || (after_punctuation && InList(word, kQuestionWords));
}

}  // namespace

// ---------------------------------------------------------------------------
// Text helpers.

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsWordChar(char c) { return IsAlnum(c) || c == '\'' || static_cast<unsigned char>(c) >= 0x80; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::vector<std::string_view> SplitBar(std::string_view list) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t bar = list.find('|', start);
    const size_t end = bar == std::string_view::npos ? list.size() : bar;
    out.push_back(list.substr(start, end - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return out;
}

bool InList(std::string_view word, std::string_view bar_list) {
  for (auto w : SplitBar(bar_list)) {
    if (w == word) return true;
  }
  return false;
}

std::vector<std::string> ExpandAlternatives(std::string_view pattern) {
  std::vector<std::string> out = {""};
  size_t i = 0;
  while (i < pattern.size()) {
    const size_t close = pattern[i] == '(' ? pattern.find(')', i) : std::string_view::npos;
    if (close != std::string_view::npos) {
      std::vector<std::string> next;
      for (const auto& prefix : out) {
        for (auto alt : SplitBar(pattern.substr(i + 1, close - i - 1))) next.push_back(prefix + std::string(alt));
      }
      out = std::move(next);
      i = close + 1;
    } else {
      for (auto& prefix : out) prefix += pattern[i];
      ++i;
    }
  }
  for (auto& s : out) {
    std::string tidy;
    for (char c : s) {
      if (c == ' ' && (tidy.empty() || tidy.back() == ' ')) continue;
      tidy += c;
    }
    while (!tidy.empty() && tidy.back() == ' ') tidy.pop_back();
    s = tidy;
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

bool PhraseAt(std::string_view lower, size_t pos, std::string_view phrase) {
  if (phrase.empty() || pos + phrase.size() > lower.size()) return false;
  if (lower.compare(pos, phrase.size(), phrase) != 0) return false;
  if (pos > 0 && IsWordChar(lower[pos - 1]) && IsWordChar(phrase.front())) return false;
  const size_t end = pos + phrase.size();
  return end == lower.size() || !IsWordChar(lower[end]) || !IsWordChar(phrase.back());
}

size_t FindPhrase(std::string_view lower, std::string_view phrase, size_t from) {
  for (size_t pos = lower.find(phrase, from); pos != std::string_view::npos; pos = lower.find(phrase, pos + 1)) {
    if (PhraseAt(lower, pos, phrase)) return pos;
  }
  return std::string_view::npos;
}

std::string_view WordAt(std::string_view s, size_t pos) {
  size_t end = pos;
  while (end < s.size() && IsWordChar(s[end])) ++end;
  return s.substr(pos, end - pos);
}

size_t CountWords(std::string_view s) {
  size_t n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool w = !IsAsciiSpace(c);
    if (w && !in_word) ++n;
    in_word = w;
  }
  return n;
}

// ---------------------------------------------------------------------------
// Clauses.

std::vector<Sentence> SplitSentences(std::string_view text) {
  std::vector<Sentence> out;
  size_t start = 0;
  auto emit = [&](size_t end, bool question) {
    const std::string_view s = TrimAsciiSpace(text.substr(start, end - start));
    if (!s.empty()) out.push_back({std::string(s), question});
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    bool boundary = false;
    if (c == '\n' || c == '!' || c == '?' || c == ';') {
      boundary = true;
    } else if (c == '.') {
      const bool at_end =
          i + 1 == text.size() || IsAsciiSpace(text[i + 1]) || text[i + 1] == '"' || text[i + 1] == ')';
      boundary = at_end && !IsAbbreviationBefore(text, i);
    }
    if (!boundary) {
      ++i;
      continue;
    }
    // A run of terminators ("?!", "...") ends one sentence.
    size_t j = i;
    bool question = false;
    while (j < text.size() && (text[j] == '.' || text[j] == '!' || text[j] == '?' || text[j] == ';' ||
                               text[j] == '\n')) {
      question = question || text[j] == '?';
      ++j;
    }
    emit(i, question);
    start = j;
    i = j;
  }
  emit(text.size(), false);
  return out;
}

std::vector<std::string> SplitClauses(std::string_view sentence) {
  const std::string lower = AsciiLower(sentence);
  std::vector<std::string> out;
  size_t start = 0;
  auto skip_spaces = [&](size_t p) {
    while (p < lower.size() && IsAsciiSpace(lower[p])) ++p;
    return p;
  };
  for (size_t i = 0; i < lower.size(); ++i) {
    size_t next = std::string::npos;  // where the next clause would start
    const char c = lower[i];
    size_t punct_end = std::string::npos;  // after , ; : " - " or an em dash
    if (c == ',' || c == ';' || c == ':') {
      punct_end = i + 1;
    } else if (c == '-' && i > 0 && lower[i - 1] == ' ' && i + 1 < lower.size() && lower[i + 1] == ' ') {
      punct_end = i + 1;
    } else if (lower.compare(i, 3, "\xE2\x80\x94") == 0) {
      punct_end = i + 3;
    }
    if (punct_end != std::string::npos) {
      next = skip_spaces(punct_end);
      // ", and I ..." -> the connective opens the next clause.
      size_t subject = next;
      if (InList(WordAt(lower, next), kConnectives)) subject = skip_spaces(next + WordAt(lower, next).size());
      if (!StartsClause(lower, subject, true)) next = std::string::npos;
    } else if (c == ' ' && InList(WordAt(lower, i + 1), kConnectives)) {
      const size_t subject = skip_spaces(i + 1 + WordAt(lower, i + 1).size());
      if (subject < lower.size() && StartsClause(lower, subject, false)) next = i + 1;
    }
    if (next == std::string::npos || next >= lower.size()) continue;
    out.emplace_back(TrimAsciiSpace(sentence.substr(start, i - start)));
    start = next;
    i = next - 1;
  }
  out.emplace_back(TrimAsciiSpace(sentence.substr(start)));
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) { return s.empty(); }), out.end());
  return out;
}

void Normalize(Clause* c) {
  c->TrimFront();
  for (bool changed = true; changed;) {
    changed = false;
    for (auto o : kOpeners) changed = c->StripLeading(o) || changed;
    for (auto h : kHedges) {
      if (c->StripLeading(h)) {
        c->hedged = true;
        changed = true;
      }
    }
  }
  for (std::string_view subject : {"i am ", "i'm ", "i "}) {
    if (c->lower.compare(0, subject.size(), subject) != 0) continue;
    for (bool changed = true; changed;) {
      changed = false;
      const std::string_view word = WordAt(c->lower, subject.size());
      if (word.empty() || subject.size() + word.size() >= c->lower.size()) break;
      const bool hedge = InList(word, kHedgeAdverbs);
      if (hedge || InList(word, kAdverbs)) {
        c->Erase(subject.size(), word.size() + 1);
        c->hedged = c->hedged || hedge;
        changed = true;
      }
    }
    break;
  }
  c->TrimBack();
  while (!c->text.empty() && (c->text.back() == '.' || c->text.back() == '!')) {
    c->text.pop_back();
    c->lower.pop_back();
  }
}

bool StartsWithAny(std::string_view lower, const std::string_view* list, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (PhraseAt(lower, 0, list[i])) return true;
  }
  return false;
}

std::string NormalizeQuotes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    // U+2018 / U+2019 -> ', U+201C / U+201D -> "
    if (i + 2 < text.size() && static_cast<unsigned char>(text[i]) == 0xE2 &&
        static_cast<unsigned char>(text[i + 1]) == 0x80) {
      const auto third = static_cast<unsigned char>(text[i + 2]);
      if (third == 0x98 || third == 0x99) {
        out += '\'';
        i += 2;
        continue;
      }
      if (third == 0x9C || third == 0x9D) {
        out += '"';
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace msp::rules
