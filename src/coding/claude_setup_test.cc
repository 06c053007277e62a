// `msp setup claude-code`: merging, idempotence, removal, malformed files.
#include "coding/claude_setup.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

ClaudeSetupRequest Project(const std::string& dir) {
  ClaudeSetupRequest r;
  r.project_dir = dir;
  r.capture_command = "'/opt/msp/bin/msp-capture' --data-dir \"$CLAUDE_PROJECT_DIR\"/'.msp'";
  r.msp_command = "'/opt/msp/bin/msp' --data-dir \"$CLAUDE_PROJECT_DIR\"/'.msp'";
  r.mcp_program = "/opt/msp/bin/msp";
  r.mcp_args = {"mcp", "--data-dir", ".msp"};
  return r;
}

const char kExisting[] = R"json({
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/log-prompt.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}]
  }
})json";

TEST(ClaudeSetupTest, MergesIntoExistingSettingsAndRemovesExactlyItsOwn) {
  testing::TempDir dir("coding-setup");
  ASSERT_TRUE(dir.ok());
  const fs::path settings = fs::path(dir.path()) / ".claude" / "settings.json";
  const fs::path mcp = fs::path(dir.path()) / ".mcp.json";
  Write(settings, kExisting);
  Write(mcp, R"({"mcpServers": {"github": {"command": "gh-mcp"}}})");
  const nlohmann::json before_settings = nlohmann::json::parse(Read(settings));
  const nlohmann::json before_mcp = nlohmann::json::parse(Read(mcp));

  ClaudeSetupRequest r = Project(dir.path());
  r.post_tool_use = true;
  ASSERT_OK_AND_ASSIGN(auto changes, SetupClaudeCode(r));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_TRUE(changes[0].changed);
  EXPECT_TRUE(changes[1].changed);
  nlohmann::json s = nlohmann::json::parse(Read(settings));
  EXPECT_EQ(s["permissions"], before_settings["permissions"]);
  EXPECT_EQ(s["hooks"]["PreToolUse"], before_settings["hooks"]["PreToolUse"]);
  ASSERT_EQ(s["hooks"]["UserPromptSubmit"].size(), 2u);
  EXPECT_EQ(s["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"], "~/bin/log-prompt.sh");
  EXPECT_EQ(s["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"], r.capture_command);
  EXPECT_EQ(s["hooks"]["SessionStart"][0]["hooks"][0]["command"], r.msp_command + " hook session-start");
  EXPECT_EQ(s["hooks"]["PostToolUse"][0]["matcher"], "*");
  // Observations take the capture hook's fast path: the same command.
  EXPECT_EQ(s["hooks"]["PostToolUse"][0]["hooks"][0]["command"], r.capture_command);
  EXPECT_EQ(s["hooks"]["PostToolUseFailure"][0]["hooks"][0]["command"], r.capture_command);
  nlohmann::json m = nlohmann::json::parse(Read(mcp));
  EXPECT_EQ(m["mcpServers"]["github"]["command"], "gh-mcp");
  EXPECT_EQ(m["mcpServers"]["msp"]["command"], "/opt/msp/bin/msp");
  EXPECT_EQ(m["mcpServers"]["msp"]["args"], (nlohmann::json{"mcp", "--data-dir", ".msp"}));
  EXPECT_EQ(m["mcpServers"]["msp"]["type"], "stdio");

  // Again: nothing changes, nothing doubles.
  const std::string once = Read(settings);
  ASSERT_OK_AND_ASSIGN(auto again, SetupClaudeCode(r));
  EXPECT_FALSE(again[0].changed);
  EXPECT_FALSE(again[1].changed);
  EXPECT_EQ(Read(settings), once);

  // Remove: back to exactly what was there.
  r.remove = true;
  ASSERT_OK_AND_ASSIGN(auto removed, SetupClaudeCode(r));
  EXPECT_TRUE(removed[0].changed);
  EXPECT_EQ(nlohmann::json::parse(Read(settings)), before_settings);
  EXPECT_EQ(nlohmann::json::parse(Read(mcp)), before_mcp);
}

TEST(ClaudeSetupTest, UserScopeWritesHomeFilesAndKeepsKeyOrder) {
  testing::TempDir dir("coding-setup-user");
  ASSERT_TRUE(dir.ok());
  const fs::path claude_json = fs::path(dir.path()) / ".claude.json";
  Write(claude_json, R"({"zeta": 1, "numStartups": 3, "alpha": {"b": 1, "a": 2}})");
  ClaudeSetupRequest r = Project("");
  r.user = true;
  r.home = dir.path();
  ASSERT_OK_AND_ASSIGN(auto changes, SetupClaudeCode(r));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].path, (fs::path(dir.path()) / ".claude" / "settings.json").string());
  EXPECT_EQ(changes[1].path, claude_json.string());
  const std::string text = Read(claude_json);
  EXPECT_LT(text.find("\"zeta\""), text.find("\"numStartups\""));
  EXPECT_LT(text.find("\"b\""), text.find("\"a\""));
  EXPECT_NE(text.find("\"mcpServers\""), std::string::npos);
  r.remove = true;
  ASSERT_OK(SetupClaudeCode(r).status());
  EXPECT_EQ(nlohmann::json::parse(Read(claude_json)),
            nlohmann::json::parse(R"({"zeta": 1, "numStartups": 3, "alpha": {"b": 1, "a": 2}})"));
  // The settings file msp created holds nothing of msp's any more.
  EXPECT_EQ(nlohmann::json::parse(Read(changes[0].path)), nlohmann::json::object());
}

