// The declarations of the semantic layer's fact operations: fact_add, a fact
// stored or merged into a near-duplicate (msp fact add, POST /v1/facts, MCP
// fact_add); fact_supersede, a fact replaced by a new one that keeps the old
// in its history (msp fact supersede, POST /v1/facts/{fact_id}/supersede, MCP
// fact_supersede); and consolidate, the episodes of a namespace (or of one
// session) not consolidated yet distilled into facts (msp consolidate, POST
// /v1/consolidate, MCP consolidate).
#include "api/declare.h"
#include "api/operations.h"
#include "codec/memory_json.h"

namespace msp::api {
namespace {

using nlohmann::json;
using FactField = Fields<FactRequest>;

// What fact_supersede reads: the fact it replaces and the new one.
struct FactSupersedeRequest {
  std::string fact_id;
  FactRequest fact;
};
using SupersedeField = Fields<FactSupersedeRequest>;

// The rows a new fact takes (fact_add's, and fact_supersede's for its new
// fact), each bound through `at` to the FactRequest inside request R.
template <typename R, typename At>
std::vector<Field<R>> NewFactFields(At at) {
  using F = Fields<R>;
  return {
      F::Text({.name = "text",
               .doc = "The fact, as a self-contained sentence.",
               .required = true,
               .cli = CliForm::kPositional},
              [at](R& r) -> auto& { return at(r).text; }),
      F::Number({.name = "confidence", .doc = "How sure the writer is."}, 0.0, 1.0,
                [at](R& r) -> auto& { return at(r).confidence; }),
      F::Strings({.name = "source_episodes", .doc = "The episodes it came from (their ids).", .flag = "--source-episode"},
                 [at](R& r) -> auto& { return at(r).source_episodes; }),
      F::Strings({.name = "tags", .doc = "Tags.", .flag = "--tag"}, [at](R& r) -> auto& { return at(r).tags; }),
      SourceField<R>("Where it came from. MCP: default mcp.write_source (\"agent\"), and a trusted source "
                     "(policy.context_trusted_sources) is refused: trust is the operator's to give.",
                     [at](R& r) -> auto& { return at(r).source; }),
      F::Enum({.name = "sensitivity", .doc = "high is refused by the write policy."}, &ParseSensitivity,
              &SensitivityName, [at](R& r) -> auto& { return at(r).sensitivity; }),
      F::Enum({.name = "criticality", .doc = "How much it matters."}, &ParseCriticality, &CriticalityName,
              [at](R& r) -> auto& { return at(r).criticality; }),
      F::Time({.name = "valid_at", .doc = "When it started to hold (ISO 8601)."},
              [at](R& r) -> auto& { return at(r).valid_at; }),
      F::Provenance({.name = "provenance",
                     .doc = "Where it came from, e.g. {\"type\": \"commit\", \"ref\": \"abc123\"} (the command "
                            "line: commit:abc123)."},
                    [at](R& r) -> auto& { return at(r).provenance; }),
      F::Scope({.name = "namespace",
                .doc = "Where the fact belongs: tenant (the caller's), user, agent, session, mission, operator; "
                       "parts left out are the face's (MCP: the session's)."},
               [at](R& r) -> auto& { return at(r).ns; }),
  };
}

json FactAnswerSchema(bool supersede) {
  json properties = {
      {"id", {{"type", "string"}, {"description", "The stored fact (or the near-duplicate it merged into)."}}},
      {"merged", {{"type", "boolean"}, {"description", "A near-duplicate fact was updated instead of adding one."}}},
      {"evicted_ids",
       {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "Records evicted by the per-user limit."}}}};
  json required = {"id", "merged", "evicted_ids"};
  if (supersede) {
    properties["superseded"] = {{"type", "string"}, {"description", "The fact it replaced."}};
    required.push_back("superseded");
  }
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

Result<json> HandleFactAdd(const CallContext& context, FactRequest& r) {
  r.actor = context.caller.actor;
  MSP_RETURN_IF_ERROR(CheckClaimedSource(context, r.source, "fact_add"));
  MSP_ASSIGN_OR_RETURN(WriteResult w, context.engine->AddFact(r));
  return WriteResultToJson(w);
}

Result<json> HandleFactSupersede(const CallContext& context, FactSupersedeRequest& r) {
  r.fact.actor = context.caller.actor;
  MSP_RETURN_IF_ERROR(CheckClaimedSource(context, r.fact.source, "fact_supersede"));
  MSP_ASSIGN_OR_RETURN(WriteResult w, context.engine->SupersedeFact(r.fact.ns, r.fact_id, r.fact));
  json out = WriteResultToJson(w);
  out["superseded"] = r.fact_id;
  return out;
}

// consolidate's request: the namespace, and in it the session (all
// sessions when it names none).
struct ConsolidateRequest {
  Namespace ns;
};

Result<json> HandleConsolidate(const CallContext& context, ConsolidateRequest& r) {
  MSP_ASSIGN_OR_RETURN(ConsolidationReport report, context.engine->Consolidate(r.ns, r.ns.session));
  return ConsolidationReportToJson(report);
}

}  // namespace

std::unique_ptr<Operation> FactAddOperation() {
  Declaration<FactRequest> d;
  d.info = {
      .name = "fact_add",
      .title = "Add a fact",
      .summary = "Store a fact of the semantic layer, citing the episodes it came from: a fact close to an "
                 "existing one updates it instead (merged: true, the id is the existing fact's). The write policy "
                 "may refuse it; the refusal names the rule, and nothing is stored.",
      .cli_verb = "fact add",
      .rest_method = "POST",
      .rest_path = "/v1/facts",
      .mcp_tool = "fact_add",
      .mcp_profile = "mission",
      .rest_status = 201,
      .example = {{"text", "The billing ledger is reconciled every Monday morning"},
                  {"tags", {"preference"}},
                  {"confidence", 0.8},
                  {"provenance", {{{"type", "doc"}, {"ref", "runbook.md"}}}}},
      .answer = "{id, merged, evicted_ids: [id]}",
      .answer_schema = [] { return FactAnswerSchema(/*supersede=*/false); },
  };
  d.fields = NewFactFields<FactRequest>([](FactRequest& r) -> FactRequest& { return r; });
  d.handle = &HandleFactAdd;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> FactSupersedeOperation() {
  Declaration<FactSupersedeRequest> d;
  d.info = {
      .name = "fact_supersede",
      .title = "Supersede a fact",
      .summary = "Replace a fact that no longer holds by a new one: the old fact stays in the history "
                 "(fact_history, memory_history) marked superseded, and searches show the new one. A fact is "
                 "superseded once: a second time is a conflict.",
      .cli_verb = "fact supersede",
      .rest_method = "POST",
      .rest_path = "/v1/facts/{fact_id}/supersede",
      .mcp_tool = "fact_supersede",
      .mcp_profile = "mission",
      .rest_status = 201,
      .example = {{"fact_id", "0190e5c2-0000-7000-8000-0000000000f1"},
                  {"text", "The billing ledger is archived every Saturday night"},
                  {"tags", {"preference"}}},
      .answer = "{id, merged, evicted_ids: [id], superseded}",
      .answer_schema = [] { return FactAnswerSchema(/*supersede=*/true); },
  };
  d.fields = {SupersedeField::String({.name = "fact_id",
                                      .doc = "The fact to replace (REST: the path's).",
                                      .required = true,
                                      .cli = CliForm::kPositional},
                                     [](FactSupersedeRequest& r) -> auto& { return r.fact_id; })};
  for (Field<FactSupersedeRequest>& f :
       NewFactFields<FactSupersedeRequest>([](FactSupersedeRequest& r) -> FactRequest& { return r.fact; })) {
    d.fields.push_back(std::move(f));
  }
  d.check = [](const FactSupersedeRequest& r) -> Status {
    if (r.fact_id.empty()) return Status::InvalidArgument("field 'fact_id' must not be empty");
    return Status::Ok();
  };
  d.handle = &HandleFactSupersede;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> ConsolidateOperation() {
  Declaration<ConsolidateRequest> d;
  d.info = {
      .name = "consolidate",
      .title = "Consolidate episodes",
      .summary = "Distil the episodes not consolidated yet into facts (merged into near-duplicates, superseding "
                 "what they contradict), each citing the episodes it came from: those of one session when the "
                 "namespace names one, else every session of the namespace. The sessions stay open (session_end "
                 "ends one). Consolidating again finds nothing left.",
      .cli_verb = "consolidate",
      .rest_method = "POST",
      .rest_path = "/v1/consolidate",
      .mcp_tool = "consolidate",
      .mcp_profile = "mission",
      .idempotent = true,
      .example = {{"namespace", {{"session", "s3"}}}},
      .answer = "{episodes_read, candidates, facts_added, facts_merged, facts_superseded, fact_ids: [id]}",
      .answer_schema = ConsolidationReportSchema,
  };
  d.fields = {Fields<ConsolidateRequest>::Scope(
      {.name = "namespace",
       .doc = "Whose episodes: user, agent, mission, operator, and session for one session's only; parts left out "
              "are the face's (MCP: the session's)."},
      [](ConsolidateRequest& r) -> auto& { return r.ns; })};
  d.handle = &HandleConsolidate;
  return Declare(std::move(d));
}

}  // namespace msp::api
