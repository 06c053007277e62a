// Mission retrieval verbs: handoff, mark-used (src/api's handoff_digest and
// workflow_mark_used, printed), report corrections / redundancy / load,
// event add / list. (query, workflow_memory_query, is src/api's: verbs_api.cc.)
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

Result<std::unique_ptr<WorkflowMemory>> OpenWorkflowMemory(Invocation& inv, MemoryLayer& engine) {
  Result<std::unique_ptr<WorkflowMemory>> wm = WorkflowMemory::Open(engine, inv.config.options);
  if (!wm.ok()) return wm.status().WithContext("cannot set up the token counter (tokens.counter)");
  return wm;
}

// --since / --until as a checked pair.
Status TimeRange(Invocation& inv, TimeMs* from, TimeMs* to) {
  MSP_ASSIGN_OR_RETURN(*from, TimeFlag(inv, "--since"));
  MSP_ASSIGN_OR_RETURN(*to, TimeFlag(inv, "--until"));
  if (*from != 0 && *to != 0 && *to <= *from) return Usage(inv, "--until must be later than --since");
  return Status::Ok();
}

Status RequireMissionFlag(Invocation& inv) {
  if (inv.ns.mission.empty()) return Usage(inv, "this verb needs --mission ID");
  return Status::Ok();
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

Status RunReportCorrections(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireMissionFlag(inv));
  TimeMs from = 0, to = 0;
  MSP_RETURN_IF_ERROR(TimeRange(inv, &from, &to));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(auto wm, OpenWorkflowMemory(inv, *engine));
  MSP_ASSIGN_OR_RETURN(CorrectionsReport r, wm->Corrections(inv.ns, from, to));
  int64_t exported = -1;
  const std::string path = inv.flags.Get("--export");
  if (inv.flags.Has("--export")) {
    if (path.empty()) return Usage(inv, "--export needs a file path (- for standard output)");
    if (path == "-") {
      MSP_ASSIGN_OR_RETURN(exported, wm->ExportCorrectionPairs(inv.ns, from, to, *inv.out));
      return Status::Ok();
    }
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file) return Status::IoError("cannot write " + path);
    MSP_ASSIGN_OR_RETURN(exported, wm->ExportCorrectionPairs(inv.ns, from, to, file));
    file.close();
    if (!file) return Status::IoError("cannot write " + path);
  }
  if (inv.json) {
    nlohmann::json weeks = nlohmann::json::array(), components = nlohmann::json::array();
    for (const CorrectionWeek& w : r.weeks) {
      weeks.push_back({{"week", w.week},
                       {"retrievals", w.retrievals},
                       {"corrections", w.corrections},
                       {"corrected_retrievals", w.corrected_retrievals},
                       {"rate", w.rate}});
    }
    for (const CorrectionComponent& c : r.components) {
      components.push_back({{"component", c.component}, {"corrections", c.corrections}, {"rate", c.rate}});
    }
    nlohmann::json j{{"weeks", weeks},
                     {"components", components},
                     {"retrievals", r.retrievals},
                     {"linked_corrections", r.linked_corrections},
                     {"unlinked_corrections", r.unlinked_corrections},
                     {"rate", r.rate}};
    if (exported >= 0) j["exported_pairs"] = exported;
    PrintJson(inv, j);
    return Status::Ok();
  }
  std::ostream& out = *inv.out;
  out << "retrieval-correction signal, mission " << inv.ns.mission
      << " (corrections linked to retrievals / retrievals, by the ISO week of the retrieval)\n";
  out << Pad("week", 10) << Pad("retrievals", 12) << Pad("corrections", 13) << Pad("corrected", 11) << "rate\n";
  for (const CorrectionWeek& w : r.weeks) {
    out << Pad(w.week, 10) << Pad(std::to_string(w.retrievals), 12) << Pad(std::to_string(w.corrections), 13)
        << Pad(std::to_string(w.corrected_retrievals), 11) << Fixed(w.rate, 3) << "\n";
  }
  out << Pad("total", 10) << Pad(std::to_string(r.retrievals), 12) << Pad(std::to_string(r.linked_corrections), 13)
      << Pad("", 11) << Fixed(r.rate, 3) << "\n";
  out << "corrections naming no logged retrieval: " << r.unlinked_corrections << "\n";
  if (!r.components.empty()) {
    out << "\nby component (linked corrections, and per retrieval):\n";
    for (const CorrectionComponent& c : r.components) {
      out << "  " << Pad(c.component, 20) << Pad(std::to_string(c.corrections), 6) << Fixed(c.rate, 3) << "\n";
    }
  }
  if (exported >= 0) out << "\nwrote " << exported << " pairs (served X, corrected to Y) to " << path << "\n";
  return Status::Ok();
}

