// SessionStart task and output, PostToolUse episodes.
#include "coding/hooks.h"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp {
namespace {

TEST(SessionStartTest, TaskAndMissionNameRepositoryAndBranch) {
  WorkTree wt{"/home/u/webapp", "feature/login", ""};
  EXPECT_EQ(SessionStartTask("/home/u/webapp/src", wt),
            "Repository webapp (/home/u/webapp), branch feature/login: continue the work there.");
  EXPECT_EQ(SessionMission("", "/home/u/webapp/src", wt), "webapp");
  EXPECT_EQ(SessionMission("m-1", "/home/u/webapp/src", wt), "m-1");
  WorkTree detached{"/home/u/webapp", "", "0123456789abcdef0123"};
  EXPECT_EQ(SessionStartTask("/x", detached),
            "Repository webapp (/home/u/webapp), detached HEAD 0123456789ab: continue the work there.");
  EXPECT_EQ(SessionMission("", "/tmp/scratch", WorkTree{}), "scratch");
  EXPECT_EQ(SessionStartTask("/x", wt, {"add dark mode", std::string(400, 'a')}),
            "Repository webapp (/home/u/webapp), branch feature/login: continue the work there. Recent prompts: "
            "add dark mode " + std::string(300, 'a') + "… [100 more characters]");
}

TEST(SessionStartTest, OutputIsClaudeCodeAdditionalContextJson) {
  EXPECT_EQ(SessionStartOutput("", "startup"), "");
  const std::string out = SessionStartOutput("# Digest\n- decision D-1", "resume");
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["hookSpecificOutput"]["hookEventName"], "SessionStart");
  EXPECT_EQ(j["hookSpecificOutput"]["additionalContext"], "# Digest\n- decision D-1");
}

TEST(PostToolUseTest, TruncatesLongPartsAndKeepsShortOnesAsJson) {
  EXPECT_EQ(TruncateForEpisode("short", 10), "short");
  EXPECT_EQ(TruncateForEpisode("ééééé", 3), "ééé… [2 more characters]");
  HookInput in;
  in.session_id = "s1";
  in.tool_name = "Bash";
  in.tool_use_id = "toolu_1";
  in.tool_input = R"({"command":"ls"})";
  in.tool_response = nlohmann::json({{"stdout", std::string(5000, 'x')}, {"stderr", ""}}).dump();
  Namespace ns;
  ns.tenant = "t";
  ns.user = "ann";
  ASSERT_OK_AND_ASSIGN(EpisodeStep step, ToolUseEpisode(in, ns, 200, "hook"));
  EXPECT_EQ(step.ns.session, "s1");
  EXPECT_EQ(step.ns.tenant, "t");
  EXPECT_EQ(step.ns.user, "ann");
  EXPECT_EQ(step.type, EpisodeType::kToolCall);
  EXPECT_EQ(step.tool_name, "Bash");
  nlohmann::json c = nlohmann::json::parse(step.content_json);
  EXPECT_EQ(c["tool"], "Bash");
  EXPECT_EQ(c["input"]["command"], "ls");
  EXPECT_EQ(c["tool_use_id"], "toolu_1");
  const std::string out = c["response"]["stdout"].get<std::string>();
  EXPECT_LT(out.size(), 300u);
  EXPECT_NE(out.find("more characters]"), std::string::npos);
  EXPECT_LT(step.content_json.size(), 1000u);

  in.tool_name.clear();
  EXPECT_TRUE(ToolUseEpisode(in, ns, 200, "hook").status().IsInvalidArgument());
}

}  // namespace
}  // namespace msp
