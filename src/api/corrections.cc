// The declarations of a mission's correction operations (docs/mission.md):
// correction_record, correction_list and correction_show (msp correction
// add / list / show, /v1/corrections..., the MCP tools of those names), over
// msp/mission.h. A correction is stored only as a structured abstraction;
// one the engine refuses as raw text is bad input on every face. Every face
// reads corrections as the same asker (CallerAsker, as decisions.cc): a
// correction above that clearance is not listed and not found.
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

// The correction correction_show's example names (the faces test imports it).
constexpr const char* kExampleCorrection = "0190e5c2-0000-7000-8000-0000000000c1";

struct CorrectionRecordRequest {
  Namespace scope;
  Correction correction;
};

struct CorrectionListRequest {
  Namespace scope;
  std::string of;
  std::vector<std::string> components;
  std::vector<std::string> classes;
  std::vector<CorrectionOutcome> outcomes;
  std::string retrieval_id;
  TimeMs created_from = 0;
  TimeMs created_to = 0;
  bool newest_first = false;
  int limit = 100;
};

struct CorrectionShowRequest {
  Namespace scope;
  std::string correction_id;
};

// A correction that is not a structured abstraction is bad input.
Status RefusedAsBadInput(Status s) {
  if (s.code() == StatusCode::kRefused) return Status::InvalidArgument(s.message());
  return s;
}

Status CheckRecord(const CorrectionRecordRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "corrections"));
  if (r.scope.operator_id.empty()) {
    return Status::InvalidArgument("field 'namespace.operator' is required: a correction belongs to an operator");
  }
  return Status::Ok();
}

Status CheckList(const CorrectionListRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "corrections"));
  if (r.created_from != 0 && r.created_to != 0 && r.created_to <= r.created_from) {
    return Status::InvalidArgument("field 'created_to' must be later than 'created_from'");
  }
  return Status::Ok();
}

Status CheckShow(const CorrectionShowRequest& r) { return NeedMission(r.scope, "corrections"); }

Result<Asker> CorrectionAsker(const CallContext& context, const Namespace& scope) {
  return CallerAsker(*context.engine, scope, context.caller, scope.operator_id);
}

Result<json> HandleRecord(const CallContext& context, CorrectionRecordRequest& r) {
  Result<Correction> stored = AddCorrection(*context.engine, r.scope, r.correction, context.caller.actor);
  if (!stored.ok()) return RefusedAsBadInput(stored.status());
  return CorrectionToJson(*stored);
}

Result<json> HandleList(const CallContext& context, CorrectionListRequest& r) {
  CorrectionFilter f;
  f.operator_id = r.of;
  f.components = r.components;
  f.classes = r.classes;
  f.outcomes = r.outcomes;
  f.retrieval_id = r.retrieval_id;
  f.from = r.created_from;
  f.to = r.created_to;
  f.newest_first = r.newest_first;
  f.limit = r.limit;
  MSP_ASSIGN_OR_RETURN(Asker asker, CorrectionAsker(context, r.scope));
  MSP_ASSIGN_OR_RETURN(std::vector<Correction> list, ListCorrections(*context.engine, r.scope, f, asker));
  json out = json::array();
  for (const Correction& c : list) out.push_back(CorrectionToJson(c));
  return json{{"corrections", std::move(out)}};
}

Result<json> HandleShow(const CallContext& context, CorrectionShowRequest& r) {
  MSP_ASSIGN_OR_RETURN(Asker asker, CorrectionAsker(context, r.scope));
  MSP_ASSIGN_OR_RETURN(Correction c, GetCorrection(*context.engine, r.scope, r.correction_id, asker));
  return CorrectionToJson(c);
}

