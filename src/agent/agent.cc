// The agent loop: working memory per model call, tool execution, rules, the
// turn journal and session resumption.
#include "agent/agent.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "procedural/rules.h"
#include "util/fence.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kTurnTag = "agent_turn";

int64_t MsSince(SteadyClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t0).count();
}

// What the agent reads from semantic and episodic memory: the user's, of
// every agent (facts written by other tools or agents about the user count).
Namespace ReadScope(const Namespace& scope) {
  Namespace ns;
  ns.tenant = scope.tenant;
  ns.user = scope.user;
  return ns;
}

Namespace AgentScope(const Namespace& scope) {
  Namespace ns;
  ns.tenant = scope.tenant;
  ns.user = scope.user;
  ns.agent = scope.agent;
  return ns;
}

std::string JournalId(const Namespace& ns, int64_t first_step) {
  const std::string key = "msp-agent-turn\x1f" + ns.tenant + "\x1f" + ns.user + "\x1f" + ns.agent + "\x1f" +
                          ns.session + "\x1f" + std::to_string(first_step);
  return NameUuid(key);
}

json StepToJson(const EpisodeStep& s) {
  return {{"step", s.step_number},        {"type", EpisodeTypeName(s.type)}, {"content", s.content_json},
          {"text", s.text},               {"tool_name", s.tool_name},        {"duration_ms", s.duration_ms},
          {"token_count", s.token_count}, {"timestamp", s.timestamp},        {"source", s.source},
          {"tags", s.tags}};
}

Result<EpisodeStep> StepFromJson(const json& j, const Namespace& ns, const std::string& actor) {
  EpisodeStep s;
  s.ns = ns;
  s.step_number = j.value("step", int64_t{0});
  const auto type = ParseEpisodeType(j.value("type", ""));
  if (!type || s.step_number < 1) return Status::Corruption("a turn journal holds a malformed step");
  s.type = *type;
  s.content_json = j.value("content", "");
  s.text = j.value("text", "");
  s.tool_name = j.value("tool_name", "");
  s.duration_ms = j.value("duration_ms", int64_t{0});
  s.token_count = j.value("token_count", int64_t{0});
  s.timestamp = j.value("timestamp", int64_t{0});
  s.source = j.value("source", "agent");
  if (j.contains("tags") && j["tags"].is_array()) s.tags = j["tags"].get<std::vector<std::string>>();
  s.actor = actor;
  return s;
}

// The pending turn journals of a session.
Result<std::vector<Memory>> PendingJournals(MemoryLayer& engine, const Namespace& session_ns) {
  ListRequest req;
  req.scope = session_ns;
  req.filter.kinds = {Kind::kEvent};
  req.filter.tags = {kTurnTag};
  req.include_expired = true;
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> all, engine.List(req));
  std::vector<Memory> out;
  for (Memory& m : all) {
    if (m.ns.session != session_ns.session) continue;
    const json body = json::parse(m.body_json, nullptr, false);
    if (body.is_object() && body.value("state", "") == "pending") out.push_back(std::move(m));
  }
  return out;
}

// Adds the journal's steps that are missing and marks it done.
Status CompleteJournal(MemoryLayer& engine, const Memory& journal, const Namespace& session_ns,
                       std::vector<std::string>* ids) {
  json body = json::parse(journal.body_json, nullptr, false);
  if (!body.is_object() || !body.contains("steps") || !body["steps"].is_array()) {
    return Status::Corruption("turn journal " + journal.id + " has no steps");
  }
  for (const json& js : body["steps"]) {
    MSP_ASSIGN_OR_RETURN(EpisodeStep step, StepFromJson(js, session_ns, body.value("actor", "")));
    Result<Memory> m = engine.AddEpisode(step);
    if (m.ok()) {
      if (ids != nullptr) ids->push_back(m->id);
      continue;
    }
    if (m.status().code() != StatusCode::kAlreadyExists) return m.status();
    // Written before a crash: keep it.
    if (ids != nullptr) {
      Result<std::vector<Memory>> last = engine.LastSteps(session_ns, session_ns.session, 0);
      if (last.ok()) {
        for (const Memory& e : *last) {
          if (e.step_number == step.step_number) ids->push_back(e.id);
        }
      }
    }
  }
  body["state"] = "done";
  Memory done = journal;
  done.body_json = body.dump();
  RecordBatch batch;
  batch.scope = session_ns;
  batch.puts = {done};
  batch.expected_seq = {journal.seq};
  batch.actor = body.value("actor", "");
  batch.reason = "agent turn written";
  return engine.Commit(batch).status();
}

