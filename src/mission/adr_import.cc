// ADR import: a folder of architecture decision records (any of the formats
// ParseAdr reads, mission/adr.h) -> decision records, one write.
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
#include "mission/adr_git.h"
#include "mission/records.h"
#include "msp/mission.h"
#include "util/text.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxAdrBytes = 1 << 20;
// The record's text (what search reads) stops here; the body keeps all.
constexpr size_t kMaxAdrTextBytes = 30000;

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
  std::string stem = low.substr(0, low.rfind('.'));
  return stem == "readme" || stem == "index" || stem == "_index" || stem == "summary" || stem == "_sidebar" ||
         stem == "toc" || stem == "adr-log" || stem == "decision-log" || stem == "contents" ||
         low.find("template") != std::string::npos;
}

// "0005-x.md", or "0005-x/index.md" for an ADR in a folder of its own.
bool PlainAdrName(const std::string& name) {
  auto plain = [](std::string_view part) {
    return !part.empty() && part != "." && part != ".." && std::none_of(part.begin(), part.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\' || c == '/';
    });
  };
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return plain(name);
  const std::string file = AsciiLower(name.substr(slash + 1));
  const bool index = file == "index.md" || file == "index.mdx" || file == "index.markdown" || file == "readme.md";
  return index && plain(std::string_view(name).substr(0, slash)) && plain(std::string_view(name).substr(slash + 1));
}

// The name an ADR goes by: its file's, or its folder's ("0005-x/index.md"
// is "0005-x.md"), for numbers, titles and links.
std::string LogicalName(const std::string& name) {
  const size_t slash = name.find('/');
  return slash == std::string::npos ? name : name.substr(0, slash) + ".md";
}

bool AdrExtension(const fs::path& p) {
  const std::string ext = AsciiLower(p.extension().string());
  return ext == ".md" || ext == ".markdown" || ext == ".mdx";
}

std::string ReadFile(const fs::path& path, std::string* error) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    *error = "cannot read: " + ec.message();
    return "";
  }
  if (size > kMaxAdrBytes) {
    *error = std::to_string(size) + " bytes; an ADR may have at most " + std::to_string(kMaxAdrBytes);
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot open";
    return "";
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) *error = "read failed";
  return text.str();
}

// True when stored record `old` already holds what `m` would write.
bool SameContent(const Memory& old, const Memory& m) {
  nlohmann::json a = nlohmann::json::parse(old.body_json.empty() ? "{}" : old.body_json, nullptr, false);
  nlohmann::json b = nlohmann::json::parse(m.body_json, nullptr, false);
  // The revisions say when and by whom; they are not the content.
  if (a.is_object()) a.erase("revisions");
  if (b.is_object()) b.erase("revisions");
  return a == b && old.text == m.text && old.tags == m.tags && old.criticality == m.criticality &&
         old.access_level == m.access_level && old.provenance == m.provenance && old.state == m.state &&
         old.supersedes == m.supersedes && old.superseded_by == m.superseded_by && old.valid_at == m.valid_at &&
         old.source == m.source && old.layer == m.layer;
}

// The record's text: the decision's rendering with every kept section, cut
// at kMaxAdrTextBytes (the body keeps everything).
std::string AdrText(const Decision& d, bool* cut) {
  std::string t = DecisionText(d);
  *cut = false;
  if (t.size() <= kMaxAdrTextBytes) return t;
  size_t i = kMaxAdrTextBytes - 3;
  while (i > 0 && (static_cast<unsigned char>(t[i]) & 0xC0) == 0x80) --i;
  t.resize(i);
  *cut = true;
  return t + "\xE2\x80\xA6";
}

}  // namespace

Result<AdrImportReport> ImportAdrDirectory(MemoryLayer& engine, const Namespace& scope, const std::string& dir,
                                           const AdrImportOptions& options, const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_ASSIGN_OR_RETURN(AdrDirectory read, ReadAdrDirectory(dir));
  MSP_ASSIGN_OR_RETURN(AdrImportReport report,
                       ImportAdrFiles(engine, scope, read.root, std::move(read.files), options, actor));
  report.warnings.insert(report.warnings.begin(), read.warnings.begin(), read.warnings.end());
  return report;
}

