// The mission retrieval interface of an MCP server (see mission_tools.h).
#include "mcp/mission_tools.h"

#include <memory>
#include <utility>

namespace msp::mcp {

std::shared_ptr<MissionMemory> OpenMissionMemory(MemoryLayer& engine, const Options& options) {
  auto mission = std::make_shared<MissionMemory>();
  Result<std::unique_ptr<WorkflowMemory>> memory = WorkflowMemory::Open(engine, options);
  if (memory.ok()) {
    mission->memory = std::move(memory).value();
  } else {
    mission->open_status = memory.status().WithContext("mission memory is unavailable");
  }
  return mission;
}

}  // namespace msp::mcp
