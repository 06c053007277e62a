// The agent verbs: agent (the loop against a chat model), context (the
// working memory a request would get), core show / set / append / replace
// (core memory blocks). docs/agent.md.
#include <istream>
#include <ostream>

#include "agent/agent.h"
#include "cli/cli.h"

namespace msp {
namespace {

using json = nlohmann::json;

Result<std::unique_ptr<TokenCounter>> Counter(Invocation& inv) {
  return MakeTokenCounter(inv.config.options.tokens);
}

// "llm.model (MSP_LLM_MODEL, --llm-model)" for every llm.* setting.
std::string LlmSettingsHelp() {
  std::string out;
  for (const SettingInfo& s : AllSettings()) {
    if (s.key.substr(0, 4) != "llm.") continue;
    out += "\n  " + std::string(s.key) + " (" + std::string(s.env) + ", " + std::string(s.flag) + "): " +
           std::string(s.description);
  }
  if (out.empty()) out = "\n  llm.model (MSP_LLM_MODEL), llm.base_url (MSP_LLM_BASE_URL), llm.api_key (MSP_LLM_API_KEY)";
  return out;
}

json BlockJson(const CoreBlock& b) {
  return {{"label", b.label}, {"value", b.value}, {"chars", Utf8Length(b.value)}, {"limit", b.limit},
          {"description", b.description}};
}

void PrintBlock(Invocation& inv, const CoreBlock& b) {
  if (inv.json) {
    PrintJson(inv, BlockJson(b));
    return;
  }
  *inv.out << "== " << b.label << " (" << Utf8Length(b.value) << " of " << b.limit << " characters"
           << (b.description.empty() ? "" : "; " + b.description) << ") ==\n";
  if (!b.value.empty()) *inv.out << b.value << "\n";
}

Namespace AgentNamespace(const Invocation& inv) {
  Namespace ns;
  ns.tenant = inv.ns.tenant;
  ns.user = inv.ns.user;
  ns.agent = inv.ns.agent;
  return ns;
}

}  // namespace

Status RunContext(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::string request, TextArgument(inv, 0, /*stdin_dash=*/true));
  const Settings& o = inv.config.options;
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<TokenCounter> counter, Counter(inv));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  // The tools the agent would offer (without starting MCP servers).
  AgentToolbox toolbox(*engine, AgentNamespace(inv), inv.ns.session, o.agent, inv.actor);
  ProceduralMemory procedural(*engine, AgentNamespace(inv));
  MSP_ASSIGN_OR_RETURN(ProceduralSnapshot snap, procedural.Snapshot());
  toolbox.ApplyProcedural(snap.tools);
  MSP_ASSIGN_OR_RETURN(WorkingMemoryInput in, GatherWorkingMemory(*engine, o, AgentNamespace(inv),
                                                                   inv.ns.session, request, toolbox.Specs()));
  WorkingMemoryBudget budget;
  budget.context_tokens = o.agent.context_tokens;
  budget.reply_reserve = o.agent.reply_reserve;
  MSP_ASSIGN_OR_RETURN(WorkingMemory wm, PackWorkingMemory(in, budget, *counter));
  if (inv.json) {
    json sections = json::array();
    for (const WorkingSection& s : wm.sections) {
      sections.push_back({{"section", WorkingSectionName(s.id)}, {"tokens", s.tokens}, {"items", s.items},
                          {"text", s.text}});
    }
    json dropped = json::array();
    for (const DroppedEpisode& d : wm.dropped) {
      dropped.push_back({{"section", WorkingSectionName(d.section)}, {"id", d.id}, {"step", d.step_number},
                         {"tokens", d.tokens}});
    }
    PrintJson(inv, {{"prompt", wm.Render()},
                    {"sections", sections},
                    {"dropped", dropped},
                    {"total_tokens", wm.total_tokens},
                    {"budget", wm.budget},
                    {"counter", wm.counter_name}});
    return Status::Ok();
  }
  *inv.out << wm.Report();
  return Status::Ok();
}

