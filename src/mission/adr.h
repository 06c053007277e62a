// Parsing one architecture decision record (Markdown) into its parts;
// ImportAdrFiles / ImportAdrDirectory (include/msp/mission.h) build decisions
// from them. Internal; pure (no I/O), so tests can feed odd files directly.
// The formats read (docs/mission.md has the full list):
//   - YAML front matter (--- ... ---): title, status, date (or created,
//     accepted, decided), deciders (or decision-makers, authors, author,
//     owners), superseded-by / supersedes (any of '-', '_' or camelCase;
//     a string, an inline [list] or a block list), tags, id, description;
//   - the title: the first level-1 heading (ATX or setext), else front
//     matter's title, else the file name; a leading number ("1.", "ADR-5:",
//     "ADR013:") becomes the ADR number; a tag such as "[superseded]",
//     "(Deprecated)" or "Superseded:" around it sets the status;
//   - "Key: value" lines before the first section (Nygard / adr-tools
//     "Date:", MADR 2 and log4brains "* Status:", "- Deciders:") and a
//     table whose header names Status / Date / Created (Backstage);
//   - sections (any heading level; names case-insensitive): Status, Context
//     (Context and Problem Statement, Problem, Background, ...), Decision
//     (Decision Outcome, ...), Consequences (Positive / Negative ...),
//     Alternatives (Considered Options, ...), Date. Every other section is
//     kept, with its heading, in `sections`: nothing is dropped;
//   - supersede written as a status ("Superseded by [..](f.md)"), a
//     sentence that starts a line anywhere ("This ADR has been superseded by
//     [ADR014](./adr014-use-fetch.md)", "Supersedes ADR-0002", also inside
//     Docusaurus ":::note" admonitions, "!!!" blocks and quotes), a front
//     matter key or a title tag.
// Errors (the caller prefixes the file): invalid UTF-8; front matter that is
// never closed; no text at all to take a decision from. Everything else is
// a warning: a missing section is filled from what the ADR has (its other
// sections, its introduction), an unknown status word is imported as
// proposed, an over-long part is split.
#ifndef MSP_MISSION_ADR_H_
#define MSP_MISSION_ADR_H_

#include <string>
#include <string_view>
#include <vector>

#include "msp/mission.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// A link from one ADR to another, as written: a file name (base name, no
// anchor, maybe without ".md": a Docusaurus id), a number ("ADR-0005"), or
// both (a Markdown link "[ADR014](./adr014-use-fetch.md)").
struct AdrLink {
  std::string file;
  int number = 0;
  std::string text;  // the line it was read from, for warnings
};

struct ParsedAdr {
  int number = 0;            // 0: none
  std::string title;
  DecisionStatus status = DecisionStatus::kProposed;
  bool status_given = false;
  std::vector<AdrLink> superseded_by;
  std::vector<AdrLink> supersedes;
  std::string context;
  std::string decision;
  std::string consequences;
  std::vector<Alternative> alternatives;
  std::vector<DecisionSection> sections;  // everything not mapped above
  std::string deciders;
  std::string id;            // front matter "id" (Docusaurus), for links
  TimeMs date = 0;           // 0: none written (the importer asks git)
  std::vector<std::string> warnings;  // without the file name
};

// Parses `text`, the content of the file named `file_name` (base name).
Result<ParsedAdr> ParseAdr(std::string_view file_name, std::string_view text);

// The ADR number a file name carries: "0005-x.md", "adr013-x.md",
// "ADR-0013_x.md" (0 when none; a leading date such as "20200926-x.md" is
// not a number).
int AdrNumberOfFileName(std::string_view file_name);

}  // namespace msp

#endif  // MSP_MISSION_ADR_H_
