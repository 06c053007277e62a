// Read-only and full disks, for real: this program runs in a mount
// namespace of its own (made before main, see PrivateMounts), where it
// bind-mounts a data directory read-only and mounts a small tmpfs that
// fills up; the built `msp` binary runs in it as a child process.
//   - a read-only mount: reads work (the lexical index, behind the store,
//     caught up in memory), writes are refused with a clear message, and
//     not one byte of the data directory changes;
//   - a data directory the user may only read (root runs msp as nobody);
//   - a full disk under `msp serve`: writes answer 507 disk_full (never
//     500), /healthz reports it, and once space is freed writes succeed
//     and every acknowledged record is there.
// Where namespaces or mounts are not allowed, the tests skip, saying why.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/child_process.h"
#include "tests/support/test_util.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Why this process has no mount namespace of its own ("" when it has one).
std::string& NamespaceError() {
  static std::string error;
  return error;
}

bool WriteProcFile(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// Enters a private mount namespace before main (unshare needs a process
// without threads): as root directly, otherwise inside a user namespace.
struct PrivateMounts {
  PrivateMounts() {
    if (unshare(CLONE_NEWNS) != 0) {
      const uid_t uid = getuid();
      const gid_t gid = getgid();
      if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        NamespaceError() = std::string("unshare: ") + std::strerror(errno);
        return;
      }
      WriteProcFile("/proc/self/setgroups", "deny");
      if (!WriteProcFile("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
          !WriteProcFile("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
        NamespaceError() = "cannot map this user into a user namespace";
        return;
      }
    }
    if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      NamespaceError() = std::string("making mounts private: ") + std::strerror(errno);
    }
  }
};
const PrivateMounts kPrivateMounts;

#define SKIP_WITHOUT_MOUNTS()                                                                  \
  if (!NamespaceError().empty()) GTEST_SKIP() << "no mount namespace: " << NamespaceError()

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& p) { return msp::testing::ReadWholeFile(p.string()); }

// The environment of this process without MSP_* variables and with HOME
// set to `home`; envp() is what posix_spawn takes.
class ChildEnvironment {
 public:
  explicit ChildEnvironment(const std::string& home) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view v(*e);
      if (v.substr(0, 4) != "MSP_" && v.substr(0, 5) != "HOME=") strings_.emplace_back(v);
    }
    strings_.push_back("HOME=" + home);
    for (std::string& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  char** envp() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// Every file below `dir` with its bytes (the lock files' too).
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[e.path().string()] = ReadFile(e.path());
  }
  return out;
}

