// The declaration of memory_stats: the record counts of a namespace and the
// state of its derived indexes (msp stats, GET /v1/stats, MCP memory_stats).
// A caller with a clearance counts only the records it may see and gets no
// audit count (it may not read the audit log); no face answers the store's
// path (the server's file system is not a caller's business; `msp stats`
// prints its own data directory beside the answer).
#include "api/declare.h"
#include "api/operations.h"
#include "api/schema.h"
#include "codec/memory_json.h"

namespace msp::api {
namespace {

using nlohmann::json;

struct StatsRequest {
  Namespace ns;
};

Result<json> HandleStats(const CallContext& context, StatsRequest& r) {
  MSP_ASSIGN_OR_RETURN(Stats s, context.engine->GetStats(r.ns));
  json out = StatsToJson(s);
  if (context.caller.clearance) {
    out.erase("audit_events");
    out["clearance"] = *context.caller.clearance;
  }
  return out;
}

json CountsSchema(std::string description) {
  return {{"type", "object"},
          {"additionalProperties", {{"type", "integer"}}},
          {"description", std::move(description)}};
}

}  // namespace

std::unique_ptr<Operation> StatsOperation() {
  Declaration<StatsRequest> d;
  d.info = {
      .name = "memory_stats",
      .title = "Record counts and index state",
      .summary = "How many records the namespace holds (active, expired, by kind and by layer) and how far the "
                 "derived indexes have caught up with the store's change sequence. A caller with a clearance "
                 "counts only the records it may see and gets no audit count.",
      .cli_verb = "stats",
      .rest_method = "GET",
      .rest_path = "/v1/stats",
      .mcp_tool = "memory_stats",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"user", "ann"}}}},
      .answer = "{records, active, expired, by_kind, by_layer, last_seq, lexical_applied_seq, vector_applied_seq, "
                "vector_rows, vector_graph_placed, vector_graph_pending, index_rebuilds: {lexical, vector}, "
                "audit_events (no clearance) | clearance, embedder_id}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"records", TypedSchema("integer", "Records in the namespace.")},
                          {"active", TypedSchema("integer", "Not expired.")},
                          {"expired", TypedSchema("integer", "Past their time to live.")},
                          {"by_kind", CountsSchema("Records by kind.")},
                          {"by_layer", CountsSchema("Records by layer.")},
                          {"last_seq", TypedSchema("integer", "The store's change sequence.")},
                          {"lexical_applied_seq", TypedSchema("integer", "Where the lexical index has caught up to.")},
                          {"vector_applied_seq", TypedSchema("integer", "Where the vector index has caught up to.")},
                          {"vector_rows", TypedSchema("integer", "Rows of the vector index.")},
                          {"audit_events", TypedSchema("integer", "Audit events (a caller without a clearance).")},
                          {"clearance", TypedSchema("integer", "The caller's clearance, when it has one.")},
                          {"embedder_id", TypedSchema("string", "The embedder of the vectors.")}}},
                        {"required", {"records", "active", "expired", "by_kind", "by_layer", "last_seq"}}},
  };
  d.fields = {
      Fields<StatsRequest>::Scope({.name = "namespace",
                                   .doc = "What to count: tenant (the caller's), user, agent, session, mission, "
                                          "operator; parts left out are the face's (MCP: the session's)."},
                                  [](StatsRequest& r) -> auto& { return r.ns; }),
  };
  d.handle = &HandleStats;
  return Declare(std::move(d));
}

}  // namespace msp::api
