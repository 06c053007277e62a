// SessionStart task and output.
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

}  // namespace
}  // namespace msp
