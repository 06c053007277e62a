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
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/index_sync.h"
#include "index/index.h"
#include "msp/memory.h"
#include "store/store.h"
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

// Write i of `writer`; the endless (killed) writer's carry an idempotency
// key, so that they can be retried after the kill.
WriteRequest WriteOf(int writer, int i, bool keyed) {
  WriteRequest r;
  r.ns.tenant = "procs";
  r.ns.user = "u" + std::to_string(writer);
  r.kind = Kind::kArtifact;
  r.text = "memory written by a concurrent process " + Marker(writer, i);
  r.tags = {"profile"};
  if (keyed) r.request_id = "w" + std::to_string(writer) + "-" + std::to_string(i);
  return r;
}

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
      auto w = (*mem)->Write(WriteOf(writer, i, /*keyed=*/endless));
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

  // The killed writer's writes retried with their keys: an acknowledged one
  // answers its id, the one the kill may have committed unacknowledged is
  // not written twice, and none is written again.
  const size_t acked_killed = acked[kWriters].size();
  std::set<std::string> retried;
  for (size_t i = 0; i <= acked_killed + 1; ++i) {
    if (i % 3 == 2) continue;  // episodes carry no key
    auto w = (*mem)->Write(WriteOf(kWriters, static_cast<int>(i), /*keyed=*/true));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    if (i < acked_killed) {
      EXPECT_EQ(w->id, acked[kWriters][i]) << "retry " << i;
    }
    retried.insert(w->id);
  }
  ListRequest list;
  list.scope.tenant = "procs";
  list.scope.user = "u" + std::to_string(kWriters);
  list.filter.kinds = {Kind::kArtifact};
  list.limit = 0;
  auto artifacts = (*mem)->List(list);
  ASSERT_TRUE(artifacts.ok()) << artifacts.status().ToString();
  EXPECT_EQ(artifacts->size(), retried.size()) << "a retried write was stored twice";
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

// kill -9 at random moments of a process that writes in batches and
// searches after each (a catch-up that saves the vector file every 32
// changes or so): after every kill the vector file is either absent or
// whole (it loads with every checksum checked), a fresh process opens the
// store without setting anything aside, finds every acknowledged record,
// and its vector index reaches the store's last change.
TEST(EngineProcessesTest, KilledWhileSavingTheVectorFileLeavesItWholeOrOld) {
  testing::TempDir dir("msp-vecfile");
  ASSERT_TRUE(dir.ok());
  const std::string data = dir.path() + "/data";
  const std::string file = data + "/vector/index.msv";
  {
    auto init = MemoryLayer::Open(OptionsFor(data));
    ASSERT_TRUE(init.ok()) << init.status().ToString();
  }
  std::mt19937 rng(21);
  std::vector<std::string> acked;
  int saw_file = 0;
  for (int cycle = 0; cycle < 10; ++cycle) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      auto mem = MemoryLayer::Open(OptionsFor(data));
      if (!mem.ok()) Fail(10, mem.status());
      for (int batch = 0;; ++batch) {
        std::vector<WriteRequest> requests;
        for (int i = 0; i < 20; ++i) {
          WriteRequest r;
          r.ns.tenant = "procs";
          r.kind = Kind::kArtifact;
          r.text = "vector file record " + Marker(100 + cycle, batch * 20 + i);
          r.tags = {"profile"};
          requests.push_back(r);
        }
        auto written = (*mem)->WriteMany(requests);
        if (!written.ok()) Fail(12, written.status());
        std::string lines;
        for (const auto& w : *written) lines += w.id + "\n";
        if (write(fds[1], lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) _exit(13);
        RetrieveRequest q;
        q.scope.tenant = "procs";
        q.query = "vector file record";
        q.record_access = false;
        if (auto hits = (*mem)->Retrieve(q); !hits.ok()) Fail(14, hits.status());
      }
    }
    close(fds[1]);
    // Killed at a random moment after its first acknowledged batch.
    std::string first(4096, '\0');
    const ssize_t got = read(fds[0], first.data(), first.size());
    first.resize(got > 0 ? static_cast<size_t>(got) : 0);
    usleep(static_cast<useconds_t>(rng() % 400000));
    kill(pid, SIGKILL);
    std::vector<std::string> ids = ReadIds(fds[0]);
    // The first read may have ended inside a line: join it to the rest.
    const size_t cut = first.rfind('\n');
    if (cut != std::string::npos) {
      for (size_t start = 0, nl; (nl = first.find('\n', start)) <= cut; start = nl + 1) {
        acked.push_back(first.substr(start, nl - start));
      }
    }
    if (!ids.empty()) ids.front() = first.substr(cut == std::string::npos ? 0 : cut + 1) + ids.front();
    for (std::string& id : ids) acked.push_back(std::move(id));
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself, status " << status;

    // The file, read as the index reads it, with the vectors checked too.
    StoreOptions so;
    so.data_dir = data;
    auto store = OpenStore(so);
    ASSERT_TRUE(store.ok());
    auto uid = (*store)->GetMeta(kStoreUidMetaKey);
    ASSERT_TRUE(uid.ok() && *uid);
    auto vector = MakeExactVectorIndex(Options().embedder.dimension);
    const Status loaded =
        vector->Load(file, "store=" + **uid + ";embedder=hashing-v1-" +
                               std::to_string(Options().embedder.dimension) + ";dimension=" +
                               std::to_string(Options().embedder.dimension),
                     /*verify_vectors=*/true);
    ASSERT_TRUE(loaded.ok() || loaded.IsNotFound()) << "cycle " << cycle << ": " << loaded.ToString();
    saw_file += loaded.ok();
  }
  ASSERT_GT(acked.size(), 0u);
  std::printf("vector file present after %d of 10 kills; %zu records acknowledged\n", saw_file, acked.size());

  auto mem = MemoryLayer::Open(OptionsFor(data));
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(file + ".set-aside"));
  Namespace tenant;
  tenant.tenant = "procs";
  for (const std::string& id : acked) ASSERT_TRUE((*mem)->Get(tenant, id).ok()) << id << " is lost";
  RetrieveRequest q;
  q.scope = tenant;
  q.query = "vector file record";
  q.record_access = false;
  ASSERT_TRUE((*mem)->Retrieve(q).ok());
  auto stats = (*mem)->GetStats(tenant);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->vector_applied_seq, stats->last_seq);
  EXPECT_EQ(stats->lexical_applied_seq, stats->last_seq);
  // A rebuild writes the file whole, and it holds every record.
  ASSERT_TRUE((*mem)->Reindex().ok());
  StoreOptions so;
  so.data_dir = data;
  auto store = OpenStore(so);
  ASSERT_TRUE(store.ok());
  auto uid = (*store)->GetMeta(kStoreUidMetaKey);
  ASSERT_TRUE(uid.ok() && *uid);
  const int dim = Options().embedder.dimension;
  auto vector = MakeExactVectorIndex(dim);
  const std::string identity = "store=" + **uid + ";embedder=hashing-v1-" + std::to_string(dim) +
                               ";dimension=" + std::to_string(dim);
  ASSERT_TRUE(vector->Load(file, identity, /*verify_vectors=*/true).ok());
  // Every record the store holds: the acknowledged ones, and a batch the
  // writer committed but was killed before acknowledging (it may be there).
  EXPECT_EQ(vector->size(), static_cast<size_t>(stats->records));
  EXPECT_GE(static_cast<size_t>(stats->records), acked.size());
}

}  // namespace
}  // namespace msp
