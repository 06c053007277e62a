// ADR import: Nygard-format Markdown files -> decision records.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "mission/access.h"
#include "mission/adr.h"
#include "mission/records.h"
#include "msp/mission.h"
#include "util/text.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxAdrBytes = 1 << 20;

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && AsciiLower(s.substr(0, prefix.size())) == prefix;
}

// Removes Markdown emphasis ('*') and code ('`') markers and a leading list
// marker.
std::string Plain(std::string_view line) {
  std::string s(TrimAsciiSpace(line));
  if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ') {
    s = std::string(TrimAsciiSpace(s.substr(2)));
  }
  std::string out;
  for (char c : s) {
    if (c != '*' && c != '`') out.push_back(c);
  }
  return std::string(TrimAsciiSpace(out));
}

// The leading decimal number of `s` (0 when none); *used gets its length.
int LeadingNumber(std::string_view s, size_t* used) {
  size_t i = 0;
  int n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i < 9) {
    n = n * 10 + (s[i] - '0');
    ++i;
  }
  *used = i;
  return n;
}

// "1. Record decisions", "ADR-0005: Use X", "ADR 5 - Use X" -> number, title.
void SplitTitle(const std::string& heading, int* number, std::string* title) {
  std::string s(TrimAsciiSpace(heading));
  size_t i = 0;
  if (StartsWithNoCase(s, "adr")) {
    i = 3;
    while (i < s.size() && (s[i] == '-' || s[i] == '_' || s[i] == ' ' || s[i] == '#')) ++i;
  }
  size_t used = 0;
  const int n = LeadingNumber(std::string_view(s).substr(i), &used);
  if (used == 0) {
    *number = 0;
    *title = s;
    return;
  }
  size_t j = i + used;
  // The number must end at a separator, else it is part of the title
  // ("3D printing").
  if (j < s.size() && std::string_view(".:)- ").find(s[j]) == std::string_view::npos &&
      static_cast<unsigned char>(s[j]) < 0x80) {
    *number = 0;
    *title = s;
    return;
  }
  while (j < s.size() && (std::string_view(".:)- ").find(s[j]) != std::string_view::npos)) ++j;
  // Em and en dashes (UTF-8) as separators.
  for (std::string_view dash : {std::string_view("\xE2\x80\x94"), std::string_view("\xE2\x80\x93")}) {
    if (s.compare(j, dash.size(), dash) == 0) {
      j += dash.size();
      while (j < s.size() && s[j] == ' ') ++j;
    }
  }
  std::string rest(TrimAsciiSpace(std::string_view(s).substr(j)));
  *number = n;
  *title = rest.empty() ? s : rest;
}

// Every link target in `line`: Markdown links "[..](target)", else bare
// "*.md" words, else "ADR-N" / "ADR N" numbers.
std::vector<AdrLink> LinksIn(std::string_view line) {
  std::vector<AdrLink> out;
  auto base_of = [](std::string target) {
    if (size_t hash = target.find('#'); hash != std::string::npos) target.resize(hash);
    if (size_t slash = target.find_last_of('/'); slash != std::string::npos) target = target.substr(slash + 1);
    return std::string(TrimAsciiSpace(target));
  };
  for (size_t at = line.find("]("); at != std::string_view::npos; at = line.find("](", at + 2)) {
    const size_t close = line.find(')', at + 2);
    if (close == std::string_view::npos) break;
    std::string target = base_of(std::string(line.substr(at + 2, close - at - 2)));
    if (!target.empty()) out.push_back({target, 0});
  }
  if (!out.empty()) return out;
  std::istringstream words{std::string(line)};
  for (std::string w; words >> w;) {
    while (!w.empty() && std::string_view(".,;)").find(w.back()) != std::string_view::npos) w.pop_back();
    if (w.size() > 3 && AsciiLower(w.substr(w.size() - 3)) == ".md") out.push_back({base_of(w), 0});
  }
  if (!out.empty()) return out;
  const std::string low = AsciiLower(line);
  for (size_t at = low.find("adr"); at != std::string::npos; at = low.find("adr", at + 3)) {
    size_t i = at + 3;
    while (i < low.size() && (low[i] == '-' || low[i] == ' ' || low[i] == '#' || low[i] == '_')) ++i;
    size_t used = 0;
    const int n = LeadingNumber(std::string_view(low).substr(i), &used);
    if (used > 0) out.push_back({"", n});
  }
  return out;
}

