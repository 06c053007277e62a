// The declaration of `handoff_digest`: what an operator taking over a
// mission needs from the predecessor, as a Markdown digest within a token
// budget and the same as JSON (msp handoff, POST /v1/handoff, MCP
// handoff_digest; docs/mission.md). Over WorkflowMemory::Handoff
// (msp/digest.h). The digest is read as the next operator, to_operator
// (CallerAsker: their registry clearance, capped by the caller's), on every
// face.
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "msp/digest.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

// The largest token budget of a digest, as workflow_memory_query's.
constexpr int64_t kMaxHandoffBudget = 100000000;

Status CheckHandoff(const HandoffRequest& r) { return NeedMission(r.mission, "handoff digests"); }

Result<json> HandleHandoff(const CallContext& context, HandoffRequest& r) {
  // The reader is to_operator, not the namespace's operator.
  r.mission.operator_id.clear();
  MSP_ASSIGN_OR_RETURN(Asker next, CallerAsker(*context.engine, r.mission, context.caller, r.to_operator));
  r.clearance = next.clearance;
  MSP_ASSIGN_OR_RETURN(WorkflowMemory * wm, OpenWorkflow(context));
  MSP_ASSIGN_OR_RETURN(HandoffDigest d, wm->Handoff(r));
  return DigestAnswer(d);
}

json HandoffAnswerSchema() {
  return {{"type", "object"},
          {"properties",
           {{"markdown", TypedSchema("string", "The digest, ready to read; never over token_budget.")},
            {"tokens_used", TypedSchema("integer", "Tokens of the markdown.")},
            {"token_budget", TypedSchema("integer", "The budget asked for.")},
            {"counter", TypedSchema("string", "The token counter.")},
            {"clearance", TypedSchema("integer", "The clearance the digest was read with (to_operator's).")},
            {"degraded",
             TypedSchema("boolean", "The mission is over its event capacity: ranking leans on criticality.")},
            {"digest", TypedSchema("object", "The structured digest (docs/mission.md).")}}},
          {"required", {"markdown", "tokens_used", "token_budget", "counter", "clearance", "degraded", "digest"}}};
}

}  // namespace

std::unique_ptr<Operation> HandoffOperation() {
  using F = Fields<HandoffRequest>;
  Declaration<HandoffRequest> d;
  d.info = {
      .name = "handoff_digest",
      .title = "Handoff digest",
      .summary =
          "For an operator taking over a mission: the unresolved threats and open questions, what is "
          "escalating, the decisions (with their reasons) and events since `since`, causes before effects, and "
          "the predecessor's correction profile, as Markdown never over token_budget plus the same as JSON. "
          "Read as to_operator (their clearance in the mission's registry, capped by the caller's).",
      .cli_verb = "handoff",
      .rest_method = "POST",
      .rest_path = "/v1/handoff",
      .mcp_tool = "handoff_digest",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}},
                  {"from_operator", "ann"},
                  {"to_operator", "bob"},
                  {"since", "2026-11-01T00:00:00Z"},
                  {"token_budget", 2000}},
      .answer = "{markdown, tokens_used, token_budget, counter, clearance, degraded, digest}",
      .answer_schema = HandoffAnswerSchema,
  };
  d.fields = {
      F::Scope({.name = "namespace",
                .doc = "The mission (required); parts left out are the face's. The digest is read as "
                       "to_operator, not as the namespace's operator."},
               [](HandoffRequest& r) -> auto& { return r.mission; }),
      F::Text({.name = "from_operator", .doc = "The predecessor, handing over.", .required = true, .flag = "--from"},
              [](HandoffRequest& r) -> auto& { return r.from_operator; }),
      F::Text({.name = "to_operator",
               .doc = "The next operator: their clearance applies.",
               .required = true,
               .flag = "--to"},
              [](HandoffRequest& r) -> auto& { return r.to_operator; }),
      F::Time({.name = "since", .doc = "Decisions and events from then on (ISO 8601; default: all)."},
              [](HandoffRequest& r) -> auto& { return r.since; }),
      F::Int({.name = "token_budget", .doc = "Tokens the digest may use, headings included.", .flag = "--budget"}, 0,
             kMaxHandoffBudget, [](HandoffRequest& r) -> auto& { return r.token_budget; }),
  };
  d.check = &CheckHandoff;
  d.handle = &HandleHandoff;
  return Declare(std::move(d));
}

}  // namespace msp::api
