// The declarations of a mission's principle operations (docs/mission.md):
// principle_list, principle_show and principle_put (msp principle list /
// show, msp principle add and edit, GET /v1/principles, GET and PUT
// /v1/principles/{principle_id}, the MCP tools of those names), over
// msp/mission.h. principle_put adds version 1 (no base_version) or stores
// version base_version + 1 with compare-and-swap: an edit of a version that
// is no longer the current one is a conflict on every face, and nothing is
// overwritten. Every face reads principles as the same asker (CallerAsker,
// as decisions.cc): a version above that clearance is not listed, not
// found, and cannot be edited.
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

constexpr int kMaxVersion = 1000000;

struct PrincipleListRequest {
  Namespace scope;
};

struct PrincipleShowRequest {
  Namespace scope;
  std::string principle_id;
  int version = 0;  // 0: the current one
  bool all = false;
};

struct PrinciplePutRequest {
  Namespace scope;
  std::string principle_id;
  int base_version = 0;  // 0: add version 1
  std::string statement;
  std::string rationale;
  std::string author;  // "": namespace.operator
  int access_level = 0;
  bool access_level_given = false;
};

Status CheckPrincipleList(const PrincipleListRequest& r) { return NeedMission(r.scope, "principles"); }

Status CheckPrincipleShow(const PrincipleShowRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "principles"));
  if (r.all && r.version != 0) {
    return Status::InvalidArgument("fields 'all' and 'version' exclude each other: every version, or one");
  }
  return Status::Ok();
}

Status CheckPrinciplePut(const PrinciplePutRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "principles"));
  if (r.base_version == 0 && r.statement.empty()) {
    return Status::InvalidArgument("field 'statement' is required to add a principle (no 'base_version': version 1)");
  }
  if (r.base_version > 0 && r.statement.empty() && r.rationale.empty() && !r.access_level_given) {
    return Status::InvalidArgument("nothing to change: give 'statement', 'rationale' or 'access_level'");
  }
  return Status::Ok();
}

Result<Asker> PrincipleAsker(const CallContext& context, const Namespace& scope) {
  return CallerAsker(*context.engine, scope, context.caller, scope.operator_id);
}

Result<json> HandlePrincipleList(const CallContext& context, PrincipleListRequest& r) {
  MSP_ASSIGN_OR_RETURN(Asker asker, PrincipleAsker(context, r.scope));
  MSP_ASSIGN_OR_RETURN(std::vector<Principle> list, ListPrinciples(*context.engine, r.scope, asker));
  json out = json::array();
  for (const Principle& p : list) out.push_back(PrincipleToJson(p));
  return json{{"principles", std::move(out)}};
}

Result<json> HandlePrincipleShow(const CallContext& context, PrincipleShowRequest& r) {
  MSP_ASSIGN_OR_RETURN(Asker asker, PrincipleAsker(context, r.scope));
  if (!r.all) {
    MSP_ASSIGN_OR_RETURN(Principle p, GetPrinciple(*context.engine, r.scope, r.principle_id, r.version, asker));
    return PrincipleToJson(p);
  }
  MSP_ASSIGN_OR_RETURN(std::vector<Principle> versions,
                       PrincipleVersions(*context.engine, r.scope, r.principle_id, asker));
  json out = PrincipleToJson(versions.back());
  json list = json::array();
  for (const Principle& p : versions) list.push_back(PrincipleToJson(p));
  out["versions"] = std::move(list);
  return out;
}

