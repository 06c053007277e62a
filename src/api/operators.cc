// The declarations of the operator registry's operations (docs/mission.md):
// operator_set, operator_list and operator_show (msp operator set / list /
// show, PUT and GET /v1/operators/{operator_id}, GET /v1/operators, the MCP
// tools of those names), over msp/mission.h. An operator's clearance is set
// for a mission, or tenant-wide when the namespace names none. Setting one
// is the registry's administration: a caller limited to a clearance (an API
// key with one; the command line with --operator, at that operator's) could
// raise an operator above its own, so on every face it may not.
#include "api/declare.h"
#include "api/operations.h"
#include "api/schema.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

struct OperatorSetRequest {
  Namespace scope;
  OperatorRecord op;
};

struct OperatorListRequest {
  Namespace scope;
};

struct OperatorShowRequest {
  Namespace scope;
  std::string operator_id;
};

constexpr const char* kRegistryScopeDoc =
    "The mission whose registry it is; without one, the tenant-wide registry (a mission's setting shadows the "
    "tenant-wide one). Parts left out are the face's.";

Result<json> HandleOperatorSet(const CallContext& context, OperatorSetRequest& r) {
  if (context.caller.clearance) {
    return Status::Forbidden("setting an operator's clearance is the registry's administration, and this caller is "
                             "limited to clearance " + std::to_string(*context.caller.clearance) +
                             " (it could raise an operator above it): set it as a caller without a clearance limit "
                             "(an API key without one; on the command line, without --operator)");
  }
  MSP_ASSIGN_OR_RETURN(OperatorRecord stored, SetOperator(*context.engine, r.scope, r.op, context.caller.actor));
  return OperatorToJson(stored);
}

Result<json> HandleOperatorList(const CallContext& context, OperatorListRequest& r) {
  MSP_ASSIGN_OR_RETURN(std::vector<OperatorRecord> ops, ListOperators(*context.engine, r.scope));
  json out = json::array();
  for (const OperatorRecord& op : ops) out.push_back(OperatorToJson(op));
  return json{{"operators", std::move(out)}};
}

Result<json> HandleOperatorShow(const CallContext& context, OperatorShowRequest& r) {
  MSP_ASSIGN_OR_RETURN(OperatorRecord op, GetOperator(*context.engine, r.scope, r.operator_id));
  return OperatorToJson(op);
}

// An operator's setting as every operator operation answers it (OperatorToJson).
json OperatorSchema() {
  return {{"type", "object"},
          {"properties",
           {{"operator_id", TypedSchema("string", "The operator's id.")},
            {"clearance", TypedSchema("integer", "The highest access level the operator may read (0..9).")},
            {"name", TypedSchema("string", "Display name (\"\": none).")},
            {"id", TypedSchema("string", "The setting's record id.")},
            {"scope", {{"type", "string"}, {"enum", {"mission", "tenant"}}, {"description", "Where it applies."}}},
            {"namespace", TypedSchema("object", "{tenant, mission}: the registry's.")},
            {"updated_at", TimeOrNullSchema("When it was last set (ISO 8601).")},
            {"seq", TypedSchema("integer", "The store's change sequence of its write.")}}},
          {"required", {"operator_id", "clearance", "scope", "namespace"}}};
}

const char* kOperatorAnswer = "operator: {operator_id, clearance, name, id, scope, namespace, updated_at, seq}";

template <typename R>
Field<R> RegistryScopeField() {
  return Fields<R>::Scope({.name = "namespace", .doc = kRegistryScopeDoc}, [](R& r) -> auto& { return r.scope; });
}

}  // namespace

std::unique_ptr<Operation> OperatorSetOperation() {
  using F = Fields<OperatorSetRequest>;
  Declaration<OperatorSetRequest> d;
  d.info = {
      .name = "operator_set",
      .title = "Set an operator's clearance",
      .summary = "Set an operator's clearance (0..9: the highest access level they may read) in the mission, or "
                 "tenant-wide when the namespace names no mission; replaces the previous setting (the audit log "
                 "keeps it). A caller limited to a clearance may not (forbidden).",
      .cli_verb = "operator set",
      .rest_method = "PUT",
      .rest_path = "/v1/operators/{operator_id}",
      .mcp_withheld = "a clearance is the operator's to give, not the model's: REST and the command line only",
      .idempotent = true,
      .example = {{"operator_id", "bob"}, {"clearance", 4}, {"name", "Bob"}, {"namespace", {{"mission", "m1"}}}},
      .answer = kOperatorAnswer,
      .answer_schema = OperatorSchema,
  };
  Field<OperatorSetRequest> clearance =
      F::Int({.name = "clearance", .doc = "The highest access level the operator may read.", .required = true}, 0,
             kMaxAccessLevel, [](OperatorSetRequest& r) -> auto& { return r.op.clearance; });
  clearance.show = [](OperatorSetRequest&) { return json(); };  // required: no default
  d.fields = {
      F::Text({.name = "operator_id",
               .doc = "The operator: an identifier (1..64 letters, digits and _-.:/).",
               .required = true,
               .cli = CliForm::kPositional},
              [](OperatorSetRequest& r) -> auto& { return r.op.operator_id; }),
      RegistryScopeField<OperatorSetRequest>(),
      std::move(clearance),
      F::String({.name = "name", .doc = "Display name, one line."},
                [](OperatorSetRequest& r) -> auto& { return r.op.name; }),
  };
  d.handle = &HandleOperatorSet;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> OperatorListOperation() {
  Declaration<OperatorListRequest> d;
  d.info = {
      .name = "operator_list",
      .title = "List operators",
      .summary = "The operators set for the mission and tenant-wide (a mission's setting shadows the tenant-wide "
                 "one), by operator id. An operator not listed has clearance 0.",
      .cli_verb = "operator list",
      .rest_method = "GET",
      .rest_path = "/v1/operators",
      .mcp_tool = "operator_list",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}}},
      .answer = "{operators: [operator]}",
      .answer_schema = {{"type", "object"},
                        {"properties", {{"operators", {{"type", "array"}, {"items", OperatorSchema()}}}}},
                        {"required", {"operators"}}},
  };
  d.fields = {RegistryScopeField<OperatorListRequest>()};
  d.handle = &HandleOperatorList;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> OperatorShowOperation() {
  Declaration<OperatorShowRequest> d;
  d.info = {
      .name = "operator_show",
      .title = "Show an operator",
      .summary = "One operator's setting: the mission's, else the tenant-wide one; not found when neither exists "
                 "(the operator has clearance 0).",
      .cli_verb = "operator show",
      .rest_method = "GET",
      .rest_path = "/v1/operators/{operator_id}",
      .mcp_tool = "operator_show",
      .read_only = true,
      .idempotent = true,
      .example = {{"operator_id", "bob"}, {"namespace", {{"mission", "m1"}}}},
      .answer = kOperatorAnswer,
      .answer_schema = OperatorSchema,
  };
  d.fields = {
      Fields<OperatorShowRequest>::Text(
          {.name = "operator_id", .doc = "The operator's id.", .required = true, .cli = CliForm::kPositional},
          [](OperatorShowRequest& r) -> auto& { return r.operator_id; }),
      RegistryScopeField<OperatorShowRequest>(),
  };
  d.handle = &HandleOperatorShow;
  return Declare(std::move(d));
}

}  // namespace msp::api
