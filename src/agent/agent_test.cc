// The agent loop against the scripted OpenAI-compatible server: a tool call,
// a failing tool, a model error mid-turn (nothing written), a resumed
// session, rules, an external MCP server's tool, the turn journal's roll
// forward and the working memory sent to the model.
#include "agent/agent.h"

#include <gtest/gtest.h>

#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using json = nlohmann::json;
using testing::OpenAiStub;
using testing::StubReply;
using testing::kChatPath;

json ToolCall(const std::string& id, const std::string& name, const json& args) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args.dump()}}}};
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(stub_.ok());
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    options_.consolidation.every_n_episodes = 0;
    options_.llm.base_url = stub_.base_url();
    options_.llm.model = "stub-model";
    options_.llm.max_retries = 0;
    options_.llm.timeout_ms = 10000;
    options_.agent.summarise = false;
    options_.agent.consolidate_every_steps = 0;
    auto e = MemoryLayer::Open(options_);
    ASSERT_OK(e.status());
    engine_ = std::move(e).value();
    auto chat = MakeAgentChatClient(options_);
    ASSERT_OK(chat.status());
    chat_ = std::move(chat).value();
    scope_.tenant = "acme";
    scope_.user = "ann";
    scope_.agent = "helper";
  }

  std::unique_ptr<Agent> NewAgent(const std::string& session = "") {
    auto a = Agent::Create(*engine_, *chat_, counter_, options_, scope_, session, "tester");
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? std::move(a).value() : nullptr;
  }

  std::vector<Memory> Steps(const std::string& session) {
    Namespace ns = scope_;
    auto steps = engine_->LastSteps(ns, session, 0);
    EXPECT_TRUE(steps.ok()) << steps.status().ToString();
    return steps.ok() ? *steps : std::vector<Memory>{};
  }

  json Body(const Memory& m) { return json::parse(m.body_json); }

  json ChatRequest(size_t i) {
    auto reqs = stub_.Requests(kChatPath);
    EXPECT_LT(i, reqs.size());
    return i < reqs.size() ? reqs[i].json : json();
  }

  testing::TempDir dir_{"agent"};
  OpenAiStub stub_;
  Settings options_;
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<ChatClient> chat_;
  EstimateTokenCounter counter_;
  Namespace scope_;
};

TEST_F(AgentTest, ConversationWithAToolCall) {
  stub_.Enqueue(kChatPath, StubReply::ChatToolCalls(json::array(
                               {ToolCall("c1", "archival_memory_insert",
                                         {{"content", "The user runs Windows 11 with Python 3.11"}})})));
  stub_.Enqueue(kChatPath, StubReply::ChatContent("Noted: Windows 11 and Python 3.11."));
  auto agent = NewAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, agent->RunTurn("I use Windows 11 and Python 3.11, remember that."));
  EXPECT_EQ(turn.reply, "Noted: Windows 11 and Python 3.11.");
  EXPECT_EQ(turn.model_calls, 2);
  EXPECT_EQ(turn.tool_calls, 1);
  EXPECT_EQ(turn.tool_errors, 0);

  // Four episodes, in order, with durations and token counts.
  const auto steps = Steps(agent->session());
  ASSERT_EQ(steps.size(), 4u);
  const char* types[] = {"user_message", "tool_call", "tool_result", "agent_response"};
  for (size_t i = 0; i < 4; ++i) {
    const json b = Body(steps[i]);
    EXPECT_EQ(b["type"], types[i]) << i;
    EXPECT_EQ(steps[i].step_number, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(b["metadata"]["token_count"], counter_.Count(steps[i].text)) << i;
    EXPECT_EQ(b["content"]["counter"], "estimate");
  }
  EXPECT_EQ(Body(steps[1])["metadata"]["tool_name"], "archival_memory_insert");
  EXPECT_EQ(Body(steps[2])["content"]["error"], false);
  EXPECT_EQ(turn.episode_ids.size(), 4u);

  // The tool ran: the fact is in semantic memory.
  RetrieveRequest r;
  r.scope = scope_;
  r.query = "Windows 11 Python";
  r.filter.kinds = {Kind::kFact};
  ASSERT_OK_AND_ASSIGN(auto hits, engine_->Retrieve(r));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].memory.text, "The user runs Windows 11 with Python 3.11");

  // The second model call saw the tool result, answering call c1.
  const json second = ChatRequest(1);
  const json& msgs = second["messages"];
  ASSERT_GE(msgs.size(), 4u);
  EXPECT_EQ(msgs[0]["role"], "system");
  EXPECT_NE(msgs[0]["content"].get<std::string>().find("Core memory"), std::string::npos);
  EXPECT_EQ(msgs[1]["role"], "user");
  EXPECT_EQ(msgs[2]["role"], "assistant");
  EXPECT_EQ(msgs[2]["tool_calls"][0]["id"], "c1");
  EXPECT_EQ(msgs[3]["role"], "tool");
  EXPECT_EQ(msgs[3]["tool_call_id"], "c1");
  EXPECT_NE(msgs[3]["content"].get<std::string>().find("stored as fact"), std::string::npos) << msgs[3];
  // The tools offered include msp's memory tools with their schemas.
  std::set<std::string> names;
  for (const json& t : second["tools"]) names.insert(t["function"]["name"].get<std::string>());
  for (const char* n : {"memory_search", "memory_write", "fact_history", "core_memory_append", "core_memory_replace",
                        "archival_memory_insert", "archival_memory_search", "conversation_search"}) {
    EXPECT_EQ(names.count(n), 1u) << n;
  }
  EXPECT_EQ(turn.last_context.counter_name, "estimate");
  EXPECT_LE(turn.last_context.total_tokens, turn.last_context.budget);
}

