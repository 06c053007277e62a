// A record as every face answers it (internal to src/api): the record
// format (docs/cli.md) with its trust label, and that answer's JSON Schema.
// Defined in record.cc.
#ifndef MSP_API_RECORD_JSON_H_
#define MSP_API_RECORD_JSON_H_

#include <nlohmann/json.hpp>

#include "api/operation.h"

namespace msp::api {

nlohmann::json RecordJson(const CallContext& context, const Memory& m);
nlohmann::json RecordSchema();

}  // namespace msp::api

#endif  // MSP_API_RECORD_JSON_H_
