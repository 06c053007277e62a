// ParseAdr: one architecture decision record, as people write them (front
// matter, Nygard, adr-tools, MADR, log4brains, Docusaurus), into its parts.
// The formats are listed in adr.h; the text-level readers the parser uses
// (Markdown, status and supersede links, front matter, dates) are in
// adr_text.h.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "mission/adr.h"
#include "mission/adr_text.h"
#include "mission/records.h"
#include "util/text.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace adr_parse {
namespace {

// Collects the parts of one file.
class AdrParser {
 public:
  explicit AdrParser(std::string_view file_name) : file_name_(file_name) {}

  Result<ParsedAdr> Parse(std::string_view text);

 private:
  void ReadFrontMatter(const std::map<std::string, std::vector<std::string>>& fm);
  enum class Mark { kNone, kSupersededBy, kSupersedes };
  // Reads a supersede written in `plain`. In a status (`in_status`) the
  // phrase may stand anywhere on the line and "replaced by" / "replaces"
  // count too; elsewhere the line must start with it ("Superseded by ...",
  // "This ADR has been superseded by ...", "- Supersedes ...").
  Mark SupersedeLine(const std::string& plain, bool in_status);
  void HeaderLine(const std::string& line);
  void StatusText(const std::string& text, const std::string& where);
  void ParseAlternatives(const std::string& text);
  void StartSection(Section s, const std::string& heading, int level);
  void AddLine(const std::string& line);
  void Finish();
  std::string Fit(std::string text, size_t limit, const std::string& heading);

