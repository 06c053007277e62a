// Episodic memory and consolidation: episode add, episode list, session end, consolidate.
#include <limits>
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

// The step's type as recorded in its body ({"type": ...}), or "".
std::string StepType(const Memory& m) {
  nlohmann::json body = nlohmann::json::parse(m.body_json, nullptr, /*allow_exceptions=*/false);
  if (body.is_object() && body.contains("type") && body["type"].is_string()) return body["type"].get<std::string>();
  return "";
}

}  // namespace

Status RunEpisodeAdd(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireSession(inv));
  const ParsedFlags& flags = inv.flags;
  EpisodeStep step;
  step.ns = inv.ns;
  if (flags.Has("--text") == flags.Has("--content")) {
    return Usage(inv, "give exactly one of --text and --content");
  }
  if (flags.Has("--content")) {
    MSP_ASSIGN_OR_RETURN(nlohmann::json content, ParseJsonObject(flags.Get("--content"), "--content"));
    step.content_json = content.dump();
  } else {
    step.text = flags.Get("--text");
  }
  if (flags.Has("--type")) {
    MSP_ASSIGN_OR_RETURN(step.type, EnumFlag(inv, "--type", flags.Get("--type"), &ParseEpisodeType,
                                             &EpisodeTypeName));
  }
  step.tool_name = flags.Get("--tool-name");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (auto [flag, field] : {std::pair<std::string_view, int64_t*>{"--duration-ms", &step.duration_ms},
                             {"--token-count", &step.token_count},
                             {"--step", &step.step_number}}) {
    Result<int64_t> v = flags.GetInt(flag, 0, 0, kMax);
    if (!v.ok()) return Usage(inv, v.status().message());
    *field = *v;
  }
  MSP_ASSIGN_OR_RETURN(step.timestamp, TimeFlag(inv, "--at"));
  step.tags = flags.All("--tag");
  step.source = flags.Get("--source", step.source);
  if (flags.Has("--sensitivity")) {
    MSP_ASSIGN_OR_RETURN(step.sensitivity, EnumFlag(inv, "--sensitivity", flags.Get("--sensitivity"),
                                                    &ParseSensitivity, &SensitivityName));
  }
  step.actor = inv.actor;

  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(Memory m, engine->AddEpisode(step));
  if (inv.json) {
    PrintJson(inv, MemoryToJson(m));
  } else {
    *inv.out << "stored " << m.id << " (session " << m.ns.session << ", step " << m.step_number << ")\n";
  }
  return Status::Ok();
}

Status RunEpisodeList(Invocation& inv) {
  MSP_RETURN_IF_ERROR(RequireSession(inv));
  Result<int64_t> last = inv.flags.GetInt("--last", 0, 1, std::numeric_limits<int>::max());
  if (!last.ok()) return Usage(inv, last.status().message());
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> steps,
                       engine->LastSteps(inv.ns, inv.ns.session, static_cast<int>(*last)));
  if (inv.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const Memory& m : steps) arr.push_back(MemoryToJson(m));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  if (steps.empty()) *inv.out << "no steps in session " << inv.ns.session << "\n";
  for (const Memory& m : steps) {
    *inv.out << "step " << m.step_number << "  " << StepType(m) << "  " << m.id << "  " << OneLine(m.text) << "\n";
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
