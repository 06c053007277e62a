// The answers of the graph tools that return a graph (search_nodes,
// open_nodes, read_graph) written straight to JSON text: the structured
// result {"entities": [...], "nextCursor": ..., "relations": [...]} in
// compact form, and the text block server-memory's clients read
// (JSON.stringify(graph, null, 2)).
//
// The bytes are exactly those DumpJson writes for the same values built as
// nlohmann objects (keys sorted: entityType, name, observations; from,
// relationType, to): compact, and DumpJson of the string DumpJson writes
// with indent 2; graph_json_test.cc checks that. An answer of ~110 entities is ~100 KiB: building the tree first
// cost more than the search.
#ifndef MSP_MCP_GRAPH_JSON_H_
#define MSP_MCP_GRAPH_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "graph/graph_records.h"

namespace msp::mcp {

struct GraphJson {
  std::string structured;  // compact
  // Pretty-printed with indent 2, and that text as a JSON string (quoted
  // and escaped, as it stands in the tools/call reply): written so at once,
  // not escaped after.
  std::string text_json;
};

// The graph {entities, relations} and, when `next_cursor` is not empty,
// "nextCursor": next_cursor.
GraphJson WriteGraphJson(const std::vector<graph::Entity>& entities, const std::vector<graph::Relation>& relations,
                         std::string_view next_cursor = "");

}  // namespace msp::mcp

#endif  // MSP_MCP_GRAPH_JSON_H_
