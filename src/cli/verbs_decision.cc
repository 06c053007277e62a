// Mission record verbs: decision add / list / show / status / supersede /
// import, principle add / edit / show / list, operator set / list / show,
// correction add / list / show (include/msp/mission.h); the table of the
// mission verbs, the reports and events too (verbs_query.cc).
#include <iterator>
#include <limits>
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"
#include "mission/records.h"
#include "msp/mission.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace {

using json = nlohmann::json;

// The string at `key` of a decision's JSON (DecisionToJson); "" when absent.
std::string TextAt(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string OrDash(std::string text) { return text.empty() ? std::string("-") : text; }

// The array at `key`; an empty one when absent.
const json& ListAt(const json& j, const char* key) {
  static const json kNone = json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kNone;
}

// A decision (DecisionToJson, the decision operations' answer) on one line.
void PrintDecisionLine(std::ostream& out, const json& d) {
  const std::string decided = TextAt(d, "decided_at");
  out << TextAt(d, "id") << "  " << TextAt(d, "status") << "  " << OrDash(decided.substr(0, 10)) << "  "
      << OrDash(TextAt(d, "component")) << "  " << OneLine(TextAt(d, "title"), 80) << "\n";
}

void PrintDecisionDetail(std::ostream& out, const json& d) {
  out << "id:            " << TextAt(d, "id") << "\n"
      << "title:         " << TextAt(d, "title") << "\n"
      << "status:        " << TextAt(d, "status") << "\n";
  if (!TextAt(d, "supersedes").empty()) out << "supersedes:    " << TextAt(d, "supersedes") << "\n";
  if (!TextAt(d, "superseded_by").empty()) out << "superseded by: " << TextAt(d, "superseded_by") << "\n";
  out << "component:     " << OrDash(TextAt(d, "component")) << "\n"
      << "criticality:   " << TextAt(d, "criticality") << "\n"
      << "access level:  " << d.value("access_level", 0) << "\n"
      << "decided by:    " << OrDash(TextAt(d, "decided_by")) << "\n"
      << "decided at:    " << OrDash(TextAt(d, "decided_at")) << "\n";
  if (d.value("adr_number", 0) > 0) out << "ADR:           " << d.value("adr_number", 0) << "\n";
  if (!ListAt(d, "principles").empty()) {
    out << "principles:   ";
    for (const json& p : ListAt(d, "principles")) out << " " << (p.is_string() ? p.get<std::string>() : "");
    out << "\n";
  }
  for (const json& p : ListAt(d, "provenance")) {
    const std::string detail = TextAt(p, "detail");
    out << "provenance:    " << TextAt(p, "type") << " " << TextAt(p, "ref")
        << (detail.empty() ? "" : " (" + detail + ")") << "\n";
  }
  if (!ListAt(d, "tags").empty()) {
    out << "tags:         ";
    for (const json& t : ListAt(d, "tags")) out << " " << (t.is_string() ? t.get<std::string>() : "");
    out << "\n";
  }
  out << "\ncontext:\n" << TextAt(d, "context") << "\n\ndecision:\n" << TextAt(d, "decision") << "\n";
  if (!ListAt(d, "alternatives").empty()) {
    out << "\nrejected alternatives:\n";
    for (const json& a : ListAt(d, "alternatives")) {
      out << "- " << TextAt(a, "option") << ": " << TextAt(a, "reason") << "\n";
    }
  }
  if (!TextAt(d, "consequences").empty()) out << "\nconsequences:\n" << TextAt(d, "consequences") << "\n";
  for (const json& sec : ListAt(d, "sections")) {
    const std::string heading = TextAt(sec, "heading");
    out << "\n" << (heading.empty() ? "(before the first section)" : heading) << ":\n" << TextAt(sec, "text")
        << "\n";
  }
  bool first = true;
  for (const json& r : ListAt(d, "revisions")) {
    const std::string author = TextAt(r, "author");
    out << (first ? "\n" : "") << "revision " << r.value("revision", 0) << ": " << OrDash(TextAt(r, "at"))
        << " by " << OrDash(TextAt(r, "by")) << (author.empty() ? "" : " (file last changed by " + author + ")")
        << "\n";
    first = false;
  }
}

// A principle version (PrincipleToJson, the principle operations' answer).
void PrintPrincipleDetail(std::ostream& out, const json& p) {
  out << TextAt(p, "principle_id") << " v" << p.value("version", 0) << (p.value("current", true) ? "" : " (replaced)")
      << "  " << TextAt(p, "statement") << "\n";
  if (!TextAt(p, "rationale").empty()) out << "  rationale: " << TextAt(p, "rationale") << "\n";
  out << "  author: " << OrDash(TextAt(p, "author")) << ", " << OrDash(TextAt(p, "created_at")) << ", access level "
      << p.value("access_level", 0) << "\n";
}

void PrintPrincipleStored(std::ostream& out, const json& p) {
  out << "stored principle " << TextAt(p, "principle_id") << " version " << p.value("version", 0) << "\n";
}

// An operator's setting (OperatorToJson) on one line.
void PrintOperatorLine(std::ostream& out, const json& op) {
  const std::string mission = TextAt(op["namespace"], "mission");
  const std::string name = TextAt(op, "name");
  out << TextAt(op, "operator_id") << "  clearance " << op.value("clearance", 0) << "  "
      << (mission.empty() ? "tenant-wide" : "mission " + mission) << (name.empty() ? "" : "  " + name) << "\n";
}

}  // namespace

