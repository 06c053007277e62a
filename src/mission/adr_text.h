// The text-level readers ParseAdr (adr_parse.cc) is built from: Markdown
// lines, headings and titles (adr_markdown.cc), status words and supersede
// links (adr_status.cc), front matter and dates (adr_front_matter.cc).
// Internal to mission/; pure functions, no I/O.
#ifndef MSP_MISSION_ADR_TEXT_H_
#define MSP_MISSION_ADR_TEXT_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mission/adr.h"
#include "msp/mission.h"
#include "msp/types.h"

namespace msp::adr_parse {

// ---- Markdown: lines, numbers, titles, headings, sections (adr_markdown.cc)

// True when `s` starts with lowercase `prefix`, case aside (ASCII).
bool StartsWithNoCase(std::string_view s, std::string_view prefix);

// `s` without leading and trailing ASCII white space.
std::string Trim(std::string_view s);

// Removes a leading list marker or quote marker, then Markdown emphasis ('*',
// '_' around words) and code ('`') markers.
std::string Plain(std::string_view line);

// The leading decimal number of `s` (0 when none); *used gets its length.
int LeadingNumber(std::string_view s, size_t* used);

// An 8-digit number that reads as a date (20200926): a log4brains file name.
bool LooksLikeDateNumber(int n, size_t digits);

// "1. Record decisions", "ADR-0005: Use X", "ADR 5 - Use X" -> number, title.
void SplitTitle(const std::string& heading, int* number, std::string* title);

enum class Section { kNone, kStatus, kContext, kDecision, kConsequences, kAlternatives, kDate, kDeciders, kOther };

// The section a lowercased heading name stands for (kOther when none).
Section SectionOf(const std::string& name);

// A heading as a section name: plain, lowercased, without "1." or ":".
std::string SectionName(std::string_view heading);

// A heading line: "## Name" (level 1..6) -> level and text; 0 when not.
int AtxHeading(std::string_view line, std::string* text);

// A setext underline ("===" or "---", at least 3).
int SetextLevel(std::string_view line);

// The first of `phrases` in `low`: *at its position, *after the position
// after it.
bool FindPhrase(const std::string& low, const std::vector<std::string_view>& phrases, size_t* at,
                size_t* after);

// The non-empty `values` joined with ", ".
std::string Joined(const std::vector<std::string>& values);

// Cuts `s` to at most `max_bytes` at a character boundary.
std::string CutAt(std::string_view s, size_t max_bytes);

// Cuts `s` to at most `max_chars` characters.
std::string CutChars(std::string_view s, size_t max_chars);

// ---- status and supersede links (adr_status.cc)

// The file a link target names: its base name, without anchor or query;
// "../0005-x/index.md" names the folder ("0005-x").
std::string BaseName(std::string target);

// The number an ADR reference names: "ADR014", "ADR-0005", "adr 12", "#12".
int NumberIn(std::string_view text);

// Every ADR reference in `line`: Markdown links "[text](target)" (the file
// and the number the text or target names), else bare "*.md" words, else
// "ADR-N" numbers.
std::vector<AdrLink> LinksIn(std::string_view line);

// A front matter value naming an ADR: "0005-x.md", "./0005-x.md",
// "ADR-0005", "5", "adrs-adr005" (a Docusaurus id).
std::vector<AdrLink> FrontMatterLinks(const std::string& v);

// The status a lowercased word names ("accepted", "draft", "obsolete", ...).
std::optional<DecisionStatus> StatusWord(const std::string& word);

// A tag in the title: "[Superseded]", "(deprecated)", "Superseded:",
// "[superseded by ADR-5]". Removes it and returns the status it names.
std::optional<DecisionStatus> TitleTag(std::string* title, std::vector<AdrLink>* superseded_by);

// ---- front matter and dates (adr_front_matter.cc)

// Minimal YAML front matter: top-level "key: value" pairs; a value may be
// quoted, an inline list "[a, b]", a block list ("- a" lines under it) or a
// block scalar ("|" / ">"). Keys are lowered, with '-', '_' and camelCase
// folded ("superseded-by", "superseded_by", "supersededBy" ->
// "supersededby"). Comments and nested maps are skipped.
std::map<std::string, std::vector<std::string>> FrontMatter(const std::vector<std::string>& lines);

// A date in `s`: YYYY-MM-DD, YYYY/MM/DD, YYYY.MM.DD (optionally with a time
// after it, ignored), "May 17, 2020" or "17 May 2020"; 0 when none.
TimeMs DateIn(std::string_view s);

}  // namespace msp::adr_parse

#endif  // MSP_MISSION_ADR_TEXT_H_