// A correction as every correction operation answers it (CorrectionToJson).
json CorrectionSchema() {
  return {{"type", "object"},
          {"properties",
           {{"id", TypedSchema("string", "The correction's id.")},
            {"operator", TypedSchema("string", "Whose correction it is.")},
            {"class", TypedSchema("string", "Correction class.")},
            {"category", TypedSchema("string", "Semantic category.")},
            {"component", TypedSchema("string", "Affected component.")},
            {"outcome",
             {{"type", "string"},
              {"enum", EnumValues(&CorrectionOutcomeName)},
              {"description", "What became of the agent's work."}}},
            {"summary", TypedSchema("string", "One sentence.")},
            {"retrieval_id", TypedSchema("string", "The retrieval it corrects (\"\": none).")},
            {"namespace",
             TypedSchema("object", "{tenant, user, agent, session, mission, operator}: the operator's.")},
            {"criticality", TypedSchema("string", "low, normal, high or critical.")},
            {"access_level", TypedSchema("integer", "Readable by clearance this or above.")},
            {"created_at", TimeOrNullSchema("When it was stored (ISO 8601).")},
            {"seq", TypedSchema("integer", "The store's change sequence of its write.")}}},
          {"required", {"id", "operator", "class", "category", "component", "outcome", "summary", "namespace"}}};
}

const char* kCorrectionAnswer =
    "correction: {id, operator, class, category, component, outcome, summary, retrieval_id, namespace, "
    "criticality, access_level, created_at, seq}";

}  // namespace