std::optional<DecisionStatus> StatusWord(const std::string& word) {
  static const std::map<std::string, DecisionStatus> words = {
      {"proposed", DecisionStatus::kProposed},     {"draft", DecisionStatus::kProposed},
      {"pending", DecisionStatus::kProposed},      {"accepted", DecisionStatus::kAccepted},
      {"approved", DecisionStatus::kAccepted},     {"adopted", DecisionStatus::kAccepted},
      {"rejected", DecisionStatus::kRejected},     {"declined", DecisionStatus::kRejected},
      {"deprecated", DecisionStatus::kDeprecated}, {"obsolete", DecisionStatus::kDeprecated},
      {"superseded", DecisionStatus::kSuperseded},
  };
  auto it = words.find(word);
  if (it == words.end()) return std::nullopt;
  return it->second;
}

// The first YYYY-MM-DD in `s`, or 0.
TimeMs DateIn(std::string_view s) {
  for (size_t i = 0; i + 10 <= s.size(); ++i) {
    const std::string_view c = s.substr(i, 10);
    bool shape = true;
    for (size_t k = 0; k < 10; ++k) {
      const bool digit = std::isdigit(static_cast<unsigned char>(c[k])) != 0;
      if ((k == 4 || k == 7) ? c[k] != '-' : !digit) {
        shape = false;
        break;
      }
    }
    if (!shape) continue;
    Result<TimeMs> t = ParseIso8601(c);
    if (t.ok()) return *t;
  }
  return 0;
}

// Reads the Status section (or an inline "Status: X" value).
Status ParseStatus(const std::string& text, ParsedAdr* adr) {
  bool word_seen = false;
  std::istringstream lines(text);
  for (std::string raw; std::getline(lines, raw);) {
    const std::string line = Plain(raw);
    if (line.empty()) continue;
    const std::string low = AsciiLower(line);
    if (StartsWithNoCase(low, "superseded by") || StartsWithNoCase(low, "superseeded by")) {
      adr->status = DecisionStatus::kSuperseded;
      adr->status_given = word_seen = true;
      for (AdrLink& l : LinksIn(line)) adr->superseded_by.push_back(std::move(l));
      continue;
    }
    if (StartsWithNoCase(low, "supersedes")) {
      for (AdrLink& l : LinksIn(line)) adr->supersedes.push_back(std::move(l));
      continue;
    }
    if (StartsWithNoCase(low, "amends") || StartsWithNoCase(low, "amended by") ||
        StartsWithNoCase(low, "extends") || StartsWithNoCase(low, "extended by") ||
        StartsWithNoCase(low, "clarifies") || StartsWithNoCase(low, "clarified by")) {
      adr->warnings.push_back("status line '" + line + "' is not a supersede link; ignored");
      continue;
    }
    if (word_seen) continue;
    std::string word;
    for (char c : low) {
      if (!std::isalpha(static_cast<unsigned char>(c))) break;
      word.push_back(c);
    }
    std::optional<DecisionStatus> s = StatusWord(word);
    if (!s) {
      return Status::InvalidArgument("unknown status '" + line +
                                     "'; expected Proposed, Accepted, Rejected, Deprecated or Superseded");
    }
    adr->status = *s;
    adr->status_given = word_seen = true;
    if (adr->date == 0) adr->date = DateIn(line);
  }
  return Status::Ok();
}

