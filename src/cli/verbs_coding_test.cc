// `msp setup claude-code` as a user runs it: from a subdirectory of a
// repository, with msp installed under a path holding a space, naming the
// user. The hook commands it writes are run through a real shell.
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Restores the current directory and $HOME when the test ends.
class SetupClaudeCodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    root_ = fs::path(dir_.path());
    cwd_ = fs::current_path();
    if (const char* home = std::getenv("HOME")) home_ = home;
  }
  void TearDown() override {
    fs::current_path(cwd_);
    if (home_.empty()) {
      unsetenv("HOME");
    } else {
      setenv("HOME", home_.c_str(), 1);
    }
  }

  testing::TempDir dir_{"cli-setup"};
  fs::path root_, cwd_;
  std::string home_;
};

TEST_F(SetupClaudeCodeTest, FromASubdirectoryWithSpacesInPathsAndAUser) {
  // msp and a stand-in for the capture hook that records its arguments.
  const fs::path tools = root_ / "my tools";
  fs::create_directories(tools);
  std::ofstream(tools / "msp") << "#!/bin/sh\n";
  std::ofstream(tools / "msp-capture") << "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > \"$(dirname \"$0\")/args\"\n";
  fs::permissions(tools / "msp-capture", fs::perms::owner_all);
  const fs::path repo = root_ / "repo";
  fs::create_directories(repo / ".git" / "info");
  fs::create_directories(repo / "src" / "deep");
  fs::current_path(repo / "src" / "deep");

  CliRun run = RunCliCapture({"setup", "claude-code", "--msp", (tools / "msp").string(), "--user", "o'neil"});
  ASSERT_EQ(run.code, 0) << run.err;

  // Written at the repository's top, where Claude Code reads them.
  const json settings = json::parse(ReadText(repo / ".claude" / "settings.json"));
  const json mcp = json::parse(ReadText(repo / ".mcp.json"));
  EXPECT_FALSE(fs::exists(repo / "src" / "deep" / ".claude"));

  // The capture hook runs through a shell although its path has a space.
  const std::string capture = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"];
  std::ofstream(root_ / "hook.sh") << capture << "\n";
  const std::string shell = "cd / && CLAUDE_PROJECT_DIR='" + repo.string() + "' sh '" + (root_ / "hook.sh").string() + "'";
  ASSERT_EQ(std::system(shell.c_str()), 0) << capture;
  EXPECT_EQ(ReadText(tools / "args"), "--data-dir\n" + repo.string() + "/.msp\n") << capture;

  // The user is passed on, quoted, to the other hooks and the MCP server.
  const std::string session_start = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"];
  EXPECT_NE(session_start.find("--user 'o'\\''neil'"), std::string::npos) << session_start;
  // The MCP server finds the repository's store from wherever it starts.
  EXPECT_EQ(mcp["mcpServers"]["msp"]["args"],
            json::array({"mcp", "--data-dir", ".msp", "--data-dir-base", "repository", "--user", "o'neil"}));
  // The store is kept out of git.
  EXPECT_NE(ReadText(repo / ".git" / "info" / "exclude").find("\n/.msp/\n"), std::string::npos);

  // The user scope writes the home directory's files, with an absolute store.
  const fs::path home = root_ / "home";
  fs::create_directories(home);
  setenv("HOME", home.c_str(), 1);
  run = RunCliCapture({"setup", "claude-code", "--scope", "user", "--msp", (tools / "msp").string()});
  ASSERT_EQ(run.code, 0) << run.err;
  const json user_mcp = json::parse(ReadText(home / ".claude.json"));
  EXPECT_EQ(user_mcp["mcpServers"]["msp"]["args"],
            json::array({"mcp", "--data-dir", (repo / "src" / "deep" / ".msp").string()}));
  EXPECT_TRUE(fs::exists(home / ".claude" / "settings.json"));

  // A scope that is neither is refused, naming both, and writes nothing.
  const std::string before = ReadText(repo / ".claude" / "settings.json");
  run = RunCliCapture({"setup", "claude-code", "--scope", "everywhere", "--msp", (tools / "msp").string()});
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.err.find("--scope is project or user"), std::string::npos) << run.err;
  EXPECT_EQ(ReadText(repo / ".claude" / "settings.json"), before);
}

}  // namespace
}  // namespace msp
