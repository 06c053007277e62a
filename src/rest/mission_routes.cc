// The mission-memory routes of the REST API (seed 003): events, the load,
// plan, correction and redundancy reports and the captured prompts. (POST
// /v1/query, workflow_memory_query, the decision routes, decision_record ...
// decision_supersede and decision_import_adr, the correction routes,
// correction_record, correction_list and correction_show, the principle
// routes, principle_list, principle_show and principle_put, the operator
// registry's, operator_set, operator_list and operator_show, POST
// /v1/handoff, handoff_digest, and POST /v1/retrievals/{retrieval_id}/used,
// workflow_mark_used, are src/api's.) Thin faces over
// msp/mission.h and msp/digest.h, as the CLI verbs and the MCP tools.
//
// Who reads: the request's operator (namespace.operator in bodies, ?operator=
// in GETs), at their registry clearance capped by the API key's; without
// one, the key itself (CallerAsker). Every call goes through the request's
// caller layer (AsCaller), which enforces the key's tenant and clearance.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec/json_reader.h"
#include "coding/prompt_store.h"
#include "codec/memory_json.h"
#include "mission/records.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "orchestrate/orchestrator.h"
#include "orchestrate/task_json.h"
#include "rest/request_json.h"
#include "rest/rest_route.h"
#include "server/http_status.h"
#include "util/time.h"

namespace msp {
namespace {

using nlohmann::json;
using Reply = RestReply;

// Largest list a GET answers.
constexpr int64_t kMaxList = 1000;

Status RequireMissionPart(const Namespace& ns, bool body) {
  if (!ns.mission.empty()) return Status::Ok();
  return Status::InvalidArgument(body ? "field 'namespace.mission' is required: mission records belong to a mission"
                                      : "parameter 'mission' is required: mission records belong to a mission");
}

Result<Namespace> MissionFromBody(const json& body, const std::string& tenant) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromBody(body, tenant));
  MSP_RETURN_IF_ERROR(RequireMissionPart(ns, /*body=*/true));
  return ns;
}

Result<Namespace> MissionFromQuery(const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromQuery(r.query, r.tenant()));
  MSP_RETURN_IF_ERROR(RequireMissionPart(ns, /*body=*/false));
  return ns;
}

// --------------------------------------------------------------- events

Result<Reply> AddEventRoute(RestApi& api, const RestRequest& r) {
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known(
      {"namespace", "type", "component", "criticality", "text", "cause", "resolves", "access_level", "tags"}));
  EventRequest e;
  MSP_ASSIGN_OR_RETURN(e.mission, MissionFromBody(r.body, r.tenant()));
  e.operator_id = e.mission.operator_id;
  MSP_RETURN_IF_ERROR(body.String("type", &e.type));
  MSP_RETURN_IF_ERROR(body.String("component", &e.component));
  MSP_RETURN_IF_ERROR(body.String("text", &e.text));
  if (e.type.empty()) {
    return Status::InvalidArgument("field 'type' is required: incident, alert, question, threat, change, resolution");
  }
  if (e.component.empty()) return Status::InvalidArgument("field 'component' is required");
  if (e.text.empty()) return Status::InvalidArgument("field 'text' is required: what happened");
  MSP_RETURN_IF_ERROR(body.Enum("criticality", &e.criticality, ParseCriticality, CriticalityName));
  MSP_RETURN_IF_ERROR(body.String("cause", &e.cause_id));
  MSP_RETURN_IF_ERROR(body.String("resolves", &e.resolves_id));
  MSP_RETURN_IF_ERROR(body.Int("access_level", &e.access_level, 0, kMaxAccessLevel));
  MSP_RETURN_IF_ERROR(body.Strings("tags", &e.tags));
  e.actor = api.actor();
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  MSP_ASSIGN_OR_RETURN(MissionEvent stored, wm->AddEvent(e));
  return Reply::Json(201, EventToJson(stored));
}

Result<Reply> ListEventsRoute(RestApi& api, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  MSP_ASSIGN_OR_RETURN(TimeMs from, TimeParam(r.query, "from"));
  MSP_ASSIGN_OR_RETURN(TimeMs to, TimeParam(r.query, "to"));
  if (from != 0 && to != 0 && to <= from) return Status::InvalidArgument("parameter 'to' must be later than 'from'");
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(r.engine(), ns, r.caller, ns.operator_id));
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(r.engine(), ns, asker));
  Namespace mission = ns;
  mission.operator_id.clear();
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  MSP_ASSIGN_OR_RETURN(std::vector<MissionEvent> events, wm->Events(mission, from, to, clearance));
  json out = json::array();
  for (const MissionEvent& e : events) out.push_back(EventToJson(e));
  return Reply::Json(200, {{"events", std::move(out)}});
}

