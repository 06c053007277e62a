// The agent loop (seed 000, sections 2.5 and 3): Retrieve -> Inject ->
// Execute -> Write -> Consolidate against an OpenAI-compatible chat model
// with tool calling (provider/chat_client.h).
//
// One turn: the user's message; the behaviour rules of procedural memory are
// checked (a rule that matches calls its tool at once); then, up to
// agent.max_tool_rounds times, the working memory is assembled (system
// prompt, core memory, facts, retrieved and recent history, tools, request
// and what this turn did so far, within context_tokens - reply_reserve) and
// the model is called; each tool call it asks for is executed (msp's memory
// tools, external MCP servers' tools) and its result — or its error — goes
// back to the model; rules are checked again after each result. The
// model's final answer ends the turn.
//
// Atomicity: the unit is the turn. Its episodes (user message, each tool
// call and tool result, the agent response; each with duration and token
// count) are kept in memory until the turn ends and then written through a
// turn journal: one record (Kind::kEvent, Layer::kEpisodic, empty text, tag
// "agent_turn", body {"type": "agent_turn", "state", "first_step", "steps"})
// lists the steps with their numbers first, then the episodes are added,
// then the journal is marked done. A turn that fails (the model errs, a
// budget cannot be met) writes nothing; a process that dies while writing
// leaves a pending journal that the next Agent on the session completes
// (roll forward) before it does anything else. Tools act at once: what a
// memory tool writes (a fact, a core memory edit) stays even when the turn
// later fails, like any tool's side effect, and is in the audit log.
//
// Sessions: a session id names the conversation (ns.session of its
// episodes); an Agent created with an existing session id continues it (its
// history is read back from episodic memory). Consolidation runs every
// agent.consolidate_every_steps steps and at EndSession.
//
// Not thread-safe: one turn at a time.
#ifndef MSP_AGENT_AGENT_H_
#define MSP_AGENT_AGENT_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/core_memory.h"
#include "agent/mcp_client.h"
#include "msp/memory.h"
#include "config/settings.h"
#include "msp/procedural.h"
#include "msp/status.h"
#include "provider/chat_client.h"
#include "working/tokens.h"
#include "working/working_memory.h"

namespace msp {

// The outcome of one tool call, as it goes back to the model.
struct ToolOutcome {
  std::string text;
  bool error = false;
};

// Every tool the agent can call: msp's memory tools, the tools of external
// MCP servers ("<server>__<tool>") and the tools registered in procedural
// memory (a registered tool with the name of an available one overrides its
// description and schema; one that nothing implements is offered and fails
// when called, saying so).
class AgentToolbox {
 public:
  // scope: tenant, user, agent; session: the current session.
  AgentToolbox(MemoryLayer& engine, Namespace scope, std::string session, const AgentOptions& options,
               std::string actor);
  ~AgentToolbox();

  // Starts every configured MCP server and lists its tools. A server that
  // fails to start is an error naming it.
  Status StartMcpServers(const std::vector<std::string>& specs, int timeout_ms);
  // Applies procedural memory's registered tools.
  void ApplyProcedural(const std::vector<ToolDefinition>& registered);

  std::vector<ToolSpec> Specs() const;
  bool Has(const std::string& name) const;
  // Runs a tool; errors (bad arguments, a failing tool, an unknown tool)
  // come back as an outcome with error set, never as a failed Status.
  ToolOutcome Call(const std::string& name, const std::string& arguments_json);

  CoreMemory& core() { return core_; }

 private:
  using Handler = std::function<ToolOutcome(const nlohmann::json& args)>;
  struct Entry {
    ToolSpec spec;
    Handler handler;  // empty: registered in procedural memory only
  };
  void AddBuiltins();

  MemoryLayer& engine_;
  Namespace scope_;
  std::string session_;
  AgentOptions options_;
  std::string actor_;
  CoreMemory core_;
  std::vector<std::unique_ptr<McpClient>> mcp_;
  std::map<std::string, Entry> tools_;
};

// What the working memory for a request is built from, read from msp's
// memory: procedural memory's system prompt and the core memory blocks (of
// scope's tenant, user and agent), the top_facts facts and
// retrieved_episodes older episodes retrieved for the request (from the
// user's memory: tenant and user, every agent), the last recent_steps steps
// of the session, the tool schemas (options.agent). Facts and episodes are
// marked trusted by options.policy.context_trusted_sources.
Result<WorkingMemoryInput> GatherWorkingMemory(MemoryLayer& engine, const Settings& all_options,
                                               const Namespace& scope, const std::string& session,
                                               const std::string& request, const std::vector<ToolSpec>& tools);

// One tool schema as the prompt lists it (one JSON line).
std::string ToolSchemaLine(const ToolSpec& spec);

struct TurnResult {
  std::string reply;            // the model's final answer
  int model_calls = 0;
  int tool_calls = 0;           // model-requested and rule-fired
  int tool_errors = 0;
  std::vector<std::string> episode_ids;  // written, in step order
  WorkingMemory last_context;   // the working memory of the last model call
  bool stopped = false;         // max_tool_rounds reached before an answer
};

class Agent {
 public:
  // `chat` and `counter` must outlive the agent. `scope`: tenant, user,
  // agent. An empty `session` starts a new one (a new id); an existing id
  // continues it (a pending turn journal is completed first).
  static Result<std::unique_ptr<Agent>> Create(MemoryLayer& engine, const ChatClient& chat,
                                               const TokenCounter& counter, const Settings& options,
                                               const Namespace& scope, const std::string& session,
                                               const std::string& actor);
  ~Agent();

  // Runs one turn (see the file comment). On an error nothing of the turn
  // is written.
  Result<TurnResult> RunTurn(const std::string& user_message);
  // Ends the session: consolidates what is left of it.
  Result<ConsolidationReport> EndSession();

  const std::string& session() const { return session_; }
  // Steps already in the session when this agent started (0 for a new one).
  int64_t resumed_steps() const { return resumed_steps_; }
  AgentToolbox& toolbox() { return *toolbox_; }

 private:
  Agent(MemoryLayer& engine, const ChatClient& chat, const TokenCounter& counter, const Settings& options,
        Namespace scope, std::string session, std::string actor);
  Result<WorkingMemory> Context(const std::string& request, const std::vector<std::string>& turn_lines);
  Status WriteTurn(const std::vector<EpisodeStep>& steps, std::vector<std::string>* ids);

  MemoryLayer& engine_;
  const ChatClient& chat_;
  const TokenCounter& counter_;
  Settings options_;
  Namespace scope_;  // tenant, user, agent
  std::string session_;
  std::string actor_;
  std::unique_ptr<AgentToolbox> toolbox_;
  ProceduralSnapshot procedural_;
  int64_t resumed_steps_ = 0;
  int64_t steps_since_consolidation_ = 0;
  std::string summary_key_;   // the ids of the history last summarised
  std::string summary_text_;  // and its summary
};

// Completes the pending turn journals of a session (roll forward): adds the
// episodes a journal lists that are not there yet and marks it done.
// Returns how many journals it completed.
Result<int> RecoverAgentTurns(MemoryLayer& engine, const Namespace& scope, const std::string& session);

// The chat client the llm.* settings describe; FailedPrecondition, saying
// which settings to set, when no model is configured.
Result<std::unique_ptr<ChatClient>> MakeAgentChatClient(const Options& options);

}  // namespace msp

#endif  // MSP_AGENT_AGENT_H_
