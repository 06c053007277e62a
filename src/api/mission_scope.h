// The namespace field of the operations over a mission's records (internal
// to src/api): tasks.cc and decisions.cc take the mission and the asker the
// same way, and refuse a request without a mission with the same words.
#ifndef MSP_API_MISSION_SCOPE_H_
#define MSP_API_MISSION_SCOPE_H_

#include <string>
#include <string_view>

#include "api/declare.h"

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

}  // namespace msp::api

#endif  // MSP_API_MISSION_SCOPE_H_
