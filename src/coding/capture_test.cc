// Hook payload parsing, work-tree detection and the spool.
#include "coding/capture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "coding/prompt_store.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(HookInputTest, ParsesAClaudeCodeUserPromptSubmitPayload) {
  const std::string payload = R"({
    "session_id": "abc123",
    "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
    "cwd": "/home/u/proj",
    "permission_mode": "default",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "Write a function to calculate the factorial of a number",
    "model": {"id": "claude"}
  })";
  ASSERT_OK_AND_ASSIGN(HookInput in, ParseHookInput(payload));
  EXPECT_EQ(in.session_id, "abc123");
  EXPECT_EQ(in.transcript_path, "/home/u/.claude/projects/p/abc123.jsonl");
  EXPECT_EQ(in.cwd, "/home/u/proj");
  EXPECT_EQ(in.permission_mode, "default");
  EXPECT_EQ(in.hook_event_name, "UserPromptSubmit");
  EXPECT_EQ(in.prompt, "Write a function to calculate the factorial of a number");
  EXPECT_EQ(in.other_json, R"({"model":{"id":"claude"}})");
}

TEST(HookInputTest, ParsesPostToolUseParts) {
  ASSERT_OK_AND_ASSIGN(HookInput in, ParseHookInput(R"({"session_id":"s","hook_event_name":"PostToolUse",
      "tool_name":"Write","tool_input":{"file_path":"/a.txt","content":"x"},
      "tool_response":{"success":true},"tool_use_id":"toolu_1"})"));
  EXPECT_EQ(in.tool_name, "Write");
  EXPECT_EQ(in.tool_input, R"({"content":"x","file_path":"/a.txt"})");
  EXPECT_EQ(in.tool_response, R"({"success":true})");
  EXPECT_EQ(in.tool_use_id, "toolu_1");
  EXPECT_TRUE(in.other_json.empty());
}

TEST(HookInputTest, RejectsEmptyMalformedAndMistypedInput) {
  for (const char* bad : {"", "  \n", "{", "[1,2]", "\"text\"", "{\"prompt\": 42}", "{\"session_id\": []}"}) {
    Result<HookInput> r = ParseHookInput(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsInvalidArgument()) << bad;
  }
  // A payload without a prompt is no prompt to capture.
  ASSERT_OK_AND_ASSIGN(HookInput in, ParseHookInput(R"({"session_id":"s"})"));
  EXPECT_FALSE(PromptFromHook(in, 1000).ok());
}

TEST(WorkTreeTest, FindsBranchTopLevelLinkedWorkTreeAndDetachedHead) {
  testing::TempDir dir("coding-wt");
  ASSERT_TRUE(dir.ok());
  const fs::path repo = fs::path(dir.path()) / "proj";
  WriteFile(repo / ".git" / "HEAD", "ref: refs/heads/feature/x\n");
  fs::create_directories(repo / "src" / "deep");
  WorkTree wt = FindWorkTree((repo / "src" / "deep").string());
  EXPECT_EQ(wt.top_level, repo.string());
  EXPECT_EQ(wt.branch, "feature/x");
  EXPECT_TRUE(wt.head.empty());

  // A linked work tree: .git is a file naming the git directory.
  const fs::path linked = fs::path(dir.path()) / "linked";
  WriteFile(repo / ".git" / "worktrees" / "linked" / "HEAD", "0123456789abcdef0123456789abcdef01234567\n");
  WriteFile(linked / ".git", "gitdir: " + (repo / ".git" / "worktrees" / "linked").string() + "\n");
  wt = FindWorkTree(linked.string());
  EXPECT_EQ(wt.top_level, linked.string());
  EXPECT_TRUE(wt.branch.empty());
  EXPECT_EQ(wt.head, "0123456789abcdef0123456789abcdef01234567");

  const fs::path outside = fs::path(dir.path()) / "plain";
  fs::create_directories(outside);
  // The temp dir itself may sit inside a work tree; only assert that `plain`
  // is not reported as its own top level.
  EXPECT_NE(FindWorkTree(outside.string()).top_level, outside.string());
}

