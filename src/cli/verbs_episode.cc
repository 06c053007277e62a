// Episodic memory and consolidation: episode add, episode list, session end, consolidate.
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"

namespace msp {
namespace {

Status RequireSession(Invocation& inv) {
  if (inv.ns.session.empty()) return Usage(inv, "--session is required");
  return Status::Ok();
}

void PrintReport(Invocation& inv, const ConsolidationReport& r, std::string_view what) {
  if (inv.json) {
    PrintJson(inv, ConsolidationReportToJson(r));
    return;
  }
  *inv.out << what << ": " << r.episodes_read << " episodes read, " << r.candidates << " candidates, "
           << r.facts_added << " facts added, " << r.facts_merged << " merged, " << r.facts_superseded
           << " superseding\n";
  for (const std::string& id : r.fact_ids) *inv.out << "  fact " << id << "\n";
}

}  // namespace

// episode add: src/api's episode_add (api/episode.cc), printed.
Status RunEpisodeAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/true));
  if (!answer) return Status::Ok();
  *inv.out << "stored " << (*answer)["id"].get<std::string>() << " (session "
           << (*answer)["namespace"].value("session", std::string()) << ", step "
           << (*answer)["step_number"].get<int64_t>() << ")\n";
  return Status::Ok();
}

// episode list: src/api's session_steps (api/episode.cc), a line a step.
Status RunEpisodeList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const nlohmann::json& steps = (*answer)["steps"];
  if (steps.empty()) *inv.out << "no steps in session " << inv.ns.session << "\n";
  for (const nlohmann::json& step : steps) {
    const nlohmann::json& body = step["body"];
    const std::string type = body.is_object() && body.contains("type") && body["type"].is_string()
                                 ? body["type"].get<std::string>()
                                 : std::string();
    *inv.out << "step " << step["step_number"].get<int64_t>() << "  " << type << "  " << step["id"].get<std::string>()
             << "  " << OneLine(step["text"].get<std::string>()) << "\n";
  }
  return Status::Ok();
}

Status RunSessionEnd(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireSession(inv));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(ConsolidationReport r, engine->EndSession(inv.ns, inv.ns.session));
  PrintReport(inv, r, "session " + inv.ns.session + " ended");
  return Status::Ok();
}

Status RunConsolidate(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(ConsolidationReport r, engine->Consolidate(inv.ns, inv.ns.session));
  PrintReport(inv, r, "consolidated");
  return Status::Ok();
}

}  // namespace msp