TEST_F(AgentTest, AFailingToolGoesBackToTheModelAndIsRecorded) {
  stub_.Enqueue(kChatPath, StubReply::ChatToolCalls(json::array(
                               {ToolCall("c1", "memory_write", {{"text", "ok"}, {"tags", {"preference"}}}),
                                ToolCall("c2", "no_such_tool", json::object())})));
  stub_.Enqueue(kChatPath, StubReply::ChatContent("Sorry, I could not store that."));
  auto agent = NewAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, agent->RunTurn("Remember: ok"));
  EXPECT_EQ(turn.tool_calls, 2);
  EXPECT_EQ(turn.tool_errors, 2);
  const json msgs = ChatRequest(1)["messages"];
  ASSERT_EQ(msgs.size(), 5u);
  EXPECT_EQ(msgs[3]["tool_call_id"], "c1");
  EXPECT_NE(msgs[3]["content"].get<std::string>().find("error: refused"), std::string::npos) << msgs[3];
  EXPECT_EQ(msgs[4]["tool_call_id"], "c2");
  EXPECT_NE(msgs[4]["content"].get<std::string>().find("no tool named 'no_such_tool'"), std::string::npos);
  const auto steps = Steps(agent->session());
  ASSERT_EQ(steps.size(), 6u);
  EXPECT_EQ(Body(steps[2])["type"], "tool_result");
  EXPECT_EQ(Body(steps[2])["content"]["error"], true);
  EXPECT_EQ(Body(steps[4])["content"]["error"], true);
  EXPECT_EQ(Body(steps[5])["content"]["text"], "Sorry, I could not store that.");
}

TEST_F(AgentTest, AModelErrorMidTurnWritesNothing) {
  stub_.Enqueue(kChatPath, StubReply::ChatToolCalls(
                               json::array({ToolCall("c1", "memory_search", {{"query", "windows"}})})));
  stub_.Enqueue(kChatPath, StubReply::Error(500, "the model crashed"));
  auto agent = NewAgent();
  ASSERT_NE(agent, nullptr);
  auto turn = agent->RunTurn("What do you know about my OS?");
  ASSERT_FALSE(turn.ok());
  EXPECT_NE(turn.status().message().find("nothing of this turn was written"), std::string::npos)
      << turn.status().ToString();
  EXPECT_EQ(stub_.RequestCount(kChatPath), 2u) << "the tool ran between the two calls";
  EXPECT_TRUE(Steps(agent->session()).empty());
  Namespace ns = scope_;
  ns.session = agent->session();
  ListRequest journals;
  journals.scope = ns;
  journals.filter.kinds = {Kind::kEvent};
  journals.limit = 0;
  ASSERT_OK_AND_ASSIGN(auto events, engine_->List(journals));
  EXPECT_TRUE(events.empty()) << "no turn journal either";

  // The next turn of the same session starts at step 1.
  stub_.Enqueue(kChatPath, StubReply::ChatContent("Windows 11, I believe."));
  ASSERT_OK(agent->RunTurn("What do you know about my OS?").status());
  const auto steps = Steps(agent->session());
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step_number, 1);
}

