// The procedure, core, context and agent verbs, in process, against a real
// store and the scripted chat server.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using json = nlohmann::json;

using testing::Contains;

class AgentVerbsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }

  CliRun Cli(std::vector<std::string> args, const std::string& input = "") {
    args.push_back("--data-dir");
    args.push_back(dir_.path() + "/data");
    args.push_back("--tokens-counter");
    args.push_back("estimate");
    args.push_back("--actor");
    args.push_back("ann");
    return RunCliCapture(args, input);
  }

  testing::TempDir dir_{"agent-verbs"};
};

TEST_F(AgentVerbsTest, ProcedureVersionsDiffAndRestore) {
  ASSERT_EQ(Cli({"init"}).code, 0);
  CliRun r = Cli({"procedure", "tool", "web_search", "--agent", "helper", "--description", "search the web",
                  "--parameters", R"({"type":"object","properties":{"query":{"type":"string"}}})"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "tool web_search version 1")) << r.out;
  r = Cli({"procedure", "tool", "web_search", "--agent", "helper", "--description", "search the public web",
           "--note", "clearer"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = Cli({"procedure", "history", "tool", "web_search", "--agent", "helper"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "version 1 by ann")) << r.out;
  EXPECT_TRUE(Contains(r.out, "version 2 [current] by ann")) << r.out;
  EXPECT_TRUE(Contains(r.out, "clearer")) << r.out;
  // --operator is who acts: the version's author and the audit log's actor.
  r = Cli({"procedure", "tool", "web_fetch", "--agent", "helper", "--description", "fetch a page", "--operator",
           "admin"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = Cli({"procedure", "history", "tool", "web_fetch", "--agent", "helper"});
  EXPECT_TRUE(Contains(r.out, "version 1 [current] by admin")) << r.out;
  r = Cli({"audit", "--limit", "1"});
  EXPECT_TRUE(Contains(r.out, "admin")) << r.out;
  r = Cli({"procedure", "diff", "tool", "web_search", "1", "2", "--agent", "helper"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "-     \"description\": \"search the web\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "+     \"description\": \"search the public web\"")) << r.out;
  r = Cli({"procedure", "restore", "tool", "web_search", "1", "--agent", "helper"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "version 3")) << r.out;
  r = Cli({"procedure", "show", "tool", "web_search", "--agent", "helper", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json shown = json::parse(r.out);
  EXPECT_EQ(shown["version"], 3);
  EXPECT_EQ(shown["content"]["description"], "search the web");
  // A stale base version is a conflict (exit 1) naming the current one.
  r = Cli({"procedure", "tool", "web_search", "--agent", "helper", "--description", "x", "--base-version", "1"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(Contains(r.err, "current version is 3")) << r.err;
  // A bad schema is invalid input (exit 2).
  r = Cli({"procedure", "tool", "bad", "--agent", "helper", "--description", "x", "--parameters", "[1]"});
  EXPECT_EQ(r.code, 2);
  r = Cli({"procedure", "rule", "r1", "--agent", "helper", "--when", "request contains \"x\"", "--call",
           "memory_search", "--with", R"({"query":"{{request}}"})"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Cli({"procedure", "prompt", "-", "--agent", "helper"}, "You are helpful.\n");
  EXPECT_EQ(r.code, 0) << r.err;
  r = Cli({"procedure", "list", "--agent", "helper"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "system_prompt  system  v1  You are helpful.")) << r.out;
  EXPECT_TRUE(Contains(r.out, "rule  r1  v1")) << r.out;
}

TEST_F(AgentVerbsTest, CoreMemoryLimitsAndContext) {
  ASSERT_EQ(Cli({"init"}).code, 0);
  CliRun r = Cli({"core", "set", "persona", "I am Sam.", "--limit", "12", "--agent", "helper", "--user", "ann"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = Cli({"core", "append", "persona", "Kind.", "--agent", "helper", "--user", "ann"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(Contains(r.err, "limit of 12")) << r.err;
  r = Cli({"core", "show", "--agent", "helper", "--user", "ann"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "== persona (9 of 12 characters")) << r.out;
  EXPECT_TRUE(Contains(r.out, "== user (0 of 2000 characters")) << r.out;

  ASSERT_EQ(Cli({"fact", "add", "Ann's laptop runs Windows 11 with Python 3.11", "--agent", "helper", "--user",
                 "ann"})
                .code,
            0);
  r = Cli({"context", "Which Python does my laptop run?", "--agent", "helper", "--user", "ann"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "== core memory (")) << r.out;
  EXPECT_TRUE(Contains(r.out, "- [fact · from user · trusted · id ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "] Ann's laptop runs Windows 11 with Python 3.11")) << r.out;
  EXPECT_TRUE(Contains(r.out, "== tools (")) << r.out;
  EXPECT_TRUE(Contains(r.out, "tokens (estimate) ==")) << r.out;
  r = Cli({"context", "x", "--agent", "helper", "--user", "ann", "--agent-context-tokens", "300",
           "--agent-reply-reserve", "100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(Contains(r.err, "over the budget of 200")) << r.err;
}

TEST_F(AgentVerbsTest, AgentWithoutAModelSaysHowToConfigureOne) {
  CliRun r = Cli({"agent", "--llm-model", ""}, "hello\n");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(Contains(r.err, "llm.model")) << r.err;
  EXPECT_TRUE(Contains(r.err, "MSP_LLM_MODEL")) << r.err;
}

TEST_F(AgentVerbsTest, AgentRunsTurnsAndResumes) {
  testing::OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(testing::kChatPath, testing::StubReply::ChatContent("Hello Ann."));
  CliRun r = Cli({"agent", "--llm-model", "stub", "--llm-base-url", stub.base_url(), "--llm-max-retries", "0",
                  "--agent", "helper", "--user", "ann", "--json", "--keep-open"},
                 "Hi, I am Ann\n/exit\nnot sent\n");
  ASSERT_EQ(r.code, 0) << r.err;
  const json turn = json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(turn["reply"], "Hello Ann.");
  EXPECT_EQ(turn["counter"], "estimate");
  const std::string session = turn["session"];
  EXPECT_EQ(stub.RequestCount(testing::kChatPath), 1u) << "input after /exit is not sent";

  stub.Enqueue(testing::kChatPath, testing::StubReply::ChatContent("You are Ann."));
  r = Cli({"agent", "--llm-model", "stub", "--llm-base-url", stub.base_url(), "--llm-max-retries", "0", "--agent",
           "helper", "--user", "ann", "--session", session, "--message", "Who am I?"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "resumed after step 2")) << r.out;
  EXPECT_TRUE(Contains(r.out, "agent: You are Ann.")) << r.out;
  r = Cli({"episode", "list", "--session", session, "--agent", "helper", "--user", "ann", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["steps"].size(), 4u);
}

}  // namespace
}  // namespace msp