Result<json> HandlePrinciplePut(const CallContext& context, PrinciplePutRequest& r) {
  const std::string author = r.author.empty() ? r.scope.operator_id : r.author;
  if (r.base_version == 0) {
    Principle p;
    p.principle_id = r.principle_id;
    p.statement = r.statement;
    p.rationale = r.rationale;
    p.author = author;
    p.access_level = r.access_level;
    MSP_ASSIGN_OR_RETURN(Principle stored, AddPrinciple(*context.engine, r.scope, p, context.caller.actor));
    return PrincipleToJson(stored);
  }
  // The asker edits only a version they may read (not found above it).
  MSP_ASSIGN_OR_RETURN(Asker asker, PrincipleAsker(context, r.scope));
  MSP_RETURN_IF_ERROR(GetPrinciple(*context.engine, r.scope, r.principle_id, r.base_version, asker).status());
  PrincipleEdit e;
  e.principle_id = r.principle_id;
  e.base_version = r.base_version;
  e.statement = r.statement;
  e.rationale = r.rationale;
  e.author = author;
  if (r.access_level_given) e.access_level = r.access_level;
  MSP_ASSIGN_OR_RETURN(Principle stored, EditPrinciple(*context.engine, r.scope, e, context.caller.actor));
  return PrincipleToJson(stored);
}

// 201 for version 1 (the principle was created), 200 for a later one.
int PutStatus(const json& answer) { return answer.value("version", 0) == 1 ? 201 : 200; }

// A principle version as every principle operation answers it (PrincipleToJson).
json PrincipleProperties() {
  return {{"principle_id", TypedSchema("string", "The principle's id (e.g. P-7).")},
          {"statement", TypedSchema("string", "The principle.")},
          {"rationale", TypedSchema("string", "Why.")},
          {"author", TypedSchema("string", "Who wrote this version.")},
          {"version", TypedSchema("integer", "1, 2, ...")},
          {"id", TypedSchema("string", "The record id of this version.")},
          {"current", TypedSchema("boolean", "False for a version a later edit replaced.")},
          {"namespace", TypedSchema("object", "{tenant, mission}: the mission's.")},
          {"access_level", TypedSchema("integer", "Readable by clearance this or above.")},
          {"created_at", TimeOrNullSchema("When this version was stored (ISO 8601).")},
          {"updated_at", TimeOrNullSchema("When it last changed (ISO 8601).")},
          {"seq", TypedSchema("integer", "The store's change sequence of its write.")}};
}

json PrincipleSchema() {
  return {{"type", "object"},
          {"properties", PrincipleProperties()},
          {"required", {"principle_id", "statement", "version", "current", "namespace"}}};
}

const char* kPrincipleAnswer =
    "principle: {principle_id, statement, rationale, author, version, id, current, namespace, access_level, "
    "created_at, updated_at, seq}";

template <typename R>
Field<R> PrincipleIdField() {
  return Fields<R>::Text({.name = "principle_id",
                          .doc = "The principle's id: a letter, then letters, digits, '.', '_', '-' (at most 32), "
                                 "e.g. P-7.",
                          .required = true,
                          .cli = CliForm::kPositional},
                         [](R& r) -> auto& { return r.principle_id; });
}

}  // namespace