TEST_F(AgentTest, AResumedSessionContinuesWhereItStopped) {
  stub_.Enqueue(kChatPath, StubReply::ChatContent("Hello Ann!"));
  std::string session;
  {
    auto agent = NewAgent();
    ASSERT_NE(agent, nullptr);
    session = agent->session();
    EXPECT_EQ(agent->resumed_steps(), 0);
    ASSERT_OK(agent->RunTurn("Hi, I am Ann and I debug a flaky numpy install.").status());
  }
  stub_.Enqueue(kChatPath, StubReply::ChatContent("You were debugging numpy."));
  auto resumed = NewAgent(session);
  ASSERT_NE(resumed, nullptr);
  EXPECT_EQ(resumed->session(), session);
  EXPECT_EQ(resumed->resumed_steps(), 2);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, resumed->RunTurn("What was I doing?"));
  EXPECT_EQ(turn.reply, "You were debugging numpy.");
  // The model saw the earlier turn as recent history.
  const std::string system = ChatRequest(1)["messages"][0]["content"];
  // (each step labelled with its provenance and fenced: util/fence.h)
  const size_t history = system.find("Recent conversation history:\nUser [episode · from user · trusted · id ");
  ASSERT_NE(history, std::string::npos) << system;
  const size_t said = system.find("]: Hi, I am Ann and I debug a flaky numpy install.\nAgent [episode · ", history);
  ASSERT_NE(said, std::string::npos) << system;
  EXPECT_NE(system.find("]: Hello Ann!", said), std::string::npos) << system;
  const auto steps = Steps(session);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[2].step_number, 3);
  EXPECT_EQ(steps[2].text, "What was I doing?");
  // Ending the session consolidates it.
  ASSERT_OK(resumed->EndSession().status());
}

TEST_F(AgentTest, RulesFireBeforeTheModelAndTheirCallsAreRecorded) {
  ProceduralMemory pm(*engine_, scope_);
  ProcedureChange by;
  by.author = "admin";
  ASSERT_OK(pm.SetSystemPrompt("You are Ann's assistant.", by).status());
  BehaviourRule rule;
  rule.name = "remember";
  rule.when = "request contains \"remember\"";
  rule.tool = "core_memory_append";
  rule.arguments_json = R"({"label":"user","content":"{{request}}"})";
  ASSERT_OK(pm.PutRule(rule, by).status());
  BehaviourRule never;
  never.name = "never";
  never.when = "request contains \"zzz\"";
  never.tool = "memory_search";
  never.arguments_json = R"({"query":"x"})";
  ASSERT_OK(pm.PutRule(never, by).status());

  stub_.Enqueue(kChatPath, StubReply::ChatContent("I will remember."));
  auto agent = NewAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, agent->RunTurn("Please remember I prefer tabs"));
  EXPECT_EQ(turn.tool_calls, 1);
  EXPECT_EQ(turn.model_calls, 1);
  const json msgs = ChatRequest(0)["messages"];
  ASSERT_EQ(msgs.size(), 4u);
  EXPECT_NE(msgs[0]["content"].get<std::string>().find("System: You are Ann's assistant."), std::string::npos);
  EXPECT_EQ(msgs[2]["tool_calls"][0]["function"]["name"], "core_memory_append");
  EXPECT_EQ(msgs[3]["role"], "tool");
  CoreMemory core(*engine_, scope_, options_.agent.core_block_limit);
  ASSERT_OK_AND_ASSIGN(CoreBlock user, core.Get("user"));
  EXPECT_EQ(user.value, "Please remember I prefer tabs");
  const auto steps = Steps(agent->session());
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[1].source, "rule:remember");
  // The next model call shows the edited core memory block.
  stub_.Enqueue(kChatPath, StubReply::ChatContent("Tabs it is."));
  ASSERT_OK(agent->RunTurn("Which indentation?").status());
  EXPECT_NE(ChatRequest(1)["messages"][0]["content"].get<std::string>().find("I prefer tabs\n</user>"),
            std::string::npos);
}