// GET /v1/reports/load: the mission's event load now (WorkflowMemory::Load,
// what the degraded mode ranks by): the rate over mission.rate_window_min
// against mission.capacity_events_per_min, and alpha (0 at or below
// capacity, 1 at twice it). Counts the events the asker may see.
Result<Reply> LoadReportRoute(RestApi& api, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(r.engine(), ns, r.caller, ns.operator_id));
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(r.engine(), ns, asker));
  Namespace mission = ns;
  mission.operator_id.clear();
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  MSP_ASSIGN_OR_RETURN(LoadState load, wm->Load(mission, clearance));
  return Reply::Json(200, {{"rate_per_min", load.rate_per_min},
                           {"events_in_window", load.events_in_window},
                           {"window_min", load.window_min},
                           {"capacity_per_min", load.capacity_per_min},
                           {"alpha", load.alpha},
                           {"degraded", load.degraded},
                           {"mode", load.mode}});
}

// GET /v1/reports/plan: the push orchestrator's plan now (Orchestrator::Plan,
// as `msp orchestrate --plan --json` prints it): every LONG-TERM task the
// asker may see with its priority, signals, due and last refresh; due ones in
// queue order first. Reads only.
Result<Reply> PlanReportRoute(RestApi& api, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  Namespace mission = ns;
  mission.operator_id.clear();
  mission.session.clear();
  Orchestrator orchestrator(r.engine(), mission, api.options().orchestrate);
  MSP_ASSIGN_OR_RETURN(std::vector<TaskPlan> plan, orchestrator.Plan());
  json tasks = json::array();
  for (const TaskPlan& p : plan) tasks.push_back(TaskPlanToJson(p));
  return Reply::Json(200, {{"tasks", std::move(tasks)}});
}

// GET /v1/prompts: the captured prompts of the coding agents (the prompt
// repository, PromptStore::List, as `msp prompts list` reads it), newest
// `limit` first: `repository` (its path or last component), `session`,
// `from`, `to`. The repository has no tenant and no access levels: only a
// key of kPromptsTenant without a clearance limit reads it (403 otherwise,
// as for the tenant-wide reports). Reads only: prompts still in the spool
// (capture.mode = spool, imported within moments) are not listed.
Result<Reply> PromptsRoute(RestApi& api, const RestRequest& r) {
  if (r.clearance()) return ClearanceForbidden("the captured prompts", *r.clearance());
  if (r.tenant() != kPromptsTenant) {
    return Reply::Json(403, ErrorJson("forbidden", "the captured prompts of this server belong to tenant '" +
                                                       std::string(kPromptsTenant) + "', not to tenant '" +
                                                       r.tenant() + "'"));
  }
  PromptFilter f;
  MSP_ASSIGN_OR_RETURN(f.from, TimeParam(r.query, "from"));
  MSP_ASSIGN_OR_RETURN(f.to, TimeParam(r.query, "to"));
  if (f.from != 0 && f.to != 0 && f.to <= f.from) return Status::InvalidArgument("parameter 'to' must be later than 'from'");
  f.repository = StringParam(r.query, "repository");
  f.session_id = StringParam(r.query, "session");
  MSP_ASSIGN_OR_RETURN(int64_t limit, IntParam(r.query, "limit", 1, kMaxList, 200));
  f.newest = static_cast<size_t>(limit);
  json out = json::array();
  const std::string& path = api.options().prompt_repository;
  if (!path.empty()) {
    Result<std::unique_ptr<PromptStore>> store = PromptStore::Open(path, /*create=*/false);
    if (!store.ok() && !store.status().IsNotFound()) return store.status();
    if (store.ok()) {
      MSP_ASSIGN_OR_RETURN(std::vector<CapturedPrompt> prompts, (*store)->List(f));
      for (auto it = prompts.rbegin(); it != prompts.rend(); ++it) {
        out.push_back({{"id", it->id},
                       {"at", FormatIso8601(it->at)},
                       {"text", it->text},
                       {"session", it->session_id},
                       {"repository", it->repository},
                       {"branch", it->branch},
                       {"cwd", it->cwd},
                       {"permission_mode", it->permission_mode},
                       {"agent", it->agent}});
      }
    }
  }
  return Reply::Json(200, {{"prompts", std::move(out)}});
}

// -------------------------------------------------------------- reports

Result<std::pair<TimeMs, TimeMs>> ReportPeriod(const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(TimeMs from, TimeParam(r.query, "from"));
  MSP_ASSIGN_OR_RETURN(TimeMs to, TimeParam(r.query, "to"));
  if (from != 0 && to != 0 && to <= from) return Status::InvalidArgument("parameter 'to' must be later than 'from'");
  return std::make_pair(from, to);
}

