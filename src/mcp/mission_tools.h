// The mission retrieval interface (WorkflowMemory) an MCP server opens once
// for its tools: src/api's mission operations (workflow_memory_query,
// handoff_digest, workflow_mark_used, decision_import_adr and the decision,
// correction and task tools) are MCP tools through mcp/api_tools.h. Every
// call runs on the session's caller layer (McpSession::engine: the engine
// enforces the session's clearance).
#ifndef MSP_MCP_MISSION_TOOLS_H_
#define MSP_MCP_MISSION_TOOLS_H_

#include <memory>

#include "msp/digest.h"
#include "msp/memory.h"
#include "msp/options.h"

namespace msp::mcp {

// The mission retrieval interface the tools share (workflow_memory_query,
// src/api, included), or why it could not be opened (e.g. tokens.counter
// cl100k without its vocabulary): every tool that needs it then reports that.
struct MissionMemory {
  std::unique_ptr<WorkflowMemory> memory;
  Status open_status;
};

// `options` gives mission.* and tokens.* (the token counter of every budget).
std::shared_ptr<MissionMemory> OpenMissionMemory(MemoryLayer& engine, const Options& options);

}  // namespace msp::mcp

#endif  // MSP_MCP_MISSION_TOOLS_H_
