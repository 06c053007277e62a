// The MCP tools of src/api's operations (memory_search,
// workflow_memory_query, memory_write, memory_get, memory_history,
// memory_delete): each tool's name, description, input and output
// schemas come from the operation's declaration, and its handler decodes the
// arguments with the operation's strict codec, so a tool answers what the
// command line and the REST route answer.
#ifndef MSP_MCP_API_TOOLS_H_
#define MSP_MCP_API_TOOLS_H_

#include <memory>

#include "api/operation.h"
#include "mcp/mission_tools.h"
#include "mcp/tool.h"
#include "msp/memory.h"

namespace msp::mcp {

// The tool of `op`. The call runs in the session's namespace (the request's
// namespace parts over it), as the session's caller (McpSession::engine).
// Writes are the model's (CallContext::agent_writes from mcp.write_source,
// mcp.write_default_tag and policy.stable_tags: docs/mcp.md, "Agent
// writes"). `op` and `mission` must outlive the tool.
Tool ApiTool(const api::Operation& op, std::shared_ptr<MissionMemory> mission, const Settings& options);

// Appends the tool of every operation of src/api.
void AddApiTools(std::shared_ptr<MissionMemory> mission, const Settings& options, ToolSet& tools);

}  // namespace msp::mcp

#endif  // MSP_MCP_API_TOOLS_H_
