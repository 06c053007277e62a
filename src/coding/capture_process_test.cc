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

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "coding/capture.h"
#include "coding/observation.h"
#include "coding/prompt_store.h"
#include "coding/session_summary.h"
#include "tests/support/openai_stub.h"
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

bool HasFiles(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.ends_with(".json")) return true;
  }
  return false;
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

// The observation hook as setup installs it (msp-capture, and the older
// `msp hook post-tool-use`): silent, exit 0, and the detached importer turns
// the spooled observation into an episode of the session, secrets redacted.
TEST_F(CaptureProcessTest, ToolObservationsBecomeEpisodes) {
  const std::string key = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
  const nlohmann::json bash = {{"session_id", "sess-obs"},
                               {"transcript_path", "/tmp/t.jsonl"},
                               {"cwd", dir_.path()},
                               {"hook_event_name", "PostToolUse"},
                               {"tool_name", "Bash"},
                               {"tool_use_id", "toolu_01"},
                               {"tool_input", {{"command", "GH_TOKEN=" + key + " gh pr list"}}},
                               {"tool_response", {{"stdout", "#12 fix login"}, {"stderr", ""}, {"interrupted", false}}}};
  std::vector<std::string> lean = Lean();
  lean.insert(lean.end(), {"--user", "ann"});
  HookRun a = RunHook(lean, bash.dump(), dir_.path());
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, "");
  EXPECT_EQ(a.err, "");
  nlohmann::json failure = {{"session_id", "sess-obs"},
                            {"cwd", dir_.path()},
                            {"hook_event_name", "PostToolUseFailure"},
                            {"tool_name", "Bash"},
                            {"tool_input", {{"command", "make test"}}},
                            {"error", "Exit code 2\nmake: *** [test] Error 2"}};
  HookRun b = RunHook({MSP_BIN, "hook", "post-tool-use", "--data-dir", data_, "--user", "ann"}, failure.dump(),
                      dir_.path());
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_EQ(b.out, "");
  EXPECT_EQ(b.err, "");
  // Wait for the detached importers to empty the spool.
  for (int i = 0; i < 400 && HasFiles(ObservationSpoolDir(repo_)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(HasFiles(ObservationSpoolDir(repo_)));
  HookRun list = RunHook({MSP_BIN, "episode", "list", "--session", "sess-obs", "--user", "ann", "--data-dir", data_,
                          "--json"},
                         "", dir_.path());
  ASSERT_EQ(list.exit_code, 0) << list.err;
  nlohmann::json steps = nlohmann::json::parse(list.out)["steps"];
  ASSERT_EQ(steps.size(), 2u) << list.out;
  for (const nlohmann::json& step : steps) {
    EXPECT_EQ(list.out.find("AbCdEfGh"), std::string::npos);
    const std::string text = step.dump();
    EXPECT_NE(text.find("observation"), std::string::npos);
  }
  EXPECT_NE(list.out.find("GH_TOKEN=[REDACTED] gh pr list"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("make test"), std::string::npos);
  const bool exit_two = list.out.find("\"exit_code\":2") != std::string::npos ||
                        list.out.find("\\\"exit_code\\\":2") != std::string::npos;
  EXPECT_TRUE(exit_two) << list.out;
  EXPECT_EQ(LogLines(log_), 0u);
}

// A whole session through the installed commands: a prompt (msp-capture),
// tool observations (msp-capture), SessionEnd twice (one summary record),
// then the next SessionStart lists the session with the record's id, and
// `msp get` opens it.
TEST_F(CaptureProcessTest, SessionSummaryAndIndexThroughTheHooks) {
  const std::string work = dir_.path() + "/repo";
  fs::create_directories(work + "/.git");
  fs::create_directories(work + "/src");
  std::ofstream(work + "/.git/HEAD") << "ref: refs/heads/feature/login\n";
  auto payload = [&](nlohmann::json j) {
    j["session_id"] = "sess-sum";
    j["cwd"] = work;
    return j.dump();
  };
  std::vector<std::string> lean = Lean();
  lean.insert(lean.end(), {"--user", "ann"});
  EXPECT_EQ(RunHook(lean, payload({{"hook_event_name", "UserPromptSubmit"},
                                    {"prompt", "Fix the login form. Let's use zod instead of yup."}}),
                    dir_.path()).exit_code, 0);
  EXPECT_EQ(RunHook(lean, payload({{"hook_event_name", "PostToolUse"}, {"tool_name", "Edit"},
                                    {"tool_input", {{"file_path", work + "/src/login.ts"}}},
                                    {"tool_response", {{"filePath", work + "/src/login.ts"}}}}),
                    dir_.path()).exit_code, 0);
  EXPECT_EQ(RunHook(lean, payload({{"hook_event_name", "PostToolUseFailure"}, {"tool_name", "Bash"},
                                    {"tool_input", {{"command", "npm test"}}}, {"error", "Exit code 1"}}),
                    dir_.path()).exit_code, 0);
  const std::vector<std::string> end = {MSP_BIN, "hook", "session-end", "--data-dir", data_, "--user", "ann"};
  const std::string end_payload = payload({{"hook_event_name", "SessionEnd"}, {"reason", "prompt_input_exit"}});
  HookRun e1 = RunHook(end, end_payload, dir_.path());
  EXPECT_EQ(e1.exit_code, 0);
  EXPECT_EQ(e1.out, "");
  EXPECT_EQ(e1.err, "");
  HookRun e2 = RunHook(end, end_payload, dir_.path());
  EXPECT_EQ(e2.exit_code, 0);

  HookRun start = RunHook({MSP_BIN, "hook", "session-start", "--data-dir", data_, "--user", "ann"},
                          R"({"session_id":"sess-next","hook_event_name":"SessionStart","source":"startup","cwd":")" +
                              work + "\"}",
                          dir_.path());
  ASSERT_EQ(start.exit_code, 0) << start.err;
  ASSERT_FALSE(start.out.empty()) << LogLines(log_);
  const std::string context =
      nlohmann::json::parse(start.out)["hookSpecificOutput"]["additionalContext"].get<std::string>();
  EXPECT_NE(context.find("# Last sessions on this repository and branch"), std::string::npos) << context;
  const size_t at = context.find("[session sess-sum · record ");
  ASSERT_NE(at, std::string::npos) << context;
  const std::string id = context.substr(at + std::string("[session sess-sum · record ").size(), 36);
  EXPECT_NE(context.find("files: src/login.ts"), std::string::npos) << context;
  EXPECT_NE(context.find("outcome: ended after a failing command (npm test)"), std::string::npos) << context;

  // The id opens the record; one record however often the hook fired.
  HookRun get = RunHook({MSP_BIN, "get", id, "--data-dir", data_, "--user", "ann", "--json"}, "", dir_.path());
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_NE(get.out.find("session-summary"), std::string::npos) << get.out;
  EXPECT_NE(get.out.find("Let's use zod instead of yup."), std::string::npos) << get.out;
  HookRun hist = RunHook({MSP_BIN, "history", id, "--data-dir", data_, "--user", "ann", "--json"}, "", dir_.path());
  ASSERT_EQ(hist.exit_code, 0) << hist.err;
  const nlohmann::json versions = nlohmann::json::parse(hist.out);
  EXPECT_EQ(versions.is_array() ? versions.size() : versions["versions"].size(), 1u) << hist.out;
  EXPECT_EQ(LogLines(log_), 0u);
}

// SessionEnd with a chat model configured: the record holds the model's
// paragraph and names the model; with the model failing, the rules' summary
// is written all the same, the failure is one capture-log line and the agent
// sees nothing.
TEST_F(CaptureProcessTest, SessionEndSummaryThroughTheChatModelAndWithoutIt) {
  testing::OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(testing::kChatPath, testing::StubReply::ChatContent(
                                       R"({"summary":"Switched the login form to zod; npm test was not run."})"));
  stub.Enqueue(testing::kChatPath, testing::StubReply::Error(500, "the model crashed"));
  auto session = [&](const std::string& id) {
    std::string p = Payload("Fix the login form. Let's use zod instead of yup.");
    p.replace(p.find("sess-1"), 6, id);
    EXPECT_EQ(RunHook(Lean(), p, dir_.path()).exit_code, 0);
    const std::vector<std::string> end = {MSP_BIN, "hook", "session-end", "--data-dir", data_,
                                          "--llm-base-url", stub.base_url(), "--llm-model", "stub-model"};
    HookRun e = RunHook(end, R"({"session_id":")" + id + R"(","hook_event_name":"SessionEnd","cwd":"/"})",
                        dir_.path());
    EXPECT_EQ(e.exit_code, 0);
    EXPECT_EQ(e.out, "");
    EXPECT_EQ(e.err, "");
    HookRun get = RunHook({MSP_BIN, "get", SessionSummaryId("default", id), "--data-dir", data_, "--json"}, "",
                          dir_.path());
    EXPECT_EQ(get.exit_code, 0) << get.err;
    return get.out.empty() ? nlohmann::json() : nlohmann::json::parse(get.out);
  };
  const nlohmann::json with = session("sess-llm");
  ASSERT_TRUE(with.is_object());
  const std::string text = with.contains("memory") ? with["memory"]["text"] : with["text"];
  EXPECT_NE(text.find("## Summary (llm:stub-model)\nSwitched the login form to zod; npm test was not run."),
            std::string::npos) << text;
  EXPECT_NE(text.find("Let's use zod instead of yup."), std::string::npos) << text;
  EXPECT_EQ(LogLines(log_), 0u);
  ASSERT_EQ(stub.RequestCount(testing::kChatPath), 1u);

  const nlohmann::json without = session("sess-down");
  ASSERT_TRUE(without.is_object());
  const std::string plain = without.contains("memory") ? without["memory"]["text"] : without["text"];
  EXPECT_EQ(plain.find("## Summary"), std::string::npos) << plain;
  EXPECT_NE(plain.find("Let's use zod instead of yup."), std::string::npos) << plain;
  EXPECT_EQ(stub.RequestCount(testing::kChatPath), 2u);  // one attempt, no retries
  ASSERT_EQ(LogLines(log_), 1u);
  std::ifstream in(log_);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find("hooks.session_summary"), std::string::npos) << line;
  EXPECT_NE(line.find("the model crashed"), std::string::npos) << line;
}

}  // namespace
}  // namespace msp