// List items of an Alternatives section as {option, reason}.
void ParseAlternatives(const std::string& text, ParsedAdr* adr) {
  std::vector<std::string> items;
  std::istringstream lines(text);
  for (std::string raw; std::getline(lines, raw);) {
    const std::string t(TrimAsciiSpace(raw));
    const bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    size_t used = 0;
    const int n = LeadingNumber(t, &used);
    const bool bullet = t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ';
    const bool numbered = used > 0 && n >= 0 && used < t.size() && (t[used] == '.' || t[used] == ')');
    if (!indented && (bullet || numbered)) {
      items.push_back(std::string(TrimAsciiSpace(bullet ? t.substr(2) : t.substr(used + 1))));
    } else if (!items.empty() && !t.empty()) {
      items.back() += " " + t;
    }
  }
  if (items.empty() && !TrimAsciiSpace(text).empty()) {
    adr->warnings.push_back("the alternatives section has no list items; ignored");
  }
  for (const std::string& item : items) {
    std::string option, reason;
    if (item.rfind("**", 0) == 0 && item.find("**", 2) != std::string::npos) {
      const size_t close = item.find("**", 2);
      option = item.substr(2, close - 2);
      reason = item.substr(close + 2);
    } else {
      size_t cut = std::string::npos, len = 0;
      for (std::string_view sep : {std::string_view(": "), std::string_view(" \xE2\x80\x94 "),
                                   std::string_view(" \xE2\x80\x93 "), std::string_view(" - ")}) {
        const size_t at = item.find(sep);
        if (at != std::string::npos && at < cut) {
          cut = at;
          len = sep.size();
        }
      }
      option = cut == std::string::npos ? item : item.substr(0, cut);
      reason = cut == std::string::npos ? "" : item.substr(cut + len);
    }
    reason = std::string(TrimAsciiSpace(reason));
    while (!reason.empty() && std::string_view(":-").find(reason.front()) != std::string_view::npos) {
      reason = std::string(TrimAsciiSpace(reason.substr(1)));
    }
    option = Plain(option);
    if (Utf8Chars(option) > kMaxOptionChars) {
      // Cut at a character boundary.
      size_t chars = 0, i = 0;
      while (i < option.size() && chars < kMaxOptionChars - 1) {
        ++i;
        while (i < option.size() && (static_cast<unsigned char>(option[i]) & 0xC0) == 0x80) ++i;
        ++chars;
      }
      option = option.substr(0, i) + "\xE2\x80\xA6";
    }
    if (option.empty()) continue;
    if (reason.empty()) {
      adr->warnings.push_back("alternative '" + option + "' gives no reason");
      reason = "(no reason given in the ADR)";
    }
    adr->alternatives.push_back({option, reason});
  }
}

enum class Section { kNone, kStatus, kContext, kDecision, kConsequences, kAlternatives, kDate, kIgnored };

Section SectionOf(const std::string& name) {
  static const std::map<std::string, Section> names = {
      {"status", Section::kStatus},
      {"context", Section::kContext},
      {"context and problem statement", Section::kContext},
      {"problem", Section::kContext},
      {"problem statement", Section::kContext},
      {"background", Section::kContext},
      {"decision", Section::kDecision},
      {"decision outcome", Section::kDecision},
      {"consequences", Section::kConsequences},
      {"alternatives", Section::kAlternatives},
      {"rejected alternatives", Section::kAlternatives},
      {"considered alternatives", Section::kAlternatives},
      {"alternatives considered", Section::kAlternatives},
      {"considered options", Section::kAlternatives},
      {"options considered", Section::kAlternatives},
      {"date", Section::kDate},
  };
  auto it = names.find(name);
  return it == names.end() ? Section::kIgnored : it->second;
}

