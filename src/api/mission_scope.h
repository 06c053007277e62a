// The namespace field of the operations over a mission's records (internal
// to src/api): tasks.cc and decisions.cc take the mission and the asker the
// same way, and refuse a request without a mission with the same words. And
// what the operations over WorkflowMemory share (workflow_query.cc,
// handoff.cc, mark_used.cc): opening it, and a digest's answer.
#ifndef MSP_API_MISSION_SCOPE_H_
#define MSP_API_MISSION_SCOPE_H_

#include <string>
#include <string_view>

#include "api/declare.h"
#include "msp/digest.h"

namespace msp::api {

// The `namespace` row of R, whose member `scope` it fills.
template <typename R>
Field<R> MissionScopeField() {
  return Fields<R>::Scope(
      {.name = "namespace",
       .doc = "The mission (required) and the asker: operator (their clearance in the mission's registry, "
              "capped "
              "by the caller's, applies); parts left out are the face's."},
      [](R & r) -> auto& { return r.scope; });
}

// InvalidArgument without a mission: "... required: `records` belong to a mission".
inline Status NeedMission(const Namespace& scope, std::string_view records) {
  if (!scope.mission.empty()) return Status::Ok();
  return Status::InvalidArgument("field 'namespace.mission' is required: " + std::string(records) +
                                 " belong to a mission");
}

// The face's mission retrieval interface (CallContext::workflow).
inline Result<WorkflowMemory*> OpenWorkflow(const CallContext& context) {
  if (!context.workflow) return Status::Unavailable("mission retrieval is not set up on this face");
  return context.workflow();
}

// A digest's answer (QueryDigest, HandoffDigest): {markdown, tokens_used,
// token_budget, counter, clearance, degraded, digest}, the digest's JSON
// text as an object.
template <typename D>
Result<nlohmann::json> DigestAnswer(const D& d) {
  nlohmann::json digest = nlohmann::json::parse(d.json, nullptr, /*allow_exceptions=*/false);
  if (!digest.is_object()) return Status::Internal("the digest's JSON does not parse");
  return nlohmann::json{{"markdown", d.markdown},       {"tokens_used", d.tokens_used},
                        {"token_budget", d.token_budget}, {"counter", d.counter},
                        {"clearance", d.clearance},     {"degraded", d.load.degraded},
                        {"digest", std::move(digest)}};
}

}  // namespace msp::api

#endif  // MSP_API_MISSION_SCOPE_H_
