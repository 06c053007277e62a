// Cutting a Markdown digest to a token budget: the one packing routine of the
// query digest and the handoff digest.
//
// A digest is a title, sections (a heading and entries) and a footer. Entries
// come in priority order (the most wanted first). The builder takes them in
// that order, and the entries it shows are always a prefix of that order: a
// lower entry is never shown in place of a higher one (seed 003: the lowest
// ranked are cut). Each entry is shown whole when the WHOLE rendered digest
// (title, headings, entries, footer) still fits; else as an excerpt (its
// `excerpt`, or the start of its text, with `excerpt_tail` pointing at the
// full record), cut further at a character boundary and marked "…" when even
// that does not fit; when not even kMinExcerptChars of it fit, the entry and
// every lower one are left out. Kept entries are shown in their section,
// sections in their given order, and within a section by `order` (ties:
// priority order); a section with no kept entry is not shown.
//
// Every count is TokenCounter::Count of the complete text, never a sum of
// parts, so the result holds whatever the counter does at the seams.
//
// When the title and footer alone are over the budget, the digest falls back
// to the footer alone, then to the empty text (0 tokens): the result is never
// over the budget, a budget of 0 included.
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
  std::string text;    // the whole entry's text
  std::string tail;    // e.g. "\n  provenance: commit abc123 · id ..."
  size_t order = 0;    // display position within the section (0 for all: priority order)
  // When the whole does not fit: the passage to show instead (empty: the
  // start of `text`), and the tail then (empty: `tail`), e.g. one that says
  // it is an excerpt and where the full record is.
  std::string excerpt;
  std::string excerpt_tail;
};

// The fewest characters of an excerpt worth showing.
inline constexpr size_t kMinExcerptChars = 24;

// What the footer may say.
struct DigestTally {
  size_t shown = 0;      // entries shown (excerpts included)
  size_t left_out = 0;   // entries not shown
  size_t truncated = 0;  // entries shown as excerpts
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
  std::vector<bool> shown;           // parallel to DigestLayout::items; a prefix
  std::vector<bool> excerpt;         // shown as an excerpt
  std::vector<std::string> shown_text;  // the text as shown ("" when not shown)
  std::vector<size_t> item_tokens;   // Count of each shown item's lines (0 if not shown)
  DigestTally tally;
  DigestForm form = DigestForm::kFull;
};

// Packs `layout` into `budget` tokens as described above.
// REQUIRES: every item's section < layout.sections.size().
BuiltDigest BuildDigest(const DigestLayout& layout, size_t budget, const TokenCounter& counter);

}  // namespace msp

#endif  // MSP_MISSION_DIGEST_BUILDER_H_
