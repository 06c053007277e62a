// A validator for the JSON Schema subset msp writes: the response_format it
// sends to chat models and the input and output schemas of its MCP tools.
// Keywords checked: type (a name or a list of names), properties, required,
// additionalProperties (a boolean or a schema), items, enum, minimum,
// maximum, minLength and maxLength (in characters), minItems, maxItems; a
// schema may also be true or false. Other keywords ("description", "title",
// "default", "$schema", ...) are ignored.
//
// The error names the JSON path of the first problem from `root`
// ("$.facts[2].confidence: 1.4 is above the maximum 1",
// "arguments.nmae is not a known field; known: name, n"), so it can be sent
// back to a model or shown to a client as it is.
#ifndef MSP_CODEC_JSON_SCHEMA_H_
#define MSP_CODEC_JSON_SCHEMA_H_

#include <string_view>

#include <nlohmann/json.hpp>

#include "msp/status.h"

namespace msp {

// Ok when `value` satisfies `schema`; InvalidArgument naming the path and
// the rule otherwise. A schema keyword of the wrong type is InvalidArgument
// too ("schema at $.x: 'required' must be an array").
Status ValidateJsonSchema(const nlohmann::json& schema, const nlohmann::json& value, std::string_view root = "$");

}  // namespace msp

#endif  // MSP_CODEC_JSON_SCHEMA_H_
