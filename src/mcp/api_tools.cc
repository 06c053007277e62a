// The tools of src/api's operations (see api_tools.h).
#include "mcp/api_tools.h"

#include "api/operations.h"
#include "api/schema.h"

namespace msp::mcp {

namespace {

// What memory_write's description adds for a model: the tags to give, and
// what it gets without one; the source it is stored with.
std::string AgentWriteNote(const api::CallContext::AgentWrites& agent) {
  std::string tags;
  for (const std::string& k : agent.stable_tags) {
    if (k != agent.default_tag) tags += (tags.empty() ? "" : ", ") + k;
  }
  return " Tag it with what it is (one of " + tags + ")" +
         (agent.default_tag.empty() ? std::string(" (required)")
                                    : "; without one of them it is tagged " + agent.default_tag) +
         ". It is stored with source " + agent.source +
         " unless you name another (not a trusted one: those are the operator's to give).";
}

}  // namespace

Tool ApiTool(const api::Operation& op, std::shared_ptr<MissionMemory> mission, const Settings& options) {
  const api::OperationInfo& info = op.info();
  const api::CallContext::AgentWrites agent{options.mcp.write_source, options.mcp.write_default_tag,
                                            options.policy.stable_tags};
  Tool t;
  t.name = info.mcp_tool;
  t.title = info.title;
  t.description = info.summary;
  if (info.name == "memory_write") t.description += AgentWriteNote(agent);
  t.input_schema = api::InputSchema(info);
  t.output_schema = info.answer_schema.get();
  t.annotations = ToolAnnotations(info.read_only, info.destructive, info.idempotent);
  t.checks_arguments = true;
  t.profile = info.mcp_profile;
  t.handler = [&op, mission, agent](const McpSession& session, const nlohmann::json& args) -> Result<ToolOutput> {
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
    context.agent_writes = agent;
    // The answer as text (Operation::CallText): the structured content and
    // the text block without a tree built and dumped again.
    MSP_ASSIGN_OR_RETURN(std::string answer, op.CallText(context, args));
    ToolOutput out;
    out.serialized = ToolOutput::Serialized::OfText(std::move(answer));
    return out;
  };
  return t;
}

void AddApiTools(std::shared_ptr<MissionMemory> mission, const Settings& options, ToolSet& tools) {
  for (const api::Operation* op : api::Operations()) {
    if (!op->info().mcp_tool.empty()) tools.push_back(ApiTool(*op, mission, options));
  }
}

}  // namespace msp::mcp
