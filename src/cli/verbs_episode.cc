// Episodic memory and consolidation: episode add, episode list, session end, consolidate.
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"

namespace msp {
namespace {

// A consolidation report (ConsolidationReportToJson's form) as a line and
// its facts.
void PrintReport(Invocation& inv, const nlohmann::json& r, std::string_view what) {
  *inv.out << what << ": " << r["episodes_read"].get<int64_t>() << " episodes read, "
           << r["candidates"].get<int64_t>() << " candidates, " << r["facts_added"].get<int64_t>()
           << " facts added, " << r["facts_merged"].get<int64_t>() << " merged, "
           << r["facts_superseded"].get<int64_t>() << " superseding\n";
  for (const nlohmann::json& id : r["fact_ids"]) *inv.out << "  fact " << id.get<std::string>() << "\n";
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

// session end: src/api's session_end (api/episode.cc), printed.
Status RunSessionEnd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintReport(inv, *answer, "session " + inv.ns.session + " ended");
  return Status::Ok();
}

// consolidate: src/api's consolidate (api/facts.cc), printed.
Status RunConsolidate(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintReport(inv, *answer, "consolidated");
  return Status::Ok();
}

}  // namespace msp
