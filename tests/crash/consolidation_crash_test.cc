// kill -9 in the middle of an LLM consolidation: a child process opens the
// engine with the llm extractor against a scripted model in this process,
// consolidates once (facts committed), writes more episodes and starts a
// second consolidation whose model reply never comes; it is killed while
// waiting. A fresh engine must then hold every fact of the first round once,
// redo the second round from the stored progress mark, and never duplicate.
// Once with a direct Consolidate call, once through the background worker.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "msp/memory.h"
#include "tests/support/openai_stub.h"
#include "tests/support/scripted_model.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using msp::testing::kChatPath;
using msp::testing::OpenAiStub;
using msp::testing::ScriptedModel;

Options OptionsFor(const std::string& dir, const std::string& base_url, bool background) {
  Options o;
  o.store.data_dir = dir;
  o.store.synchronous = "normal";
  o.consolidation.extractor = ExtractorKind::kLlm;
  o.consolidation.background = background;
  o.consolidation.every_n_episodes = background ? 2 : 0;
  o.llm.base_url = base_url;
  o.llm.model = "stub-model";
  o.llm.max_retries = 0;
  o.llm.timeout_ms = 600000;  // the child waits for the reply until it is killed
  return o;
}

Namespace Ns() {
  Namespace ns;
  ns.tenant = "crash";
  ns.user = "ann";
  return ns;
}

[[noreturn]] void Fail(int code, const Status& s) {
  std::fprintf(stderr, "consolidating child %d: %s\n", static_cast<int>(getpid()), s.ToString().c_str());
  _exit(code);
}

void Say(MemoryLayer* m, const std::string& text) {
  EpisodeStep s;
  s.ns = Ns();
  s.ns.session = "s1";
  s.text = text;
  if (auto r = m->AddEpisode(s); !r.ok()) Fail(11, r.status());
}

// The child: reads the model's base URL from `in`, then two rounds of
// consolidation; the second one blocks on the model until the kill.
[[noreturn]] void Child(const std::string& dir, int in, bool background) {
  char buf[256] = {};
  ssize_t n = read(in, buf, sizeof(buf) - 1);
  if (n <= 0) _exit(9);
  auto mem = MemoryLayer::Open(OptionsFor(dir, std::string(buf, static_cast<size_t>(n)), background));
  if (!mem.ok()) Fail(10, mem.status());
  Say(mem->get(), "I write Rust at work");
  Say(mem->get(), "and I deploy on Debian 12");
  if (background) {
    if (Status s = (*mem)->WaitForConsolidation(); !s.ok()) Fail(12, s);
  } else if (auto r = (*mem)->Consolidate(Ns(), "s1"); !r.ok()) {
    Fail(12, r.status());
  }
  Say(mem->get(), "my editor is Neovim");
  Say(mem->get(), "I am vegetarian");
  if (background) {
    pause();  // the worker is waiting for the model
  } else if (auto r = (*mem)->Consolidate(Ns(), "s1"); !r.ok()) {
    Fail(13, r.status());
  }
  _exit(14);  // the second round must never finish
}

size_t ExtractRequests(const OpenAiStub& stub) {
  size_t n = 0;
  for (const auto& r : stub.Requests(kChatPath)) n += msp::testing::ResponseSchemaName(r) == "facts";
  return n;
}

void KillMidConsolidation(bool background) {
  msp::testing::TempDir dir("consolidation-crash");
  ASSERT_TRUE(dir.ok());
  const std::string data = dir.path() + "/data";
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipe_fds[1]);
    Child(data, pipe_fds[0], background);
  }
  close(pipe_fds[0]);

  // The stub starts after the fork, so the child holds none of its threads.
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  ScriptedModel model(&stub);
  model.AddFacts({ScriptedModel::Fact("User codes in Rust.", {1}),
                  ScriptedModel::Fact("User deploys on Debian 12.", {2}, 0.8, "environment")});
  model.AddFacts({ScriptedModel::Fact("User edits with Neovim.", {3})}, /*delay_ms=*/600000);
  const std::string url = stub.base_url();
  ASSERT_EQ(write(pipe_fds[1], url.data(), url.size()), static_cast<ssize_t>(url.size()));
  close(pipe_fds[1]);

  // Wait for the second extraction request: the child is now mid-consolidation.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  int status = 0;
  while (ExtractRequests(stub) < 2) {
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "the child ended early, exit code "
                                                 << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the child never reached the second round";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  // A fresh engine: the first round's facts are there once; the second round
  // is redone from the progress mark (steps 3 and 4 only).
  model.AddFacts({ScriptedModel::Fact("User edits with Neovim.", {3}),
                  ScriptedModel::Fact("User is vegetarian.", {4}, 1.0, "constraint")});
  auto mem = MemoryLayer::Open(OptionsFor(data, url, background));
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  ListRequest facts;
  facts.scope = Ns();
  facts.filter.kinds = {Kind::kFact};
  facts.limit = 0;
  ASSERT_OK_AND_ASSIGN(auto before, (*mem)->List(facts));
  std::vector<std::string> texts;
  for (const auto& f : before) texts.push_back(f.text);
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(texts, (std::vector<std::string>{"User codes in Rust.", "User deploys on Debian 12."}));

  if (background) {
    ASSERT_OK((*mem)->WaitForConsolidation());  // the stored queue brought the session back
  } else {
    ASSERT_OK_AND_ASSIGN(ConsolidationReport report, (*mem)->Consolidate(Ns(), "s1"));
    EXPECT_EQ(report.episodes_read, 2);
    EXPECT_EQ(report.facts_added, 2);
  }
  auto requests = stub.Requests(kChatPath);
  std::string transcript;
  for (const auto& r : requests) {
    if (msp::testing::ResponseSchemaName(r) == "facts") transcript = r.json["messages"][1]["content"];
  }
  EXPECT_EQ(transcript.find("[step 1 "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("[step 3 "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("[step 4 "), std::string::npos) << transcript;

  ASSERT_OK_AND_ASSIGN(auto after, (*mem)->List(facts));
  texts.clear();
  for (const auto& f : after) texts.push_back(f.text);
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(texts, (std::vector<std::string>{"User codes in Rust.", "User deploys on Debian 12.",
                                             "User edits with Neovim.", "User is vegetarian."}));

  // Nothing is left to do.
  const size_t calls = stub.RequestCount(kChatPath);
  ASSERT_OK_AND_ASSIGN(ConsolidationReport again, (*mem)->Consolidate(Ns(), "s1"));
  EXPECT_EQ(again.episodes_read, 0);
  EXPECT_EQ(stub.RequestCount(kChatPath), calls);
  ListRequest episodes;
  episodes.scope = Ns();
  episodes.session = "s1";
  episodes.limit = 0;
  ASSERT_OK_AND_ASSIGN(auto steps, (*mem)->List(episodes));
  EXPECT_EQ(steps.size(), 4u);
  mem->reset();
  stub.Stop();
}

TEST(ConsolidationCrashTest, KilledDuringConsolidateNeitherLosesNorDuplicatesFacts) {
  KillMidConsolidation(/*background=*/false);
}

TEST(ConsolidationCrashTest, KilledDuringBackgroundConsolidationNeitherLosesNorDuplicatesFacts) {
  KillMidConsolidation(/*background=*/true);
}

}  // namespace
}  // namespace msp
