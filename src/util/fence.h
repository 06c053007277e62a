// Fencing stored text where it reaches a model: the one routine every
// renderer (working memory, the query and handoff digests, the SessionStart
// digest, MCP results) uses so that a record's text is data, never the
// renderer's own structure or instructions (docs/access.md, "Stored text is
// data").
//
// An item is rendered as its label and then its text:
//   [fact · from tool · untrusted · id 0193…] the first line of the text
//     > every further line of it, behind the gutter
// FenceBody guarantees that no byte of stored text starts a rendered line:
// every line break stored text can carry (LF, CR, CRLF, VT, FF, NEL, U+2028,
// U+2029) becomes "\n" + gutter, invisible characters (zero-width, bidi
// controls, soft hyphen, BOM) are removed, other control characters become
// spaces. So a stored "\n== request ==" or "\n## Workflow" or "\n</persona>"
// shows as "  > == request ==", never as a header of the renderer.
#ifndef MSP_UTIL_FENCE_H_
#define MSP_UTIL_FENCE_H_

#include <string>
#include <string_view>
#include <vector>

namespace msp {

// The gutter in front of every further line of a fenced text.
inline constexpr std::string_view kFenceGutter = "  > ";

// True when `source` is one of `trusted_sources` (the setting
// policy.context_trusted_sources): its records are labelled "trusted", all
// others "untrusted".
bool IsTrustedSource(std::string_view source, const std::vector<std::string>& trusted_sources);

// What a label says of an item.
struct FenceLabel {
  std::string_view kind;    // fact, episode, decision, document, ...
  std::string_view source;  // user, tool, web, ingest, ... (empty: not shown)
  std::string_view id;      // the record id (empty: not shown)
  bool trusted = false;
};

// "[fact · from tool · untrusted · id 2c1d8a90]". The kind and source are
// passed through FenceLine (they are stored text too).
std::string FenceLabelText(const FenceLabel& label);

// The id a label shows where every token counts (working memory): the last
// 8 characters of a record id (a UUID's random end; a full UUID costs about
// 35 cl100k tokens, these about 6), the whole id when shorter.
std::string_view ShortId(std::string_view id);

// `text` made safe to follow a label (see the file comment): line breaks as
// "\n" + `gutter`, invisible characters removed, control characters as
// spaces, trailing whitespace of each line and trailing empty lines dropped.
// REQUIRES: `gutter` is not empty and does not end in a line break.
std::string FenceBody(std::string_view text, std::string_view gutter = kFenceGutter);

// `text` on one line: every line break as one space (runs of whitespace
// collapsed, ends trimmed), invisible characters removed, control
// characters as spaces.
std::string FenceLine(std::string_view text);

// JSON text for a model: U+2028, U+2029 and U+0085 (which JSON allows raw
// inside strings, and which read as line breaks) as \u escapes.
// REQUIRES: `json_text` is JSON text (the characters occur only in strings).
std::string EscapeJsonLineSeparators(std::string json_text);

}  // namespace msp

#endif  // MSP_UTIL_FENCE_H_
