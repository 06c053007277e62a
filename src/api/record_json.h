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

// The record the examples of the record operations and of memory_audit name:
// the faces test seeds it (tests/http/faces_test.cc).
inline constexpr const char* kExampleId = "0190e5c2-0000-7000-8000-0000000000e1";

}  // namespace msp::api

#endif  // MSP_API_RECORD_JSON_H_
