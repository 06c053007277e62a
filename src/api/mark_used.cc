// The declaration of `workflow_mark_used`: after a task, the entries of a
// workflow_memory_query digest that were actually used (msp mark-used, POST
// /v1/retrievals/{retrieval_id}/used, MCP workflow_mark_used). Over
// WorkflowMemory::MarkUsed (msp/digest.h); the redundancy report measures
// the share of served but unused context from these marks. A retrieval above
// the caller's clearance is not found, on every face.
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "msp/digest.h"

namespace msp::api {
namespace {

using nlohmann::json;

// The retrieval mark_used's example names (the faces test imports it, a
// retrieval that served the example decision, 0190e5c2-...-d1).
constexpr const char* kExampleRetrieval = "0190e5c2-0000-7000-8000-0000000000a1";
// The most entries one call marks.
constexpr size_t kMaxMarked = 1000;

struct MarkUsedRequest {
  Namespace scope;
  std::string retrieval_id;
  std::vector<std::string> entries;
};

Status CheckMarkUsed(const MarkUsedRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "retrievals"));
  if (r.entries.empty() || r.entries.size() > kMaxMarked) {
    return Status::InvalidArgument("field 'entries' must hold 1.." + std::to_string(kMaxMarked) +
                                   " entry ids (the served entries that were used)");
  }
  for (size_t i = 0; i < r.entries.size(); ++i) {
    if (r.entries[i].empty()) {
      return Status::InvalidArgument("field 'entries[" + std::to_string(i) + "]' must not be empty");
    }
  }
  return Status::Ok();
}

Result<json> HandleMarkUsed(const CallContext& context, MarkUsedRequest& r) {
  Namespace mission = r.scope;
  mission.operator_id.clear();
  mission.session.clear();
  MSP_ASSIGN_OR_RETURN(WorkflowMemory * wm, OpenWorkflow(context));
  MSP_ASSIGN_OR_RETURN(MarkUsedResult m,
                       wm->MarkUsed(mission, r.retrieval_id, r.entries, context.caller.actor, context.caller.clearance));
  return json{{"retrieval_id", m.retrieval_id}, {"used", m.used}, {"served", m.served}};
}

}  // namespace

std::unique_ptr<Operation> MarkUsedOperation() {
  using F = Fields<MarkUsedRequest>;
  Declaration<MarkUsedRequest> d;
  d.info = {
      .name = "workflow_mark_used",
      .title = "Mark served entries used",
      .summary =
          "After a task: say which entries of a workflow_memory_query digest you actually used (their ids, from "
          "digest.entries). Marks accumulate over calls (marking one twice changes nothing); the redundancy "
          "report measures the share of served but unused context from them. An entry the retrieval did not "
          "serve is bad input, and nothing is marked.",
      .cli_verb = "mark-used",
      .rest_method = "POST",
      .rest_path = "/v1/retrievals/{retrieval_id}/used",
      .mcp_tool = "workflow_mark_used",
      .idempotent = true,
      .example = {{"retrieval_id", kExampleRetrieval},
                  {"entries", {"0190e5c2-0000-7000-8000-0000000000d1"}},
                  {"namespace", {{"mission", "m1"}}}},
      .answer = "{retrieval_id, used, served}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"retrieval_id", TypedSchema("string", "The retrieval.")},
                          {"used", StringsSchema("Every entry marked used so far.")},
                          {"served", TypedSchema("integer", "Entries the retrieval served.")}}},
                        {"required", {"retrieval_id", "used", "served"}}},
  };
  d.fields = {
      F::Text({.name = "retrieval_id",
               .doc = "The retrieval_id workflow_memory_query answered.",
               .required = true,
               .cli = CliForm::kPositional},
              [](MarkUsedRequest& r) -> auto& { return r.retrieval_id; }),
      F::Strings({.name = "entries",
                  .doc = "Ids of the served entries that were used (1..1000).",
                  .required = true,
                  .cli = CliForm::kPositional},
                 [](MarkUsedRequest& r) -> auto& { return r.entries; }),
      F::Scope({.name = "namespace", .doc = "The mission (required); parts left out are the face's."},
               [](MarkUsedRequest& r) -> auto& { return r.scope; }),
  };
  d.check = &CheckMarkUsed;
  d.handle = &HandleMarkUsed;
  return Declare(std::move(d));
}

}  // namespace msp::api