// decision add / list / show / status / supersede: src/api's decision
// operations (api/decisions.cc), printed.
Status RunDecisionAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) *inv.out << "stored decision " << TextAt(*answer, "id") << "\n";
  return Status::Ok();
}

Status RunDecisionList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const json& list = ListAt(*answer, "decisions");
  if (list.empty()) *inv.out << "no decisions\n";
  for (const json& d : list) PrintDecisionLine(*inv.out, d);
  return Status::Ok();
}

Status RunDecisionShow(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintDecisionDetail(*inv.out, *answer);
  return Status::Ok();
}

Status RunDecisionStatus(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) *inv.out << "decision " << TextAt(*answer, "id") << " is " << TextAt(*answer, "status") << "\n";
  return Status::Ok();
}

Status RunDecisionSupersede(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) {
    *inv.out << "decision " << TextAt((*answer)["old"], "id") << " superseded by " << TextAt((*answer)["new"], "id")
             << "\n";
  }
  return Status::Ok();
}

// decision import DIR: src/api's decision_import_adr with the ADR files of
// DIR (ReadAdrDirectory: their text and git dates) and, unless --folder is
// given, DIR's absolute path as the folder. A file that could not be read is
// a failed entry, as the import makes one of a file it cannot parse.
Status RunDecisionImport(Invocation& inv) {
  Result<AdrDirectory> dir = ReadAdrDirectory(inv.flags.positionals[0]);
  if (!dir.ok()) return dir.status();
  json files = json::array();
  std::vector<const AdrFile*> unread;
  for (const AdrFile& f : dir->files) {
    if (!f.read_error.empty()) {
      unread.push_back(&f);
      continue;
    }
    json one = {{"name", f.name}, {"text", f.text}};
    if (f.first_commit_at != 0) one["first_commit_at"] = FormatIso8601(f.first_commit_at);
    if (!f.last_author.empty()) one["last_author"] = f.last_author;
    files.push_back(std::move(one));
  }
  if (files.empty() && unread.empty()) {
    return Status::NotFound(dir->root + ": no ADR files (*.md)");
  }
  const bool json_out = inv.json;
  inv.json = false;  // printed here, with the unread files
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer,
                       files.empty() ? Result<std::optional<json>>(std::optional<json>(json{
                                           {"entries", json::array()}, {"added", 0}, {"updated", 0},
                                           {"unchanged", 0}, {"failed", 0}, {"warnings", json::array()},
                                           {"dry_run", inv.flags.Has("--dry-run")}}))
                                     : AnswerToPrint(inv, /*create=*/false,
                                                     json{{"files", std::move(files)}, {"folder", dir->root}}));
  inv.json = json_out;
  json& r = *answer;
  for (const AdrFile* f : unread) {
    r["entries"].push_back({{"file", dir->root + "/" + f->name}, {"id", ""}, {"title", ""}, {"action", "failed"},
                            {"error", f->read_error}});
    r["failed"] = r["failed"].get<int>() + 1;
  }
  json warnings = json(dir->warnings);
  for (const json& w : r["warnings"]) warnings.push_back(w);
  r["warnings"] = std::move(warnings);
  // A partial import (some files failed, the rest imported) exits 1, as
  // `msp ingest` does.
  if (r["failed"].get<int>() > 0) inv.exit_code = kExitFailure;
  if (inv.json) {
    PrintJson(inv, r);
    return Status::Ok();
  }
  for (const json& e : r["entries"]) {
    if (TextAt(e, "action") == "failed") {
      *inv.err << "msp: failed: " << TextAt(e, "file") << ": " << TextAt(e, "error") << "\n";
    } else {
      *inv.out << TextAt(e, "action") << "  " << TextAt(e, "id") << "  " << TextAt(e, "title") << "\n";
    }
  }
  for (const json& w : r["warnings"]) *inv.err << "msp: warning: " << w.get<std::string>() << "\n";
  *inv.out << (r["dry_run"] == true ? "dry run: would add " : "added ") << r["added"] << ", updated " << r["updated"]
           << ", unchanged " << r["unchanged"] << ", failed " << r["failed"] << "\n";
  return Status::Ok();
}

