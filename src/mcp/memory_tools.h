// msp's own memory tool for MCP: fact_history, a thin face over one
// MemoryLayer call in the session's namespace. (memory_search, memory_write,
// episode_add and the others are src/api's operations: mcp/api_tools.h.)
#ifndef MSP_MCP_MEMORY_TOOLS_H_
#define MSP_MCP_MEMORY_TOOLS_H_

#include <nlohmann/json.hpp>

#include "mcp/tool.h"
#include "msp/memory.h"
#include "msp/options.h"

namespace msp::mcp {

// Appends the tools to `tools`; they run on the session's caller layer
// (McpSession::engine).
void AddMemoryTools(ToolSet& tools);

// A record as the tools show it: id, kind, layer, text, tags, source, state,
// confidence, created_at, updated_at, valid_at, invalid_at (ISO 8601 or
// null), supersedes, superseded_by, session, step_number.
nlohmann::json RecordSummary(const Memory& m);
// The JSON Schema of RecordSummary (plus `extra` properties).
nlohmann::json RecordSummarySchema(const nlohmann::json& extra = nlohmann::json::object());

}  // namespace msp::mcp

#endif  // MSP_MCP_MEMORY_TOOLS_H_