// Runs `prefix... msp args...` with stdin from /dev/null and the
// environment of this process without MSP_* variables (HOME set to `home`).
Outcome RunMsp(const std::vector<std::string>& prefix, const std::vector<std::string>& args, const std::string& home) {
  const std::string out_path = home + "/.stdout";
  const std::string err_path = home + "/.stderr";
  std::vector<std::string> argv = prefix;
  argv.push_back(MSP_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (std::string& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  ChildEnvironment env(home);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  pid_t pid = -1;
  Outcome r;
  const int rc = posix_spawnp(&pid, cargs[0], &actions, nullptr, cargs.data(), env.envp());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << cargs[0] << ": " << std::strerror(rc);
    return r;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

class DiskFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    home_ = dir_.path() + "/home";
    data_ = dir_.path() + "/data";
    fs::create_directories(home_);
  }
  void TearDown() override {
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
  }

  Outcome Msp(std::vector<std::string> args, const std::vector<std::string>& prefix = {}) {
    args.insert(args.begin(), {"--data-dir", data_});
    return RunMsp(prefix, args, home_);
  }

  // The id `msp write` printed ("stored ID").
  std::string Write(const std::string& text) {
    const Outcome w = Msp({"write", "--tag", "preference", text});
    EXPECT_EQ(w.code, 0) << w.err;
    const size_t at = w.out.find("stored ");
    if (at == std::string::npos) return "";
    std::string id = w.out.substr(at + 7);
    return id.substr(0, id.find_first_of(" \n"));
  }

  // Bind-mounts `dir` onto itself read-only.
  ::testing::AssertionResult MountReadOnly(const std::string& dir) {
    if (mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return ::testing::AssertionFailure() << "bind mount: " << std::strerror(errno);
    }
    mounts_.push_back(dir);
    if (mount(nullptr, dir.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      return ::testing::AssertionFailure() << "read-only remount: " << std::strerror(errno);
    }
    return ::testing::AssertionSuccess();
  }

  msp::testing::TempDir dir_{"msp-disk-faults"};
  std::string home_;
  std::string data_;
  std::vector<std::string> mounts_;
};

// A store with five records of which the last two the lexical index has
// not seen yet (writes catch up the vectors only): `msp search` on a
// read-only mount must catch up in memory to find them.
TEST_F(DiskFaultsTest, ReadOnlyMountServesReadsRefusesWritesAndWritesNothing) {
  SKIP_WITHOUT_MOUNTS();
  ASSERT_EQ(Msp({"init"}).code, 0);
  std::vector<std::string> kafka;
  for (int i = 0; i < 3; ++i) kafka.push_back(Write("The kafka broker " + std::to_string(i) + " restarts nightly"));
  ASSERT_EQ(Msp({"search", "kafka"}).code, 0);
  const std::string zk1 = Write("Zookeeper quorum lost its leader during the deploy");
  const std::string zk2 = Write("Zookeeper snapshots are kept for seven days");
  const auto before = Snapshot(data_);
  ASSERT_TRUE(MountReadOnly(data_));

  const Outcome search = Msp({"search", "zookeeper"});
  EXPECT_EQ(search.code, 0) << search.err;
  EXPECT_TRUE(msp::testing::Contains(search.out, zk1)) << search.out;
  EXPECT_TRUE(msp::testing::Contains(search.out, zk2)) << search.out;
  EXPECT_TRUE(msp::testing::Contains(search.err, "read-only")) << search.err;
  EXPECT_TRUE(msp::testing::Contains(search.err, "writes are refused")) << search.err;
  const Outcome get = Msp({"get", kafka[1]});
  EXPECT_EQ(get.code, 0) << get.err;
  EXPECT_TRUE(msp::testing::Contains(get.out, "kafka broker 1")) << get.out;
  const Outcome stats = Msp({"stats"});
  EXPECT_EQ(stats.code, 0) << stats.err;
  EXPECT_TRUE(msp::testing::Contains(stats.out, "5 active")) << stats.out;
  const Outcome exported = Msp({"export"});
  EXPECT_EQ(exported.code, 0) << exported.err;
  EXPECT_EQ(std::count(exported.out.begin(), exported.out.end(), '\n'), 5) << exported.out;

  const Outcome write = Msp({"write", "--tag", "preference", "The user prefers tabs over spaces in Makefiles"});
  EXPECT_NE(write.code, 0);
  EXPECT_TRUE(msp::testing::Contains(write.err, "read-only")) << write.err;
  EXPECT_TRUE(msp::testing::Contains(write.err, "writes are refused")) << write.err;

  EXPECT_EQ(umount2(data_.c_str(), 0), 0) << std::strerror(errno);
  mounts_.clear();
  EXPECT_EQ(Snapshot(data_), before);
  const Outcome after = Msp({"stats"});
  EXPECT_TRUE(msp::testing::Contains(after.out, "5 active")) << after.out;
}

// Readable but not writable by the user: root runs msp as nobody over a
// data directory root owns (0755, files 0644).
TEST_F(DiskFaultsTest, DataDirectoryTheUserMayOnlyReadServesReads) {
  SKIP_WITHOUT_MOUNTS();
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run msp as another user";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "needs setpriv (util-linux)";
  ASSERT_EQ(Msp({"init"}).code, 0);
  const std::string id = Write("The kafka broker restarts nightly at two");
  ASSERT_EQ(Msp({"search", "kafka"}).code, 0);
  const std::string late = Write("Zookeeper quorum lost its leader during the deploy");
  // nobody may enter every folder above the data directory and read its files.
  for (fs::path p = dir_.path(); p != p.root_path(); p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) chmod(p.c_str(), st.st_mode | S_IXOTH | S_IROTH);
  }
  chmod(home_.c_str(), 0777);
  for (const auto& e : fs::recursive_directory_iterator(data_)) {
    chmod(e.path().c_str(), e.is_directory() ? 0755 : 0644);
  }
  chmod(data_.c_str(), 0755);
  const auto before = Snapshot(data_);
  const std::vector<std::string> nobody = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};

  const Outcome search = Msp({"search", "zookeeper"}, nobody);
  EXPECT_EQ(search.code, 0) << search.err;
  EXPECT_TRUE(msp::testing::Contains(search.out, late)) << search.out;
  EXPECT_TRUE(msp::testing::Contains(search.err, "read-only")) << search.err;
  const Outcome get = Msp({"get", id}, nobody);
  EXPECT_EQ(get.code, 0) << get.err;
  const Outcome write = Msp({"write", "--tag", "preference", "The user prefers tabs over spaces in Makefiles"}, nobody);
  EXPECT_NE(write.code, 0);
  EXPECT_TRUE(msp::testing::Contains(write.err, "writes are refused")) << write.err;
  EXPECT_EQ(Snapshot(data_), before);
}

