// The tools of src/api's operations (see api_tools.h).
#include "mcp/api_tools.h"

#include "api/operations.h"
#include "api/schema.h"

namespace msp::mcp {

Tool ApiTool(const api::Operation& op, std::shared_ptr<MissionMemory> mission) {
  const api::OperationInfo& info = op.info();
  Tool t;
  t.name = info.mcp_tool;
  t.title = info.title;
  t.description = info.summary;
  t.input_schema = api::InputSchema(info);
  t.output_schema = info.answer_schema;
  t.annotations = ToolAnnotations(info.read_only, false, info.idempotent);
  t.checks_arguments = true;
  t.handler = [&op, mission](const McpSession& session, const nlohmann::json& args) -> Result<ToolOutput> {
    api::CallContext context;
    context.engine = session.engine;
    std::unique_ptr<WorkflowMemory> workflow;
    context.workflow = [mission, &session, &workflow]() -> Result<WorkflowMemory*> {
      MSP_RETURN_IF_ERROR(mission->open_status);
      workflow = mission->memory->Over(*session.engine);
      return workflow.get();
    };
    context.ns = session.ns;
    context.caller = CallerOf(session);
    context.trusted_sources = session.trusted_sources;
    MSP_ASSIGN_OR_RETURN(nlohmann::json answer, op.Call(context, args));
    return ToolOutput{std::move(answer), std::nullopt};
  };
  return t;
}

void AddApiTools(std::shared_ptr<MissionMemory> mission, ToolSet& tools) {
  for (const api::Operation* op : api::Operations()) tools.push_back(ApiTool(*op, mission));
}

}  // namespace msp::mcp
