// A validator for the subset of JSON Schema msp sends to chat models as
// response_format: type (string or array of types), properties, required,
// additionalProperties (boolean), items, enum, minimum/maximum,
// minItems/maxItems, minLength/maxLength. Other keywords ("description",
// "title", "$schema"...) are ignored.
//
// Used to check a model's reply before msp acts on it; the error names the
// JSON path of the first problem ("$.facts[2].confidence: 1.4 is above the
// maximum 1") so it can be sent back to the model.
#ifndef MSP_PROVIDER_JSON_SCHEMA_H_
#define MSP_PROVIDER_JSON_SCHEMA_H_

#include <nlohmann/json.hpp>

#include "msp/status.h"

namespace msp {

// Ok when `value` satisfies `schema`; InvalidArgument naming the path and
// the rule otherwise. A schema keyword of the wrong type is InvalidArgument
// too ("schema at $.x: ...").
Status ValidateJsonSchema(const nlohmann::json& schema, const nlohmann::json& value);

}  // namespace msp

#endif  // MSP_PROVIDER_JSON_SCHEMA_H_
