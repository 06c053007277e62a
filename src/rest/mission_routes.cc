// The mission-memory routes of the REST API (seed 003): the ADR import, the
// operator registry, the push orchestrator's plan, handoff digests, usage
// marks and the principles registry. (POST /v1/query,
// workflow_memory_query, the decision routes but the ADR import,
// decision_record ... decision_supersede, the correction routes,
// correction_record, correction_list and correction_show, the event routes,
// event_add and event_list, and the reports but the plan, report_load ...
// report_redundancy, are src/api's.) Thin faces over
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

// Largest list a GET answers, and POST /v1/retrievals/{id}/used's entries.
constexpr int64_t kMaxList = 1000;
constexpr int64_t kMaxBudget = 100000000;

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

// The text of a digest's JSON (docs/mission.md) as an object.
Result<json> DigestJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Internal("the digest's JSON does not parse");
  return j;
}

// ------------------------------------------------------------ decisions

// ADRs sent as text (the caller reads its folder): ImportAdrFiles, as
// `msp decision import DIR` does for a folder on the server's disk.
Result<Reply> ImportAdrRoute(RestApi& api, const RestRequest& r) {
  if (r.clearance()) {
    return ClearanceForbidden("an ADR import (it may update any decision imported from the folder)", *r.clearance());
  }
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known(
      {"namespace", "folder", "files", "component", "criticality", "access_level", "decided_by", "dry_run"}));
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromBody(r.body, r.tenant()));
  std::string folder = "adr";
  MSP_RETURN_IF_ERROR(body.String("folder", &folder));
  AdrImportOptions o;
  MSP_RETURN_IF_ERROR(body.String("component", &o.component));
  MSP_RETURN_IF_ERROR(body.Enum("criticality", &o.criticality, ParseCriticality, CriticalityName));
  MSP_RETURN_IF_ERROR(body.Int("access_level", &o.access_level, 0, kMaxAccessLevel));
  MSP_RETURN_IF_ERROR(body.String("decided_by", &o.decided_by));
  MSP_RETURN_IF_ERROR(body.Bool("dry_run", &o.dry_run));
  if (!body.Has("files") || !r.body.at("files").is_array() || r.body.at("files").empty()) {
    return Status::InvalidArgument("field 'files' is required: a non-empty array of {name, text}, one a Markdown ADR");
  }
  const json& list = r.body.at("files");
  if (list.size() > static_cast<size_t>(kMaxList)) {
    return Status::InvalidArgument("field 'files' holds " + std::to_string(list.size()) + " files; at most " +
                                   std::to_string(kMaxList) + " a request");
  }
  std::vector<AdrFile> files;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "files[" + std::to_string(i) + "].";
    JsonReader f(list[i], where);
    MSP_RETURN_IF_ERROR(f.Object());
    MSP_RETURN_IF_ERROR(f.Known({"name", "text"}));
    AdrFile file;
    MSP_RETURN_IF_ERROR(f.String("name", &file.name));
    MSP_RETURN_IF_ERROR(f.String("text", &file.text));
    if (file.name.empty() || file.text.empty()) {
      return Status::InvalidArgument("fields '" + where + "name' and '" + where + "text' are required");
    }
    files.push_back(std::move(file));
  }
  MSP_ASSIGN_OR_RETURN(AdrImportReport report,
                       ImportAdrFiles(r.engine(), ns, folder, std::move(files), o, api.actor()));
  json out = AdrImportReportToJson(report);
  out["dry_run"] = o.dry_run;
  return Reply::Json(o.dry_run || report.added == 0 ? 200 : 201, out);
}

// ------------------------------------------------------------ operators

// Setting a clearance is the registry's administration: a key that has a
// clearance of its own could raise an operator above it, so it may not.
Result<Reply> PutOperatorRoute(RestApi& api, const RestRequest& r) {
  if (r.clearance()) return ClearanceForbidden("setting an operator's clearance", *r.clearance());
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known({"namespace", "clearance", "name"}));
  // The one mission call that accepts no mission: a tenant-wide setting.
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromBody(r.body, r.tenant()));
  if (!body.Has("clearance")) {
    return Status::InvalidArgument("field 'clearance' is required (0.." + std::to_string(kMaxAccessLevel) + ")");
  }
  OperatorRecord op;
  op.operator_id = r.param("operator");
  MSP_RETURN_IF_ERROR(body.Int("clearance", &op.clearance, 0, kMaxAccessLevel));
  MSP_RETURN_IF_ERROR(body.String("name", &op.name));
  MSP_ASSIGN_OR_RETURN(OperatorRecord stored, SetOperator(r.engine(), ns, op, api.actor()));
  return Reply::Json(200, OperatorToJson(stored));
}