// A "Key: value" line before the first section.
void HeaderLine(const std::string& line, ParsedAdr* adr, std::string* inline_status) {
  const std::string p = Plain(line);
  const std::string low = AsciiLower(p);
  auto value = [&](size_t n) { return std::string(TrimAsciiSpace(std::string_view(p).substr(n))); };
  if (StartsWithNoCase(low, "date:")) {
    adr->date = DateIn(p);
  } else if (StartsWithNoCase(low, "status:")) {
    *inline_status += value(7) + "\n";
  } else if (StartsWithNoCase(low, "deciders:")) {
    adr->deciders = value(9);
  }
}

}  // namespace

Result<ParsedAdr> ParseAdr(std::string_view file_name, std::string_view text) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) return Status::InvalidArgument("invalid UTF-8 at byte " + std::to_string(bad));
  std::string body;
  body.reserve(text.size());
  for (char c : text) {
    if (c != '\r') body.push_back(c);
  }

  ParsedAdr adr;
  std::string inline_status;
  std::map<Section, std::string> sections;
  std::vector<std::string> ignored;
  bool title_seen = false;
  Section current = Section::kNone;
  bool in_fence = false;
  bool in_front_matter = false;
  int line_no = 0;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line); ++line_no) {
    const std::string t(TrimAsciiSpace(line));
    if (line_no == 0 && t == "---") {
      in_front_matter = true;
      continue;
    }
    if (in_front_matter) {
      if (t == "---") {
        in_front_matter = false;
      } else {
        HeaderLine(t, &adr, &inline_status);
      }
      continue;
    }
    if (t.rfind("```", 0) == 0 || t.rfind("~~~", 0) == 0) in_fence = !in_fence;
    if (!in_fence && line.rfind("# ", 0) == 0 && !title_seen) {
      SplitTitle(line.substr(2), &adr.number, &adr.title);
      title_seen = true;
      continue;
    }
    if (!in_fence && line.rfind("## ", 0) == 0) {
      std::string name = AsciiLower(TrimAsciiSpace(line.substr(3)));
      while (!name.empty() && (name.back() == ':' || name.back() == '#' || name.back() == ' ')) name.pop_back();
      current = SectionOf(name);
      if (current == Section::kIgnored) ignored.push_back(std::string(TrimAsciiSpace(line.substr(3))));
      if (sections.count(current) > 0 && current != Section::kIgnored) {
        adr.warnings.push_back("section '" + std::string(TrimAsciiSpace(line.substr(3))) +
                               "' appears twice; its parts are joined");
      }
      continue;
    }
    if (current == Section::kNone) {
      if (title_seen) HeaderLine(t, &adr, &inline_status);
      continue;
    }
    sections[current] += line + "\n";
  }

  if (!title_seen || TrimAsciiSpace(adr.title).empty()) {
    return Status::InvalidArgument("no title: an ADR starts with a level-1 heading such as '# 1. Record decisions'");
  }
  if (adr.number == 0) {
    size_t used = 0;
    adr.number = LeadingNumber(file_name, &used);
  }
  for (const std::string& name : ignored) adr.warnings.push_back("section '" + name + "' ignored");

  std::string status_text = sections.count(Section::kStatus) ? sections[Section::kStatus] : inline_status;
  if (TrimAsciiSpace(status_text).empty() && !inline_status.empty()) status_text = inline_status;
  MSP_RETURN_IF_ERROR(ParseStatus(status_text, &adr));
  if (!adr.status_given) {
    adr.warnings.push_back("no status; imported as proposed");
    adr.status = DecisionStatus::kProposed;
  }
  if (sections.count(Section::kDate) && adr.date == 0) adr.date = DateIn(sections[Section::kDate]);

  adr.context = std::string(TrimAsciiSpace(sections[Section::kContext]));
  adr.decision = std::string(TrimAsciiSpace(sections[Section::kDecision]));
  adr.consequences = std::string(TrimAsciiSpace(sections[Section::kConsequences]));
  if (adr.context.empty()) return Status::InvalidArgument("no Context section (or it is empty)");
  if (adr.decision.empty()) return Status::InvalidArgument("no Decision section (or it is empty)");
  if (adr.consequences.empty()) adr.warnings.push_back("no Consequences section");
  if (sections.count(Section::kAlternatives)) ParseAlternatives(sections[Section::kAlternatives], &adr);
  return adr;
}