Result<Reply> CorrectionsReportRoute(RestApi& api, const RestRequest& r) {
  if (r.clearance()) return ClearanceForbidden("the corrections report", *r.clearance());
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  MSP_ASSIGN_OR_RETURN(auto period, ReportPeriod(r));
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  MSP_ASSIGN_OR_RETURN(CorrectionsReport c, wm->Corrections(ns, period.first, period.second));
  json weeks = json::array(), components = json::array();
  for (const CorrectionWeek& w : c.weeks) {
    weeks.push_back({{"week", w.week},
                     {"retrievals", w.retrievals},
                     {"corrections", w.corrections},
                     {"corrected_retrievals", w.corrected_retrievals},
                     {"rate", w.rate}});
  }
  for (const CorrectionComponent& k : c.components) {
    components.push_back({{"component", k.component}, {"corrections", k.corrections}, {"rate", k.rate}});
  }
  return Reply::Json(200, {{"weeks", std::move(weeks)},
                           {"components", std::move(components)},
                           {"retrievals", c.retrievals},
                           {"linked_corrections", c.linked_corrections},
                           {"unlinked_corrections", c.unlinked_corrections},
                           {"rate", c.rate}});
}

// The pairs "served X, corrected to Y" as JSON lines (docs/mission.md), the
// export of `msp report corrections --export`.
Result<Reply> CorrectionPairsRoute(RestApi& api, const RestRequest& r) {
  if (r.clearance()) return ClearanceForbidden("the correction pairs", *r.clearance());
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  MSP_ASSIGN_OR_RETURN(auto period, ReportPeriod(r));
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  std::ostringstream out;
  MSP_RETURN_IF_ERROR(wm->ExportCorrectionPairs(ns, period.first, period.second, out).status());
  Reply reply;
  reply.text = out.str();
  reply.content_type = "application/x-ndjson";
  return reply;
}

json RedundancyJson(const RedundancySession& s) {
  return {{"session", s.session},
          {"retrievals", s.retrievals},
          {"marked_retrievals", s.marked_retrievals},
          {"served_entries", s.served_entries},
          {"used_entries", s.used_entries},
          {"served_tokens", s.served_tokens},
          {"used_tokens", s.used_tokens},
          {"unused_share_tokens", s.unused_share_tokens},
          {"unused_share_count", s.unused_share_count}};
}

Result<Reply> RedundancyReportRoute(RestApi& api, const RestRequest& r) {
  if (r.clearance()) return ClearanceForbidden("the redundancy report", *r.clearance());
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  MSP_ASSIGN_OR_RETURN(auto period, ReportPeriod(r));
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  MSP_ASSIGN_OR_RETURN(RedundancyReport red, wm->Redundancy(ns, period.first, period.second));
  json sessions = json::array();
  for (const RedundancySession& s : red.sessions) sessions.push_back(RedundancyJson(s));
  return Reply::Json(200,
                     {{"sessions", std::move(sessions)}, {"total", RedundancyJson(red.total)}, {"counter", red.counter}});
}

}  // namespace


std::vector<RestRoute> MissionRoutes() {
  const std::vector<std::string> ns_tenant = {"namespace.tenant"};
  const std::vector<std::string> asker = {"mission", "operator"};
  auto with = [&asker](std::vector<std::string> names) {
    names.insert(names.begin(), asker.begin(), asker.end());
    return names;
  };
  return {
      {"POST", "/v1/events", BodyKind::kJson, ns_tenant, {}, &AddEventRoute},
      {"GET", "/v1/events", BodyKind::kNone, {}, with({"from", "to"}), &ListEventsRoute},
      {"GET", "/v1/reports/load", BodyKind::kNone, {}, asker, &LoadReportRoute},
      {"GET", "/v1/reports/plan", BodyKind::kNone, {}, {"mission"}, &PlanReportRoute},
      {"GET", "/v1/prompts", BodyKind::kNone, {}, {"repository", "session", "from", "to", "limit"}, &PromptsRoute},
      {"GET", "/v1/reports/corrections", BodyKind::kNone, {}, {"mission", "from", "to"}, &CorrectionsReportRoute},
      {"GET", "/v1/reports/corrections/pairs", BodyKind::kNone, {}, {"mission", "from", "to"}, &CorrectionPairsRoute},
      {"GET", "/v1/reports/redundancy", BodyKind::kNone, {}, {"mission", "from", "to"}, &RedundancyReportRoute},
  };
}

}  // namespace msp
