// A small JSON Schema checker for MCP tool arguments: the subset msp's tool
// schemas use, so every tool's inputSchema is both what clients see and what
// the server enforces.
//
// Keywords checked: type (a name or a list of names), properties, required,
// additionalProperties (false or a schema), items, enum, minimum, maximum,
// minLength, maxLength (in characters), minItems, maxItems. Every other
// keyword (description, title, default, ...) is ignored.
#ifndef MSP_MCP_JSON_SCHEMA_H_
#define MSP_MCP_JSON_SCHEMA_H_

#include <string_view>

#include <nlohmann/json.hpp>

#include "msp/status.h"

namespace msp::mcp {

// Ok when `value` satisfies `schema`. Otherwise InvalidArgument naming the
// first offending place from `root` ("arguments.entities[0].name: expected
// string, got number"). `schema` must be an object (a programming error
// otherwise, reported as Internal).
Status ValidateJson(const nlohmann::json& schema, const nlohmann::json& value, std::string_view root);

}  // namespace msp::mcp

#endif  // MSP_MCP_JSON_SCHEMA_H_