std::string RoleLine(const char* role, const std::string& name, const std::string& text) {
  return std::string(role) + (name.empty() ? "" : " (" + name + ")") + ": " + text;
}

}  // namespace

Result<WorkingMemoryInput> GatherWorkingMemory(MemoryLayer& engine, const Settings& all_options,
                                               const Namespace& scope, const std::string& session,
                                               const std::string& request, const std::vector<ToolSpec>& tools) {
  const AgentOptions& options = all_options.agent;
  const std::vector<std::string>& trusted = all_options.policy.context_trusted_sources;
  const Namespace ns = AgentScope(scope);
  WorkingMemoryInput in;
  ProceduralMemory procedural(engine, ns);
  MSP_ASSIGN_OR_RETURN(ProceduralSnapshot snap, procedural.Snapshot());
  in.system_prompt = snap.system_prompt;
  CoreMemory core(engine, ns, options.core_block_limit);
  MSP_ASSIGN_OR_RETURN(std::vector<CoreBlock> blocks, core.Blocks());
  for (const CoreBlock& b : blocks) in.core_blocks.push_back({b.label, b.value, b.limit});

  std::set<std::string> recent_ids;
  if (!session.empty() && options.recent_steps > 0) {
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> recent, engine.LastSteps(ns, session, options.recent_steps));
    for (const Memory& m : recent) {
      Result<WorkingEpisode> e = WorkingEpisodeFromMemory(m);
      if (!e.ok()) continue;
      recent_ids.insert(m.id);
      e->trusted = IsTrustedSource(m.source, trusted);
      in.recent.push_back(std::move(e).value());
    }
  }
  if (!request.empty() && options.top_facts > 0) {
    RetrieveRequest r;
    r.scope = ReadScope(ns);
    r.query = request;
    r.top_k = options.top_facts;
    r.min_score = options.min_score;
    r.filter.kinds = {Kind::kFact};
    MSP_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, engine.Retrieve(r));
    for (const SearchHit& h : hits) {
      in.facts.push_back({h.memory.id, h.passage.empty() ? h.memory.text : h.passage, h.score, h.memory.source,
                          IsTrustedSource(h.memory.source, trusted)});
    }
  }
  if (!request.empty() && options.retrieved_episodes > 0) {
    RetrieveRequest r;
    r.scope = ReadScope(ns);
    r.query = request;
    r.top_k = options.retrieved_episodes + static_cast<int>(recent_ids.size());
    r.min_score = options.min_score;
    r.filter.kinds = {Kind::kEpisode};
    MSP_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, engine.Retrieve(r));
    std::vector<std::pair<Memory, WorkingEpisode>> older;
    for (const SearchHit& h : hits) {
      if (recent_ids.count(h.memory.id) > 0) continue;
      Result<WorkingEpisode> e = WorkingEpisodeFromMemory(h.memory);
      if (!e.ok()) continue;
      e->trusted = IsTrustedSource(h.memory.source, trusted);
      older.emplace_back(h.memory, std::move(e).value());
      if (static_cast<int>(older.size()) >= options.retrieved_episodes) break;
    }
    // Oldest first: the packer drops from the front.
    std::sort(older.begin(), older.end(), [](const auto& a, const auto& b) {
      return std::make_pair(a.first.created_at, a.first.step_number) <
             std::make_pair(b.first.created_at, b.first.step_number);
    });
    for (auto& [m, e] : older) in.retrieved.push_back(std::move(e));
  }
  for (const ToolSpec& t : tools) in.tool_schemas.push_back(ToolSchemaLine(t));
  in.request = request;
  return in;
}

Result<std::unique_ptr<ChatClient>> MakeAgentChatClient(const Options& options) {
  if (options.llm.model.empty()) {
    return Status::FailedPrecondition(
        "no chat model is configured: set llm.model (and llm.base_url, e.g. http://localhost:11434/v1 for "
        "Ollama, and llm.api_key when the server needs one)");
  }
  ChatOptions c;
  c.base_url = options.llm.base_url;
  c.model = options.llm.model;
  c.api_key = options.llm.api_key;
  c.timeout_ms = options.llm.timeout_ms;
  c.max_retries = options.llm.max_retries;
  return ChatClient::Create(c);
}

