// Mission retrieval verbs: handoff, mark-used (src/api's handoff_digest and
// workflow_mark_used), report corrections / correction-pairs / redundancy /
// load, event add / list (src/api's reports and events), printed. (query,
// workflow_memory_query, is src/api's: verbs_api.cc.)
// Every figure names the token counter it was counted with.
#include <cstdio>
#include <fstream>
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"
#include "mission/records.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "util/time.h"

namespace msp {
namespace {

std::string Percent(double share) { return Fixed(100.0 * share, 1) + "%"; }

// "text" padded with spaces to `width` bytes (ASCII columns).
std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

}  // namespace

// handoff and mark-used: src/api's handoff_digest and workflow_mark_used
// (api/handoff.cc, api/mark_used.cc), printed.
Status RunHandoff(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, MissionAnswerToPrint(inv));
  if (!answer) return Status::Ok();
  const std::string markdown = (*answer)["markdown"].get<std::string>();
  *inv.out << markdown;
  if (markdown.empty()) {
    *inv.err << "msp: budget " << (*answer)["token_budget"].get<int64_t>() << " tokens holds nothing\n";
  }
  return Status::Ok();
}

Status RunMarkUsed(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, MissionAnswerToPrint(inv));
  if (!answer) return Status::Ok();
  *inv.out << "retrieval " << (*answer)["retrieval_id"].get<std::string>() << ": " << (*answer)["used"].size()
           << " of " << (*answer)["served"].get<int64_t>() << " served entries marked used\n";
  return Status::Ok();
}

// report corrections / correction-pairs / redundancy / load, event add /
// list: src/api's report and event operations (api/reports.cc,
// api/events.cc), printed.
namespace {

int64_t IntAt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

double NumberAt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string StringAt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const nlohmann::json& ArrayAt(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNone = nlohmann::json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kNone;
}

// " at clearance N" when the report left records out (N below the highest).
std::string ClearanceNote(const nlohmann::json& answer) {
  const int64_t c = IntAt(answer, "clearance");
  return c < kMaxAccessLevel ? ", at clearance " + std::to_string(c) : std::string();
}

// The pairs of report_correction_pairs as JSON lines on `out`.
Status WritePairs(const nlohmann::json& answer, std::ostream& out) {
  for (const nlohmann::json& pair : ArrayAt(answer, "pairs")) out << DumpJson(pair) << "\n";
  if (!out) return Status::IoError("cannot write the correction pairs");
  return Status::Ok();
}

void PrintCorrectionsReport(Invocation& inv, const nlohmann::json& r) {
  std::ostream& out = *inv.out;
  out << "retrieval-correction signal, mission " << inv.ns.mission << ClearanceNote(r)
      << " (corrections linked to retrievals / retrievals, by the ISO week of the retrieval)\n";
  out << Pad("week", 10) << Pad("retrievals", 12) << Pad("corrections", 13) << Pad("corrected", 11) << "rate\n";
  for (const nlohmann::json& w : ArrayAt(r, "weeks")) {
    out << Pad(StringAt(w, "week"), 10) << Pad(std::to_string(IntAt(w, "retrievals")), 12)
        << Pad(std::to_string(IntAt(w, "corrections")), 13) << Pad(std::to_string(IntAt(w, "corrected_retrievals")), 11)
        << Fixed(NumberAt(w, "rate"), 3) << "\n";
  }
  out << Pad("total", 10) << Pad(std::to_string(IntAt(r, "retrievals")), 12)
      << Pad(std::to_string(IntAt(r, "linked_corrections")), 13) << Pad("", 11) << Fixed(NumberAt(r, "rate"), 3)
      << "\n";
  out << "corrections naming no logged retrieval: " << IntAt(r, "unlinked_corrections") << "\n";
  const nlohmann::json& components = ArrayAt(r, "components");
  if (!components.empty()) {
    out << "\nby component (linked corrections, and per retrieval):\n";
    for (const nlohmann::json& c : components) {
      out << "  " << Pad(StringAt(c, "component"), 20) << Pad(std::to_string(IntAt(c, "corrections")), 6)
          << Fixed(NumberAt(c, "rate"), 3) << "\n";
    }
  }
}

}  // namespace

