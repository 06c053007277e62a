// The mission-memory routes of the REST API not declared in src/api: the
// push orchestrator's plan (it needs the orchestrate.* settings, which no
// call context carries) and the coding agents' captured prompts (a file of
// their own, not the store). Every other mission route is src/api's: the
// decisions (ADR import too), corrections, principles, the operator
// registry, events, the load / correction / redundancy reports, handoff
// digests and usage marks (docs/operations.md). Thin faces over
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

Result<Namespace> MissionFromQuery(const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromQuery(r.query, r.tenant()));
  MSP_RETURN_IF_ERROR(RequireMissionPart(ns, /*body=*/false));
  return ns;
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

}  // namespace


std::vector<RestRoute> MissionRoutes() {
  return {
      {"GET", "/v1/reports/plan", BodyKind::kNone, {}, {"mission"}, &PlanReportRoute},
      {"GET", "/v1/prompts", BodyKind::kNone, {}, {"repository", "session", "from", "to", "limit"}, &PromptsRoute},
  };
}

}  // namespace msp
