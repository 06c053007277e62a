// The declarations of a mission's decision operations (docs/mission.md):
// decision_record, decision_list, decision_show, decision_status and
// decision_supersede (msp decision add / list / show / status / supersede,
// /v1/decisions..., the MCP tools of those names), over msp/mission.h.
// Every face reads a decision as the same asker (CallerAsker: the
// namespace's operator at their registry clearance capped by the caller's;
// without one, the caller): a decision above that clearance is not found,
// and cannot be moved or superseded (nor named as the successor). Writing a
// decision above the caller's clearance is refused by the engine (AsCaller).
// (`msp decision import`, POST /v1/decisions/import-adr and MCP
// decision_import_adr, the ADR import, are their faces' own.)
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

// The decisions the examples name (the faces test imports them): the one
// about the billing ledger, and the one that replaces it.
constexpr const char* kExampleDecision = "0190e5c2-0000-7000-8000-0000000000d1";
constexpr const char* kExampleSuccessor = "0190e5c2-0000-7000-8000-0000000000d2";

struct DecisionRecordRequest {
  Namespace scope;
  Decision decision;
};

struct DecisionListRequest {
  Namespace scope;
  std::vector<std::string> components;
  std::vector<DecisionStatus> statuses;
  std::vector<Criticality> criticalities;
  TimeMs decided_from = 0;
  TimeMs decided_to = 0;
  std::string query;
  bool newest_first = false;
  int limit = 100;
};

// decision_show, decision_status and decision_supersede: one decision, and
// what changes.
struct DecisionRequest {
  Namespace scope;
  std::string decision_id;
  DecisionStatus status = DecisionStatus::kAccepted;  // decision_status (required there)
  std::string by;                                     // decision_supersede
};

Status CheckRecord(const DecisionRecordRequest& r) { return NeedMission(r.scope, "decisions"); }
Status CheckDecision(const DecisionRequest& r) { return NeedMission(r.scope, "decisions"); }

Status CheckList(const DecisionListRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "decisions"));
  if (r.decided_from != 0 && r.decided_to != 0 && r.decided_to <= r.decided_from) {
    return Status::InvalidArgument("field 'decided_to' must be later than 'decided_from'");
  }
  return Status::Ok();
}

// Who reads (CallerAsker).
Result<Asker> AskerOf(const CallContext& context, const Namespace& scope) {
  return CallerAsker(*context.engine, scope, context.caller, scope.operator_id);
}

// The decision `id` as the asker may read it: NotFound above their clearance.
Result<Decision> Readable(const CallContext& context, const Namespace& scope, const std::string& id) {
  MSP_ASSIGN_OR_RETURN(Asker asker, AskerOf(context, scope));
  return GetDecision(*context.engine, scope, id, asker);
}

Result<json> HandleRecord(const CallContext& context, DecisionRecordRequest& r) {
  if (r.decision.decided_by.empty()) r.decision.decided_by = r.scope.operator_id;
  MSP_ASSIGN_OR_RETURN(Decision stored,
                       AddDecision(*context.engine, r.scope, r.decision, context.caller.actor));
  return DecisionToJson(stored);
}

Result<json> HandleList(const CallContext& context, DecisionListRequest& r) {
  DecisionFilter f;
  f.components = r.components;
  f.statuses = r.statuses;
  f.criticalities = r.criticalities;
  f.from = r.decided_from;
  f.to = r.decided_to;
  f.query = r.query;
  f.newest_first = r.newest_first;
  f.limit = r.limit;
  MSP_ASSIGN_OR_RETURN(Asker asker, AskerOf(context, r.scope));
  MSP_ASSIGN_OR_RETURN(std::vector<Decision> list, ListDecisions(*context.engine, r.scope, f, asker));
  json out = json::array();
  for (const Decision& d : list) out.push_back(DecisionToJson(d));
  return json{{"decisions", std::move(out)}};
}

Result<json> HandleShow(const CallContext& context, DecisionRequest& r) {
  MSP_ASSIGN_OR_RETURN(Decision d, Readable(context, r.scope, r.decision_id));
  return DecisionToJson(d);
}

Result<json> HandleStatus(const CallContext& context, DecisionRequest& r) {
  MSP_RETURN_IF_ERROR(Readable(context, r.scope, r.decision_id).status());
  MSP_ASSIGN_OR_RETURN(
      Decision d, SetDecisionStatus(*context.engine, r.scope, r.decision_id, r.status, context.caller.actor));
  return DecisionToJson(d);
}

