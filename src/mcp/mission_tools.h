// The mission-memory tools of MCP (seed 003): decision_import_adr,
// handoff_digest and workflow_mark_used — thin faces over msp/mission.h and
// msp/digest.h in the session's mission. (The decision tools,
// decision_record ... decision_supersede, the correction tools,
// correction_record, correction_list and correction_show, and the task
// tools, task_add ... task_status, are src/api operations: mcp/api_tools.h.)
// Every call runs on the session's caller layer (McpSession::engine: the
// engine enforces the session's clearance); mission reads run as CallerAsker
// says: the operator's registry clearance, capped by the session's.
#ifndef MSP_MCP_MISSION_TOOLS_H_
#define MSP_MCP_MISSION_TOOLS_H_

#include <memory>

#include "mcp/tool.h"
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

// Appends the ten tools to `tools`.
void AddMissionTools(std::shared_ptr<MissionMemory> mission, ToolSet& tools);

}  // namespace msp::mcp

#endif  // MSP_MCP_MISSION_TOOLS_H_