Status RunReportRedundancy(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireMissionFlag(inv));
  TimeMs from = 0, to = 0;
  MSP_RETURN_IF_ERROR(TimeRange(inv, &from, &to));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(auto wm, OpenWorkflowMemory(inv, *engine));
  MSP_ASSIGN_OR_RETURN(RedundancyReport r, wm->Redundancy(inv.ns, from, to));
  auto to_json = [](const RedundancySession& s) {
    return nlohmann::json{{"session", s.session},
                          {"retrievals", s.retrievals},
                          {"marked_retrievals", s.marked_retrievals},
                          {"served_entries", s.served_entries},
                          {"used_entries", s.used_entries},
                          {"served_tokens", s.served_tokens},
                          {"used_tokens", s.used_tokens},
                          {"unused_share_tokens", s.unused_share_tokens},
                          {"unused_share_count", s.unused_share_count}};
  };
  if (inv.json) {
    nlohmann::json sessions = nlohmann::json::array();
    for (const RedundancySession& s : r.sessions) sessions.push_back(to_json(s));
    PrintJson(inv, {{"sessions", sessions}, {"total", to_json(r.total)}, {"counter", r.counter}, {"target", 0.2}});
    return Status::Ok();
  }
  std::ostream& out = *inv.out;
  out << "served-but-unused context per session, mission " << inv.ns.mission << " (tokens: counter " << r.counter
      << "); target <= 20%, flat loading measured 60%\n";
  out << Pad("session", 16) << Pad("retrievals", 12) << Pad("marked", 8) << Pad("entries used/served", 21)
      << Pad("tokens used/served", 20) << Pad("unused tokens", 15) << "unused entries\n";
  auto row = [&](const RedundancySession& s, const std::string& name) {
    out << Pad(name, 16) << Pad(std::to_string(s.retrievals), 12) << Pad(std::to_string(s.marked_retrievals), 8)
        << Pad(std::to_string(s.used_entries) + "/" + std::to_string(s.served_entries), 21)
        << Pad(std::to_string(s.used_tokens) + "/" + std::to_string(s.served_tokens), 20)
        << Pad(Percent(s.unused_share_tokens), 15) << Percent(s.unused_share_count) << "\n";
  };
  for (const RedundancySession& s : r.sessions) row(s, s.session.empty() ? "(no session)" : s.session);
  row(r.total, "total");
  if (r.total.retrievals > r.total.marked_retrievals) {
    out << "retrievals with no entry marked used count as wholly unused (`msp mark-used`)\n";
  }
  return Status::Ok();
}