// principle add / edit / show / list: src/api's principle operations
// (api/principles.cc; add and edit are principle_put), printed.
Status RunPrincipleAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintPrincipleStored(*inv.out, *answer);
  return Status::Ok();
}

Status RunPrincipleEdit(Invocation& inv) {
  // Without a base version principle_put adds version 1: that is `principle add`.
  Result<int64_t> base = inv.flags.GetInt("--base-version", 0, std::numeric_limits<int64_t>::min(),
                                          std::numeric_limits<int64_t>::max());
  if (!inv.flags.Has("--base-version") || (base.ok() && *base == 0)) {
    return Usage(inv, "--base-version N (1 or more) is required: the version you are editing (see `msp principle "
                      "show`)");
  }
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintPrincipleStored(*inv.out, *answer);
  return Status::Ok();
}

Status RunPrincipleShow(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  if (!answer->contains("versions")) {
    PrintPrincipleDetail(*inv.out, *answer);
    return Status::Ok();
  }
  for (const json& p : ListAt(*answer, "versions")) PrintPrincipleDetail(*inv.out, p);
  return Status::Ok();
}

Status RunPrincipleList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const json& list = ListAt(*answer, "principles");
  if (list.empty()) *inv.out << "no principles\n";
  for (const json& p : list) PrintPrincipleDetail(*inv.out, p);
  return Status::Ok();
}

// operator set / list / show: src/api's operator operations
// (api/operators.cc), printed.
Status RunOperatorSet(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const json& ns = (*answer)["namespace"];
  const std::string mission = TextAt(ns, "mission");
  *inv.out << "operator " << TextAt(*answer, "operator_id") << " has clearance " << answer->value("clearance", 0)
           << (mission.empty() ? " in every mission of tenant " + TextAt(ns, "tenant") : " in mission " + mission)
           << "\n";
  return Status::Ok();
}

Status RunOperatorList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const json& ops = ListAt(*answer, "operators");
  if (ops.empty()) *inv.out << "no operators (every operator has clearance 0)\n";
  for (const json& op : ops) PrintOperatorLine(*inv.out, op);
  return Status::Ok();
}

Status RunOperatorShow(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintOperatorLine(*inv.out, *answer);
  return Status::Ok();
}

// correction add / list / show: src/api's correction operations
// (api/corrections.cc), printed.
Status RunCorrectionAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) *inv.out << "stored correction " << TextAt(*answer, "id") << "\n";
  return Status::Ok();
}