Status RunAgent(Invocation& inv) {
  const Settings& o = inv.config.options;
  Result<std::unique_ptr<ChatClient>> chat = MakeAgentChatClient(o);
  if (!chat.ok()) {
    if (chat.status().code() == StatusCode::kFailedPrecondition) {
      return Status::FailedPrecondition(
          "msp agent needs an OpenAI-compatible chat model with tool calling, and none is configured. Set "
          "it in msp.toml ([llm] model = \"qwen2.5:7b\", base_url = \"http://localhost:11434/v1\"), in the "
          "environment or with flags:" +
          LlmSettingsHelp() + "\n(docs/agent.md)");
    }
    return chat.status();
  }
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<TokenCounter> counter, Counter(inv));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<Agent> agent, Agent::Create(*engine, **chat, *counter, o, AgentNamespace(inv),
                                                                   inv.ns.session, inv.actor));
  if (!inv.json) {
    *inv.out << "msp agent: session " << agent->session();
    if (agent->resumed_steps() > 0) *inv.out << " resumed after step " << agent->resumed_steps();
    *inv.out << " (continue it later with --session " << agent->session() << "); counter "
             << counter->name() << "; /exit or end of input ends the session\n";
  }
  auto run = [&](const std::string& message) -> Status {
    MSP_ASSIGN_OR_RETURN(TurnResult turn, agent->RunTurn(message));
    if (inv.json) {
      *inv.out << json{{"session", agent->session()},
                       {"reply", turn.reply},
                       {"model_calls", turn.model_calls},
                       {"tool_calls", turn.tool_calls},
                       {"tool_errors", turn.tool_errors},
                       {"episode_ids", turn.episode_ids},
                       {"prompt_tokens", turn.last_context.total_tokens},
                       {"counter", turn.last_context.counter_name},
                       {"stopped", turn.stopped}}
                      .dump()
               << "\n";
    } else {
      *inv.out << "agent: " << turn.reply << "\n";
      *inv.out << "  (" << turn.model_calls << " model calls, " << turn.tool_calls << " tool calls"
               << (turn.tool_errors > 0 ? ", " + std::to_string(turn.tool_errors) + " failed" : "") << "; prompt "
               << turn.last_context.total_tokens << " of " << turn.last_context.budget << " tokens ("
               << turn.last_context.counter_name << "))\n";
    }
    return Status::Ok();
  };
  const std::vector<std::string> messages = inv.flags.All("--message");
  if (!messages.empty()) {
    for (const std::string& m : messages) MSP_RETURN_IF_ERROR(run(m));
  } else {
    for (std::string line; std::getline(*inv.in, line);) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty()) continue;
      if (line == "/exit" || line == "/quit") break;
      MSP_RETURN_IF_ERROR(run(line));
    }
  }
  if (inv.flags.Has("--keep-open")) return Status::Ok();
  MSP_ASSIGN_OR_RETURN(ConsolidationReport report, agent->EndSession());
  if (!inv.json) {
    *inv.out << "session " << agent->session() << " ended: " << report.facts_added << " facts added, "
             << report.facts_merged << " merged\n";
  }
  return Status::Ok();
}

Status RunCoreShow(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  CoreMemory core(*engine, AgentNamespace(inv), inv.config.options.agent.core_block_limit);
  MSP_ASSIGN_OR_RETURN(std::vector<CoreBlock> blocks, core.Blocks());
  if (inv.json) {
    json arr = json::array();
    for (const CoreBlock& b : blocks) arr.push_back(BlockJson(b));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  for (const CoreBlock& b : blocks) PrintBlock(inv, b);
  return Status::Ok();
}

Status RunCoreSet(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::string value, TextArgument(inv, 1, /*stdin_dash=*/true));
  std::optional<size_t> limit;
  if (inv.flags.Has("--limit")) {
    Result<int64_t> l = inv.flags.GetInt("--limit", 0, 1, 100000);
    if (!l.ok()) return Usage(inv, l.status().message());
    limit = static_cast<size_t>(*l);
  }
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  CoreMemory core(*engine, AgentNamespace(inv), inv.config.options.agent.core_block_limit);
  MSP_ASSIGN_OR_RETURN(CoreBlock b, core.Set(inv.flags.positionals[0], value, limit, inv.actor));
  PrintBlock(inv, b);
  return Status::Ok();
}

Status RunCoreAppend(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::string text, TextArgument(inv, 1, /*stdin_dash=*/true));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  CoreMemory core(*engine, AgentNamespace(inv), inv.config.options.agent.core_block_limit);
  MSP_ASSIGN_OR_RETURN(CoreBlock b, core.Append(inv.flags.positionals[0], text, inv.actor));
  PrintBlock(inv, b);
  return Status::Ok();
}

Status RunCoreReplace(Invocation& inv) {
  if (inv.flags.positionals.size() != 3) return Usage(inv, "give LABEL OLD NEW");
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  CoreMemory core(*engine, AgentNamespace(inv), inv.config.options.agent.core_block_limit);
  MSP_ASSIGN_OR_RETURN(CoreBlock b, core.Replace(inv.flags.positionals[0], inv.flags.positionals[1],
                                                 inv.flags.positionals[2], inv.actor));
  PrintBlock(inv, b);
  return Status::Ok();
}

}  // namespace msp