Status RunReportLoad(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireMissionFlag(inv));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(auto wm, OpenWorkflowMemory(inv, *engine));
  MSP_ASSIGN_OR_RETURN(const Asker asker, CallerAsker(*engine, inv.ns, inv.caller, inv.ns.operator_id));
  const int clearance = *asker.clearance;
  MSP_ASSIGN_OR_RETURN(LoadState s, wm->Load(inv.ns, clearance));
  if (inv.json) {
    PrintJson(inv, {{"rate_per_min", s.rate_per_min},
                    {"events_in_window", s.events_in_window},
                    {"window_min", s.window_min},
                    {"capacity_per_min", s.capacity_per_min},
                    {"alpha", s.alpha},
                    {"degraded", s.degraded},
                    {"mode", s.mode}});
    return Status::Ok();
  }
  *inv.out << s.events_in_window << " events in the last " << s.window_min << " min: " << Fixed(s.rate_per_min, 2)
           << "/min, capacity " << Fixed(s.capacity_per_min, 2) << "/min; "
           << (s.degraded ? "degraded mode, alpha " + Fixed(s.alpha, 3) : std::string("normal ranking"))
           << (s.mode == "auto" ? std::string() : " (set by hand: mission.degraded_mode = " + s.mode + ")") << "\n";
  return Status::Ok();
}

Status RunEventAdd(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireMissionFlag(inv));
  EventRequest e;
  e.mission = inv.ns;
  e.operator_id = inv.ns.operator_id;
  MSP_ASSIGN_OR_RETURN(e.text, TextArgument(inv, 0, /*stdin_dash=*/true));
  e.type = inv.flags.Get("--type");
  if (e.type.empty()) return Usage(inv, "--type is required: incident, alert, question, threat, change, resolution");
  e.component = inv.flags.Get("--component");
  if (e.component.empty()) return Usage(inv, "--component is required");
  if (inv.flags.Has("--criticality")) {
    MSP_ASSIGN_OR_RETURN(e.criticality, EnumFlag(inv, "--criticality", inv.flags.Get("--criticality"),
                                                 &ParseCriticality, &CriticalityName));
  }
  e.cause_id = inv.flags.Get("--cause");
  e.resolves_id = inv.flags.Get("--resolves");
  Result<int64_t> level = inv.flags.GetInt("--access-level", 0, 0, kMaxAccessLevel);
  if (!level.ok()) return Usage(inv, level.status().message());
  e.access_level = static_cast<int>(*level);
  e.tags = inv.flags.All("--tag");
  e.actor = inv.actor;
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(auto wm, OpenWorkflowMemory(inv, *engine));
  MSP_ASSIGN_OR_RETURN(MissionEvent stored, wm->AddEvent(e));
  if (inv.json) {
    PrintJson(inv, {{"id", stored.id},
                    {"type", stored.type},
                    {"component", stored.component},
                    {"criticality", CriticalityName(stored.criticality)},
                    {"cause", stored.cause_id},
                    {"resolves", stored.resolves_id},
                    {"created_at", FormatIso8601(stored.created_at)}});
  } else {
    *inv.out << stored.id << "\n";
  }
  return Status::Ok();
}

Status RunEventList(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireMissionFlag(inv));
  TimeMs from = 0, to = 0;
  MSP_RETURN_IF_ERROR(TimeRange(inv, &from, &to));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(auto wm, OpenWorkflowMemory(inv, *engine));
  MSP_ASSIGN_OR_RETURN(const Asker asker, CallerAsker(*engine, inv.ns, inv.caller, inv.ns.operator_id));
  const int clearance = *asker.clearance;
  MSP_ASSIGN_OR_RETURN(std::vector<MissionEvent> events, wm->Events(inv.ns, from, to, clearance));
  if (inv.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const MissionEvent& e : events) arr.push_back(EventToJson(e));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  if (events.empty()) *inv.out << "no events\n";
  for (const MissionEvent& e : events) {
    *inv.out << FormatIso8601(e.created_at) << "  " << e.id << "  " << e.type << "  " << e.component << "  "
             << CriticalityName(e.criticality) << "  " << OneLine(e.text, 80);
    if (!e.cause_id.empty()) *inv.out << "  (cause " << e.cause_id << ")";
    if (!e.resolves_id.empty()) *inv.out << "  (resolves " << e.resolves_id << ")";
    *inv.out << "\n";
  }
  return Status::Ok();
}

}  // namespace msp