  std::string file_name_;
  ParsedAdr adr_;
  std::string fm_title_;
  std::string fm_status_;
  TimeMs fm_date_ = 0;
  std::string description_;
  std::string inline_status_;
  std::vector<std::string> intro_;        // text between the title and the first section
  std::map<Section, std::string> parts_;  // the mapped sections' text
  std::vector<DecisionSection> other_;    // unmapped sections
  Section current_ = Section::kNone;
  bool title_seen_ = false;
  std::string raw_title_;          // the first level-1 heading
  bool marked_superseded_ = false; // a supersede sentence or admonition
  bool marked_deprecated_ = false; // a ":::caution Deprecated" admonition
};

void AdrParser::ReadFrontMatter(const std::map<std::string, std::vector<std::string>>& fm) {
  auto first = [&](std::initializer_list<const char*> keys) -> std::string {
    for (const char* k : keys) {
      auto it = fm.find(k);
      if (it != fm.end() && !it->second.empty()) return Joined(it->second);
    }
    return "";
  };
  fm_title_ = first({"title"});
  fm_status_ = first({"status", "state", "adrstatus"});
  for (const char* k : {"date", "decisiondate", "accepted", "decided", "created", "createdat"}) {
    if (const std::string v = first({k}); !v.empty() && fm_date_ == 0) fm_date_ = DateIn(v);
  }
  adr_.deciders = first({"deciders", "decisionmakers", "decidedby", "authors", "author", "owners", "owner"});
  adr_.id = first({"id", "slug"});
  description_ = first({"description", "summary"});
  for (const char* k : {"supersededby", "replacedby"}) {
    if (auto it = fm.find(k); it != fm.end()) {
      for (const std::string& v : it->second) {
        for (AdrLink& l : FrontMatterLinks(v)) adr_.superseded_by.push_back(std::move(l));
      }
    }
  }
  for (const char* k : {"supersedes", "replaces"}) {
    if (auto it = fm.find(k); it != fm.end()) {
      for (const std::string& v : it->second) {
        for (AdrLink& l : FrontMatterLinks(v)) adr_.supersedes.push_back(std::move(l));
      }
    }
  }
  if (const std::string n = first({"number", "adr", "adrnumber"}); !n.empty()) {
    size_t used = 0;
    const int num = LeadingNumber(n, &used);
    if (used > 0) adr_.number = num;
  }
}

AdrParser::Mark AdrParser::SupersedeLine(const std::string& plain, bool in_status) {
  const std::string low = AsciiLower(plain);
  static const std::vector<std::string_view> kBy = {"superseded by", "superceded by", "superseeded by"};
  static const std::vector<std::string_view> kByStatus = {"superseded by", "superceded by", "superseeded by",
                                                          "replaced by"};
  static const std::vector<std::string_view> kOf = {"supersedes", "supercedes", "superseeds"};
  static const std::vector<std::string_view> kOfStatus = {"supersedes", "supercedes", "superseeds", "replaces"};
  // What may stand before the phrase outside a status: nothing, "Status:",
  // or "This ADR / decision / record ... (has been | is | was)".
  auto leading = [&](size_t pos) {
    if (in_status) return true;
    std::string before = Trim(low.substr(0, pos));
    while (!before.empty() && !std::isalnum(static_cast<unsigned char>(before.back()))) before.pop_back();
    if (before.empty() || before == "status" || before == "note" || before == "warning") return true;
    for (std::string_view subject : {"this adr", "this decision", "this record", "this document", "this page",
                                     "this proposal", "this architecture decision", "the decision", "this rfc",
                                     "note: this", "warning: this"}) {
      if (before.rfind(subject, 0) == 0) return before.size() < 80 && before.find('.') == std::string::npos;
    }
    return false;
  };
  size_t at = 0, after = 0;
  if (FindPhrase(low, in_status ? kByStatus : kBy, &at, &after) && leading(at)) {
    std::vector<AdrLink> links = LinksIn(std::string_view(plain).substr(after));
    if (links.empty()) {
      adr_.warnings.push_back("'" + CutChars(plain, 120) + "' looks like a supersede but names no ADR; not linked");
    }
    for (AdrLink& l : links) adr_.superseded_by.push_back(std::move(l));
    marked_superseded_ = true;
    return Mark::kSupersededBy;
  }
  if (FindPhrase(low, in_status ? kOfStatus : kOf, &at, &after) && leading(at)) {
    std::vector<AdrLink> links = LinksIn(std::string_view(plain).substr(after));
    if (links.empty()) {
      adr_.warnings.push_back("'" + CutChars(plain, 120) + "' looks like a supersede but names no ADR; not linked");
    }
    for (AdrLink& l : links) adr_.supersedes.push_back(std::move(l));
    return Mark::kSupersedes;
  }
  return Mark::kNone;
}

void AdrParser::StatusText(const std::string& text, const std::string& where) {
  // A status may be one word, a word with a date, or a history of them
  // ("Proposed 2020-01-02", then "Accepted 2020-02-03"): the last short
  // status line wins, else the first line that starts with a status word;
  // prose lines around them are ignored.
  std::optional<DecisionStatus> first, last_short;
  TimeMs first_date = 0, last_short_date = 0;
  bool superseded = false;
  std::string unknown;
  std::istringstream lines(text);
  for (std::string raw; std::getline(lines, raw);) {
    std::string line = Plain(raw);
    if (line.empty() || line.rfind("<!--", 0) == 0 || line.rfind(":::", 0) == 0) continue;
    if (StartsWithNoCase(line, "status:")) line = Trim(line.substr(7));
    // "~~Accepted~~ Superseded by ...": the struck-out word is history.
    for (size_t a = line.find("~~"); a != std::string::npos; a = line.find("~~")) {
      const size_t b = line.find("~~", a + 2);
      if (b == std::string::npos) break;
      line.erase(a, b + 2 - a);
      line = Trim(line);
    }
    if (line.empty()) continue;
    switch (SupersedeLine(line, /*in_status=*/true)) {
      case Mark::kSupersededBy:
        superseded = true;
        continue;
      case Mark::kSupersedes:
        continue;
      case Mark::kNone:
        break;
    }
    const std::string low = AsciiLower(line);
    if (StartsWithNoCase(low, "amends") || StartsWithNoCase(low, "amended by") ||
        StartsWithNoCase(low, "extends") || StartsWithNoCase(low, "extended by") ||
        StartsWithNoCase(low, "clarifies") || StartsWithNoCase(low, "clarified by")) {
      adr_.warnings.push_back("status line '" + line + "' is not a supersede link; ignored");
      continue;
    }
    // The first word, after any leading marks or emoji ("✅ Accepted").
    size_t i = 0;
    while (i < low.size() && !std::isalpha(static_cast<unsigned char>(low[i]))) ++i;
    std::string word;
    for (; i < low.size() && std::isalpha(static_cast<unsigned char>(low[i])); ++i) word.push_back(low[i]);
    // "In progress", "Under review", "Work in progress", "On hold".
    if (word == "in" || word == "under" || word == "work" || word == "on") word = "proposed";
    std::optional<DecisionStatus> st = StatusWord(word);
    if (!st) {
      if (unknown.empty()) unknown = line;
      continue;
    }
    const size_t words = static_cast<size_t>(std::count(line.begin(), line.end(), ' ')) + 1;
    if (!first) {
      first = st;
      first_date = DateIn(line);
    }
    if (words <= 6) {
      last_short = st;
      last_short_date = DateIn(line);
    }
  }
  if (superseded) {
    adr_.status = DecisionStatus::kSuperseded;
    adr_.status_given = true;
    return;
  }
  std::optional<DecisionStatus> chosen = last_short ? last_short : first;
  if (!chosen) {
    if (!unknown.empty()) {
      adr_.warnings.push_back("unknown status '" + CutChars(unknown, 80) + "' (" + where +
                              "); imported as proposed (known: proposed, accepted, rejected, deprecated, "
                              "superseded and their synonyms)");
      adr_.status = DecisionStatus::kProposed;
      adr_.status_given = true;
    }
    return;
  }
  adr_.status = *chosen;
  adr_.status_given = true;
  const TimeMs date = last_short ? last_short_date : first_date;
  if (adr_.date == 0) adr_.date = date;
}

void AdrParser::HeaderLine(const std::string& line) {
  const std::string p = Plain(line);
  const std::string low = AsciiLower(p);
  auto value_after = [&](std::string_view key) -> std::optional<std::string> {
    if (!StartsWithNoCase(low, key)) return std::nullopt;
    size_t i = key.size();
    while (i < p.size() && p[i] == ' ') ++i;
    if (i >= p.size() || p[i] != ':') return std::nullopt;
    return Trim(std::string_view(p).substr(i + 1));
  };
  if (auto v = value_after("date")) {
    if (adr_.date == 0) adr_.date = DateIn(*v);
  } else if (auto v2 = value_after("status")) {
    inline_status_ += *v2 + "\n";
  } else if (auto v3 = value_after("deciders")) {
    if (adr_.deciders.empty()) adr_.deciders = *v3;
  } else if (auto v4 = value_after("decision-makers")) {
    if (adr_.deciders.empty()) adr_.deciders = *v4;
  } else if (auto v5 = value_after("decision makers")) {
    if (adr_.deciders.empty()) adr_.deciders = *v5;
  } else if (auto v6 = value_after("decided by")) {
    if (adr_.deciders.empty()) adr_.deciders = *v6;
  } else if (auto v7 = value_after("authors")) {
    if (adr_.deciders.empty()) adr_.deciders = *v7;
  } else if (auto v8 = value_after("author")) {
    if (adr_.deciders.empty()) adr_.deciders = *v8;
  } else if (SupersedeLine(p, /*in_status=*/false) == Mark::kNone) {
    intro_.push_back(line);
  }
}

void AdrParser::ParseAlternatives(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream lines(text);
  bool in_fence = false;
  for (std::string raw; std::getline(lines, raw);) {
    const std::string t = Trim(raw);
    if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) in_fence = !in_fence;
    const bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    size_t used = 0;
    const int n = LeadingNumber(t, &used);
    const bool bullet = t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ';
    const bool numbered = used > 0 && n >= 0 && used < t.size() && (t[used] == '.' || t[used] == ')');
    std::string heading;
    if (!in_fence && AtxHeading(raw, &heading) > 0) {
      items.push_back(heading);  // "### Option 1: X"
    } else if (!in_fence && !indented && (bullet || numbered)) {
      items.push_back(Trim(bullet ? t.substr(2) : t.substr(used + 1)));
    } else if (!items.empty() && !t.empty()) {
      items.back() += " " + t;
    }
  }
  if (items.empty() && !Trim(text).empty()) {
    other_.push_back(DecisionSection{"Alternatives", Trim(text)});
    adr_.warnings.push_back("the alternatives section has no list items; kept as text");
    return;
  }
  bool cut = false;
  std::vector<std::string> no_reason;
  for (const std::string& item : items) {
    std::string option, reason;
    if (item.rfind("**", 0) == 0 && item.find("**", 2) != std::string::npos) {
      const size_t close = item.find("**", 2);
      option = item.substr(2, close - 2);
      reason = item.substr(close + 2);
    } else {
      size_t at = std::string::npos, len = 0;
      for (std::string_view sep : {std::string_view(": "), std::string_view(" \xE2\x80\x94 "),
                                   std::string_view(" \xE2\x80\x93 "), std::string_view(" - ")}) {
        const size_t i = item.find(sep);
        if (i != std::string::npos && i < at) {
          at = i;
          len = sep.size();
        }
      }
      option = at == std::string::npos ? item : item.substr(0, at);
      reason = at == std::string::npos ? "" : item.substr(at + len);
    }
    reason = Trim(reason);
    while (!reason.empty() && std::string_view(":-,").find(reason.front()) != std::string_view::npos) {
      reason = Trim(reason.substr(1));
    }
    option = Plain(option);
    if (Utf8Chars(option) > kMaxOptionChars) {
      option = CutChars(option, kMaxOptionChars - 1) + "\xE2\x80\xA6";
      cut = true;
    }
    if (option.empty()) continue;
    if (reason.empty()) {
      no_reason.push_back("'" + option + "'");
      reason = "(no reason given in the ADR)";
    }
    if (reason.size() > kMaxReasonBytes) {
      reason = CutAt(reason, kMaxReasonBytes - 3) + "\xE2\x80\xA6";
      cut = true;
    }
    if (adr_.alternatives.size() == kMaxAlternatives) {
      cut = true;
      break;
    }
    adr_.alternatives.push_back({option, reason});
  }
  if (no_reason.size() == 1) {
    adr_.warnings.push_back("alternative " + no_reason[0] + " gives no reason");
  } else if (!no_reason.empty()) {
    std::string names;
    for (const std::string& n : no_reason) names += (names.empty() ? "" : ", ") + n;
    adr_.warnings.push_back("alternatives " + names + " give no reason");
  }
  if (cut) {
    // The list did not fit the alternatives' limits: the section is kept
    // whole as well.
    other_.push_back(DecisionSection{"Alternatives", Trim(text)});
    adr_.warnings.push_back("the alternatives exceed the limits (32 items, 200-character options, 2,000-byte "
                            "reasons); the section is also kept whole");
  }
}

