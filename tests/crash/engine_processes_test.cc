// Several processes on one data directory, through the whole engine: each
// writes memories and episodes concurrently (the store serialises them, the
// shared Xapian index takes turns), one of them is killed with SIGKILL while
// writing, and afterwards a fresh process must find every acknowledged record
// by id and by search, with nothing lost and the indexes consistent.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "msp/memory.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

constexpr int kWriters = 4;
constexpr int kPerWriter = 30;

Options OptionsFor(const std::string& dir) {
  Options o;
  o.store.data_dir = dir;
  o.store.synchronous = "normal";
  o.consolidation.every_n_episodes = 0;
  return o;
}

// A unique word per record, so a search for it must find exactly that record.
std::string Marker(int writer, int i) { return "zq" + std::to_string(writer) + "x" + std::to_string(i) + "w"; }

// The child's work: write records, each acknowledged on `fd` as "<id>\n" only
// after the engine returned ok; also run searches so index catch-up happens
// in every process while the others write. Never returns.
// Exits with `code` after saying why on stderr (ctest shows it).
[[noreturn]] void Fail(int code, const Status& s) {
  std::fprintf(stderr, "writer process %d: %s\n", static_cast<int>(getpid()), s.ToString().c_str());
  _exit(code);
}

[[noreturn]] void Writer(const std::string& dir, int writer, int fd, bool endless) {
  auto mem = MemoryLayer::Open(OptionsFor(dir));
  if (!mem.ok()) Fail(10, mem.status());
  for (int i = 0; endless || i < kPerWriter; ++i) {
    std::string id;
    if (i % 3 == 2) {
      EpisodeStep s;
      s.ns.tenant = "procs";
      s.ns.user = "u" + std::to_string(writer);
      s.ns.session = "s" + std::to_string(writer);
      s.text = "episode step " + Marker(writer, i) + " of a concurrent writer";
      auto e = (*mem)->AddEpisode(s);
      if (!e.ok()) Fail(11, e.status());
      id = e->id;
    } else {
      WriteRequest r;
      r.ns.tenant = "procs";
      r.ns.user = "u" + std::to_string(writer);
      r.kind = Kind::kArtifact;
      r.text = "memory written by a concurrent process " + Marker(writer, i);
      r.tags = {"profile"};
      auto w = (*mem)->Write(r);
      if (!w.ok()) Fail(12, w.status());
      id = w->id;
    }
    const std::string line = id + "\n";
    if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(13);
    if (i % 5 == 0) {
      RetrieveRequest q;
      q.scope.tenant = "procs";
      q.query = "concurrent writer";
      if (auto hits = (*mem)->Retrieve(q); !hits.ok()) Fail(14, hits.status());
    }
  }
  _exit(0);
}

std::vector<std::string> ReadIds(int fd) {
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
  std::vector<std::string> ids;
  size_t start = 0;
  for (size_t nl; (nl = all.find('\n', start)) != std::string::npos; start = nl + 1) {
    ids.push_back(all.substr(start, nl - start));
  }
  return ids;  // a partial last line (killed mid-write) is not an acknowledgement
}

