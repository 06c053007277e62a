// The capture hook as Claude Code runs it: the real msp-capture and msp
// executables, fork/exec'd with a payload on standard input.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "coding/capture.h"
#include "coding/prompt_store.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

struct HookRun {
  int exit_code = -1;
  std::string out, err;
};

// Starts argv with `input` on stdin; stdout and stderr go to files read
// after it exits (the detached importer must not hold them open).
pid_t Start(const std::vector<std::string>& argv, const std::string& input, const std::string& out_file,
            const std::string& err_file) {
  int in[2];
  if (pipe(in) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    close(in[0]);
    close(in[1]);
    const int o = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> c;
    for (const std::string& a : argv) c.push_back(const_cast<char*>(a.c_str()));
    c.push_back(nullptr);
    execv(c[0], c.data());
    _exit(127);
  }
  close(in[0]);
  (void)!write(in[1], input.data(), input.size());
  close(in[1]);
  return pid;
}

HookRun Finish(pid_t pid, const std::string& out_file, const std::string& err_file) {
  HookRun r;
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream o(out_file), e(err_file);
  std::stringstream so, se;
  so << o.rdbuf();
  se << e.rdbuf();
  r.out = so.str();
  r.err = se.str();
  return r;
}

HookRun RunHook(const std::vector<std::string>& argv, const std::string& input, const std::string& dir) {
  const pid_t pid = Start(argv, input, dir + "/out", dir + "/err");
  return Finish(pid, dir + "/out", dir + "/err");
}

size_t LogLines(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Waits (up to ~20 s) until the repository holds `want` prompts.
size_t WaitForPrompts(const std::string& repo, size_t want) {
  size_t have = 0;
  for (int i = 0; i < 400; ++i) {
    auto store = PromptStore::Open(repo, false);
    if (store.ok()) {
      if (auto n = (*store)->Count(); n.ok()) have = *n;
    }
    if (have >= want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return have;
}

const char kPayload[] =
    R"({"session_id":"sess-1","transcript_path":"/tmp/t.jsonl","cwd":"/","permission_mode":"default",)"
    R"("hook_event_name":"UserPromptSubmit","prompt":"PROMPT"})";

std::string Payload(const std::string& prompt) {
  std::string p = kPayload;
  p.replace(p.find("PROMPT"), 6, prompt);
  return p;
}

class CaptureProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    data_ = dir_.path() + "/data";
    repo_ = data_ + "/prompts.git";
    log_ = data_ + "/capture.log";
  }
  std::vector<std::string> Lean() const { return {MSP_CAPTURE_BIN, "--data-dir", data_}; }
  std::vector<std::string> Full() const { return {MSP_BIN, "capture", "--data-dir", data_}; }

  testing::TempDir dir_{"coding-proc"};
  std::string data_, repo_, log_;
};

TEST_F(CaptureProcessTest, LeanAndFullHooksCaptureSilently) {
  HookRun a = RunHook(Lean(), Payload("from the lean hook"), dir_.path());
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, "");
  EXPECT_EQ(a.err, "");
  HookRun b = RunHook(Full(), Payload("from msp capture"), dir_.path());
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_EQ(b.out, "");
  EXPECT_EQ(b.err, "");
  std::vector<std::string> direct = Full();
  direct.insert(direct.end(), {"--capture-mode", "direct"});
  HookRun c = RunHook(direct, Payload("committed directly"), dir_.path());
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(c.out, "");
  ASSERT_EQ(WaitForPrompts(repo_, 3), 3u);
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(repo_, false));
  ASSERT_OK_AND_ASSIGN(auto all, store->List({}));
  std::set<std::string> texts;
  for (const CapturedPrompt& p : all) {
    texts.insert(p.text);
    EXPECT_EQ(p.session_id, "sess-1");
  }
  EXPECT_EQ(texts, (std::set<std::string>{"from the lean hook", "from msp capture", "committed directly"}));
  EXPECT_EQ(LogLines(log_), 0u);
}

TEST_F(CaptureProcessTest, BadInputExitsZeroSilentlyAndLogs) {
  size_t expected_lines = 0;
  for (const std::string& input : {std::string(), std::string("not json"), std::string("{\"prompt\": 7}")}) {
    for (const auto& argv : {Lean(), Full()}) {
      HookRun r = RunHook(argv, input, dir_.path());
      EXPECT_EQ(r.exit_code, 0) << argv[0] << " <<< " << input;
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err, "");
      EXPECT_EQ(LogLines(log_), ++expected_lines) << argv[0] << " <<< " << input;
    }
  }
  // A bad setting (the dispatcher would exit 2 for another verb).
  std::vector<std::string> bad = Full();
  bad.insert(bad.end(), {"--capture-mode", "sometimes"});
  HookRun r = RunHook(bad, Payload("x"), dir_.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
}

TEST_F(CaptureProcessTest, UnwritableRepositoryExitsZeroAndLogs) {
  // A repository path below a regular file: no user can create it.
  fs::create_directories(data_);
  std::ofstream(dir_.path() + "/file") << "x";
  for (auto argv : {Lean(), Full()}) {
    argv.insert(argv.end(), {"--capture-repository", dir_.path() + "/file/prompts.git"});
    HookRun r = RunHook(argv, Payload("nowhere to go"), dir_.path());
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
  }
  EXPECT_EQ(LogLines(log_), 2u);
  // A read-only repository directory: refused unless we are root, who may
  // write anyway; either way the hook exits 0 and says nothing.
  fs::create_directories(repo_);
  chmod(repo_.c_str(), 0555);
  HookRun r = RunHook(Lean(), Payload("read-only"), dir_.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  if (geteuid() != 0) {
    EXPECT_EQ(LogLines(log_), 3u);
  } else {
    EXPECT_EQ(WaitForPrompts(repo_, 1), 1u);
  }
  chmod(repo_.c_str(), 0755);
}

TEST_F(CaptureProcessTest, ConcurrentHookProcessesLoseNoPrompt) {
  constexpr int kProcesses = 8;
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i) {
    const std::string d = dir_.path() + "/p" + std::to_string(i);
    pids.push_back(Start(i % 2 ? Full() : Lean(), Payload("concurrent " + std::to_string(i)), d + "-out", d + "-err"));
  }
  for (int i = 0; i < kProcesses; ++i) {
    const std::string d = dir_.path() + "/p" + std::to_string(i);
    HookRun r = Finish(pids[static_cast<size_t>(i)], d + "-out", d + "-err");
    EXPECT_EQ(r.exit_code, 0);
  }
  EXPECT_EQ(WaitForPrompts(repo_, kProcesses), static_cast<size_t>(kProcesses));
  ASSERT_OK(ImportSpool(repo_).status());
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(repo_, false));
  ASSERT_OK_AND_ASSIGN(auto all, store->List({}));
  std::set<std::string> texts;
  for (const CapturedPrompt& p : all) texts.insert(p.text);
  EXPECT_EQ(all.size(), static_cast<size_t>(kProcesses));
  EXPECT_EQ(texts.size(), static_cast<size_t>(kProcesses));
}

}  // namespace
}  // namespace msp