void AdrParser::StartSection(Section s, const std::string& full_heading, int level) {
  const std::string heading = CutChars(full_heading, kMaxSectionHeadingChars);
  if (s == Section::kOther) {
    other_.push_back(DecisionSection{heading, ""});
  } else if (parts_.count(s) > 0 && !Trim(parts_[s]).empty()) {
    // A second part ("Positive Consequences" after "Negative
    // Consequences"): joined under its heading.
    parts_[s] += "\n" + std::string(static_cast<size_t>(std::max(level, 3)), '#') + " " + heading + "\n";
  } else {
    parts_[s];
  }
  current_ = s;
}

void AdrParser::AddLine(const std::string& line) {
  if (current_ == Section::kNone) {
    if (!line.empty() || !intro_.empty()) intro_.push_back(line);
  } else if (current_ == Section::kOther) {
    other_.back().text += line + "\n";
  } else {
    parts_[current_] += line + "\n";
  }
}

std::string AdrParser::Fit(std::string text, size_t limit, const std::string& heading) {
  if (text.size() <= limit) return text;
  std::string head = CutAt(text, limit - 4);
  // Cut at the last paragraph or line break when there is one.
  if (size_t nl = head.rfind("\n\n"); nl != std::string::npos && nl > limit / 2) head.resize(nl);
  other_.push_back(DecisionSection{heading + " (continued)", Trim(std::string_view(text).substr(head.size()))});
  adr_.warnings.push_back("section '" + heading + "' is " + std::to_string(text.size()) + " bytes, over its " +
                          std::to_string(limit) + "-byte field; the rest is kept as '" + heading + " (continued)'");
  return Trim(head) + "\n\xE2\x80\xA6";
}