Result<Reply> ListOperatorsRoute(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromQuery(r.query, r.tenant()));
  MSP_ASSIGN_OR_RETURN(std::vector<OperatorRecord> ops, ListOperators(r.engine(), ns));
  json out = json::array();
  for (const OperatorRecord& op : ops) out.push_back(OperatorToJson(op));
  return Reply::Json(200, {{"operators", std::move(out)}});
}

Result<Reply> GetOperatorRoute(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromQuery(r.query, r.tenant()));
  MSP_ASSIGN_OR_RETURN(OperatorRecord op, GetOperator(r.engine(), ns, r.param("operator")));
  return Reply::Json(200, OperatorToJson(op));
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

// -------------------------------------------------------------- handoff

Result<Reply> Handoff(RestApi& api, const RestRequest& r) {
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known({"namespace", "from_operator", "to_operator", "since", "token_budget"}));
  HandoffRequest h;
  MSP_ASSIGN_OR_RETURN(h.mission, MissionFromBody(r.body, r.tenant()));
  h.mission.operator_id.clear();
  MSP_RETURN_IF_ERROR(body.String("from_operator", &h.from_operator));
  MSP_RETURN_IF_ERROR(body.String("to_operator", &h.to_operator));
  if (h.from_operator.empty()) return Status::InvalidArgument("field 'from_operator' is required (the predecessor)");
  if (h.to_operator.empty()) return Status::InvalidArgument("field 'to_operator' is required (the next operator)");
  MSP_RETURN_IF_ERROR(body.Time("since", &h.since));
  MSP_RETURN_IF_ERROR(body.Int("token_budget", &h.token_budget, 0, kMaxBudget));
  MSP_ASSIGN_OR_RETURN(Asker next, CallerAsker(r.engine(), h.mission, r.caller, h.to_operator));
  h.clearance = next.clearance;
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  MSP_ASSIGN_OR_RETURN(HandoffDigest d, wm->Handoff(h));
  MSP_ASSIGN_OR_RETURN(json digest, DigestJson(d.json));
  return Reply::Json(200, {{"markdown", d.markdown},
                           {"tokens_used", d.tokens_used},
                           {"token_budget", d.token_budget},
                           {"counter", d.counter},
                           {"clearance", d.clearance},
                           {"degraded", d.load.degraded},
                           {"digest", std::move(digest)}});
}

// ---------------------------------------------------------- usage marks

Result<Reply> MarkUsed(RestApi& api, const RestRequest& r) {
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known({"namespace", "entries"}));
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromBody(r.body, r.tenant()));
  std::vector<std::string> entries;
  if (!body.Has("entries")) {
    return Status::InvalidArgument("field 'entries' is required: the ids of the served entries that were used");
  }
  MSP_RETURN_IF_ERROR(body.Strings("entries", &entries));
  if (entries.empty() || entries.size() > static_cast<size_t>(kMaxList)) {
    return Status::InvalidArgument("field 'entries' must hold 1.." + std::to_string(kMaxList) + " entry ids");
  }
  Namespace mission = ns;
  mission.operator_id.clear();
  mission.session.clear();
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<WorkflowMemory> wm, api.Workflow(r.engine()));
  MSP_ASSIGN_OR_RETURN(MarkUsedResult m, wm->MarkUsed(mission, r.param("id"), entries, api.actor(), r.clearance()));
  return Reply::Json(200, {{"retrieval_id", m.retrieval_id}, {"used", m.used}, {"served", m.served}});
}

// ----------------------------------------------------------- principles

Result<Reply> ListPrinciplesRoute(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(r.engine(), ns, r.caller, ns.operator_id));
  MSP_ASSIGN_OR_RETURN(std::vector<Principle> list, ListPrinciples(r.engine(), ns, asker));
  json out = json::array();
  for (const Principle& p : list) out.push_back(PrincipleToJson(p));
  return Reply::Json(200, {{"principles", std::move(out)}});
}

Result<Reply> GetPrincipleRoute(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromQuery(r));
  MSP_ASSIGN_OR_RETURN(int64_t version, IntParam(r.query, "version", 1, 1000000, 0));
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(r.engine(), ns, r.caller, ns.operator_id));
  MSP_ASSIGN_OR_RETURN(Principle p,
                       GetPrinciple(r.engine(), ns, r.param("id"), static_cast<int>(version), asker));
  return Reply::Json(200, PrincipleToJson(p));
}

