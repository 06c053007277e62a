// start_bench: what starting a process costs: `msp version`, the capture hook
// `msp-capture` and `/bin/true`, run alternately in one run (bench/README.md,
// "Process start").
//
//   start_bench --msp build/src/cli/msp --capture build/src/cli/msp-capture [--runs 300]
//               [--baseline OTHER_MSP]
//
// --baseline adds `version` of another msp binary (an earlier build, say) to
// the same rounds. Each round runs the commands once, in an order that rotates from
// round to round, so that the machine's load falls on all three alike. Each
// run is timed from fork to the end of wait4: wall time, and the child's CPU
// time (user + system, from wait4's rusage). Reports the median and the 90th
// percentile of each, and the ratios of the medians.
//
// The hook runs as Claude Code runs it, with a UserPromptSubmit payload on
// standard input, spooling into a scratch directory. It then starts the
// spool's importer (`msp prompts import`, detached, from the msp beside it);
// here that msp is a link to /bin/true, so that importers running in the
// background do not load the machine while the next command is timed. The
// hook itself is a copy of --capture in the scratch directory.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "process_timer.h"

namespace {

namespace fs = std::filesystem;
using Sample = msp::bench::ProcessSample;
using msp::bench::TimeProcess;

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

struct Command {
  std::string name;
  std::vector<std::string> argv;
  bool hook = false;  // gets a UserPromptSubmit payload on standard input
  std::vector<double> wall, cpu;
  size_t failed = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string msp, capture, baseline;
  size_t runs = 300;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--msp") {
      msp = v;
    } else if (k == "--capture") {
      capture = v;
    } else if (k == "--baseline") {
      baseline = v;
    } else if (k == "--runs") {
      runs = std::stoul(v);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  if (msp.empty() || capture.empty() || runs == 0) {
    std::fprintf(stderr, "usage: start_bench --msp PATH --capture PATH [--runs N] [--baseline MSP]\n");
    return 2;
  }
  std::error_code ec;
  char tmpl[] = "/tmp/msp-start-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const fs::path dir = tmpl;
  const fs::path hook = dir / "msp-capture";
  fs::copy_file(capture, hook, ec);
  if (!ec) fs::create_symlink("/bin/true", dir / "msp", ec);
  if (ec) {
    std::fprintf(stderr, "cannot prepare %s: %s\n", dir.c_str(), ec.message().c_str());
    return 1;
  }

  std::vector<Command> commands = {
      {"/bin/true", {"/bin/true"}, false, {}, {}, 0},
      {"msp-capture", {hook.string(), "--data-dir", (dir / "data").string()}, true, {}, {}, 0},
      {"msp version", {fs::absolute(msp).string(), "version"}, false, {}, {}, 0},
  };
  if (!baseline.empty()) commands.push_back({"baseline", {fs::absolute(baseline).string(), "version"}, false, {}, {}, 0});
  const std::string payload_head = R"({"session_id":"start-bench","transcript_path":"/tmp/t.jsonl","cwd":")" +
                                   dir.string() +
                                   R"(","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":")";
  for (size_t round = 0; round < runs; ++round) {
    for (size_t k = 0; k < commands.size(); ++k) {
      Command& c = commands[(round + k) % commands.size()];
      const std::string input = c.hook ? payload_head + "prompt " + std::to_string(round) + "\"}" : "";
      Sample s;
      if (TimeProcess(c.argv, input, &s)) {
        c.wall.push_back(s.wall_ms);
        c.cpu.push_back(s.cpu_ms);
      } else {
        ++c.failed;
      }
    }
  }
  fs::remove_all(dir, ec);

  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = -1;
  std::printf("%zu rounds; load average %.2f %.2f %.2f\n", runs, load[0], load[1], load[2]);
  std::printf("%-12s %10s %10s %10s %10s\n", "command", "wall p50", "wall p90", "cpu p50", "cpu p90");
  for (const Command& c : commands) {
    std::printf("%-12s %7.2f ms %7.2f ms %7.2f ms %7.2f ms", c.name.c_str(), Percentile(c.wall, 0.5),
                Percentile(c.wall, 0.9), Percentile(c.cpu, 0.5), Percentile(c.cpu, 0.9));
    if (c.failed > 0) std::printf("   (%zu runs failed)", c.failed);
    std::printf("\n");
  }
  auto ratio = [&](size_t a, size_t b) {
    std::printf("%s / %s: wall %.2fx, cpu %.2fx\n", commands[a].name.c_str(), commands[b].name.c_str(),
                Percentile(commands[a].wall, 0.5) / Percentile(commands[b].wall, 0.5),
                Percentile(commands[a].cpu, 0.5) / Percentile(commands[b].cpu, 0.5));
  };
  ratio(2, 0);
  ratio(2, 1);
  ratio(1, 0);
  if (commands.size() > 3) ratio(3, 2);
  size_t failed = 0;
  for (const Command& c : commands) failed += c.failed;
  return failed == 0 ? 0 : 1;
}