std::unique_ptr<Operation> PrincipleListOperation() {
  Declaration<PrincipleListRequest> d;
  d.info = {
      .name = "principle_list",
      .title = "List mission principles",
      .summary = "The current version of every principle of the mission the asker may see, by principle id.",
      .cli_verb = "principle list",
      .rest_method = "GET",
      .rest_path = "/v1/principles",
      .mcp_tool = "principle_list",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}}},
      .answer = "{principles: [principle]}",
      .answer_schema = {{"type", "object"},
                        {"properties", {{"principles", {{"type", "array"}, {"items", PrincipleSchema()}}}}},
                        {"required", {"principles"}}},
  };
  d.fields = {MissionScopeField<PrincipleListRequest>()};
  d.check = &CheckPrincipleList;
  d.handle = &HandlePrincipleList;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> PrincipleShowOperation() {
  using F = Fields<PrincipleShowRequest>;
  Declaration<PrincipleShowRequest> d;
  json schema = PrincipleSchema();
  schema["properties"]["versions"] = {{"type", "array"},
                                      {"items", {{"type", "object"}}},
                                      {"description", "With all: every version the asker may see, oldest first."}};
  d.info = {
      .name = "principle_show",
      .title = "Show a mission principle",
      .summary = "One principle: its current version, the version named, or (all) the newest version the asker "
                 "may see with every version they may see in `versions`, oldest first. Not found when no version "
                 "at or below the asker's clearance exists.",
      .cli_verb = "principle show",
      .rest_method = "GET",
      .rest_path = "/v1/principles/{principle_id}",
      .mcp_tool = "principle_show",
      .read_only = true,
      .idempotent = true,
      .example = {{"principle_id", "P-1"}, {"namespace", {{"mission", "m1"}}}},
      .answer = "principle; with all, also versions: [principle]",
      .answer_schema = std::move(schema),
  };
  d.fields = {
      PrincipleIdField<PrincipleShowRequest>(),
      MissionScopeField<PrincipleShowRequest>(),
      F::Int({.name = "version", .doc = "This version (0: the current one)."}, 0, kMaxVersion,
             [](PrincipleShowRequest& r) -> auto& { return r.version; }),
      F::Bool({.name = "all", .doc = "Every version the asker may see, oldest first, in `versions`."},
              [](PrincipleShowRequest& r) -> auto& { return r.all; }),
  };
  d.check = &CheckPrincipleShow;
  d.handle = &HandlePrincipleShow;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> PrinciplePutOperation() {
  using F = Fields<PrinciplePutRequest>;
  Declaration<PrinciplePutRequest> d;
  d.info = {
      .name = "principle_put",
      .title = "Add or edit a mission principle",
      .summary =
          "Without base_version: add version 1 of a new principle (statement required; an id already taken is "
          "already_exists). With base_version N: store version N + 1 (statement, rationale and access_level left "
          "out keep version N's) — when N is no longer the current version (someone edited it first) it is a "
          "conflict naming the current version, and nothing is overwritten. The asker edits only a version they "
          "may read. REST answers 201 for version 1, 200 for a later one.",
      .cli_verb = "principle edit",
      .rest_method = "PUT",
      .rest_path = "/v1/principles/{principle_id}",
      .mcp_tool = "principle_put",
      .rest_status = 200,
      .rest_status_of = &PutStatus,
      .example = {{"principle_id", "P-1"},
                  {"base_version", 1},
                  {"statement", "A human confirms every change to the billing ledger's schema."},
                  {"namespace", {{"mission", "m1"}}}},
      .answer = kPrincipleAnswer,
      .answer_schema = PrincipleSchema,
  };
  Field<PrinciplePutRequest> access_level =
      F::Int({.name = "access_level",
              .doc = "Readable by clearance this or above (adding: default 0; editing: left out keeps the base "
                     "version's)."},
             0, kMaxAccessLevel, [](PrinciplePutRequest& r) -> auto& { return r.access_level; });
  access_level.read = [read = access_level.read](const JsonReader& reader, PrinciplePutRequest& r) -> Status {
    MSP_RETURN_IF_ERROR(read(reader, r));
    r.access_level_given = reader.Has("access_level");
    return Status::Ok();
  };
  access_level.show = [](PrinciplePutRequest&) { return json(); };  // editing: kept
  d.fields = {
      PrincipleIdField<PrinciplePutRequest>(),
      MissionScopeField<PrinciplePutRequest>(),
      F::Int({.name = "base_version",
              .doc = "The version the edit changes (see principle_show); 0 or left out: add version 1."},
             0, kMaxVersion, [](PrinciplePutRequest& r) -> auto& { return r.base_version; }),
      F::String({.name = "statement", .doc = "The principle (required to add; editing: left out keeps it)."},
                [](PrinciplePutRequest& r) -> auto& { return r.statement; }),
      F::String({.name = "rationale", .doc = "Why (editing: left out keeps it)."},
                [](PrinciplePutRequest& r) -> auto& { return r.rationale; }),
      F::String({.name = "author", .doc = "Who wrote this version (default: namespace.operator)."},
                [](PrinciplePutRequest& r) -> auto& { return r.author; }),
      std::move(access_level),
  };
  d.check = &CheckPrinciplePut;
  d.handle = &HandlePrinciplePut;
  return Declare(std::move(d));
}

}  // namespace msp::api
