// The nine knowledge-graph tools of @modelcontextprotocol/server-memory
// (create_entities, create_relations, add_observations, delete_entities,
// delete_observations, delete_relations, read_graph, search_nodes,
// open_nodes) with the reference server's names, input schemas and result
// shapes, over msp's store (graph/knowledge_graph.h).
//
// Differences, all additive: read_graph takes optional cursor and limit and
// returns a page with nextCursor; search_nodes takes an optional limit and
// ranks with msp's retrieval; concurrent writers lose nothing.
#ifndef MSP_MCP_GRAPH_TOOLS_H_
#define MSP_MCP_GRAPH_TOOLS_H_

#include "mcp/tool.h"
#include "msp/memory.h"
#include "config/settings.h"

namespace msp::mcp {

// Appends the nine tools to `tools`. `engine` must outlive them.
void AddGraphTools(MemoryLayer& engine, const McpOptions& options, ToolSet& tools);

}  // namespace msp::mcp

#endif  // MSP_MCP_GRAPH_TOOLS_H_
