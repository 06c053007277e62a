// Parsing one architecture decision record (Markdown, Nygard's format) into
// its parts; ImportAdrDirectory (include/msp/mission.h) builds decisions from
// them. Internal; pure (no I/O), so tests can feed odd files directly.
//
// What is read (headings case-insensitive, trailing ':' ignored):
//   "# [ADR[-_ ]]N[.:)-] Title"   the title (first level-1 heading; the
//                                 number is optional, else taken from the
//                                 file name's leading digits)
//   "Date: YYYY-MM-DD"            before the first section (adr-tools)
//   "Status: X", "Deciders: ..."  before the first section (some templates)
//   --- front matter ---          status:, date:, deciders: (MADR)
//   ## Status                     first word: proposed | draft | accepted |
//                                 approved | rejected | deprecated |
//                                 superseded; lines "Superseded by [..](f.md)"
//                                 and "Supersedes [..](f.md)" give links
//   ## Context (or "Context and Problem Statement", "Problem", "Background")
//   ## Decision (or "Decision Outcome")
//   ## Consequences
//   ## Alternatives (or "Rejected Alternatives", "Considered Options", ...):
//                                 list items "Option: reason",
//                                 "**Option** reason", "Option - reason"
// Headings inside fenced code blocks are text. Errors (the caller prefixes
// the file): no title; no Context or no Decision section (or empty); an
// unknown status word; invalid UTF-8. Warnings: no Status section (status
// proposed), no Consequences, ignored sections, alternatives without a
// reason, "Amends"/"Amended by" lines.
#ifndef MSP_MISSION_ADR_H_
#define MSP_MISSION_ADR_H_

#include <string>
#include <string_view>
#include <vector>

#include "msp/mission.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// A link from one ADR to another: a file name (base name, no anchor) or,
// when the text names no file ("Superseded by ADR-0005"), a number.
struct AdrLink {
  std::string file;
  int number = 0;
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
  std::string deciders;
  TimeMs date = 0;
  std::vector<std::string> warnings;  // without the file name
};

// Parses `text`, the content of the file named `file_name` (base name).
Result<ParsedAdr> ParseAdr(std::string_view file_name, std::string_view text);

}  // namespace msp

#endif  // MSP_MISSION_ADR_H_
