// The declaration of `workflow_memory_query`: one query over a mission's
// domain, workflow and practitioner layers, a digest within a token budget
// (msp query, POST /v1/query, MCP workflow_memory_query).
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;
using QueryField = Fields<MissionQuery>;

// The largest token budget a digest may be given.
constexpr int64_t kMaxTokenBudget = 100000000;

Status CheckQuery(const MissionQuery& q) {
  if (q.mission.mission.empty()) {
    return Status::InvalidArgument("field 'namespace.mission' is required: mission records belong to a mission");
  }
  if (q.filters.from != 0 && q.filters.to != 0 && q.filters.to <= q.filters.from) {
    return Status::InvalidArgument("field 'filters.created_to' must be later than 'filters.created_from'");
  }
  return Status::Ok();
}

// Who asks (CallerAsker): the namespace's operator, at their clearance in
// the mission's registry capped by the caller's; without one, the caller.
Result<json> HandleQuery(const CallContext& context, MissionQuery& q) {
  const std::string operator_id = q.mission.operator_id;
  q.mission.operator_id.clear();
  MSP_ASSIGN_OR_RETURN(q.asker, CallerAsker(*context.engine, q.mission, context.caller, operator_id));
  q.actor = context.caller.actor;
  MSP_ASSIGN_OR_RETURN(WorkflowMemory * wm, OpenWorkflow(context));
  MSP_ASSIGN_OR_RETURN(QueryDigest d, wm->Query(q));
  MSP_ASSIGN_OR_RETURN(json out, DigestAnswer(d));
  out["retrieval_id"] = d.retrieval_id;
  return out;
}

json QueryAnswerSchema() {
  return {{"type", "object"},
          {"properties",
           {{"retrieval_id", TypedSchema("string", "The logged retrieval (name it in correction_record).")},
            {"markdown", TypedSchema("string", "The digest, ready to paste into a context; never over token_budget.")},
            {"tokens_used", TypedSchema("integer", "Tokens of the markdown.")},
            {"token_budget", TypedSchema("integer", "The budget asked for.")},
            {"counter", TypedSchema("string", "The token counter.")},
            {"clearance", TypedSchema("integer", "The clearance the digest was read with.")},
            {"degraded",
             TypedSchema("boolean", "The mission is over its event capacity: ranking leans on criticality.")},
            {"digest", TypedSchema("object", "The structured digest (docs/mission.md).")}}},
          {"required", {"retrieval_id", "markdown", "tokens_used", "token_budget", "counter", "digest"}}};
}

}  // namespace

std::unique_ptr<Operation> WorkflowQueryOperation() {
  Declaration<MissionQuery> d;
  d.info = {
      .name = "workflow_memory_query",
      .title = "Mission memory query",
      .summary = "Before a task in a long mission: one query over the mission's domain documents, decisions "
                 "(workflow) and the asker's own past corrections (practitioner). Answers a Markdown digest never "
                 "over token_budget (title, headings and footer included), each entry with its relevance score "
                 "and provenance, the same as JSON, and the retrieval_id of the logged retrieval.",
      .cli_verb = "query",
      .rest_method = "POST",
      .rest_path = "/v1/query",
      .mcp_tool = "workflow_memory_query",
      .read_only = false,  // it logs the retrieval
      .idempotent = false,
      .example = {{"task_description", "which database holds the billing ledger"},
                  {"namespace", {{"mission", "m1"}, {"operator", "ann"}}},
                  {"token_budget", 2000},
                  {"filters", {{"criticalities", {"normal", "high"}}}}},
      .answer = "{retrieval_id, markdown, tokens_used, token_budget, counter, clearance, degraded, digest}",
      .answer_schema = QueryAnswerSchema,
  };
  d.fields = {
      QueryField::Text({.name = "task_description", .doc = "What you are about to do, in words.", .required = true,
               .cli = CliForm::kPositional},
              [](MissionQuery& q) -> auto& { return q.task_description; }),
      QueryField::Scope({.name = "namespace",
                .doc = "The mission (required) and the asker: operator (their clearance applies; their own "
                       "corrections), session (logged for the redundancy report); parts left out are the face's."},
               [](MissionQuery& q) -> auto& { return q.mission; }),
      QueryField::Enum({.name = "scope", .doc = "The layers to search."}, &ParseQueryScope, &QueryScopeName,
              [](MissionQuery& q) -> auto& { return q.scope; }),
      QueryField::Int({.name = "token_budget", .doc = "Tokens the digest may use, headings and footer included."}, 0,
             kMaxTokenBudget, [](MissionQuery& q) -> auto& { return q.token_budget; }),
      QueryField::String({.group = "filters", .name = "component", .doc = "Only records of this component."},
                [](MissionQuery& q) -> auto& { return q.filters.component; }),
      QueryField::Enums({.group = "filters", .name = "criticalities", .doc = "Only these criticalities."}, &ParseCriticality,
               &CriticalityName, [](MissionQuery& q) -> auto& { return q.filters.criticalities; }),
      QueryField::Time({.group = "filters", .name = "created_from", .doc = "Created at or after (ISO 8601)."},
              [](MissionQuery& q) -> auto& { return q.filters.from; }),
      QueryField::Time({.group = "filters", .name = "created_to", .doc = "Created before (ISO 8601)."},
              [](MissionQuery& q) -> auto& { return q.filters.to; }),
  };
  d.check = &CheckQuery;
  d.handle = &HandleQuery;
  return Declare(std::move(d));
}

}  // namespace msp::api