TEST(ClaudeSetupTest, MalformedSettingsAreAnErrorAndNothingIsWritten) {
  testing::TempDir dir("coding-setup-bad");
  ASSERT_TRUE(dir.ok());
  const fs::path settings = fs::path(dir.path()) / ".claude" / "settings.json";
  const fs::path mcp = fs::path(dir.path()) / ".mcp.json";
  Write(settings, "{\"hooks\": {,}");
  Result<std::vector<ClaudeSetupChange>> r = SetupClaudeCode(Project(dir.path()));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find(settings.string()), std::string::npos) << r.status().message();
  EXPECT_EQ(Read(settings), "{\"hooks\": {,}");
  EXPECT_FALSE(fs::exists(mcp));

  // A malformed .mcp.json stops the settings write too.
  Write(settings, "{}");
  Write(mcp, "[1]");
  EXPECT_TRUE(SetupClaudeCode(Project(dir.path())).status().IsInvalidArgument());
  EXPECT_EQ(Read(settings), "{}");

  // An "msp" MCP server that is not msp's is not overwritten.
  Write(mcp, R"({"mcpServers": {"msp": {"command": "something-else"}}})");
  EXPECT_TRUE(SetupClaudeCode(Project(dir.path())).status().IsInvalidArgument());
  EXPECT_EQ(Read(settings), "{}");
}

TEST(ClaudeSetupTest, RecognisesMspHookCommands) {
  EXPECT_TRUE(IsMspHookCommand("msp capture"));
  EXPECT_TRUE(IsMspHookCommand("'/usr/local/bin/msp' --data-dir '/x y' hook session-start"));
  EXPECT_TRUE(IsMspHookCommand("/opt/bin/msp-capture --data-dir /x"));
  EXPECT_TRUE(IsMspHookCommand("msp --data-dir=/x capture"));
  EXPECT_FALSE(IsMspHookCommand("msp search foo"));
  EXPECT_FALSE(IsMspHookCommand("~/bin/log-prompt.sh"));
  EXPECT_FALSE(IsMspHookCommand("notmsp capture"));
  EXPECT_FALSE(IsMspHookCommand(""));
}

// The store kept in the project stays out of git: one rule in the
// repository's info/exclude, added once, taken out by --remove; a linked
// worktree's rule goes to the common directory; no repository, no rule.
TEST(ClaudeSetupTest, KeepsTheStoreOutOfGit) {
  testing::TempDir dir("coding-setup");
  ASSERT_TRUE(dir.ok());
  const fs::path project = fs::path(dir.path()) / "project";
  Write(project / ".git" / "info" / "exclude", "# git's own comment\n*.log\n");
  ClaudeSetupRequest r = Project(project.string());
  r.store_in_project = ".msp";
  ASSERT_OK_AND_ASSIGN(auto changes, SetupClaudeCode(r));
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].path, (project / ".git" / "info" / "exclude").string());
  EXPECT_TRUE(changes[2].changed);
  EXPECT_EQ(Read(project / ".git" / "info" / "exclude"),
            "# git's own comment\n*.log\n# msp's store (msp setup claude-code)\n/.msp/\n");
  ASSERT_OK_AND_ASSIGN(auto again, SetupClaudeCode(r));
  EXPECT_FALSE(again[2].changed);
  EXPECT_EQ(Read(project / ".git" / "info" / "exclude"),
            "# git's own comment\n*.log\n# msp's store (msp setup claude-code)\n/.msp/\n");
  r.remove = true;
  ASSERT_OK_AND_ASSIGN(auto removed, SetupClaudeCode(r));
  EXPECT_TRUE(removed.back().changed);
  EXPECT_EQ(Read(project / ".git" / "info" / "exclude"), "# git's own comment\n*.log\n");

  // A linked worktree: .git is a file naming its git dir, which names the
  // common directory; info/exclude is created there.
  const fs::path main_git = fs::path(dir.path()) / "main" / ".git";
  const fs::path linked = fs::path(dir.path()) / "linked";
  Write(main_git / "worktrees" / "linked" / "commondir", "../..\n");
  Write(linked / ".git", "gitdir: " + (main_git / "worktrees" / "linked").string() + "\n");
  ClaudeSetupRequest w = Project(linked.string());
  w.store_in_project = "state/msp";
  ASSERT_OK_AND_ASSIGN(auto linked_changes, SetupClaudeCode(w));
  ASSERT_EQ(linked_changes.size(), 3u);
  EXPECT_EQ(linked_changes[2].path, (main_git / "info" / "exclude").string());
  EXPECT_EQ(Read(main_git / "info" / "exclude"), "# msp's store (msp setup claude-code)\n/state/msp/\n");

  // Not a git work tree: the settings files only.
  const fs::path plain = fs::path(dir.path()) / "plain";
  fs::create_directories(plain);
  ClaudeSetupRequest p = Project(plain.string());
  p.store_in_project = ".msp";
  ASSERT_OK_AND_ASSIGN(auto plain_changes, SetupClaudeCode(p));
  EXPECT_EQ(plain_changes.size(), 2u);
}

}  // namespace
}  // namespace msp
