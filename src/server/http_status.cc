// Status -> HTTP status and JSON error body.
#include "server/http_status.h"

#include <cctype>

namespace msp {

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kRefused: return 422;
    case StatusCode::kAlreadyExists:
    case StatusCode::kConflict:
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kForbidden: return 403;
    case StatusCode::kUnavailable:
    case StatusCode::kReadOnly: return 503;  // the server's state, not the request's; no retry helps
    case StatusCode::kDiskFull: return 507;  // Insufficient Storage
    case StatusCode::kIoError:
    case StatusCode::kCorruption:
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

std::string RefusalRule(std::string_view message) {
  constexpr std::string_view kMarker = "policy rule ";
  const size_t at = message.find(kMarker);
  if (at == std::string_view::npos) return "";
  const size_t start = at + kMarker.size();
  size_t end = start;
  while (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_')) {
    ++end;
  }
  return std::string(message.substr(start, end - start));
}

nlohmann::json StatusErrorJson(const Status& status) {
  nlohmann::json j = ErrorJson(StatusCodeName(status.code()), status.message());
  if (status.code() == StatusCode::kRefused) {
    if (std::string rule = RefusalRule(status.message()); !rule.empty()) j["error"]["rule"] = rule;
  }
  return j;
}

nlohmann::json ErrorJson(std::string_view code, std::string_view message) {
  return {{"error", {{"code", std::string(code)}, {"message", std::string(message)}}}};
}

}  // namespace msp