namespace {

// The folder names the files in ids and provenance refs: a path of plain
// names, as each file name is one ("docs/adr", or absolute as a directory
// import stores it), never one that climbs out of itself ("../../etc").
Status CheckAdrFolder(const std::string& folder) {
  if (folder.empty()) return Status::InvalidArgument("the ADR folder (the files' common path) is empty");
  if (folder.size() > 1024) return Status::InvalidArgument("the ADR folder is longer than 1024 bytes");
  std::string_view rest = folder;
  if (rest.front() == '/') rest.remove_prefix(1);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  for (size_t start = 0; !rest.empty();) {
    const size_t slash = rest.find('/', start);
    const std::string_view part = rest.substr(start, slash == std::string_view::npos ? slash : slash - start);
    const bool plain = !part.empty() && part != "." && part != ".." && std::none_of(part.begin(), part.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\';
    });
    if (!plain) {
      return Status::InvalidArgument("ADR folder '" + folder +
                                     "' must be a path of plain names (no '.', '..' or empty parts, no control "
                                     "characters or '\\'), e.g. docs/adr");
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return Status::Ok();
}

bool SkippedFile(const std::string& name) {
  const std::string low = AsciiLower(name);
  return low == "readme.md" || low == "index.md" || low.find("template") != std::string::npos;
}

Result<std::string> ReadFile(const fs::path& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Status::IoError(path.string() + ": " + ec.message());
  if (size > kMaxAdrBytes) {
    return Status::InvalidArgument(path.string() + ": " + std::to_string(size) + " bytes; an ADR may have at most " +
                                   std::to_string(kMaxAdrBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError(path.string() + ": read failed");
  return text.str();
}

// True when stored record `old` already holds what `m` would write.
bool SameContent(const Memory& old, const Memory& m) {
  const nlohmann::json a = nlohmann::json::parse(old.body_json.empty() ? "{}" : old.body_json, nullptr, false);
  const nlohmann::json b = nlohmann::json::parse(m.body_json, nullptr, false);
  return a == b && old.text == m.text && old.tags == m.tags && old.criticality == m.criticality &&
         old.access_level == m.access_level && old.provenance == m.provenance && old.state == m.state &&
         old.supersedes == m.supersedes && old.superseded_by == m.superseded_by && old.valid_at == m.valid_at &&
         old.source == m.source && old.layer == m.layer;
}

}  // namespace

Result<AdrImportReport> ImportAdrDirectory(MemoryLayer& engine, const Namespace& scope, const std::string& dir,
                                           const AdrImportOptions& options, const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("no directory " + dir);
  const fs::path root = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return Status::IoError(dir + ": " + ec.message());

  std::vector<fs::path> paths;
  std::vector<std::string> warnings;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;
    if (AsciiLower(p.extension().string()) != ".md" || SkippedFile(p.filename().string())) continue;
    // A link out of the folder (to /etc/passwd) is not followed.
    if (it->is_symlink(fec)) {
      const fs::path target = fs::weakly_canonical(p, fec);
      const std::string t = target.string(), r = root.string();
      if (fec || t.size() <= r.size() || t.compare(0, r.size(), r) != 0 || (r != "/" && t[r.size()] != '/')) {
        warnings.push_back(p.string() + ": a symbolic link to " + target.string() +
                           ", outside the folder: not followed");
        continue;
      }
    }
    paths.push_back(p);
  }
  if (ec) return Status::IoError(root.string() + ": " + ec.message());
  std::vector<AdrFile> files;
  for (const fs::path& path : paths) {
    MSP_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    files.push_back(AdrFile{path.filename().string(), std::move(text)});
  }
  MSP_ASSIGN_OR_RETURN(AdrImportReport report,
                       ImportAdrFiles(engine, scope, root.string(), std::move(files), options, actor));
  report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
  return report;
}

Result<AdrImportReport> ImportAdrFiles(MemoryLayer& engine, const Namespace& scope, const std::string& folder,
                                       std::vector<AdrFile> files, const AdrImportOptions& options,
                                       const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (!options.component.empty() && !IsMissionIdentifier(options.component)) {
    return Status::InvalidArgument("component '" + options.component +
                                   "' is not an identifier: 1..64 characters, letters, digits and _-.:/");
  }
  MSP_RETURN_IF_ERROR(ValidateAccessLevel(options.access_level));
  MSP_RETURN_IF_ERROR(CheckAdrFolder(folder));
  std::set<std::string> names;
  for (const AdrFile& f : files) {
    if (f.name.empty() || f.name.find('/') != std::string::npos || f.name == "." || f.name == "..") {
      return Status::InvalidArgument("ADR file name '" + f.name + "' must be a plain file name (no '/')");
    }
    if (!names.insert(f.name).second) return Status::InvalidArgument("ADR file name '" + f.name + "' is given twice");
    if (f.text.size() > kMaxAdrBytes) {
      return Status::InvalidArgument(f.name + ": " + std::to_string(f.text.size()) +
                                     " bytes; an ADR may have at most " + std::to_string(kMaxAdrBytes));
    }
  }
  std::sort(files.begin(), files.end(), [](const AdrFile& a, const AdrFile& b) { return a.name < b.name; });
  const std::string root = folder.back() == '/' && folder.size() > 1 ? folder.substr(0, folder.size() - 1) : folder;

  const Namespace ns = MissionNamespace(scope);
  AdrImportReport report;
  if (files.empty()) report.warnings.push_back(root + ": no ADR files (*.md)");
  std::vector<ParsedAdr> parsed;
  std::vector<Decision> decisions;
  std::map<std::string, size_t> by_file;
  std::multimap<int, size_t> by_number;
  for (const AdrFile& f : files) {
    const std::string file = root == "/" ? "/" + f.name : root + "/" + f.name;
    Result<ParsedAdr> adr = ParseAdr(f.name, f.text);
    if (!adr.ok()) return adr.status().WithContext(file);
    for (const std::string& w : adr->warnings) report.warnings.push_back(file + ": " + w);
    Decision d;
    d.id = AdrRecordId(ns, file);
    d.title = adr->title;
    d.context = adr->context;
    d.decision = adr->decision;
    d.consequences = adr->consequences;
    d.alternatives = adr->alternatives;
    d.component = options.component;
    d.criticality = options.criticality;
    d.status = adr->status;
    d.decided_by = adr->deciders.empty() ? options.decided_by : adr->deciders;
    d.decided_at = adr->date;
    d.provenance = {{"document", file, adr->number > 0 ? "ADR " + std::to_string(adr->number) : ""}};
    d.access_level = options.access_level;
    d.tags = {"adr"};
    d.adr_number = adr->number;
    by_file[f.name] = decisions.size();
    if (adr->number > 0) by_number.emplace(adr->number, decisions.size());
    parsed.push_back(std::move(adr).value());
    decisions.push_back(std::move(d));
  }

  // Supersede links between the files.
  auto resolve = [&](const AdrLink& l) -> std::optional<size_t> {
    if (!l.file.empty()) {
      auto it = by_file.find(l.file);
      if (it != by_file.end()) return it->second;
      return std::nullopt;
    }
    if (by_number.count(l.number) == 1) return by_number.find(l.number)->second;
    return std::nullopt;
  };
  auto name_of = [](const AdrLink& l) { return l.file.empty() ? "ADR " + std::to_string(l.number) : l.file; };
  for (size_t i = 0; i < decisions.size(); ++i) {
    const std::string& file = decisions[i].provenance[0].ref;
    for (const AdrLink& l : parsed[i].superseded_by) {
      std::optional<size_t> j = resolve(l);
      if (!j || *j == i) {
        report.warnings.push_back(file + ": superseding ADR '" + name_of(l) + "' is not in the folder; not linked");
        continue;
      }
      if (decisions[i].superseded_by.empty()) decisions[i].superseded_by = decisions[*j].id;
      if (decisions[*j].supersedes.empty()) decisions[*j].supersedes = decisions[i].id;
    }
    for (const AdrLink& l : parsed[i].supersedes) {
      std::optional<size_t> j = resolve(l);
      if (!j || *j == i) {
        report.warnings.push_back(file + ": superseded ADR '" + name_of(l) + "' is not in the folder; not linked");
        continue;
      }
      if (decisions[i].supersedes.empty()) decisions[i].supersedes = decisions[*j].id;
      if (decisions[*j].superseded_by.empty()) decisions[*j].superseded_by = decisions[i].id;
    }
  }
  for (size_t i = 0; i < decisions.size(); ++i) {
    if (!decisions[i].superseded_by.empty()) decisions[i].status = DecisionStatus::kSuperseded;
    if (decisions[i].status == DecisionStatus::kSuperseded && decisions[i].superseded_by.empty()) {
      report.warnings.push_back(decisions[i].provenance[0].ref +
                                ": status superseded, but no successor in the folder is named");
    }
  }

  RecordBatch batch;
  batch.scope = ns;
  batch.actor = actor;
  batch.reason = "adr import " + root;
  for (size_t i = 0; i < decisions.size(); ++i) {
    Decision& d = decisions[i];
    const std::string& file = d.provenance[0].ref;
    MSP_RETURN_IF_ERROR(ValidateDecision(d).WithContext(file));
    MSP_ASSIGN_OR_RETURN(std::optional<Memory> old, FindRecord(engine, ns, d.id));
    if (old && old->kind != Kind::kDecision) {
      return Status::FailedPrecondition(file + ": record " + d.id + " exists and is a " +
                                        std::string(KindName(old->kind)) + ", not a decision");
    }
    if (old && !old->superseded_by.empty() && d.superseded_by.empty()) {
      // Superseded after an earlier import by a decision outside the folder:
      // keep that link.
      d.superseded_by = old->superseded_by;
      d.status = DecisionStatus::kSuperseded;
      report.warnings.push_back(file + ": kept the link to its successor " + d.superseded_by +
                                " (not in the folder)");
    }
    if (old && !old->supersedes.empty() && d.supersedes.empty()) d.supersedes = old->supersedes;
    Memory m = DecisionToMemory(ns, d, kAdrSource);
    AdrImportEntry entry{file, d.id, d.title, "added"};
    if (old) {
      m.created_at = old->created_at;
      if (SameContent(*old, m)) {
        entry.action = "unchanged";
        ++report.unchanged;
        report.entries.push_back(std::move(entry));
        continue;
      }
      // Keep what the record holds beyond the decision (access counts...).
      Memory updated = *old;
      updated.text = m.text;
      updated.body_json = m.body_json;
      updated.tags = m.tags;
      updated.source = m.source;
      updated.criticality = m.criticality;
      updated.valid_at = m.valid_at;
      updated.provenance = m.provenance;
      updated.access_level = m.access_level;
      updated.state = m.state;
      updated.supersedes = m.supersedes;
      updated.superseded_by = m.superseded_by;
      updated.layer = m.layer;
      batch.puts.push_back(std::move(updated));
      batch.expected_seq.push_back(old->seq);
      entry.action = "updated";
      ++report.updated;
    } else {
      batch.puts.push_back(std::move(m));
      batch.expected_seq.push_back(0);
      ++report.added;
    }
    report.entries.push_back(std::move(entry));
  }
  if (!options.dry_run && !batch.puts.empty()) {
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine.Commit(batch));
    (void)stored;
  }
  return report;
}

}  // namespace msp