Result<int> RecoverAgentTurns(MemoryLayer& engine, const Namespace& scope, const std::string& session) {
  Namespace ns = AgentScope(scope);
  ns.session = session;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> pending, PendingJournals(engine, ns));
  std::sort(pending.begin(), pending.end(), [](const Memory& a, const Memory& b) { return a.created_at < b.created_at; });
  int done = 0;
  for (const Memory& j : pending) {
    MSP_RETURN_IF_ERROR(CompleteJournal(engine, j, ns, nullptr));
    ++done;
  }
  return done;
}

Agent::Agent(MemoryLayer& engine, const ChatClient& chat, const TokenCounter& counter, const Settings& options,
             Namespace scope, std::string session, std::string actor)
    : engine_(engine),
      chat_(chat),
      counter_(counter),
      options_(options),
      scope_(std::move(scope)),
      session_(std::move(session)),
      actor_(std::move(actor)) {}

Agent::~Agent() = default;

Result<std::unique_ptr<Agent>> Agent::Create(MemoryLayer& engine, const ChatClient& chat,
                                             const TokenCounter& counter, const Settings& options,
                                             const Namespace& scope, const std::string& session,
                                             const std::string& actor) {
  const AgentOptions& ao = options.agent;
  if (ao.context_tokens <= ao.reply_reserve || ao.reply_reserve < 0) {
    return Status::InvalidArgument("agent.context_tokens (" + std::to_string(ao.context_tokens) +
                                   ") must exceed agent.reply_reserve (" + std::to_string(ao.reply_reserve) + ")");
  }
  if (ao.max_tool_rounds < 1) return Status::InvalidArgument("agent.max_tool_rounds must be >= 1");
  std::string id = session.empty() ? NewUuid(SystemClock()->NowMs()) : session;
  std::unique_ptr<Agent> a(new Agent(engine, chat, counter, options, AgentScope(scope), id, actor));
  if (!session.empty()) {
    MSP_RETURN_IF_ERROR(RecoverAgentTurns(engine, a->scope_, id).status());
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> last, engine.LastSteps(a->scope_, id, 1));
    a->resumed_steps_ = last.empty() ? 0 : last.back().step_number;
  }
  a->toolbox_ = std::make_unique<AgentToolbox>(engine, a->scope_, id, ao, actor);
  MSP_RETURN_IF_ERROR(a->toolbox_->StartMcpServers(ao.mcp_servers, ao.mcp_timeout_ms));
  ProceduralMemory procedural(engine, a->scope_);
  MSP_ASSIGN_OR_RETURN(a->procedural_, procedural.Snapshot());
  a->toolbox_->ApplyProcedural(a->procedural_.tools);
  return a;
}

Result<WorkingMemory> Agent::Context(const std::string& request, const std::vector<std::string>& turn_lines) {
  MSP_ASSIGN_OR_RETURN(WorkingMemoryInput in, GatherWorkingMemory(engine_, options_, scope_, session_, request,
                                                                   toolbox_->Specs()));
  in.turn = turn_lines;
  WorkingMemoryBudget budget;
  budget.context_tokens = options_.agent.context_tokens;
  budget.reply_reserve = options_.agent.reply_reserve;
  WorkingMemoryPackOptions pack;
  if (options_.agent.summarise) {
    pack.summarise = [this](const std::vector<WorkingEpisode>& dropped) -> Result<std::string> {
      std::string history;
      std::string key;
      for (const WorkingEpisode& e : dropped) {
        history += WorkingEpisodeLine(e) + "\n";
        key += e.id + ",";
      }
      // The same history is summarised once (every model call of a turn
      // packs the working memory again).
      if (key == summary_key_) return summary_text_;
      ChatRequest req;
      req.messages = {ChatMessage::System("Summarise this conversation history in at most five sentences. Keep "
                                          "facts about the user, decisions, results of tool calls and open "
                                          "questions; leave out small talk."),
                      ChatMessage::User(history)};
      req.max_tokens = std::max(64, options_.agent.reply_reserve / 2);
      MSP_ASSIGN_OR_RETURN(ChatReply reply, chat_.Complete(req));
      summary_key_ = key;
      summary_text_ = reply.message.content;
      return reply.message.content;
    };
  }
  return PackWorkingMemory(in, budget, counter_, pack);
}

