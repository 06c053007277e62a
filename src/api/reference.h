// What the docs say of the operations, written from the operation table:
// the reference page docs/operations.md (for each operation its faces, its
// fields with JSON name, CLI flag, type and range, default and doc, an
// example and its answer) and, in docs/openapi.json, each operation's
// request body schema and description. api_doc_main.cc writes both;
// api_test checks that the committed files are up to date.
#ifndef MSP_API_REFERENCE_H_
#define MSP_API_REFERENCE_H_

#include <string>
#include <string_view>

#include "msp/status.h"

namespace msp::api {

std::string ReferenceMarkdown();

// `document` (the text of docs/openapi.json) with each operation's request
// schema (components.schemas, by the route's requestBody $ref) set to its
// InputSchema and the route's summary and description to the operation's
// title and summary; key order and layout kept (one-space indent).
// InvalidArgument when `document` is not JSON or lacks an operation's route.
Result<std::string> OpenApiWithOperations(std::string_view document);

}  // namespace msp::api

#endif  // MSP_API_REFERENCE_H_