Result<json> HandleSupersede(const CallContext& context, DecisionRequest& r) {
  MSP_RETURN_IF_ERROR(Readable(context, r.scope, r.decision_id).status());
  MSP_RETURN_IF_ERROR(Readable(context, r.scope, r.by).status());
  MSP_ASSIGN_OR_RETURN(SupersedeResult s, SupersedeDecision(*context.engine, r.scope, r.decision_id, r.by,
                                                            context.caller.actor));
  return json{{"old", DecisionToJson(s.old_decision)}, {"new", DecisionToJson(s.new_decision)}};
}

json ObjectsOf(json properties, std::vector<std::string> required, const char* doc) {
  return json{
      {"type", "array"},
      {"items",
       {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}}},
      {"description", doc}};
}

// A decision as every decision operation answers it (DecisionToJson).
json DecisionSchema() {
  return {{"type", "object"},
          {"properties",
           {{"id", TypedSchema("string", "The decision's id.")},
            {"title", TypedSchema("string", "One line.")},
            {"context", TypedSchema("string", "Why a decision was needed.")},
            {"decision", TypedSchema("string", "What was decided.")},
            {"alternatives", ObjectsOf({{"option", TypedSchema("string", "The rejected option.")},
                                        {"reason", TypedSchema("string", "Why it was rejected.")}},
                                       {"option", "reason"}, "Rejected alternatives.")},
            {"consequences", TypedSchema("string", "What follows from it.")},
            {"principles", StringsSchema("Cited principle ids.")},
            {"component", TypedSchema("string", "The component it concerns (\"\": none).")},
            {"status",
             {{"type", "string"},
              {"enum", EnumValues(&DecisionStatusName)},
              {"description", "Where it stands."}}},
            {"decided_by", TypedSchema("string", "Who decided.")},
            {"decided_at", TimeOrNullSchema("When (ISO 8601).")},
            {"namespace",
             TypedSchema("object", "{tenant, user, agent, session, mission, operator}: the mission's.")},
            {"criticality", TypedSchema("string", "low, normal, high or critical.")},
            {"access_level", TypedSchema("integer", "Readable by clearance this or above.")},
            {"provenance", ObjectsOf({{"type", TypedSchema("string", "commit, issue, url, document, ...")},
                                      {"ref", TypedSchema("string", "The hash, number or address.")},
                                      {"detail", TypedSchema("string", "Page, section, line or note.")}},
                                     {"type", "ref"}, "Where it is recorded.")},
            {"tags", StringsSchema("Its tags.")},
            {"adr_number", TypedSchema("integer", "An imported ADR's number (0: none).")},
            {"sections", ObjectsOf({{"heading", TypedSchema("string", "As written.")},
                                    {"text", TypedSchema("string", "The text.")}},
                                   {"heading", "text"}, "An imported ADR's other sections.")},
            {"revisions", ObjectsOf({{"revision", TypedSchema("integer", "1, 2, ...")},
                                     {"at", TimeOrNullSchema("When that import stored it (ISO 8601).")},
                                     {"by", TypedSchema("string", "Who imported it.")},
                                     {"author", TypedSchema("string", "Who last changed the file.")}},
                                    {"revision"}, "An imported ADR's versions, oldest first.")},
            {"supersedes", TypedSchema("string", "The decision it replaced (\"\": none).")},
            {"superseded_by", TypedSchema("string", "The decision that replaced it (\"\": none).")},
            {"created_at", TimeOrNullSchema("When it was stored (ISO 8601).")},
            {"updated_at", TimeOrNullSchema("When it last changed (ISO 8601).")},
            {"seq", TypedSchema("integer", "The store's change sequence of its last write.")}}},
          {"required", {"id", "title", "context", "decision", "status", "namespace"}}};
}

const char* kDecisionAnswer =
    "decision: {id, title, context, decision, alternatives, consequences, principles, component, status, "
    "decided_by, decided_at, namespace, criticality, access_level, provenance, tags, adr_number, supersedes, "
    "superseded_by, created_at, updated_at, seq}";

Field<DecisionRequest> DecisionIdField() {
  return Fields<DecisionRequest>::Text(
      {.name = "decision_id", .doc = "The decision's id.", .required = true, .cli = CliForm::kPositional},
      [](DecisionRequest& r) -> auto& { return r.decision_id; });
}

// The statuses a caller may give (superseded comes only from decision_supersede).
std::vector<DecisionStatus> GivenStatuses() {
  return {DecisionStatus::kProposed, DecisionStatus::kAccepted, DecisionStatus::kRejected,
          DecisionStatus::kDeprecated};
}

}  // namespace