TEST(EngineProcessesTest, ConcurrentWritersAndAKilledOneLoseNothing) {
  testing::TempDir dir("msp-procs");
  ASSERT_TRUE(dir.ok());
  const std::string data = dir.path() + "/data";
  {
    auto init = MemoryLayer::Open(OptionsFor(data));  // create the store before the race
    ASSERT_TRUE(init.ok()) << init.status().ToString();
  }
  struct Child {
    pid_t pid;
    int fd;
  };
  std::vector<Child> children;
  // kWriters finite writers plus one endless writer that gets killed.
  for (int w = 0; w <= kWriters; ++w) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      Writer(data, w, fds[1], /*endless=*/w == kWriters);
    }
    close(fds[1]);
    children.push_back({pid, fds[0]});
  }
  // Wait for the finite writers, reading their acknowledgements.
  std::vector<std::vector<std::string>> acked(children.size());
  for (int w = 0; w < kWriters; ++w) {
    acked[w] = ReadIds(children[w].fd);
    int status = 0;
    ASSERT_EQ(waitpid(children[w].pid, &status, 0), children[w].pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "writer " << w;
    EXPECT_EQ(acked[w].size(), static_cast<size_t>(kPerWriter)) << "writer " << w;
  }
  // The endless writer has been writing all along: kill it mid-stream.
  kill(children[kWriters].pid, SIGKILL);
  acked[kWriters] = ReadIds(children[kWriters].fd);
  int status = 0;
  ASSERT_EQ(waitpid(children[kWriters].pid, &status, 0), children[kWriters].pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_GT(acked[kWriters].size(), 0u);
  for (const auto& c : children) close(c.fd);

  // A fresh process view: every acknowledged record is there and searchable.
  auto mem = MemoryLayer::Open(OptionsFor(data));
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  Namespace tenant;
  tenant.tenant = "procs";
  std::set<std::string> all_ids;
  for (int w = 0; w <= kWriters; ++w) {
    for (size_t i = 0; i < acked[w].size(); ++i) {
      const std::string& id = acked[w][i];
      all_ids.insert(id);
      auto got = (*mem)->Get(tenant, id);
      ASSERT_TRUE(got.ok()) << "acknowledged record " << id << " of writer " << w << " is lost";
      RetrieveRequest q;
      q.scope = tenant;
      q.query = Marker(w, static_cast<int>(i));
      q.record_access = false;
      auto hits = (*mem)->Retrieve(q);
      ASSERT_TRUE(hits.ok());
      ASSERT_FALSE(hits->empty()) << "record " << id << " is not in the index";
      EXPECT_EQ((*hits)[0].memory.id, id);
    }
  }
  EXPECT_EQ(all_ids.size(), static_cast<size_t>(kWriters * kPerWriter) + acked[kWriters].size());
  // Step numbers of each session are unique: concurrent appends never collide.
  for (int w = 0; w < kWriters; ++w) {
    auto steps = (*mem)->LastSteps(tenant, "s" + std::to_string(w), 0);
    ASSERT_TRUE(steps.ok());
    std::set<int64_t> numbers;
    for (const auto& s : *steps) EXPECT_TRUE(numbers.insert(s.step_number).second);
    EXPECT_EQ(steps->size(), static_cast<size_t>(kPerWriter / 3));
  }
}

TEST(EngineProcessesTest, ProcessesAppendingToOneSessionNeverShareAStep) {
  testing::TempDir dir("msp-steps");
  ASSERT_TRUE(dir.ok());
  const std::string data = dir.path() + "/data";
  {
    auto init = MemoryLayer::Open(OptionsFor(data));
    ASSERT_TRUE(init.ok()) << init.status().ToString();
  }
  constexpr int kProcs = 3;
  constexpr int kSteps = 25;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto mem = MemoryLayer::Open(OptionsFor(data));
      if (!mem.ok()) Fail(10, mem.status());
      for (int i = 0; i < kSteps; ++i) {
        EpisodeStep s;
        s.ns.tenant = "procs";
        s.ns.session = "shared";
        s.text = "step from process " + std::to_string(p) + " number " + std::to_string(i);
        if (auto e = (*mem)->AddEpisode(s); !e.ok()) Fail(11, e.status());
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto mem = MemoryLayer::Open(OptionsFor(data));
  ASSERT_TRUE(mem.ok());
  Namespace tenant;
  tenant.tenant = "procs";
  auto steps = (*mem)->LastSteps(tenant, "shared", 0);
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), static_cast<size_t>(kProcs * kSteps));
  for (size_t i = 0; i < steps->size(); ++i) EXPECT_EQ((*steps)[i].step_number, static_cast<int64_t>(i) + 1);
}

}  // namespace
}  // namespace msp
