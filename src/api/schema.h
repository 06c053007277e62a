// The JSON Schema of an operation's request, from its field table: the MCP
// tool's inputSchema and the REST route's request body in docs/openapi.json.
// Closed objects (additionalProperties false), as the codec is strict.
#ifndef MSP_API_SCHEMA_H_
#define MSP_API_SCHEMA_H_

#include <string>

#include <nlohmann/json.hpp>

#include "api/operation.h"

namespace msp::api {

nlohmann::json InputSchema(const OperationInfo& info);

// {"type": type, "description": description}: a property of an answer
// schema (OperationInfo::answer_schema).
nlohmann::json TypedSchema(const char* type, std::string description);
// An answer's array of strings, and its time (ISO 8601, null when unset).
nlohmann::json StringsSchema(std::string description);
nlohmann::json TimeOrNullSchema(std::string description);

}  // namespace msp::api

#endif  // MSP_API_SCHEMA_H_