Result<ParsedAdr> AdrParser::Parse(std::string_view text) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) return Status::InvalidArgument("invalid UTF-8 at byte " + std::to_string(bad));
  if (text.find('\0') != std::string_view::npos) return Status::InvalidArgument("a NUL byte: not a text file");
  std::vector<std::string> lines;
  {
    std::string cur;
    bool control = false;
    for (char c : text) {
      if (c == '\r') continue;
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
        c = ' ';  // a form feed or escape would fail the record's checks
        control = true;
      }
      if (c == '\n') {
        lines.push_back(std::move(cur));
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    if (!cur.empty()) lines.push_back(std::move(cur));
    if (control) adr_.warnings.push_back("control characters (other than tab and line ends) read as spaces");
  }

  size_t i = 0;
  while (i < lines.size() && Trim(lines[i]).empty()) ++i;
  if (i < lines.size() && Trim(lines[i]) == "---") {
    size_t end = i + 1;
    while (end < lines.size() && Trim(lines[end]) != "---" && Trim(lines[end]) != "...") ++end;
    if (end == lines.size()) {
      return Status::InvalidArgument("the front matter opened by '---' on line " + std::to_string(i + 1) +
                                     " is never closed (a '---' line ends it)");
    }
    ReadFrontMatter(FrontMatter(std::vector<std::string>(lines.begin() + static_cast<long>(i) + 1,
                                                         lines.begin() + static_cast<long>(end))));
    i = end + 1;
  }

  bool in_fence = false;
  std::string fence;
  bool in_admonition = false;
  std::string pending_table_header;
  for (; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string t = Trim(line);
    if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) {
      const std::string mark = t.substr(0, 3);
      if (!in_fence) {
        in_fence = true;
        fence = mark;
      } else if (mark == fence) {
        in_fence = false;
      }
      AddLine(line);
      continue;
    }
    if (in_fence) {
      AddLine(line);
      continue;
    }
    // Docusaurus ":::note Superseded" ... ":::" and MkDocs "!!! warning":
    // supersede sentences inside count; the text is kept.
    if (t.rfind(":::", 0) == 0) {
      in_admonition = t.size() > 3;
      const std::string label = AsciiLower(t.substr(3));
      if (label.find("supersed") != std::string::npos || label.find("superced") != std::string::npos) {
        marked_superseded_ = true;
      } else if (label.find("deprecat") != std::string::npos) {
        marked_deprecated_ = true;
      }
      AddLine(line);
      continue;
    }
    std::string heading;
    int level = AtxHeading(line, &heading);
    if (level == 0 && i + 1 < lines.size() && !t.empty() && t[0] != '|' && t[0] != '-' && t[0] != '*' &&
        SetextLevel(lines[i + 1]) > 0 && !in_admonition) {
      level = SetextLevel(lines[i + 1]);
      heading = t;
      ++i;  // the underline
    }
    if (level > 0) {
      std::string name = SectionName(heading);
      // "## Status: Accepted", "## Date - 2020-01-02", "## Decision: UEI is
      // required": a section with its value in the heading.
      std::string value;
      for (std::string_view key : {std::string_view("status"), std::string_view("date"), std::string_view("deciders"),
                                   std::string_view("decision"), std::string_view("context")}) {
        if (name.size() > key.size() && name.compare(0, key.size(), key) == 0 &&
            (name[key.size()] == ':' || name.compare(key.size(), 3, " - ") == 0)) {
          const std::string plain = Plain(heading);
          value = Trim(std::string_view(plain).substr(std::min(plain.size(), key.size() + 1)));
          while (!value.empty() && (value[0] == '-' || value[0] == ':' || value[0] == ' ')) value.erase(0, 1);
          name = std::string(key);
          break;
        }
      }
      const Section s = SectionOf(name);
      // The title: the first level-1 heading before any section (unless
      // the front matter gives the title and this one names a section).
      if (level == 1 && !title_seen_ && current_ == Section::kNone &&
          (fm_title_.empty() || s == Section::kOther)) {
        raw_title_ = Plain(heading);
        title_seen_ = true;
        continue;
      }
      if (s != Section::kOther || level <= 2) {
        StartSection(s, Plain(heading), level);
        if (!value.empty()) AddLine(value);
        continue;
      }
      AddLine(line);  // a sub-heading of the current section
      continue;
    }
    const std::string p = Plain(line);
    if (current_ == Section::kNone) {
      // Before the first section: metadata lines and tables.
      if (t.size() > 1 && t[0] == '|') {
        std::vector<std::string> cells;
        std::istringstream row(t.substr(1));
        for (std::string cell; std::getline(row, cell, '|');) cells.push_back(AsciiLower(Plain(cell)));
        const bool rule = std::all_of(t.begin(), t.end(), [](char c) { return c == '|' || c == '-' || c == ':' || c == ' '; });
        if (rule) continue;
        if (pending_table_header.empty()) {
          pending_table_header = t;
        } else {
          std::vector<std::string> keys;
          std::istringstream head(pending_table_header.substr(1));
          for (std::string cell; std::getline(head, cell, '|');) keys.push_back(AsciiLower(Plain(cell)));
          std::istringstream values(t.substr(1));
          size_t k = 0;
          for (std::string cell; std::getline(values, cell, '|'); ++k) {
            if (k >= keys.size()) break;
            const std::string v = Plain(cell);
            if (keys[k] == "status" || keys[k] == "state") {
              inline_status_ += v + "\n";
            } else if (keys[k] == "date" || keys[k] == "created" || keys[k] == "decided" || keys[k] == "accepted") {
              if (adr_.date == 0) adr_.date = DateIn(v);
            } else if (keys[k] == "deciders" || keys[k] == "decision makers" || keys[k] == "authors" ||
                       keys[k] == "author" || keys[k] == "owner") {
              if (adr_.deciders.empty()) adr_.deciders = v;
            }
          }
        }
        continue;
      }
      pending_table_header.clear();
      if (!t.empty() && (in_admonition || t[0] == '>')) {
        SupersedeLine(p, /*in_status=*/false);
        intro_.push_back(line);
        continue;
      }
      HeaderLine(line);
      continue;
    }
    // Inside a section: a supersede sentence that starts a line counts
    // anywhere ("- Supersedes [..](..)" in log4brains' Links).
    if (current_ != Section::kStatus && !p.empty()) SupersedeLine(p, /*in_status=*/false);
    AddLine(line);
  }
  Finish();
  if (adr_.context.empty() && adr_.decision.empty()) {
    return Status::InvalidArgument(
        "no text to take a decision from: no Context or Decision section, no other section and no text "
        "after the title");
  }
  return std::move(adr_);
}