namespace {

void PrintCorrectionLine(std::ostream& out, const json& c) {
  out << TextAt(c, "id") << "  " << TextAt(c, "operator") << "  " << TextAt(c, "class") << "/"
      << TextAt(c, "category") << "  " << TextAt(c, "component") << "  " << TextAt(c, "outcome") << "  "
      << TextAt(c, "summary") << "\n";
}

}  // namespace

Status RunCorrectionList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const json& list = ListAt(*answer, "corrections");
  if (list.empty()) *inv.out << "no corrections\n";
  for (const json& c : list) PrintCorrectionLine(*inv.out, c);
  return Status::Ok();
}

Status RunCorrectionShow(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintCorrectionLine(*inv.out, *answer);
  return Status::Ok();
}

// The mission verbs of the table (cli.h): records, retrieval, reports, events.
std::vector<Verb> MissionVerbs() {
  const FlagSpec kReadAt = {"--clearance", "N", "read at clearance N (0..9) instead of the caller's"};
  return {
      {"decision add", "(--title T --context C --decision D [flags] | -) --mission ID",
       "record a decision of the mission (flags, or '-': the request as JSON on standard input); "
       "docs/operations.md",
       ApiFlags("decision_record"), {"-"}, 0, kRecordVerb, &RunDecisionAdd},
      {"decision list", "--mission ID [flags]",
       "the mission's decisions the reader may see, by decision time (or by relevance with --query)",
       ApiFlags("decision_list", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}), {}, 0,
       kRecordVerb | kReadsAtClearance, &RunDecisionList},
      {"decision show", "ID --mission ID [flags]", "one decision, every field",
       ApiFlags("decision_show", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}),
       {"ID"}, 1, kRecordVerb | kReadsAtClearance, &RunDecisionShow},
      {"decision status", "ID STATUS --mission ID [flags]",
       "move a decision to proposed | accepted | rejected | deprecated", ApiFlags("decision_status"),
       {"ID", "STATUS"}, 2, kRecordVerb, &RunDecisionStatus},
      {"decision supersede", "OLD --by NEW --mission ID [flags]",
       "mark decision OLD superseded by decision NEW (links both ways; OLD keeps its content)",
       ApiFlags("decision_supersede"), {"OLD"}, 1, kRecordVerb, &RunDecisionSupersede},
      {"decision import", "DIR --mission ID [flags]",
       "decision_import_adr: import a folder of architecture decision records (Markdown: Nygard, MADR, front "
       "matter ...); re-importing updates; docs/operations.md",
       ApiFlags("decision_import_adr"), {"DIR"}, 1, kRecordVerb, &RunDecisionImport},
      {"principle add", "ID --statement TEXT --mission ID [flags]",
       "register version 1 of a principle (ID like P-7): principle_put with no base version (docs/operations.md); `principle edit` changes it",
       ApiFlags("principle_put", {}, {"--base-version"}), {"ID"}, 1, kRecordVerb, &RunPrincipleAdd},
      {"principle edit", "ID --base-version N [--statement TEXT] [--rationale TEXT] --mission ID [flags]",
       "store the next version of a principle (principle_put); refused (exit 1, conflict) when N is no longer the "
       "current version; docs/operations.md",
       ApiFlags("principle_put"), {"ID"}, 1, kRecordVerb, &RunPrincipleEdit},
      {"principle show", "ID [--version N | --all] --mission ID [flags]",
       "a principle: the current version, one version, or every version",
       ApiFlags("principle_show", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}),
       {"ID"}, 1, kRecordVerb | kReadsAtClearance, &RunPrincipleShow},
      {"principle list", "--mission ID [flags]", "the current version of every principle of the mission",
       ApiFlags("principle_list", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}), {},
       0, kRecordVerb | kReadsAtClearance, &RunPrincipleList},
      {"operator set", "ID --clearance N [--name NAME] [--mission ID] [flags]",
       "set an operator's clearance (0..9) in the mission, or tenant-wide without --mission (not with --operator: "
       "a caller limited to a clearance may not); docs/operations.md",
       ApiFlags("operator_set"), {"ID"}, 1, kRecordVerb, &RunOperatorSet},
      {"operator list", "[--mission ID] [flags]", "the operators and their clearances", ApiFlags("operator_list"), {},
       0, kRecordVerb, &RunOperatorList},
      {"operator show", "ID [--mission ID] [flags]", "one operator's setting (the mission's, else the tenant-wide one)",
       ApiFlags("operator_show"), {"ID"}, 1, kRecordVerb, &RunOperatorShow},
      {"correction add",
       "(--class C --category C --component C --outcome O --summary S [flags] | -) --mission ID --operator ID",
       "record an operator's correction as a structured abstraction (never raw prompt or output text); "
       "docs/operations.md",
       ApiFlags("correction_record"), {"-"}, 0, kRecordVerb, &RunCorrectionAdd},
      {"correction list", "--mission ID [flags]", "corrections of the mission the reader may see, oldest first",
       ApiFlags("correction_list", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}), {},
       0, kRecordVerb | kReadsAtClearance, &RunCorrectionList},
      {"correction show", "ID --mission ID [flags]", "one correction, every field",
       ApiFlags("correction_show", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}),
       {"ID"}, 1, kRecordVerb | kReadsAtClearance, &RunCorrectionShow},
      {"query",
       "TEXT|- --mission ID [--operator ID] [flags]",
       "workflow_memory_query: a Markdown digest of the mission's memory for a task, within a token budget; "
       "docs/operations.md",
       ApiFlags("workflow_memory_query"),
       {"TEXT"},
       1,
       kRecordVerb,
       &RunQuery},
      {"handoff",
       "--mission ID --from OPERATOR --to OPERATOR [--since TIME] [--budget N] [flags]",
       "handoff_digest: the digest for the next operator: open threats and questions, escalation, decisions and "
       "events since, causes before effects, the predecessor's correction profile; docs/operations.md",
       ApiFlags("handoff_digest"),
       {},
       0,
       kRecordVerb,
       &RunHandoff},
      {"mark-used", "RETRIEVAL_ID ENTRY_ID... --mission ID [flags]",
       "workflow_mark_used: mark entries a retrieval served as used (for `report redundancy`)",
       ApiFlags("workflow_mark_used"), {"RETRIEVAL_ID", "ENTRY_ID..."}, 2, kRecordVerb, &RunMarkUsed},
      {"report corrections", "--mission ID [--since TIME] [--until TIME] [--export FILE] [flags]",
       "the retrieval-correction rate per ISO week and per component; --export writes the pairs as JSONL",
       ApiFlags("report_corrections",
                {kReadAt,
                 {"--export", "FILE", "write the pairs (served X, corrected to Y) as JSONL (- for standard output)"}}),
       {}, 0, kRecordVerb | kReadsAtClearance, &RunReportCorrections},
      {"report correction-pairs", "--mission ID [--since TIME] [--until TIME] [flags]",
       "the pairs (served X, corrected to Y) of the corrections naming a retrieval, one JSON line each",
       ApiFlags("report_correction_pairs", {kReadAt}), {}, 0, kRecordVerb | kReadsAtClearance,
       &RunReportCorrectionPairs},
      {"report redundancy", "--mission ID [--since TIME] [--until TIME] [flags]",
       "served-but-unused context per session, by tokens and by entries",
       ApiFlags("report_redundancy", {kReadAt}), {}, 0, kRecordVerb | kReadsAtClearance, &RunReportRedundancy},
      {"report load", "--mission ID [flags]", "the mission's event rate and whether queries rank in degraded mode",
       ApiFlags("report_load", {kReadAt}), {}, 0, kRecordVerb | kReadsAtClearance, &RunReportLoad},
      {"event add", "TEXT --mission ID --type TYPE --component NAME [flags]",
       "record a mission event (TEXT - reads standard input); docs/operations.md", ApiFlags("event_add"), {"TEXT"}, 1,
       kRecordVerb, &RunEventAdd},
      {"event list", "--mission ID [--since TIME] [--until TIME] [--operator ID] [flags]",
       "the mission's events, oldest first (those the reader may see)",
       ApiFlags("event_list", {kReadAt}), {}, 0, kRecordVerb | kReadsAtClearance, &RunEventList},
  };
}

}  // namespace msp