std::unique_ptr<Operation> CorrectionRecordOperation() {
  using F = Fields<CorrectionRecordRequest>;
  auto correction = [](auto member) {
    return [member](CorrectionRecordRequest& r) -> auto& { return r.correction.*member; };
  };
  Declaration<CorrectionRecordRequest> d;
  d.info = {
      .name = "correction_record",
      .title = "Record a correction",
      .summary =
          "Record how an operator (namespace.operator, required) corrected the agent, as a structured "
          "abstraction only, never raw prompt or output text: the class and semantic category of the "
          "correction, the affected component, the outcome, a one-sentence summary, and the retrieval_id of "
          "the workflow_memory_query whose context missed it. A summary that is not one short sentence is "
          "bad input.",
      .cli_verb = "correction add",
      .rest_method = "POST",
      .rest_path = "/v1/corrections",
      .mcp_tool = "correction_record",
      .rest_status = 201,
      .example = {{"class", "missing_context"},
                  {"category", "api_contract"},
                  {"component", "billing"},
                  {"outcome", "modified"},
                  {"summary", "The ledger export needed the archive bucket's name."},
                  {"namespace", {{"mission", "m1"}, {"operator", "ann"}}}},
      .answer = kCorrectionAnswer,
      .answer_schema = CorrectionSchema,
  };
  Field<CorrectionRecordRequest> outcome =
      F::Enum({.name = "outcome", .doc = "What became of the agent's work.", .required = true},
              &ParseCorrectionOutcome, &CorrectionOutcomeName, correction(&Correction::outcome));
  outcome.show = [](CorrectionRecordRequest&) { return json(); };  // required: no default
  d.fields = {
      MissionScopeField<CorrectionRecordRequest>(),
      F::Text({.name = "class", .doc = "Correction class, an identifier (e.g. missing_context).", .required = true},
              correction(&Correction::correction_class)),
      F::Text({.name = "category", .doc = "Semantic category, an identifier (e.g. api_contract).", .required = true},
              correction(&Correction::category)),
      F::Text({.name = "component", .doc = "Affected component, an identifier.", .required = true},
              correction(&Correction::component)),
      std::move(outcome),
      F::Text({.name = "summary", .doc = "One sentence, at most 200 characters.", .required = true},
              correction(&Correction::summary)),
      F::String({.name = "retrieval_id", .doc = "The retrieval it corrects (workflow_memory_query's retrieval_id)."},
                correction(&Correction::retrieval_id)),
      F::Enum({.name = "criticality", .doc = "How much it matters."}, &ParseCriticality, &CriticalityName,
              correction(&Correction::criticality)),
      F::Int({.name = "access_level", .doc = "Readable by clearance this or above."}, 0, kMaxAccessLevel,
             correction(&Correction::access_level)),
  };
  d.check = &CheckRecord;
  d.handle = &HandleRecord;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> CorrectionListOperation() {
  using F = Fields<CorrectionListRequest>;
  Declaration<CorrectionListRequest> d;
  d.info = {
      .name = "correction_list",
      .title = "List mission corrections",
      .summary =
          "The mission's corrections the asker may read, oldest first (newest first with newest_first); "
          "filtered by operator, components, classes, outcomes (any of each), retrieval and creation time.",
      .cli_verb = "correction list",
      .rest_method = "GET",
      .rest_path = "/v1/corrections",
      .mcp_tool = "correction_list",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}}, {"components", {"billing"}}, {"limit", 10}},
      .answer = "{corrections: [correction]}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"corrections",
                           {{"type", "array"}, {"items", CorrectionSchema()}, {"description", "By creation time."}}}}},
                        {"required", {"corrections"}}},
  };
  d.fields = {
      MissionScopeField<CorrectionListRequest>(),
      F::String({.name = "of", .doc = "Only this operator's."}, [](CorrectionListRequest& r) -> auto& { return r.of; }),
      F::Strings({.name = "components",
                  .doc = "Only corrections of one of these components.",
                  .flag = "--component",
                  .param_alias = "component"},
                 [](CorrectionListRequest& r) -> auto& { return r.components; }),
      F::Strings(
          {.name = "classes", .doc = "Only corrections of one of these classes.", .flag = "--class", .param_alias = "class"},
          [](CorrectionListRequest& r) -> auto& { return r.classes; }),
      F::Enums({.name = "outcomes",
                .doc = "Only corrections with one of these outcomes.",
                .flag = "--outcome",
                .param_alias = "outcome"},
               &ParseCorrectionOutcome, &CorrectionOutcomeName,
               [](CorrectionListRequest& r) -> auto& { return r.outcomes; }),
      F::String({.name = "retrieval_id", .doc = "Only corrections of this retrieval."},
                [](CorrectionListRequest& r) -> auto& { return r.retrieval_id; }),
      F::Time({.name = "created_from", .doc = "Created at or after (ISO 8601).", .flag = "--since"},
              [](CorrectionListRequest& r) -> auto& { return r.created_from; }),
      F::Time({.name = "created_to", .doc = "Created before (ISO 8601).", .flag = "--until"},
              [](CorrectionListRequest& r) -> auto& { return r.created_to; }),
      F::Bool({.name = "newest_first", .doc = "Newest first (default: oldest first)."},
              [](CorrectionListRequest& r) -> auto& { return r.newest_first; }),
      F::Int({.name = "limit", .doc = "Corrections to return at most."}, 1, 1000,
             [](CorrectionListRequest& r) -> auto& { return r.limit; }),
  };
  d.check = &CheckList;
  d.handle = &HandleList;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> CorrectionShowOperation() {
  Declaration<CorrectionShowRequest> d;
  d.info = {
      .name = "correction_show",
      .title = "Show a mission correction",
      .summary = "One correction of any operator of the mission; not found when its access level is above the "
                 "asker's clearance.",
      .cli_verb = "correction show",
      .rest_method = "GET",
      .rest_path = "/v1/corrections/{correction_id}",
      .mcp_tool = "correction_show",
      .read_only = true,
      .idempotent = true,
      .example = {{"correction_id", kExampleCorrection}, {"namespace", {{"mission", "m1"}}}},
      .answer = "correction",
      .answer_schema = CorrectionSchema,
  };
  d.fields = {
      Fields<CorrectionShowRequest>::Text(
          {.name = "correction_id", .doc = "The correction's id.", .required = true, .cli = CliForm::kPositional},
          [](CorrectionShowRequest& r) -> auto& { return r.correction_id; }),
      MissionScopeField<CorrectionShowRequest>(),
  };
  d.check = &CheckShow;
  d.handle = &HandleShow;
  return Declare(std::move(d));
}

}  // namespace msp::api