std::unique_ptr<Operation> DecisionRecordOperation() {
  using F = Fields<DecisionRecordRequest>;
  auto decision = [](auto member) {
    return [member](DecisionRecordRequest& r) -> auto& { return r.decision.*member; };
  };
  Declaration<DecisionRecordRequest> d;
  d.info = {
      .name = "decision_record",
      .title = "Record a decision",
      .summary =
          "Record a mission decision with its reasons: title, context, the decision, the rejected "
          "alternatives and why, consequences, cited principles (registered in the mission), the component, "
          "and provenance (commit, issue, url, document). decided_by defaults to the namespace's operator, "
          "decided_at to now.",
      .cli_verb = "decision add",
      .rest_method = "POST",
      .rest_path = "/v1/decisions",
      .mcp_tool = "decision_record",
      .rest_status = 201,
      .example = {{"title", "Archive the billing ledger every Sunday night"},
                  {"context", "Auditors ask for a weekly copy of the ledger."},
                  {"decision", "A job exports the billing ledger to cold storage every Sunday at 23:00."},
                  {"alternatives",
                   {{{"option", "Daily exports"}, {"reason", "Seven copies a week nobody reads."}}}},
                  {"component", "billing"},
                  {"decided_at", "2026-11-30T09:00:00Z"},
                  {"provenance", {{{"type", "issue"}, {"ref", "42"}}}},
                  {"namespace", {{"mission", "m1"}, {"operator", "ann"}}}},
      .answer = kDecisionAnswer,
      .answer_schema = DecisionSchema,
  };
  d.fields = {
      MissionScopeField<DecisionRecordRequest>(),
      F::Text({.name = "title", .doc = "One line, at most 200 characters.", .required = true},
              decision(&Decision::title)),
      F::Text({.name = "context", .doc = "Why a decision was needed.", .required = true},
              decision(&Decision::context)),
      F::Text({.name = "decision", .doc = "What was decided.", .required = true},
              decision(&Decision::decision)),
      F::Alternatives({.name = "alternatives",
                       .doc = "Rejected alternatives and why (at most 32).",
                       .flag = "--alternative"},
                      decision(&Decision::alternatives)),
      F::String({.name = "consequences", .doc = "What follows from it."}, decision(&Decision::consequences)),
      F::Strings({.name = "principles",
                  .doc = "Cited principle ids (\"P-7\"), registered in the mission.",
                  .flag = "--principle"},
                 decision(&Decision::principles)),
      F::String({.name = "component", .doc = "The component it concerns (an identifier)."},
                decision(&Decision::component)),
      F::Enum({.name = "criticality", .doc = "How much it matters."}, &ParseCriticality, &CriticalityName,
              decision(&Decision::criticality)),
      F::EnumOf({.name = "status", .doc = "Where it stands (superseded only through decision_supersede)."},
                GivenStatuses(), &ParseDecisionStatus, &DecisionStatusName, decision(&Decision::status)),
      F::String({.name = "decided_by", .doc = "Who decided (default: the namespace's operator)."},
                decision(&Decision::decided_by)),
      F::Time({.name = "decided_at", .doc = "When it was decided (ISO 8601; default now)."},
              decision(&Decision::decided_at)),
      F::Provenance({.name = "provenance", .doc = "Where it is recorded: commit, issue, url, document."},
                    decision(&Decision::provenance)),
      F::Int({.name = "access_level", .doc = "Readable by clearance this or above."}, 0, kMaxAccessLevel,
             decision(&Decision::access_level)),
      F::Strings({.name = "tags", .doc = "Tags.", .flag = "--tag"}, decision(&Decision::tags)),
  };
  d.check = &CheckRecord;
  d.handle = &HandleRecord;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> DecisionListOperation() {
  using F = Fields<DecisionListRequest>;
  Declaration<DecisionListRequest> d;
  d.info = {
      .name = "decision_list",
      .title = "List mission decisions",
      .summary =
          "The mission's decisions the asker may read, by decision time (newest first with newest_first), "
          "or by relevance to a query (superseded ones then only when statuses names superseded); filtered "
          "by components, statuses, criticalities (any of each) and decision time.",
      .cli_verb = "decision list",
      .rest_method = "GET",
      .rest_path = "/v1/decisions",
      .mcp_tool = "decision_list",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}}, {"components", {"billing"}}, {"limit", 10}},
      .answer = "{decisions: [decision]}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"decisions",
                           {{"type", "array"},
                            {"items", DecisionSchema()},
                            {"description", "By decision time, or by relevance to the query."}}}}},
                        {"required", {"decisions"}}},
  };
  d.fields = {
      MissionScopeField<DecisionListRequest>(),
      F::Strings(
          {.name = "components",
           .doc = "Only decisions about one of these components.",
           .flag = "--component",
           .param_alias = "component"},
          [](DecisionListRequest& r) -> auto& { return r.components; }),
      F::Enums(
          {.name = "statuses",
           .doc = "Only decisions with one of these statuses.",
           .flag = "--status",
           .param_alias = "status"},
          &ParseDecisionStatus, &DecisionStatusName,
          [](DecisionListRequest& r) -> auto& { return r.statuses; }),
      F::Enums(
          {.name = "criticalities",
           .doc = "Only decisions of one of these criticalities.",
           .flag = "--criticality",
           .param_alias = "criticality"},
          &ParseCriticality, &CriticalityName,
          [](DecisionListRequest& r) -> auto& { return r.criticalities; }),
      F::Time(
          {.name = "decided_from", .doc = "Decided at or after (ISO 8601).", .flag = "--since"},
          [](DecisionListRequest& r) -> auto& { return r.decided_from; }),
      F::Time(
          {.name = "decided_to", .doc = "Decided before (ISO 8601).", .flag = "--until"},
          [](DecisionListRequest& r) -> auto& { return r.decided_to; }),
      F::String(
          {.name = "query", .doc = "Rank by relevance to this text instead."},
          [](DecisionListRequest& r) -> auto& { return r.query; }),
      F::Bool(
          {.name = "newest_first", .doc = "Newest first (default: oldest first)."},
          [](DecisionListRequest& r) -> auto& { return r.newest_first; }),
      F::Int(
          {.name = "limit", .doc = "Decisions to return at most."}, 1, 1000,
          [](DecisionListRequest& r) -> auto& { return r.limit; }),
  };
  d.check = &CheckList;
  d.handle = &HandleList;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> DecisionShowOperation() {
  Declaration<DecisionRequest> d;
  d.info = {
      .name = "decision_show",
      .title = "Show a mission decision",
      .summary = "One decision, every field; not found when its access level is above the asker's clearance.",
      .cli_verb = "decision show",
      .rest_method = "GET",
      .rest_path = "/v1/decisions/{decision_id}",
      .mcp_tool = "decision_show",
      .read_only = true,
      .idempotent = true,
      .example = {{"decision_id", kExampleDecision}, {"namespace", {{"mission", "m1"}}}},
      .answer = "decision",
      .answer_schema = DecisionSchema,
  };
  d.fields = {DecisionIdField(), MissionScopeField<DecisionRequest>()};
  d.check = &CheckDecision;
  d.handle = &HandleShow;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> DecisionStatusOperation() {
  Declaration<DecisionRequest> d;
  d.info = {
      .name = "decision_status",
      .title = "Set a mission decision's status",
      .summary =
          "Move a decision the asker may read to proposed, accepted, rejected or deprecated (superseded only "
          "through decision_supersede; a superseded decision keeps its status: failed precondition). "
          "Answers the decision.",
      .cli_verb = "decision status",
      .rest_method = "POST",
      .rest_path = "/v1/decisions/{decision_id}/status",
      .mcp_tool = "decision_status",
      .idempotent = true,
      .example = {{"decision_id", kExampleDecision},
                  {"status", "deprecated"},
                  {"namespace", {{"mission", "m1"}}}},
      .answer = "decision",
      .answer_schema = DecisionSchema,
  };
  Field<DecisionRequest> status = Fields<DecisionRequest>::EnumOf(
      {.name = "status", .doc = "The new status.", .required = true, .cli = CliForm::kPositional},
      GivenStatuses(), &ParseDecisionStatus, &DecisionStatusName,
      [](DecisionRequest& r) -> auto& { return r.status; });
  status.show = [](DecisionRequest&) { return json(); };  // required: no default
  d.fields = {DecisionIdField(), std::move(status), MissionScopeField<DecisionRequest>()};
  d.check = &CheckDecision;
  d.handle = &HandleStatus;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> DecisionSupersedeOperation() {
  Declaration<DecisionRequest> d;
  d.info = {
      .name = "decision_supersede",
      .title = "Supersede a mission decision",
      .summary =
          "Mark a decision superseded by another existing one, both links in one write (the old one keeps "
          "its content; superseded is final). Both must be readable by the asker. Answers both.",
      .cli_verb = "decision supersede",
      .rest_method = "POST",
      .rest_path = "/v1/decisions/{decision_id}/supersede",
      .mcp_tool = "decision_supersede",
      .example = {{"decision_id", kExampleDecision},
                  {"by", kExampleSuccessor},
                  {"namespace", {{"mission", "m1"}}}},
      .answer = "{old: decision, new: decision}",
      .answer_schema = {{"type", "object"},
                        {"properties", {{"old", DecisionSchema()}, {"new", DecisionSchema()}}},
                        {"required", {"old", "new"}}},
  };
  d.fields = {
      DecisionIdField(),
      Fields<DecisionRequest>::Text(
          {.name = "by", .doc = "The id of the decision that replaces it.", .required = true},
          [](DecisionRequest& r) -> auto& { return r.by; }),
      MissionScopeField<DecisionRequest>(),
  };
  d.check = &CheckDecision;
  d.handle = &HandleSupersede;
  return Declare(std::move(d));
}

}  // namespace msp::api