// `msp serve` with anonymous access, its stderr on a pipe; port 0 when it
// did not start (server.child.err says why).
struct Server {
  msp::testing::ChildProcess child;
  int port = 0;
};

Server StartServe(const std::string& data, const std::string& home) {
  ChildEnvironment env(home);
  Server s;
  s.child = msp::testing::SpawnWithStderr({MSP_BINARY, "serve", "--data-dir", data, "--port", "0",
                                           "--allow-anonymous", "true", "--policy-max-items-per-user", "0"},
                                          env.envp());
  if (s.child.pid > 0) s.port = msp::testing::WaitForListening(s.child);
  return s;
}

// A full disk under `msp serve`: writes go on until the disk is full;
// from then on each answers 507 disk_full with a message that says so
// (never a 500), /healthz answers 507 disk_full while reads still work;
// freed space makes writes succeed and /healthz 200 again, and every
// acknowledged record is there.
TEST_F(DiskFaultsTest, FullDiskAnswers507AndHealthzReportsIt) {
  SKIP_WITHOUT_MOUNTS();
  const std::string disk = dir_.path() + "/disk";
  fs::create_directories(disk);
  if (mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=3m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs: " << std::strerror(errno);
  }
  mounts_.push_back(disk);
  data_ = disk + "/data";
  ASSERT_EQ(Msp({"init"}).code, 0);
  // Ballast, removed later to free space.
  {
    std::ofstream ballast(disk + "/ballast", std::ios::binary);
    ballast << std::string(512 * 1024, 'x');
  }
  Server server = StartServe(data_, home_);
  ASSERT_GT(server.port, 0) << server.child.err;
  httplib::Client client("127.0.0.1", server.port);
  const std::string filler(2000, 'y');
  std::vector<std::string> acknowledged;
  int full = 0;
  for (int i = 0; i < 5000 && full == 0; ++i) {
    auto r = client.Post("/v1/memories",
                         json{{"text", "Record " + std::to_string(i) + " of the disk test " + filler},
                              {"tags", {"preference"}}}
                             .dump(),
                         "application/json");
    ASSERT_TRUE(r);
    if (r->status == 201) {
      acknowledged.push_back(json::parse(r->body)["id"]);
      continue;
    }
    ASSERT_EQ(r->status, 507) << r->body;
    const json e = json::parse(r->body)["error"];
    EXPECT_EQ(e["code"], "disk_full") << r->body;
    EXPECT_TRUE(msp::testing::Contains(e["message"].get<std::string>(), "disk is full")) << r->body;
    full = i;
  }
  ASSERT_GT(full, 0) << "the disk never filled";
  ASSERT_FALSE(acknowledged.empty());
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 507) << health->body;
  EXPECT_EQ(json::parse(health->body)["status"], "disk_full") << health->body;
  auto read = client.Get("/v1/memories/" + acknowledged.front());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200) << read->body;

  fs::remove(disk + "/ballast");
  auto again = client.Post("/v1/memories",
                           json{{"text", "The record written once space was freed"}, {"tags", {"preference"}}}.dump(),
                           "application/json");
  ASSERT_TRUE(again);
  ASSERT_EQ(again->status, 201) << again->body;
  acknowledged.push_back(json::parse(again->body)["id"]);
  health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;
  for (const std::string& id : acknowledged) {
    auto got = client.Get("/v1/memories/" + id);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->status, 200) << id << ": " << got->body;
  }
  msp::testing::Stop(server.child);
}

}  // namespace
