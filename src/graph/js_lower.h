// Lower case as JavaScript's String.prototype.toLowerCase (Unicode's full
// default lowercase mapping, with the final sigma rule), so that msp's
// search_nodes matches exactly what @modelcontextprotocol/server-memory
// matches: it compares `field.toLowerCase().includes(query.toLowerCase())`.
// The tables come from Node (gen_js_lower.mjs).
#ifndef MSP_GRAPH_JS_LOWER_H_
#define MSP_GRAPH_JS_LOWER_H_

#include <string>
#include <string_view>

namespace msp::graph {

// `s` (UTF-8) lowered as JavaScript lowers the same string. Bytes that are
// not valid UTF-8 are copied as they are.
std::string JsLower(std::string_view s);

}  // namespace msp::graph

#endif  // MSP_GRAPH_JS_LOWER_H_