Result<TurnResult> Agent::RunTurn(const std::string& user_message) {
  if (user_message.empty()) return Status::InvalidArgument("the message is empty");
  TurnResult result;
  std::vector<EpisodeStep> steps;
  const std::string counter_name(counter_.name());
  auto add_step = [&](EpisodeType type, std::string text, json content, std::string tool, int64_t duration_ms,
                      std::string source) {
    EpisodeStep s;
    s.ns = scope_;
    s.ns.session = session_;
    s.type = type;
    s.token_count = static_cast<int64_t>(counter_.Count(text));
    content["counter"] = counter_name;
    s.content_json = content.dump();
    s.text = std::move(text);
    s.tool_name = std::move(tool);
    s.duration_ms = duration_ms;
    s.timestamp = SystemClock()->NowMs();
    s.source = std::move(source);
    s.actor = actor_;
    steps.push_back(std::move(s));
  };
  add_step(EpisodeType::kUserMessage, user_message, json{{"text", user_message}}, "", 0, "user");

  std::vector<ChatMessage> turn_messages;
  std::vector<std::string> turn_lines;
  RuleContext ctx;
  ctx.request = user_message;
  std::set<std::string> fired;
  int rule_calls = 0;

  auto run_tool = [&](const std::string& call_id, const std::string& name, const std::string& arguments,
                      const std::string& source) {
    const auto t0 = SteadyClock::now();
    ToolOutcome out = toolbox_->Call(name, arguments);
    const int64_t took = MsSince(t0);
    json args = json::parse(arguments.empty() ? "{}" : arguments, nullptr, false);
    if (args.is_discarded()) args = arguments;
    add_step(EpisodeType::kToolCall, name + " " + (arguments.empty() ? "{}" : arguments),
             json{{"call_id", call_id}, {"name", name}, {"arguments", args}}, name, 0, source);
    add_step(EpisodeType::kToolResult, out.error ? "error: " + out.text : out.text,
             json{{"call_id", call_id}, {"text", out.text}, {"error", out.error}}, name, took, source);
    ++result.tool_calls;
    if (out.error) ++result.tool_errors;
    const std::string shown = out.error ? "error: " + out.text : out.text;
    turn_messages.push_back(ChatMessage::ToolResult(call_id, shown));
    turn_lines.push_back(RoleLine("Tool result", name, shown));
    ctx.has_last = true;
    ctx.last_tool = name;
    ctx.last_text = out.text;
    ctx.last_error = out.error;
  };

  // Rules fire at most once per turn each, in name order; a rule's result
  // can make another rule fire.
  auto fire_rules = [&]() -> Status {
    for (bool again = true; again;) {
      again = false;
      for (const BehaviourRule& rule : procedural_.rules) {
        if (fired.count(rule.name) > 0) continue;
        Result<RuleCondition> cond = RuleCondition::Parse(rule.when);
        if (!cond.ok() || !cond->Evaluate(ctx)) continue;
        fired.insert(rule.name);
        MSP_ASSIGN_OR_RETURN(std::string args, ExpandRuleArguments(rule.arguments_json, ctx));
        const std::string call_id = "rule-" + rule.name + "-" + std::to_string(++rule_calls);
        ChatMessage call = ChatMessage::Assistant("");
        call.tool_calls.push_back({call_id, rule.tool, args});
        turn_messages.push_back(call);
        turn_lines.push_back(RoleLine("Tool call", rule.tool, args + " [rule " + rule.name + "]"));
        run_tool(call_id, rule.tool, args, "rule:" + rule.name);
        again = true;
        break;
      }
    }
    return Status::Ok();
  };
  MSP_RETURN_IF_ERROR(fire_rules());

  std::string reply_text;
  int64_t reply_ms = 0;
  bool answered = false;
  for (int round = 0; round < options_.agent.max_tool_rounds; ++round) {
    MSP_ASSIGN_OR_RETURN(WorkingMemory wm, Context(user_message, turn_lines));
    ChatRequest req;
    const std::string system = wm.RenderBefore(WorkingSectionId::kTools);
    if (!system.empty()) req.messages.push_back(ChatMessage::System(system));
    req.messages.push_back(ChatMessage::User(user_message));
    for (const ChatMessage& m : turn_messages) req.messages.push_back(m);
    req.tools = toolbox_->Specs();
    req.tool_choice = "auto";
    req.max_tokens = options_.agent.reply_reserve;
    result.last_context = std::move(wm);
    const auto t0 = SteadyClock::now();
    Result<ChatReply> reply = chat_.Complete(req);
    ++result.model_calls;
    if (!reply.ok()) return reply.status().WithContext("the model call failed; nothing of this turn was written");
    const int64_t took = MsSince(t0);
    if (reply->message.tool_calls.empty()) {
      reply_text = reply->message.content;
      reply_ms = took;
      answered = true;
      break;
    }
    ChatMessage call = reply->message;
    call.role = "assistant";
    turn_messages.push_back(call);
    for (const ToolCall& tc : reply->message.tool_calls) {
      turn_lines.push_back(RoleLine("Tool call", tc.name, tc.arguments));
      run_tool(tc.id, tc.name, tc.arguments, "agent");
      MSP_RETURN_IF_ERROR(fire_rules());
    }
  }
  if (!answered) {
    result.stopped = true;
    reply_text = "(stopped: the model asked for tools " + std::to_string(options_.agent.max_tool_rounds) +
                 " times in this turn without answering; agent.max_tool_rounds)";
  }
  add_step(EpisodeType::kAgentResponse, reply_text, json{{"text", reply_text}}, "", reply_ms, "agent");
  MSP_RETURN_IF_ERROR(WriteTurn(steps, &result.episode_ids));
  result.reply = reply_text;

  steps_since_consolidation_ += static_cast<int64_t>(steps.size());
  const int every = options_.agent.consolidate_every_steps;
  if (every > 0 && steps_since_consolidation_ >= every) {
    Result<ConsolidationReport> c = engine_.Consolidate(scope_, session_);
    if (!c.ok()) return c.status().WithContext("the turn was written; consolidating the session failed");
    steps_since_consolidation_ = 0;
  }
  return result;
}

