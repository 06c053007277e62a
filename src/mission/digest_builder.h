// Cutting a Markdown digest to a token budget: the one packing routine of the
// query digest and the handoff digest.
//
// A digest is a title, sections (a heading and entries) and a footer. Entries
// come in priority order (the most wanted first); the builder takes them in
// that order and keeps each one whose addition leaves the WHOLE rendered
// digest (title, headings, entries, footer) within the budget, skipping the
// ones that do not fit (a smaller, lower entry may still fit after a larger
// one was left out). Kept entries are shown in their section, sections in
// their given order, and within a section by `order` (ties: priority order);
// a section with no kept entry is not shown.
//
// Every count is TokenCounter::Count of the complete text, never a sum of
// parts, so the result holds whatever the counter does at the seams.
//
// When not even the first entry fits whole, the builder shows as much of its
// text as fits (cut at a UTF-8 character boundary, marked with "…") and
// flags it truncated. When the title and footer alone are over the budget,
// the digest falls back to the footer alone, then to the empty text (0
// tokens): the result is never over the budget, a budget of 0 included.
#ifndef MSP_MISSION_DIGEST_BUILDER_H_
#define MSP_MISSION_DIGEST_BUILDER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "working/tokens.h"

namespace msp {

// One entry: rendered as head + text + tail (text may be cut, head and tail
// never are). Its lines end without a newline; the builder adds them.
struct DigestItem {
  size_t section = 0;  // index into DigestLayout::sections
  std::string head;    // e.g. "- [0.82] "
  std::string text;    // the part that may be cut when nothing else fits
  std::string tail;    // e.g. "\n  provenance: commit abc123 · id ..."
  size_t order = 0;    // display position within the section (0 for all: priority order)
};

// What the footer may say.
struct DigestTally {
  size_t shown = 0;      // entries shown (a truncated one included)
  size_t left_out = 0;   // entries not shown
  size_t truncated = 0;  // entries shown cut (0 or 1)
  size_t tokens = 0;     // tokens of the whole digest, footer included
  size_t budget = 0;
};

struct DigestLayout {
  std::string title;                  // lines before the sections; may be empty
  std::vector<std::string> sections;  // headings, e.g. "## Workflow"
  std::vector<DigestItem> items;      // in priority order
  // The footer for a tally; it may state tally.tokens (the builder finds the
  // count that includes the footer itself). Empty function: no footer.
  std::function<std::string(const DigestTally&)> footer;
  // The footer when nothing else fits (the title and sections dropped);
  // empty function: the normal footer.
  std::function<std::string(const DigestTally&)> short_footer;
};

enum class DigestForm {
  kFull,        // title, sections, footer
  kFooterOnly,  // the title and footer did not fit with no entries
  kEmpty,       // not even the short footer fit
};

struct BuiltDigest {
  std::string markdown;
  size_t tokens = 0;                 // Count(markdown) <= budget
  std::vector<bool> shown;           // parallel to DigestLayout::items
  std::vector<size_t> item_tokens;   // Count of each shown item's lines (0 if not shown)
  int truncated_item = -1;           // the index of the cut item, or -1
  std::string truncated_text;        // its text as shown (ending in "…")
  DigestTally tally;
  DigestForm form = DigestForm::kFull;
};

// Packs `layout` into `budget` tokens as described above.
// REQUIRES: every item's section < layout.sections.size().
BuiltDigest BuildDigest(const DigestLayout& layout, size_t budget, const TokenCounter& counter);

// `text` cut to at most `max_chars` code points (never inside a UTF-8
// sequence); exposed for tests.
std::string CutUtf8(const std::string& text, size_t max_chars);

// The number of code points of valid UTF-8 `text` (continuation bytes are not
// counted).
size_t CountCodePoints(const std::string& text);

}  // namespace msp

#endif  // MSP_MISSION_DIGEST_BUILDER_H_