void AdrParser::Finish() {
  // Title: the first level-1 heading, else front matter, else the file
  // name. A status tag in it is read first, then its number.
  std::string title = title_seen_ ? raw_title_ : fm_title_;
  std::optional<DecisionStatus> title_status;
  if (!title.empty()) {
    title_status = TitleTag(&title, &adr_.superseded_by);
    int n = 0;
    SplitTitle(title, &n, &title);
    if (adr_.number == 0) adr_.number = n;
  }
  if (title.empty()) {
    std::string stem(file_name_);
    if (size_t dot = stem.rfind('.'); dot != std::string::npos) stem.resize(dot);
    size_t used = 0;
    std::string rest = stem;
    if (StartsWithNoCase(rest, "adr")) rest = rest.substr(3);
    while (!rest.empty() && (rest[0] == '-' || rest[0] == '_')) rest.erase(0, 1);
    LeadingNumber(rest, &used);
    rest = rest.substr(used);
    for (char& c : rest) {
      if (c == '-' || c == '_') c = ' ';
    }
    title = Trim(rest);
    if (title.empty()) title = stem;
    if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
    adr_.warnings.push_back("no title (no level-1 heading, no front matter title); titled '" + title +
                            "' after the file name");
  }
  if (Utf8Chars(title) > kMaxTitleChars) {
    other_.insert(other_.begin(), DecisionSection{"Title", title});
    adr_.warnings.push_back("the title is longer than 200 characters; cut (kept whole as section 'Title')");
    title = CutChars(title, kMaxTitleChars - 1) + "\xE2\x80\xA6";
  }
  // One line, no control characters.
  for (char& c : title) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  adr_.title = Trim(title);
  if (adr_.number == 0) adr_.number = AdrNumberOfFileName(file_name_);

  // Status: front matter, else the Status section, else a "Status:" line
  // (or table cell), else a title tag. A supersede (a successor named
  // anywhere, a "Superseded" admonition or title tag) makes it superseded.
  if (!fm_status_.empty()) StatusText(fm_status_, "front matter");
  if (!adr_.status_given && parts_.count(Section::kStatus) && !Trim(parts_[Section::kStatus]).empty()) {
    StatusText(parts_[Section::kStatus], "Status section");
  }
  if (!adr_.status_given && !inline_status_.empty()) StatusText(inline_status_, "Status line");
  if (!adr_.status_given && title_status) {
    adr_.status = *title_status;
    adr_.status_given = true;
  }
  if (!adr_.status_given && marked_deprecated_) {
    adr_.status = DecisionStatus::kDeprecated;
    adr_.status_given = true;
  }
  if (marked_superseded_ || title_status == DecisionStatus::kSuperseded || !adr_.superseded_by.empty()) {
    adr_.status = DecisionStatus::kSuperseded;
    adr_.status_given = true;
  }
  if (!adr_.status_given) {
    adr_.warnings.push_back("no status; imported as proposed");
    adr_.status = DecisionStatus::kProposed;
  }

  // A Deciders section: its lines (list markers off), joined.
  if (adr_.deciders.empty() && parts_.count(Section::kDeciders)) {
    std::istringstream in(parts_[Section::kDeciders]);
    for (std::string l; std::getline(in, l);) {
      const std::string p = Plain(l);
      if (!p.empty()) adr_.deciders += (adr_.deciders.empty() ? "" : ", ") + p;
    }
  }

  // Date: front matter, else the header lines / status / Date section.
  if (fm_date_ != 0) adr_.date = fm_date_;
  if (adr_.date == 0 && parts_.count(Section::kDate)) adr_.date = DateIn(parts_[Section::kDate]);
  if (adr_.date == 0) {
    size_t used = 0;
    const int n = LeadingNumber(file_name_, &used);
    if (LooksLikeDateNumber(n, used)) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d", n / 10000, n / 100 % 100, n % 100);
      Result<TimeMs> t = ParseIso8601(buf);
      if (t.ok()) adr_.date = *t;
    } else if (file_name_.size() >= 10) {
      const TimeMs t = DateIn(std::string_view(file_name_).substr(0, 10));
      if (t != 0) adr_.date = t;
    }
  }
  if (Utf8Chars(adr_.deciders) > kMaxLineChars) adr_.deciders = CutChars(adr_.deciders, kMaxLineChars - 1) + "\xE2\x80\xA6";
  for (char& c : adr_.deciders) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }

  if (parts_.count(Section::kAlternatives)) ParseAlternatives(parts_[Section::kAlternatives]);
  // The introduction (text between the title and the first section) is
  // kept first among the other parts.
  std::string intro;
  for (const std::string& l : intro_) intro += l + "\n";
  intro = Trim(intro);
  std::vector<DecisionSection> others;
  if (!intro.empty()) others.push_back(DecisionSection{"", intro});
  for (DecisionSection& s : other_) {
    s.text = Trim(s.text);
    if (!s.text.empty() || !s.heading.empty()) others.push_back(std::move(s));
  }
  other_.clear();

  adr_.context = Trim(parts_[Section::kContext]);
  adr_.decision = Trim(parts_[Section::kDecision]);
  adr_.consequences = Trim(parts_[Section::kConsequences]);

  // A missing Context or Decision is filled from what the ADR has: the
  // front matter description or the introduction for the context, the
  // first other section (or the introduction) for the decision.
  auto take = [&](std::string* field, const char* name, bool prefer_intro) {
    if (!field->empty()) return;
    // Lists of links and notes say nothing of the context or decision.
    auto unfit = [](const DecisionSection& sec) {
      const std::string h = AsciiLower(sec.heading);
      return sec.text.empty() || h == "links" || h == "references" || h == "see also" || h == "more information" ||
             h == "notes" || h == "related" || h == "related decisions" || h == "related adrs";
    };
    size_t pick = others.size();
    for (size_t k = 0; k < others.size(); ++k) {
      const bool is_intro = others[k].heading.empty();
      if (unfit(others[k])) continue;
      if (prefer_intro ? is_intro : !is_intro) {
        pick = k;
        break;
      }
    }
    if (pick == others.size()) {
      for (size_t k = 0; k < others.size(); ++k) {
        if (!unfit(others[k])) {
          pick = k;
          break;
        }
      }
    }
    if (pick == others.size()) return;
    const std::string from = others[pick].heading.empty() ? "the text after the title" : "section '" + others[pick].heading + "'";
    *field = others[pick].text;
    adr_.warnings.push_back(std::string("no ") + name + " section; " + name + " taken from " + from);
    others.erase(others.begin() + static_cast<long>(pick));
  };
  if (adr_.context.empty() && !description_.empty() && !adr_.decision.empty()) {
    adr_.context = description_;
    adr_.warnings.push_back("no Context section; context taken from the front matter description");
  }
  take(&adr_.decision, "Decision", /*prefer_intro=*/false);
  if (adr_.context.empty() && !description_.empty()) {
    adr_.context = description_;
    adr_.warnings.push_back("no Context section; context taken from the front matter description");
  }
  take(&adr_.context, "Context", /*prefer_intro=*/true);
  if (adr_.context.empty() && !adr_.decision.empty()) {
    adr_.context = "(no context given in the ADR)";
    adr_.warnings.push_back("no Context section and nothing to take it from");
  }
  if (adr_.decision.empty() && !adr_.context.empty()) {
    adr_.decision = "(no decision text in the ADR; see its sections)";
    adr_.warnings.push_back("no Decision section and nothing to take it from");
  }
  if (adr_.consequences.empty()) adr_.warnings.push_back("no Consequences section");
  other_ = std::move(others);
  adr_.context = Fit(adr_.context, kMaxContextBytes, "Context");
  adr_.decision = Fit(adr_.decision, kMaxDecisionBytes, "Decision");
  adr_.consequences = Fit(adr_.consequences, kMaxConsequencesBytes, "Consequences");
  adr_.sections = std::move(other_);
}

}  // namespace
}  // namespace adr_parse

int AdrNumberOfFileName(std::string_view file_name) {
  std::string_view s = file_name;
  using adr_parse::StartsWithNoCase;
  using adr_parse::LeadingNumber;
  if (StartsWithNoCase(s, "adr")) {
    s.remove_prefix(3);
    while (!s.empty() && (s[0] == '-' || s[0] == '_' || s[0] == ' ')) s.remove_prefix(1);
  }
  size_t used = 0;
  const int n = LeadingNumber(s, &used);
  if (used == 0 || adr_parse::LooksLikeDateNumber(n, used)) return 0;
  // "2020-05-17-x.md" is a date, not ADR 2020.
  if (used == 4 && s.size() >= 10 && adr_parse::DateIn(s.substr(0, 10)) != 0) return 0;
  return n;
}

Result<ParsedAdr> ParseAdr(std::string_view file_name, std::string_view text) {
  adr_parse::AdrParser parser(file_name);
  return parser.Parse(text);
}

}  // namespace msp
