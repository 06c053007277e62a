// The one mapping of msp Status codes to HTTP statuses and JSON error bodies,
// shared by the REST API and the MCP-over-HTTP endpoint.
//
// An error body is {"error": {"code": "invalid_argument", "message": "..."}};
// a refusal by the write policy adds "rule" (the rule that fired, e.g.
// "min_chars") when the message names one.
#ifndef MSP_SERVER_HTTP_STATUS_H_
#define MSP_SERVER_HTTP_STATUS_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "msp/status.h"

namespace msp {

// InvalidArgument 400, NotFound 404, Refused 422, Conflict / AlreadyExists /
// FailedPrecondition 409, Unavailable 503, anything else 500.
// REQUIRES: !status.ok().
int HttpStatusFor(const Status& status);

// The rule named by a refusal ("policy rule min_chars: ..." -> "min_chars"),
// or "" when the message names none.
std::string RefusalRule(std::string_view message);

// {"error": {"code": StatusCodeName, "message": ..., ["rule": ...]}}.
nlohmann::json StatusErrorJson(const Status& status);

// {"error": {"code": code, "message": message}}, for errors that are not an
// engine Status (unauthorized, forbidden, payload_too_large, ...).
nlohmann::json ErrorJson(std::string_view code, std::string_view message);

}  // namespace msp

#endif  // MSP_SERVER_HTTP_STATUS_H_