TEST_F(AgentTest, CallsAToolOfAnExternalMcpServer) {
  options_.agent.mcp_servers = {std::string("echo=") + MSP_MCP_TEST_SERVER};
  stub_.Enqueue(kChatPath, StubReply::ChatToolCalls(json::array({ToolCall("m1", "echo__shout", {{"text", "hi"}}),
                                                                  ToolCall("m2", "echo__fail", json::object())})));
  stub_.Enqueue(kChatPath, StubReply::ChatContent("The server says HI."));
  auto agent = NewAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, agent->RunTurn("Shout hi through the echo server"));
  EXPECT_EQ(turn.tool_calls, 2);
  EXPECT_EQ(turn.tool_errors, 1);
  const json first = ChatRequest(0);
  bool offered = false;
  for (const json& t : first["tools"]) {
    if (t["function"]["name"] == "echo__shout") {
      offered = true;
      EXPECT_EQ(t["function"]["parameters"]["required"][0], "text");
    }
  }
  EXPECT_TRUE(offered);
  const json msgs = ChatRequest(1)["messages"];
  EXPECT_EQ(msgs[3]["content"], "HI");
  EXPECT_EQ(msgs[4]["content"], "error: it failed on purpose");
  const auto steps = Steps(agent->session());
  ASSERT_EQ(steps.size(), 6u);
  EXPECT_EQ(Body(steps[2])["metadata"]["tool_name"], "echo__shout");
  EXPECT_EQ(steps[2].text, "HI");
}

TEST_F(AgentTest, StopsAfterMaxToolRounds) {
  options_.agent.max_tool_rounds = 2;
  for (int i = 0; i < 2; ++i) {
    stub_.Enqueue(kChatPath, StubReply::ChatToolCalls(json::array(
                                 {ToolCall("c" + std::to_string(i), "memory_search", {{"query", "loop"}})})));
  }
  auto agent = NewAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, agent->RunTurn("loop forever"));
  EXPECT_TRUE(turn.stopped);
  EXPECT_EQ(turn.model_calls, 2);
  EXPECT_NE(turn.reply.find("agent.max_tool_rounds"), std::string::npos);
  EXPECT_EQ(Steps(agent->session()).size(), 6u);
}

TEST_F(AgentTest, APendingTurnJournalIsCompletedOnResume) {
  // A process wrote the journal and the first of two episodes, then died.
  Namespace ns = scope_;
  ns.session = "s-crash";
  EpisodeStep first;
  first.ns = ns;
  first.step_number = 1;
  first.type = EpisodeType::kUserMessage;
  first.text = "Where is my data?";
  ASSERT_OK(engine_->AddEpisode(first).status());
  json body = {{"type", "agent_turn"},
               {"state", "pending"},
               {"first_step", 1},
               {"actor", "tester"},
               {"steps",
                {{{"step", 1}, {"type", "user_message"}, {"text", "Where is my data?"}, {"content", ""}},
                 {{"step", 2}, {"type", "agent_response"}, {"text", "In .msp/msp.db."}, {"content", ""}}}}};
  Memory journal;
  journal.ns = ns;
  journal.kind = Kind::kEvent;
  journal.layer = Layer::kEpisodic;
  journal.tags = {"agent_turn"};
  journal.body_json = body.dump();
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {journal};
  ASSERT_OK(engine_->Commit(batch).status());

  auto agent = NewAgent("s-crash");
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->resumed_steps(), 2);
  const auto steps = Steps("s-crash");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1].text, "In .msp/msp.db.");
  ASSERT_OK_AND_ASSIGN(int again, RecoverAgentTurns(*engine_, scope_, "s-crash"));
  EXPECT_EQ(again, 0) << "the journal is marked done";
}