Status Agent::WriteTurn(const std::vector<EpisodeStep>& steps, std::vector<std::string>* ids) {
  Namespace ns = scope_;
  ns.session = session_;
  for (int attempt = 1;; ++attempt) {
    // The first free step: after the session's last step and after any
    // pending journal's steps.
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> last, engine_.LastSteps(ns, session_, 1));
    int64_t next = last.empty() ? 1 : last.back().step_number + 1;
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> pending, PendingJournals(engine_, ns));
    for (const Memory& p : pending) {
      const json b = json::parse(p.body_json, nullptr, false);
      if (b.is_object() && b.contains("steps") && b["steps"].is_array()) {
        next = std::max<int64_t>(next, b.value("first_step", int64_t{0}) + static_cast<int64_t>(b["steps"].size()));
      }
    }
    json body = {{"type", "agent_turn"}, {"state", "pending"}, {"first_step", next}, {"actor", actor_}};
    json list = json::array();
    for (size_t i = 0; i < steps.size(); ++i) {
      EpisodeStep s = steps[i];
      s.step_number = next + static_cast<int64_t>(i);
      list.push_back(StepToJson(s));
    }
    body["steps"] = list;
    Memory journal;
    journal.id = JournalId(ns, next);
    journal.ns = ns;
    journal.kind = Kind::kEvent;
    journal.layer = Layer::kEpisodic;
    journal.tags = {kTurnTag};
    journal.source = "agent";
    journal.body_json = body.dump();
    RecordBatch batch;
    batch.scope = ns;
    batch.puts = {journal};
    batch.expected_seq = {0};
    batch.actor = actor_;
    batch.reason = "agent turn of " + std::to_string(steps.size()) + " steps";
    Result<std::vector<Memory>> stored = engine_.Commit(batch);
    if (!stored.ok()) {
      if (stored.status().code() == StatusCode::kConflict && attempt < 20) continue;  // another writer took the steps
      return stored.status().WithContext("writing the turn journal");
    }
    return CompleteJournal(engine_, stored->at(0), ns, ids);
  }
}

Result<ConsolidationReport> Agent::EndSession() {
  steps_since_consolidation_ = 0;
  return engine_.EndSession(scope_, session_);
}

}  // namespace msp
