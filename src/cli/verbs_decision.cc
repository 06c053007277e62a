// Mission record verbs: decision add / list / show / status / supersede /
// import, principle add / edit / show / list, operator set / list,
// correction add / list / show (include/msp/mission.h); the table of the
// mission verbs, the reports and events too (verbs_query.cc).
#include <iterator>
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

// --access-level N (0..9), or `fallback`.
// Who is reading: --clearance N when given, else --operator at their
// clearance, else the caller itself (CallerAsker's rule; the engine caps
// every read at the caller's clearance).
Result<Asker> AskerOf(Invocation& inv) {
  Asker a;
  a.operator_id = inv.ns.operator_id;
  if (inv.flags.Has("--clearance")) {
    Result<int64_t> c = inv.flags.GetInt("--clearance", 0, 0, kMaxAccessLevel);
    if (!c.ok()) return Usage(inv, c.status().message());
    a.clearance = static_cast<int>(*c);
  } else if (a.operator_id.empty()) {
    a.clearance = kMaxAccessLevel;
  }
  return a;
}

Status NeedMission(Invocation& inv) {
  if (inv.ns.mission.empty()) return Usage(inv, "--mission is required: mission records belong to a mission");
  return Status::Ok();
}

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

void PrintPrinciple(std::ostream& out, const Principle& p) {
  out << p.principle_id << " v" << p.version << (p.current ? "" : " (replaced)") << "  " << p.statement << "\n";
  if (!p.rationale.empty()) out << "  rationale: " << p.rationale << "\n";
  out << "  author: " << (p.author.empty() ? "-" : p.author) << ", " << FormatIso8601(p.created_at)
      << ", access level " << p.access_level << "\n";
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

Status RunDecisionImport(Invocation& inv) {
  MSP_RETURN_IF_ERROR(NeedMission(inv));
  AdrImportOptions o;
  o.component = inv.flags.Get("--component");
  if (inv.flags.Has("--criticality")) {
    MSP_ASSIGN_OR_RETURN(o.criticality, EnumFlag(inv, "--criticality", inv.flags.Get("--criticality"),
                                                 &ParseCriticality, &CriticalityName));
  }
  MSP_ASSIGN_OR_RETURN(o.access_level, AccessLevelFlag(inv, 0));
  o.decided_by = inv.flags.Get("--decided-by", inv.ns.operator_id);
  o.dry_run = inv.flags.Has("--dry-run");
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(AdrImportReport r,
                       ImportAdrDirectory(*engine, inv.ns, inv.flags.positionals[0], o, inv.actor));
  // A partial import (some files failed, the rest imported) exits 1, as
  // `msp ingest` does.
  if (r.failed > 0) inv.exit_code = kExitFailure;
  if (inv.json) {
    PrintJson(inv, AdrImportReportToJson(r));
    return Status::Ok();
  }
  for (const AdrImportEntry& e : r.entries) {
    if (e.action == "failed") {
      *inv.err << "msp: failed: " << e.file << ": " << e.error << "\n";
    } else {
      *inv.out << e.action << "  " << e.id << "  " << e.title << "\n";
    }
  }
  for (const std::string& w : r.warnings) *inv.err << "msp: warning: " << w << "\n";
  *inv.out << (o.dry_run ? "dry run: would add " : "added ") << r.added << ", updated " << r.updated
           << ", unchanged " << r.unchanged << ", failed " << r.failed << "\n";
  return Status::Ok();
}

Status RunPrincipleAdd(Invocation& inv) {
  MSP_RETURN_IF_ERROR(NeedMission(inv));
  Principle p;
  p.principle_id = inv.flags.positionals[0];
  p.statement = inv.flags.Get("--statement");
  p.rationale = inv.flags.Get("--rationale");
  p.author = inv.flags.Get("--author", inv.ns.operator_id);
  MSP_ASSIGN_OR_RETURN(p.access_level, AccessLevelFlag(inv, 0));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(Principle stored, AddPrinciple(*engine, inv.ns, p, inv.actor));
  if (inv.json) {
    PrintJson(inv, PrincipleToJson(stored));
  } else {
    *inv.out << "stored principle " << stored.principle_id << " version " << stored.version << "\n";
  }
  return Status::Ok();
}

Status RunPrincipleEdit(Invocation& inv) {
  MSP_RETURN_IF_ERROR(NeedMission(inv));
  if (!inv.flags.Has("--base-version")) {
    return Usage(inv, "--base-version N is required: the version you are editing (see `msp principle show`)");
  }
  PrincipleEdit e;
  e.principle_id = inv.flags.positionals[0];
  Result<int64_t> base = inv.flags.GetInt("--base-version", 0, 1, 1000000);
  if (!base.ok()) return Usage(inv, base.status().message());
  e.base_version = static_cast<int>(*base);
  e.statement = inv.flags.Get("--statement");
  e.rationale = inv.flags.Get("--rationale");
  if (e.statement.empty() && e.rationale.empty() && !inv.flags.Has("--access-level")) {
    return Usage(inv, "nothing to change: give --statement, --rationale or --access-level");
  }
  e.author = inv.flags.Get("--author", inv.ns.operator_id);
  if (inv.flags.Has("--access-level")) {
    MSP_ASSIGN_OR_RETURN(int level, AccessLevelFlag(inv, 0));
    e.access_level = level;
  }
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(Principle stored, EditPrinciple(*engine, inv.ns, e, inv.actor));
  if (inv.json) {
    PrintJson(inv, PrincipleToJson(stored));
  } else {
    *inv.out << "stored principle " << stored.principle_id << " version " << stored.version << "\n";
  }
  return Status::Ok();
}

Status RunPrincipleShow(Invocation& inv) {
  MSP_RETURN_IF_ERROR(NeedMission(inv));
  MSP_ASSIGN_OR_RETURN(Asker asker, AskerOf(inv));
  Result<int64_t> version = inv.flags.GetInt("--version", 0, 1, 1000000);
  if (!version.ok()) return Usage(inv, version.status().message());
  if (inv.flags.Has("--all") && inv.flags.Has("--version")) return Usage(inv, "--all and --version exclude each other");
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  const std::string& id = inv.flags.positionals[0];
  std::vector<Principle> shown;
  if (inv.flags.Has("--all")) {
    MSP_ASSIGN_OR_RETURN(shown, PrincipleVersions(*engine, inv.ns, id, asker));
  } else {
    MSP_ASSIGN_OR_RETURN(Principle p, GetPrinciple(*engine, inv.ns, id, static_cast<int>(*version), asker));
    shown.push_back(std::move(p));
  }
  if (inv.json) {
    if (!inv.flags.Has("--all")) {
      PrintJson(inv, PrincipleToJson(shown[0]));
    } else {
      json arr = json::array();
      for (const Principle& p : shown) arr.push_back(PrincipleToJson(p));
      PrintJson(inv, arr);
    }
    return Status::Ok();
  }
  for (const Principle& p : shown) PrintPrinciple(*inv.out, p);
  return Status::Ok();
}

Status RunPrincipleList(Invocation& inv) {
  MSP_RETURN_IF_ERROR(NeedMission(inv));
  MSP_ASSIGN_OR_RETURN(Asker asker, AskerOf(inv));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(std::vector<Principle> list, ListPrinciples(*engine, inv.ns, asker));
  if (inv.json) {
    json arr = json::array();
    for (const Principle& p : list) arr.push_back(PrincipleToJson(p));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  if (list.empty()) *inv.out << "no principles\n";
  for (const Principle& p : list) PrintPrinciple(*inv.out, p);
  return Status::Ok();
}

Status RunOperatorSet(Invocation& inv) {
  if (!inv.flags.Has("--clearance")) return Usage(inv, "--clearance N (0..9) is required");
  OperatorRecord op;
  op.operator_id = inv.flags.positionals[0];
  Result<int64_t> c = inv.flags.GetInt("--clearance", 0, 0, kMaxAccessLevel);
  if (!c.ok()) return Usage(inv, c.status().message());
  op.clearance = static_cast<int>(*c);
  op.name = inv.flags.Get("--name");
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(OperatorRecord stored, SetOperator(*engine, inv.ns, op, inv.actor));
  if (inv.json) {
    PrintJson(inv, OperatorToJson(stored));
  } else {
    *inv.out << "operator " << stored.operator_id << " has clearance " << stored.clearance
             << (stored.ns.mission.empty() ? " in every mission of tenant " + stored.ns.tenant
                                           : " in mission " + stored.ns.mission)
             << "\n";
  }
  return Status::Ok();
}

Status RunOperatorList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(std::vector<OperatorRecord> ops, ListOperators(*engine, inv.ns));
  if (inv.json) {
    json arr = json::array();
    for (const OperatorRecord& op : ops) arr.push_back(OperatorToJson(op));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  if (ops.empty()) *inv.out << "no operators (every operator has clearance 0)\n";
  for (const OperatorRecord& op : ops) {
    *inv.out << op.operator_id << "  clearance " << op.clearance << "  "
             << (op.ns.mission.empty() ? "tenant-wide" : "mission " + op.ns.mission)
             << (op.name.empty() ? "" : "  " + op.name) << "\n";
  }
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
       "import a folder of architecture decision records (Markdown, Nygard's format); re-importing updates",
       {{"--component", "NAME", "the component of every imported decision"},
        {"--criticality", "LEVEL", "low | normal | high | critical (default normal)"},
        {"--access-level", "N", "0..9 (default 0)"},
        {"--decided-by", "WHO", "when an ADR names no deciders (default --operator)"},
        {"--dry-run", "", "parse and report; write nothing"}},
       {"DIR"}, 1, kRecordVerb, &RunDecisionImport},
      {"principle add", "ID --statement TEXT --mission ID [flags]", "register version 1 of a principle (ID like P-7)",
       {{"--statement", "TEXT", "the principle"},
        {"--rationale", "TEXT", "why it holds"},
        {"--author", "WHO", "default --operator"},
        {"--access-level", "N", "0..9 (default 0)"}},
       {"ID"}, 1, kRecordVerb, &RunPrincipleAdd},
      {"principle edit", "ID --base-version N [--statement TEXT] [--rationale TEXT] --mission ID [flags]",
       "store the next version of a principle; refused (exit 1) when N is no longer the current version",
       {{"--base-version", "N", "the version this edit changes"},
        {"--statement", "TEXT", "the new statement (default: keep)"},
        {"--rationale", "TEXT", "the new rationale (default: keep)"},
        {"--author", "WHO", "default --operator"},
        {"--access-level", "N", "0..9 (default: keep)"}},
       {"ID"}, 1, kRecordVerb, &RunPrincipleEdit},
      {"principle show", "ID [--version N | --all] --mission ID [flags]",
       "a principle: the current version, one version, or every version",
       {{"--version", "N", "this version"},
        {"--all", "", "every version, oldest first"},
        {"--clearance", "N", "read at clearance N (0..9) instead of --operator's"}},
       {"ID"}, 1, kRecordVerb | kReadsAtClearance, &RunPrincipleShow},
      {"principle list", "--mission ID [flags]", "the current version of every principle of the mission",
       {{"--clearance", "N", "read at clearance N (0..9) instead of --operator's"}}, {}, 0, kRecordVerb | kReadsAtClearance,
       &RunPrincipleList},
      {"operator set", "ID --clearance N [--name NAME] [--mission ID] [flags]",
       "set an operator's clearance (0..9) in the mission, or tenant-wide without --mission",
       {{"--clearance", "N", "0..9: the highest access level the operator may read"},
        {"--name", "NAME", "display name"}},
       {"ID"}, 1, kRecordVerb, &RunOperatorSet},
      {"operator list", "[--mission ID] [flags]", "the operators and their clearances", {}, {}, 0, kRecordVerb,
       &RunOperatorList},
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
       "--mission ID --from OPERATOR --to OPERATOR [--since TIME] [flags]",
       "the handoff digest for the next operator: open threats and questions, escalation, decisions and events "
       "since, causes before effects, the predecessor's correction profile",
       {{"--from", "OPERATOR", "the operator handing over"},
        {"--to", "OPERATOR", "the next operator (their clearance applies)"},
        {"--since", "TIME", "decisions and events from then on (ISO 8601; default: all)"},
        {"--budget", "N", "tokens the digest may use (default 8000)"}},
       {},
       0,
       kRecordVerb,
       &RunHandoff},
      {"mark-used", "RETRIEVAL_ID ENTRY_ID... --mission ID [flags]",
       "mark entries a retrieval served as used (for `report redundancy`)", {}, {"RETRIEVAL_ID", "ENTRY_ID..."}, 2,
       kRecordVerb, &RunMarkUsed},
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