TEST(CaptureTest, PromptFromHookRecordsRepositoryAndBranchOfCwd) {
  testing::TempDir dir("coding-cap");
  ASSERT_TRUE(dir.ok());
  const fs::path repo = fs::path(dir.path()) / "webapp";
  WriteFile(repo / ".git" / "HEAD", "ref: refs/heads/main\n");
  ASSERT_OK_AND_ASSIGN(HookInput in, ParseHookInput(R"({"session_id":"s1","cwd":")" + repo.string() +
                                                    R"(","permission_mode":"plan","hook_event_name":"UserPromptSubmit","prompt":"héllo"})"));
  ASSERT_OK_AND_ASSIGN(CapturedPrompt p, PromptFromHook(in, 1764530000123));
  EXPECT_EQ(p.text, "héllo");
  EXPECT_EQ(p.at, 1764530000123);
  EXPECT_EQ(p.repository, repo.string());
  EXPECT_EQ(p.branch, "main");
  EXPECT_EQ(p.permission_mode, "plan");
  EXPECT_EQ(p.session_id, "s1");
}

TEST(SpoolTest, SpooledPromptsAreImportedExactlyOnce) {
  testing::TempDir dir("coding-spool");
  ASSERT_TRUE(dir.ok());
  const std::string repo = dir.path() + "/prompts.git";
  CapturedPrompt p;
  p.at = 1764530000000;
  p.session_id = "s";
  for (int i = 0; i < 3; ++i) {
    p.text = "prompt " + std::to_string(i);
    ++p.at;
    ASSERT_OK_AND_ASSIGN(std::string file, SpoolPrompt(p, repo));
    EXPECT_TRUE(fs::exists(file));
  }
  // A file that is not a spooled prompt is moved aside, not lost silently.
  WriteFile(fs::path(SpoolDir(repo)) / "0000000000000-bad.json", "{not json");
  ASSERT_OK_AND_ASSIGN(SpoolImportReport r, ImportSpool(repo));
  EXPECT_EQ(r.imported, 3u);
  EXPECT_EQ(r.failed, 1u);
  EXPECT_FALSE(r.busy);
  EXPECT_TRUE(fs::exists(SpoolDir(repo) + "/bad/0000000000000-bad.json"));
  ASSERT_OK_AND_ASSIGN(SpoolImportReport again, ImportSpool(repo));
  EXPECT_EQ(again.imported, 0u);
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(repo, false));
  ASSERT_OK_AND_ASSIGN(std::vector<CapturedPrompt> all, store->List({}));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].text, "prompt 0");
  EXPECT_EQ(all[2].text, "prompt 2");
  EXPECT_EQ(all[2].at, 1764530000003);
}

TEST(SpoolTest, AnUnwritableRepositoryIsAnIoError) {
  testing::TempDir dir("coding-ro");
  ASSERT_TRUE(dir.ok());
  // A path below a regular file cannot be created, even by root.
  WriteFile(fs::path(dir.path()) / "file", "x");
  CapturedPrompt p;
  p.at = 1764530000000;
  p.text = "lost?";
  Result<std::string> r = SpoolPrompt(p, dir.path() + "/file/prompts.git");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  Result<CapturedPrompt> d = CaptureDirect(R"({"prompt":"x","hook_event_name":"UserPromptSubmit"})",
                                           dir.path() + "/file/prompts.git", 1764530000000);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kIoError);
}

TEST(LogTest, AppendsOneLinePerFailure) {
  testing::TempDir dir("coding-log");
  ASSERT_TRUE(dir.ok());
  const std::string log = dir.path() + "/sub/capture.log";
  AppendToLog(log, "capture", "first\nline");
  AppendToLog(log, "capture", "second");
  std::ifstream in(log);
  std::string a, b, c;
  ASSERT_TRUE(std::getline(in, a));
  ASSERT_TRUE(std::getline(in, b));
  EXPECT_FALSE(std::getline(in, c));
  EXPECT_NE(a.find("capture: first line"), std::string::npos) << a;
  EXPECT_NE(b.find("capture: second"), std::string::npos) << b;
}

}  // namespace
}  // namespace msp