Result<AdrDirectory> ReadAdrDirectory(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("no directory " + dir);
  const fs::path root = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return Status::IoError(dir + ": " + ec.message());

  std::vector<fs::path> paths;
  std::vector<std::string> warnings;
  // A link out of the folder (to /etc/passwd) is not followed.
  auto inside = [&](const fs::path& p) {
    std::error_code fec;
    if (!fs::is_symlink(p, fec)) return true;
    const fs::path target = fs::weakly_canonical(p, fec);
    const std::string t = target.string(), r = root.string();
    if (fec || t.size() <= r.size() || t.compare(0, r.size(), r) != 0 || (r != "/" && t[r.size()] != '/')) {
      warnings.push_back(p.string() + ": a symbolic link to " + target.string() + ", outside the folder: not followed");
      return false;
    }
    return true;
  };
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    std::error_code fec;
    if (it->is_directory(fec)) {
      // One ADR a folder ("0005-use-x/index.md", Docusaurus and Hugo
      // sites): its index or README file.
      if (name.empty() || name[0] == '.' || name[0] == '_' || SkippedFile(name + ".md") || !inside(p)) continue;
      for (const char* index : {"index.md", "index.mdx", "index.markdown", "README.md", "readme.md"}) {
        std::error_code xec;
        if (fs::is_regular_file(p / index, xec) && inside(p / index)) {
          paths.push_back(p / index);
          break;
        }
      }
      continue;
    }
    if (!it->is_regular_file(fec)) continue;
    if (!AdrExtension(p) || SkippedFile(name)) continue;
    if (!inside(p)) continue;
    paths.push_back(p);
  }
  if (ec) return Status::IoError(root.string() + ": " + ec.message());
  // Dates and authors from git when the folder is in a repository.
  std::map<std::string, AdrGitFile> git;
  if (!paths.empty()) {
    Result<std::map<std::string, AdrGitFile>> history = AdrGitHistory(root.string());
    if (history.ok()) {
      git = std::move(history).value();
    } else {
      warnings.push_back(root.string() + ": " + history.status().message() + " (dates from git not used)");
    }
  }
  std::vector<AdrFile> files;
  for (const fs::path& path : paths) {
    AdrFile f;
    f.name = path.parent_path() == root ? path.filename().string()
                                        : path.parent_path().filename().string() + "/" + path.filename().string();
    f.text = ReadFile(path, &f.read_error);
    if (auto it = git.find(f.name); it != git.end()) {
      f.first_commit_at = it->second.first_commit_at;
      f.last_author = it->second.last_author;
    }
    files.push_back(std::move(f));
  }
  return AdrDirectory{root.string(), std::move(files), std::move(warnings)};
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
    if (!PlainAdrName(f.name)) {
      return Status::InvalidArgument("ADR file name '" + f.name +
                                     "' must be a plain file name (no '/'), or FOLDER/index.md (or README.md) for "
                                     "an ADR kept in a folder of its own");
    }
    if (!names.insert(f.name).second) return Status::InvalidArgument("ADR file name '" + f.name + "' is given twice");
  }
  std::sort(files.begin(), files.end(), [](const AdrFile& a, const AdrFile& b) { return a.name < b.name; });
  const std::string root = folder.back() == '/' && folder.size() > 1 ? folder.substr(0, folder.size() - 1) : folder;
  const TimeMs now = options.now != 0 ? options.now : SystemClock()->NowMs();

  const Namespace ns = MissionNamespace(scope);
  AdrImportReport report;
  if (files.empty()) report.warnings.push_back(root + ": no ADR files (*.md)");
  // One slot per file, in name order; a failed file has no decision.
  struct Slot {
    std::string file;
    std::optional<ParsedAdr> parsed;
    Decision decision;
    std::optional<Memory> old;
    std::string error;
    const AdrFile* source = nullptr;
  };
  std::vector<Slot> slots;
  std::map<std::string, size_t> by_file, by_stem, by_id;
  std::multimap<int, size_t> by_number;
  for (const AdrFile& f : files) {
    Slot slot;
    slot.file = root == "/" ? "/" + f.name : root + "/" + f.name;
    slot.source = &f;
    slot.decision.id = AdrRecordId(ns, slot.file);
    Result<ParsedAdr> adr = !f.read_error.empty() ? Result<ParsedAdr>(Status::InvalidArgument(f.read_error))
                            : f.text.size() > kMaxAdrBytes
                                ? Result<ParsedAdr>(Status::InvalidArgument(
                                      std::to_string(f.text.size()) + " bytes; an ADR may have at most " +
                                      std::to_string(kMaxAdrBytes)))
                                : ParseAdr(LogicalName(f.name), f.text);
    if (!adr.ok()) {
      slot.error = adr.status().message();
    } else {
      slot.parsed = std::move(adr).value();
    }
    const size_t index = slots.size();
    by_file[f.name] = index;
    by_file[LogicalName(f.name)] = index;
    by_stem[LogicalName(f.name).substr(0, LogicalName(f.name).rfind('.'))] = index;
    if (slot.parsed) {
      if (!slot.parsed->id.empty()) by_id[slot.parsed->id] = index;
      if (slot.parsed->number > 0) by_number.emplace(slot.parsed->number, index);
    }
    slots.push_back(std::move(slot));
  }

  // The stored records, and each decision's fields.
  for (Slot& slot : slots) {
    if (!slot.parsed) continue;
    ParsedAdr& adr = *slot.parsed;
    for (const std::string& w : adr.warnings) report.warnings.push_back(slot.file + ": " + w);
    Result<std::optional<Memory>> old = FindRecord(engine, ns, slot.decision.id);
    if (!old.ok()) return old.status();
    if (*old && (*old)->kind != Kind::kDecision) {
      slot.error = "record " + slot.decision.id + " exists and is a " + std::string(KindName((*old)->kind)) +
                   ", not a decision";
      slot.parsed.reset();
      continue;
    }
    slot.old = std::move(old).value();
    Decision& d = slot.decision;
    d.title = adr.title;
    d.context = adr.context;
    d.decision = adr.decision;
    d.consequences = adr.consequences;
    d.alternatives = adr.alternatives;
    d.sections = adr.sections;
    d.component = options.component;
    d.criticality = options.criticality;
    d.status = adr.status;
    // Who decided: the ADR's deciders, else what an earlier import stored
    // (a later importer does not become the decider), else the option.
    std::optional<Decision> before;
    if (slot.old) {
      Result<Decision> b = DecisionFromMemory(*slot.old);
      if (b.ok()) before = std::move(b).value();
    }
    d.decided_by = !adr.deciders.empty() ? adr.deciders : before ? before->decided_by : options.decided_by;
    // When: the ADR's date, else its file's first commit, else the moment
    // it was first stored.
    d.decided_at = adr.date != 0 ? adr.date : slot.source->first_commit_at;
    if (d.decided_at == 0 && !slot.old) {
      report.warnings.push_back(slot.file + ": no date (none written, no git history); dated at import");
    }
    d.provenance = {{"document", slot.file, adr.number > 0 ? "ADR " + std::to_string(adr.number) : ""}};
    d.access_level = options.access_level;
    d.tags = {"adr"};
    d.adr_number = adr.number;
    if (before) d.revisions = before->revisions;
  }

  // Supersede links between the files, both ways.
  auto resolve = [&](const AdrLink& l) -> std::optional<size_t> {
    std::optional<size_t> hit;
    if (!l.file.empty()) {
      for (const auto* index : {&by_file, &by_stem, &by_id}) {
        if (auto it = index->find(l.file); it != index->end()) {
          hit = it->second;
          break;
        }
      }
      if (!hit) {
        const std::string stem = l.file.substr(0, l.file.rfind('.'));
        if (auto it = by_stem.find(stem); it != by_stem.end()) hit = it->second;
      }
    }
    if (!hit && l.number > 0 && by_number.count(l.number) == 1) hit = by_number.find(l.number)->second;
    if (hit && !slots[*hit].parsed) return std::nullopt;  // that file failed
    return hit;
  };
  auto name_of = [](const AdrLink& l) {
    return !l.file.empty() ? l.file : "ADR " + std::to_string(l.number);
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].parsed) continue;
    Decision& d = slots[i].decision;
    for (const AdrLink& l : slots[i].parsed->superseded_by) {
      std::optional<size_t> j = resolve(l);
      if (!j || *j == i) {
        report.warnings.push_back(slots[i].file + ": superseded by '" + name_of(l) +
                                  "', which is not an imported ADR of the folder; not linked");
        continue;
      }
      if (d.superseded_by.empty()) d.superseded_by = slots[*j].decision.id;
      if (slots[*j].decision.supersedes.empty()) slots[*j].decision.supersedes = d.id;
    }
    for (const AdrLink& l : slots[i].parsed->supersedes) {
      std::optional<size_t> j = resolve(l);
      if (!j || *j == i) {
        report.warnings.push_back(slots[i].file + ": supersedes '" + name_of(l) +
                                  "', which is not an imported ADR of the folder; not linked");
        continue;
      }
      if (d.supersedes.empty()) d.supersedes = slots[*j].decision.id;
      if (slots[*j].decision.superseded_by.empty()) slots[*j].decision.superseded_by = d.id;
    }
  }

  RecordBatch batch;
  batch.scope = ns;
  batch.actor = actor;
  batch.reason = "adr import " + root;
  for (Slot& slot : slots) {
    AdrImportEntry entry{slot.file, slot.decision.id, slot.decision.title, "added", ""};
    if (!slot.parsed) {
      entry.action = "failed";
      entry.error = slot.error;
      ++report.failed;
      report.entries.push_back(std::move(entry));
      continue;
    }
    Decision& d = slot.decision;
    const std::string& file = slot.file;
    if (!d.superseded_by.empty()) d.status = DecisionStatus::kSuperseded;
    if (slot.old && !slot.old->superseded_by.empty() && d.superseded_by.empty()) {
      // Superseded after an earlier import by a decision outside the folder:
      // keep that link.
      d.superseded_by = slot.old->superseded_by;
      d.status = DecisionStatus::kSuperseded;
      report.warnings.push_back(file + ": kept the link to its successor " + d.superseded_by +
                                " (not in the folder)");
    }
    if (slot.old && !slot.old->supersedes.empty() && d.supersedes.empty()) d.supersedes = slot.old->supersedes;
    if (d.status == DecisionStatus::kSuperseded && d.superseded_by.empty()) {
      report.warnings.push_back(file + ": marked superseded, but no successor in the folder is named");
    }
    if (Status s = ValidateDecision(d); !s.ok()) {
      entry.action = "failed";
      entry.error = s.message();
      ++report.failed;
      report.entries.push_back(std::move(entry));
      continue;
    }
    bool cut = false;
    Memory m = DecisionToMemory(ns, d, kAdrSource);
    m.text = AdrText(d, &cut);
    if (cut) report.warnings.push_back(file + ": its text is longer than 30,000 bytes; search reads the first 30,000");
    if (slot.old) {
      m.created_at = slot.old->created_at;
      if (SameContent(*slot.old, m)) {
        entry.action = "unchanged";
        ++report.unchanged;
        report.entries.push_back(std::move(entry));
        continue;
      }
    }
    // A new file or a changed one: its next revision.
    const int revision = d.revisions.empty() ? (slot.old ? 2 : 1) : d.revisions.back().revision + 1;
    DecisionRevision rev;
    rev.revision = revision;
    rev.at = now;
    rev.by = actor;
    rev.author = slot.source->last_author;
    d.revisions.push_back(std::move(rev));
    m.body_json = DecisionToMemory(ns, d, kAdrSource).body_json;
    if (slot.old) {
      // Keep what the record holds beyond the decision (access counts...).
      Memory updated = *slot.old;
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
      batch.expected_seq.push_back(slot.old->seq);
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
