// Concurrent principle edits from separate PROCESSES on one data directory:
// each names the same base version; exactly one wins, every other gets
// Conflict naming the current version, and nothing is overwritten.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "msp/memory.h"
#include "msp/mission.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

Options OptionsFor(const std::string& data) {
  Options o;
  o.store.data_dir = data;
  o.store.synchronous = "normal";
  o.actor = "race";
  return o;
}

Namespace Mission() {
  Namespace ns;
  ns.tenant = "race";
  ns.mission = "m";
  return ns;
}

// Child: waits for the start byte, edits version 1, writes "ok" or
// "<code>|<message>" to `out`, exits.
[[noreturn]] void Editor(const std::string& data, int id, int start_fd, int out_fd) {
  auto mem = MemoryLayer::Open(OptionsFor(data));
  std::string line;
  if (!mem.ok()) {
    line = "open|" + mem.status().ToString();
  } else {
    char go = 0;
    if (read(start_fd, &go, 1) != 1) _exit(20);
    PrincipleEdit e;
    e.principle_id = "P-1";
    e.base_version = 1;
    e.statement = "Statement from editor " + std::to_string(id) + ".";
    e.author = "editor-" + std::to_string(id);
    Status s = EditPrinciple(**mem, Mission(), e, e.author).status();
    line = s.ok() ? std::string("ok") : std::string(StatusCodeName(s.code())) + "|" + s.message();
  }
  line += "\n";
  const ssize_t n = write(out_fd, line.data(), line.size());
  _exit(n == static_cast<ssize_t>(line.size()) ? 0 : 21);
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(PrincipleRaceTest, ExactlyOneOfSeveralProcessesWins) {
  testing::TempDir dir("principle-race");
  ASSERT_TRUE(dir.ok());
  const std::string data = dir.path() + "/data";
  {
    auto mem = MemoryLayer::Open(OptionsFor(data));
    ASSERT_TRUE(mem.ok()) << mem.status().ToString();
    Principle p;
    p.principle_id = "P-1";
    p.statement = "The original statement.";
    ASSERT_OK(AddPrinciple(**mem, Mission(), p, "setup").status());
  }
  constexpr int kEditors = 4;
  int start[2];
  ASSERT_EQ(pipe(start), 0);
  std::vector<pid_t> pids;
  std::vector<int> outs;
  for (int i = 0; i < kEditors; ++i) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      close(start[1]);
      Editor(data, i, start[0], fds[1]);
    }
    close(fds[1]);
    pids.push_back(pid);
    outs.push_back(fds[0]);
  }
  close(start[0]);
  // Release every editor at once.
  const std::string go(kEditors, 'g');
  ASSERT_EQ(write(start[1], go.data(), go.size()), static_cast<ssize_t>(go.size()));
  close(start[1]);

  int wins = 0, conflicts = 0;
  for (int i = 0; i < kEditors; ++i) {
    const std::string line = ReadAll(outs[i]);
    close(outs[i]);
    int status = 0;
    ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    if (line == "ok\n") {
      ++wins;
    } else {
      EXPECT_EQ(line.rfind("conflict|", 0), 0u) << line;
      EXPECT_NE(line.find("the current version is 2"), std::string::npos) << line;
      ++conflicts;
    }
  }
  EXPECT_EQ(wins, 1);
  EXPECT_EQ(conflicts, kEditors - 1);

  auto mem = MemoryLayer::Open(OptionsFor(data));
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  auto versions = PrincipleVersions(**mem, Mission(), "P-1", Asker{"", kMaxAccessLevel});
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].statement, "The original statement.");
  EXPECT_FALSE((*versions)[0].current);
  EXPECT_TRUE((*versions)[1].current);
  EXPECT_EQ((*versions)[1].statement.rfind("Statement from editor ", 0), 0u);
}

}  // namespace
}  // namespace msp
