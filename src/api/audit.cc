// The declaration of memory_audit: the tenant's audit log, newest first, or
// one record's (msp audit, GET /v1/audit, MCP memory_audit). The log names
// records of every access level, so a caller with a clearance is refused by
// the engine (PermissionDenied: REST 403), on every face alike.
#include "api/declare.h"
#include "api/operations.h"
#include "api/record_json.h"
#include "api/schema.h"
#include "codec/memory_json.h"

namespace msp::api {
namespace {

using nlohmann::json;

// The log is the caller's tenant's: no namespace field.
struct AuditRequest {
  std::string record_id;
  int64_t limit = 100;
};
using AuditField = Fields<AuditRequest>;

Result<json> HandleAudit(const CallContext& context, AuditRequest& r) {
  Namespace tenant;
  tenant.tenant = context.caller.tenant;
  MSP_ASSIGN_OR_RETURN(std::vector<AuditEvent> events,
                       context.engine->Audit(tenant, r.record_id, static_cast<int>(r.limit)));
  json out = json::array();
  for (const AuditEvent& e : events) out.push_back(AuditEventToJson(e));
  return json{{"events", std::move(out)}};
}

json EventSchema() {
  return {{"type", "object"},
          {"properties",
           {{"seq", TypedSchema("integer", "The event's number in the log.")},
            {"at", TypedSchema("string", "When (ISO 8601).")},
            {"actor", TypedSchema("string", "Who: the caller's actor (cli, rest, mcp, an operator).")},
            {"action", TypedSchema("string", "create, update, supersede, delete, expire, import, merge, ...")},
            {"record_id", TypedSchema("string", "The record it concerns (empty: none).")},
            {"tenant", TypedSchema("string", "The tenant.")},
            {"reason", TypedSchema("string", "Why, as the caller said.")},
            {"details", {{"description", "What changed, as JSON (null: nothing more)."}}}}},
          {"required", {"seq", "at", "actor", "action", "record_id", "tenant", "reason"}}};
}

}  // namespace

std::unique_ptr<Operation> AuditOperation() {
  Declaration<AuditRequest> d;
  d.info = {
      .name = "memory_audit",
      .title = "The audit log",
      .summary = "The tenant's audit log, newest first: who created, updated, superseded, merged, imported, "
                 "expired or deleted which record, when and why; or one record's events only. The log names "
                 "records of every access level, so a caller with a clearance limit may not read it.",
      .cli_verb = "audit",
      .rest_method = "GET",
      .rest_path = "/v1/audit",
      .mcp_tool = "memory_audit",
      .read_only = true,
      .idempotent = true,
      .example = {{"record_id", kExampleId}, {"limit", 5}},
      .answer = "{events: [{seq, at, actor, action, record_id, tenant, reason, details}]}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"events", {{"type", "array"}, {"items", EventSchema()}, {"description", "Newest first."}}}}},
                        {"required", {"events"}}},
  };
  d.fields = {
      AuditField::String({.name = "record_id", .doc = "Only the events of this record.", .flag = "--record"},
                         [](AuditRequest& r) -> auto& { return r.record_id; }),
      AuditField::Int({.name = "limit", .doc = "At most this many events."}, 1, 1000,
                      [](AuditRequest& r) -> auto& { return r.limit; }),
  };
  d.handle = &HandleAudit;
  return Declare(std::move(d));
}

}  // namespace msp::api
