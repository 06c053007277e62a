// SessionStart task and output.
#include "coding/hooks.h"

#include <filesystem>

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

TEST(ObservationImportTest, AFileLeftBehindAfterItsImportIsNotAddedTwice) {
  namespace fs = std::filesystem;
  testing::TempDir dir("coding-obs-import");
  ASSERT_TRUE(dir.ok());
  Options options;
  options.store.data_dir = dir.path() + "/store";
  ASSERT_OK_AND_ASSIGN(auto engine, MemoryLayer::Open(options));
  const std::string repo = dir.path() + "/prompts";
  Observation o;
  o.at = 1700000000000;
  o.session_id = "sess-obs";
  o.tool = "Bash";
  o.command = "npm test";
  o.exit_code = 1;
  ObservationScope scope;
  scope.tenant = "t";
  scope.user = "ann";
  ASSERT_OK_AND_ASSIGN(std::string spooled, SpoolObservation(o, scope, repo));
  const std::string kept = dir.path() + "/kept.json";
  fs::copy_file(spooled, kept);
  ASSERT_OK_AND_ASSIGN(ObservationImportReport first, ImportObservations(repo, *engine, "test"));
  EXPECT_EQ(first.imported, 1u);
  EXPECT_FALSE(fs::exists(spooled));
  // An importer that stopped between the episode's commit and the file's
  // removal leaves the file: the next import adds nothing new.
  fs::copy_file(kept, spooled);
  ASSERT_TRUE(HasSpooledObservations(repo));
  ASSERT_OK_AND_ASSIGN(ObservationImportReport second, ImportObservations(repo, *engine, "test"));
  EXPECT_EQ(second.failed, 0u);
  EXPECT_FALSE(HasSpooledObservations(repo));
  Namespace ns;
  ns.tenant = "t";
  ns.user = "ann";
  ns.session = "sess-obs";
  ASSERT_OK_AND_ASSIGN(auto steps, engine->LastSteps(ns, "sess-obs", 10));
  EXPECT_EQ(steps.size(), 1u);
  // Another observation at the same moment is another file and another step.
  ASSERT_OK(SpoolObservation(o, scope, repo).status());
  ASSERT_OK_AND_ASSIGN(ObservationImportReport third, ImportObservations(repo, *engine, "test"));
  EXPECT_EQ(third.imported, 1u);
  ASSERT_OK_AND_ASSIGN(steps, engine->LastSteps(ns, "sess-obs", 10));
  EXPECT_EQ(steps.size(), 2u);
}

}  // namespace
}  // namespace msp