// --export FILE: the pairs (report_correction_pairs) as JSON lines as well;
// "-": only them, on standard output.
Status RunReportCorrections(Invocation& inv) {
  if (!inv.flags.Has("--export")) {
    MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
    if (answer) PrintCorrectionsReport(inv, *answer);
    return Status::Ok();
  }
  const std::string path = inv.flags.Get("--export");
  if (path.empty()) return Usage(inv, "--export needs a file path (- for standard output)");
  MSP_ASSIGN_OR_RETURN(nlohmann::json pairs, AnswerOfOperation(inv, "report_correction_pairs", /*create=*/false));
  if (path == "-") return WritePairs(pairs, *inv.out);
  MSP_ASSIGN_OR_RETURN(nlohmann::json report, AnswerOfOperation(inv, "report_corrections", /*create=*/false));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Status::IoError("cannot write " + path);
  MSP_RETURN_IF_ERROR(WritePairs(pairs, file));
  file.close();
  if (!file) return Status::IoError("cannot write " + path);
  const size_t exported = ArrayAt(pairs, "pairs").size();
  if (inv.json) {
    report["exported_pairs"] = exported;
    PrintJson(inv, report);
    return Status::Ok();
  }
  PrintCorrectionsReport(inv, report);
  *inv.out << "\nwrote " << exported << " pairs (served X, corrected to Y) to " << path << "\n";
  return Status::Ok();
}

// Without --json: one pair a line (JSON lines), as --export writes them.
Status RunReportCorrectionPairs(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) return WritePairs(*answer, *inv.out);
  return Status::Ok();
}

Status RunReportRedundancy(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const nlohmann::json& r = *answer;
  std::ostream& out = *inv.out;
  out << "served-but-unused context per session, mission " << inv.ns.mission << ClearanceNote(r)
      << " (tokens: counter " << StringAt(r, "counter") << "); target <= 20%, flat loading measured 60%\n";
  out << Pad("session", 16) << Pad("retrievals", 12) << Pad("marked", 8) << Pad("entries used/served", 21)
      << Pad("tokens used/served", 20) << Pad("unused tokens", 15) << "unused entries\n";
  auto row = [&](const nlohmann::json& s, const std::string& name) {
    out << Pad(name, 16) << Pad(std::to_string(IntAt(s, "retrievals")), 12)
        << Pad(std::to_string(IntAt(s, "marked_retrievals")), 8)
        << Pad(std::to_string(IntAt(s, "used_entries")) + "/" + std::to_string(IntAt(s, "served_entries")), 21)
        << Pad(std::to_string(IntAt(s, "used_tokens")) + "/" + std::to_string(IntAt(s, "served_tokens")), 20)
        << Pad(Percent(NumberAt(s, "unused_share_tokens")), 15) << Percent(NumberAt(s, "unused_share_count")) << "\n";
  };
  for (const nlohmann::json& s : ArrayAt(r, "sessions")) {
    const std::string session = StringAt(s, "session");
    row(s, session.empty() ? "(no session)" : session);
  }
  const nlohmann::json total = r.contains("total") ? r["total"] : nlohmann::json::object();
  row(total, "total");
  if (IntAt(total, "retrievals") > IntAt(total, "marked_retrievals")) {
    out << "retrievals with no entry marked used count as wholly unused (`msp mark-used`)\n";
  }
  return Status::Ok();
}

Status RunReportLoad(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const nlohmann::json& s = *answer;
  const std::string mode = StringAt(s, "mode");
  *inv.out << IntAt(s, "events_in_window") << " events in the last " << IntAt(s, "window_min")
           << " min: " << Fixed(NumberAt(s, "rate_per_min"), 2) << "/min, capacity "
           << Fixed(NumberAt(s, "capacity_per_min"), 2) << "/min; "
           << (s.value("degraded", false) ? "degraded mode, alpha " + Fixed(NumberAt(s, "alpha"), 3)
                                          : std::string("normal ranking"))
           << (mode == "auto" ? std::string() : " (set by hand: mission.degraded_mode = " + mode + ")")
           << ClearanceNote(s) << "\n";
  return Status::Ok();
}

Status RunEventAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) *inv.out << StringAt(*answer, "id") << "\n";
  return Status::Ok();
}

Status RunEventList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const nlohmann::json& events = ArrayAt(*answer, "events");
  if (events.empty()) *inv.out << "no events\n";
  for (const nlohmann::json& e : events) {
    *inv.out << StringAt(e, "created_at") << "  " << StringAt(e, "id") << "  " << StringAt(e, "type") << "  "
             << StringAt(e, "component") << "  " << StringAt(e, "criticality") << "  "
             << OneLine(StringAt(e, "text"), 80);
    if (!StringAt(e, "cause").empty()) *inv.out << "  (cause " << StringAt(e, "cause") << ")";
    if (!StringAt(e, "resolves").empty()) *inv.out << "  (resolves " << StringAt(e, "resolves") << ")";
    *inv.out << "\n";
  }
  return Status::Ok();
}

}  // namespace msp
