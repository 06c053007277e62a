// The mission-memory tools of MCP (seed 003): workflow_memory_query,
// decision_record, correction_record, handoff_digest, workflow_mark_used,
// and the mission's tasks (task_add, task_list, task_show, task_comment,
// task_status: push mode, the records `msp orchestrate` follows) — thin faces
// over msp/mission.h, msp/digest.h and orchestrate/tasks.h in the session's
// mission.
// Reads run with the operator's clearance (the mission's registry), capped by
// the session's (McpSession::clearance).
#ifndef MSP_MCP_MISSION_TOOLS_H_
#define MSP_MCP_MISSION_TOOLS_H_

#include "mcp/tool.h"
#include "msp/memory.h"
#include "msp/options.h"

namespace msp::mcp {

// Appends the ten tools to `tools`. `options` gives mission.* and tokens.*
// (the token counter of every budget). `engine` must outlive the tools.
void AddMissionTools(MemoryLayer& engine, const Options& options, ToolSet& tools);

}  // namespace msp::mcp

#endif  // MSP_MCP_MISSION_TOOLS_H_