TEST_F(AgentTest, RegisteredToolsOverrideOrFailWhenNothingImplementsThem) {
  ProceduralMemory pm(*engine_, scope_);
  ProcedureChange by;
  by.author = "admin";
  ToolDefinition search;
  search.name = "memory_search";
  search.description = "Look things up in Ann's notes.";
  search.parameters_json = R"({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})";
  ASSERT_OK(pm.PutTool(search, by).status());
  ToolDefinition ghost;
  ghost.name = "deploy";
  ghost.description = "Deploy the service.";
  ASSERT_OK(pm.PutTool(ghost, by).status());
  stub_.Enqueue(kChatPath, StubReply::ChatToolCalls(json::array({ToolCall("d1", "deploy", json::object())})));
  stub_.Enqueue(kChatPath, StubReply::ChatContent("I cannot deploy."));
  auto agent = NewAgent();
  ASSERT_NE(agent, nullptr);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, agent->RunTurn("Deploy it"));
  EXPECT_EQ(turn.tool_errors, 1);
  bool overridden = false;
  bool offered = false;
  const json first = ChatRequest(0);
  for (const json& t : first["tools"]) {
    if (t["function"]["name"] == "memory_search") overridden = t["function"]["description"] == search.description;
    if (t["function"]["name"] == "deploy") offered = true;
  }
  EXPECT_TRUE(overridden);
  EXPECT_TRUE(offered);
  EXPECT_NE(ChatRequest(1)["messages"][3]["content"].get<std::string>().find("neither msp nor a configured MCP"),
            std::string::npos);
}

TEST_F(AgentTest, OldHistoryIsSummarisedByTheModelWhenOverBudget) {
  options_.agent.summarise = true;
  options_.agent.context_tokens = 1400;
  options_.agent.reply_reserve = 100;
  Namespace ns = scope_;
  ns.session = "long";
  for (int i = 1; i <= 12; ++i) {
    EpisodeStep s;
    s.ns = ns;
    s.type = i % 2 ? EpisodeType::kUserMessage : EpisodeType::kAgentResponse;
    s.text = "Turn " + std::to_string(i) + ": " + std::string(200, 'a' + (i % 26));
    ASSERT_OK(engine_->AddEpisode(s).status());
  }
  options_.agent.recent_steps = 12;
  options_.agent.retrieved_episodes = 0;
  stub_.Enqueue(kChatPath, StubReply::ChatContent("Earlier: Ann typed long lines."));  // the summary
  stub_.Enqueue(kChatPath, StubReply::ChatContent("Done."));
  auto agent = NewAgent("long");
  ASSERT_NE(agent, nullptr);
  ASSERT_OK_AND_ASSIGN(TurnResult turn, agent->RunTurn("What happened before?"));
  EXPECT_TRUE(turn.last_context.summarised);
  EXPECT_FALSE(turn.last_context.dropped.empty());
  EXPECT_LE(turn.last_context.total_tokens, turn.last_context.budget);
  const std::string summary_request = ChatRequest(0)["messages"][1]["content"];
  EXPECT_NE(summary_request.find("Turn 1: "), std::string::npos) << "the oldest step is summarised";
  const std::string system = ChatRequest(1)["messages"][0]["content"];
  EXPECT_NE(system.find("Summary of earlier conversation:\n  > Earlier: Ann typed long lines."), std::string::npos)
      << system;
  EXPECT_EQ(system.find("Turn 1: "), std::string::npos);
  EXPECT_NE(system.find("Turn 12: "), std::string::npos);
}

TEST(AgentChatClientTest, WithoutAModelSaysHowToConfigureOne) {
  Options o;
  auto c = MakeAgentChatClient(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("llm.model"), std::string::npos);
}

TEST_F(AgentTest, ContextForARequestRespectsTheBudget) {
  CoreMemory core(*engine_, scope_, 200);
  ASSERT_OK(core.Set("persona", "I am a careful assistant.", std::nullopt, "admin").status());
  FactRequest f;
  f.ns = scope_;
  f.text = "The user's laptop runs Windows 11 with Python 3.11";
  ASSERT_OK(engine_->AddFact(f).status());
  ASSERT_OK_AND_ASSIGN(WorkingMemoryInput in,
                       GatherWorkingMemory(*engine_, options_, scope_, "", "Which Python does my laptop run?",
                                           {}));
  ASSERT_EQ(in.facts.size(), 1u);
  EXPECT_EQ(in.core_blocks[0].value, "I am a careful assistant.");
  WorkingMemoryBudget b;
  b.context_tokens = 4096;
  b.reply_reserve = 1024;
  ASSERT_OK_AND_ASSIGN(WorkingMemory wm, PackWorkingMemory(in, b, counter_));
  EXPECT_NE(wm.Render().find("- [fact · from user · trusted · id "), std::string::npos) << wm.Render();
  EXPECT_NE(wm.Render().find("] The user's laptop runs Windows 11"), std::string::npos) << wm.Render();
  b.context_tokens = 1030;
  auto tight = PackWorkingMemory(in, b, counter_);
  EXPECT_EQ(tight.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace msp