// A lost edit (409): the error names the current version when the caller
// may see it.
Reply PrincipleConflict(MemoryLayer& engine, const Namespace& ns, const std::string& principle_id, const Asker& asker,
                        const Status& s) {
  json j = StatusErrorJson(s);
  Result<Principle> current = GetPrinciple(engine, ns, principle_id, 0, asker);
  if (current.ok()) {
    j["error"]["current_version"] = current->version;
    j["error"]["current"] = PrincipleToJson(*current);
  }
  return Reply::Json(HttpStatusFor(s), std::move(j));
}

// PUT /v1/principles/{id}: without base_version (or 0) adds version 1 of a
// new principle; with it, stores base_version + 1.
Result<Reply> PutPrinciple(RestApi& api, const RestRequest& r) {
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(
      body.Known({"namespace", "base_version", "statement", "rationale", "author", "access_level"}));
  MSP_ASSIGN_OR_RETURN(Namespace ns, MissionFromBody(r.body, r.tenant()));
  const std::string& principle_id = r.param("id");
  int base_version = 0;
  MSP_RETURN_IF_ERROR(body.Int("base_version", &base_version, 0, 1000000));
  std::string statement, rationale, author = ns.operator_id;
  MSP_RETURN_IF_ERROR(body.String("statement", &statement));
  MSP_RETURN_IF_ERROR(body.String("rationale", &rationale));
  MSP_RETURN_IF_ERROR(body.String("author", &author));
  std::optional<int> access_level;
  if (body.Has("access_level")) {
    int level = 0;
    MSP_RETURN_IF_ERROR(body.Int("access_level", &level, 0, kMaxAccessLevel));
    access_level = level;
  }
  // What the caller may see decides what a conflict reveals; a key with a
  // clearance edits only versions it may read.
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(r.engine(), ns, r.caller, ns.operator_id));
  if (base_version == 0) {
    Principle p;
    p.principle_id = principle_id;
    p.statement = statement;
    p.rationale = rationale;
    p.author = author;
    p.access_level = access_level.value_or(0);
    Result<Principle> stored = AddPrinciple(r.engine(), ns, p, api.actor());
    if (stored.status().code() == StatusCode::kAlreadyExists) {
      return PrincipleConflict(r.engine(), ns, principle_id, asker, stored.status());
    }
    if (!stored.ok()) return stored.status();
    return Reply::Json(201, PrincipleToJson(*stored));
  }
  if (statement.empty() && rationale.empty() && !access_level) {
    return Status::InvalidArgument("nothing to change: give 'statement', 'rationale' or 'access_level'");
  }
  if (r.clearance()) {
    MSP_RETURN_IF_ERROR(GetPrinciple(r.engine(), ns, principle_id, base_version, asker).status());
  }
  PrincipleEdit e;
  e.principle_id = principle_id;
  e.base_version = base_version;
  e.statement = statement;
  e.rationale = rationale;
  e.author = author;
  e.access_level = access_level;
  Result<Principle> stored = EditPrinciple(r.engine(), ns, e, api.actor());
  if (stored.status().code() == StatusCode::kConflict) {
    return PrincipleConflict(r.engine(), ns, principle_id, asker, stored.status());
  }
  if (!stored.ok()) return stored.status();
  return Reply::Json(200, PrincipleToJson(*stored));
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
      {"POST", "/v1/decisions/import-adr", BodyKind::kJson, ns_tenant, {}, &ImportAdrRoute},
      {"PUT", "/v1/operators/{operator}", BodyKind::kJson, ns_tenant, {}, &PutOperatorRoute},
      {"GET", "/v1/operators", BodyKind::kNone, {}, {"mission"}, &ListOperatorsRoute},
      {"GET", "/v1/operators/{operator}", BodyKind::kNone, {}, {"mission"}, &GetOperatorRoute},
      {"GET", "/v1/reports/plan", BodyKind::kNone, {}, {"mission"}, &PlanReportRoute},
      {"GET", "/v1/prompts", BodyKind::kNone, {}, {"repository", "session", "from", "to", "limit"}, &PromptsRoute},
      {"POST", "/v1/handoff", BodyKind::kJson, ns_tenant, {}, &Handoff},
      {"POST", "/v1/retrievals/{id}/used", BodyKind::kJson, ns_tenant, {}, &MarkUsed},
      {"GET", "/v1/principles", BodyKind::kNone, {}, asker, &ListPrinciplesRoute},
      {"GET", "/v1/principles/{id}", BodyKind::kNone, {}, with({"version"}), &GetPrincipleRoute},
      {"PUT", "/v1/principles/{id}", BodyKind::kJson, ns_tenant, {}, &PutPrinciple},
  };
}

}  // namespace msp
