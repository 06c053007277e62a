// capture_bench: the whole `msp capture` process, as Claude Code runs it,
// into a prompt repository that already holds many prompts
// (bench/README.md, "Capture"; docs/coding-agents.md).
//
//   capture_bench --msp build/src/cli/msp [--capture build/src/cli/msp-capture]
//                 [--repo DIR] [--seed 100000] [--runs 1000] [--gap-ms 50]
//
// Seeds the repository (in process) up to --seed prompts, then runs each
// hook command --runs times, one after another, each with a UserPromptSubmit
// payload on standard input, and reports p50 / p99 / mean of the wall time
// from fork to exit (the process a user waits for) and of its CPU time (user
// + system, from wait4: less sensitive to the machine's load). Variants:
//   true         /bin/true: the floor of starting a process here
//   msp-capture  the lean hook (spool + detached importer)
//   msp capture  the full binary, spool mode
//   direct       the full binary, capture.mode = direct (commits itself)
// Afterwards it waits for the spool to drain and checks that every prompt
// is in the repository exactly once.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "coding/capture.h"
#include "coding/observation.h"
#include "coding/prompt_store.h"
#include "util/time.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string msp, capture, repo;
  size_t seed = 100000, runs = 1000;
  int gap_ms = 50;
};

// Runs argv with `input` on standard input; returns the wall time in ms, or
// a negative value when it did not exit 0. *cpu_ms: its user + system time.
double RunOnce(const std::vector<std::string>& argv, const std::string& input, double* cpu_ms) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[0], 0);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> c;
    for (const std::string& a : argv) c.push_back(const_cast<char*>(a.c_str()));
    c.push_back(nullptr);
    execv(c[0], c.data());
    _exit(127);
  }
  close(fds[0]);
  // A hook that does not read its input (/bin/true) may exit before the
  // write: EPIPE (SIGPIPE is ignored) is not a failure of the run.
  (void)!write(fds[1], input.data(), input.size());
  close(fds[1]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  *cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

void Report(const char* name, std::vector<double> ms, std::vector<double> cpu) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  std::sort(cpu.begin(), cpu.end());
  double sum = 0;
  for (double m : ms) sum += m;
  auto pct = [](const std::vector<double>& v, double p) {
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
  };
  std::printf("%-12s runs %5zu  wall p50 %6.2f ms  p99 %6.2f ms  mean %6.2f ms  max %6.2f ms  |  cpu p50 %5.2f ms  p99 %5.2f ms\n",
              name, ms.size(), pct(ms, 0.50), pct(ms, 0.99), sum / static_cast<double>(ms.size()), ms.back(),
              pct(cpu, 0.50), pct(cpu, 0.99));
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--msp") a.msp = v;
    else if (k == "--capture") a.capture = v;
    else if (k == "--repo") a.repo = v;
    else if (k == "--seed") a.seed = std::stoul(v);
    else if (k == "--runs") a.runs = std::stoul(v);
    else if (k == "--gap-ms") a.gap_ms = std::stoi(v);
    else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  if (a.msp.empty()) {
    std::fprintf(stderr, "usage: capture_bench --msp PATH [--capture PATH] [--repo DIR] [--seed N] [--runs N] [--gap-ms N]\n");
    return 2;
  }
  if (a.repo.empty()) a.repo = (fs::temp_directory_path() / "msp-capture-bench" / "prompts.git").string();
  a.repo = fs::absolute(a.repo).string();
  const std::string data_dir = fs::path(a.repo).parent_path().string();
  fs::create_directories(data_dir);

  // Seed: prompts spread over two years, as a long-used repository holds.
  size_t have = 0;
  {
    auto store = msp::PromptStore::Open(a.repo, true);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      return 1;
    }
    have = (*store)->Count().ok() ? *(*store)->Count() : 0;
    const auto t0 = Clock::now();
    const msp::TimeMs now = msp::WallClockMs();
    const msp::TimeMs span = 2LL * 365 * 86400 * 1000;
    for (size_t i = have; i < a.seed; ++i) {
      msp::CapturedPrompt p;
      p.at = now - span + static_cast<msp::TimeMs>(i) * (span / static_cast<msp::TimeMs>(a.seed));
      p.text = "seed prompt " + std::to_string(i) + ": fix the failing test in module " + std::to_string(i % 97);
      p.session_id = "seed-" + std::to_string(i / 30);
      p.repository = "/home/dev/project-" + std::to_string(i % 5);
      p.branch = "main";
      p.hook_event = "UserPromptSubmit";
      if (!(*store)->Append(p).ok()) {
        std::fprintf(stderr, "seeding failed at %zu\n", i);
        return 1;
      }
    }
    if (a.seed > have) {
      std::printf("seeded %zu prompts in %.1f s\n", a.seed - have,
                  std::chrono::duration<double>(Clock::now() - t0).count());
    }
    have = std::max(have, a.seed);
  }

  const std::string payload_head =
      R"({"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":")" + data_dir +
      R"(","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"benchmark prompt )";
  const std::vector<std::string> settings = {"--data-dir", data_dir, "--capture-repository", a.repo,
                                             "--capture-log-file", data_dir + "/capture.log"};
  // The observation hook's payload: a Bash PostToolUse as Claude Code sends
  // it, with about 1 KB of output and a token to redact.
  const std::string observe_head =
      R"({"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":")" + data_dir +
      R"(","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_)";
  const std::string observe_tail =
      R"(","tool_input":{"command":"GH_TOKEN=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 make test -j2",)"
      R"("description":"run the tests"},"tool_response":{"stdout":")" +
      std::string(1000, 'o') + R"(","stderr":"","interrupted":false,"isImage":false}})";
  struct Variant {
    const char* name;
    std::vector<std::string> argv;
    bool captures;
    bool observes = false;
  };
  std::vector<Variant> variants = {{"true", {"/bin/true"}, false}};
  if (!a.capture.empty()) {
    std::vector<std::string> v = {a.capture};
    v.insert(v.end(), settings.begin(), settings.end());
    variants.push_back({"msp-capture", v, true});
    // The same command as the PostToolUse hook (what setup registers).
    variants.push_back({"observe", v, false, true});
  }
  {
    std::vector<std::string> v = {a.msp, "capture"};
    v.insert(v.end(), settings.begin(), settings.end());
    variants.push_back({"msp capture", v, true});
    v.push_back("--capture-mode");
    v.push_back("direct");
    variants.push_back({"direct", v, true});
  }
  size_t captured = 0;
  for (const Variant& v : variants) {
    std::vector<double> ms, cpu;
    size_t failed = 0;
    for (size_t i = 0; i < a.runs; ++i) {
      const std::string input = v.observes ? observe_head + std::to_string(i) + observe_tail
                                           : payload_head + v.name + " " + std::to_string(i) + "\"}";
      double c = 0;
      const double t = RunOnce(v.argv, input, &c);
      if (t < 0) {
        ++failed;
      } else {
        ms.push_back(t);
        cpu.push_back(c);
        if (v.captures) ++captured;
      }
      if (a.gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.gap_ms));
    }
    Report(v.name, ms, cpu);
    if (failed) std::printf("%-14s %zu runs failed\n", v.name, failed);
  }

  // Every captured prompt must land exactly once.
  const auto drain_start = Clock::now();
  for (int i = 0; i < 600; ++i) {
    std::error_code ec;
    bool empty = true;
    for (const auto& e : fs::directory_iterator(msp::SpoolDir(a.repo), ec)) {
      if (e.path().extension() == ".json") empty = false;
    }
    if (empty) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!msp::ImportSpool(a.repo).ok()) std::printf("final import failed\n");
  // The observations: their spool drains into episodes (the importer opens
  // the engine, SCHED_IDLE).
  size_t left = 0;
  for (int i = 0; i < 1200; ++i) {
    std::error_code ec;
    left = 0;
    for (const auto& e : fs::directory_iterator(msp::ObservationSpoolDir(a.repo), ec)) {
      if (e.path().extension() == ".json") ++left;
    }
    if (left == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("observation spool %s %.1f s after the last capture\n",
              left == 0 ? "drained" : ("still holds " + std::to_string(left) + " files").c_str(),
              std::chrono::duration<double>(Clock::now() - drain_start).count());
  auto store = msp::PromptStore::Open(a.repo, false);
  const size_t count = store.ok() && (*store)->Count().ok() ? *(*store)->Count() : 0;
  std::printf("spool drained %.1f s after the last capture; repository holds %zu prompts (expected %zu): %s\n",
              std::chrono::duration<double>(Clock::now() - drain_start).count(), count, have + captured,
              count == have + captured ? "ok" : "MISMATCH");
  return count == have + captured ? 0 : 1;
}
