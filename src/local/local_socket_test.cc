// The resident path's socket: calls answered, no server means no answer (a
// missing file, a dead server's file), one server per socket, bad frames
// refused, another user refused, concurrent callers all answered.
#include "local/local_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace msp::local {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr std::chrono::milliseconds kTimeout{10000};

class LocalSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/msp-local-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = SocketPath(dir_);
    ASSERT_FALSE(path_.empty());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static json Echo(const json& call) { return {{"answer", call}}; }

  // Connects and sends `bytes` raw; returns what came back (up to close).
  std::string Raw(const std::string& bytes) {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path_.c_str(), sizeof(a.sun_path) - 1);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    shutdown(fd, SHUT_WR);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, static_cast<size_t>(n));
    close(fd);
    return out;
  }

  std::string dir_;
  std::string path_;
};

// A server that yields (answers the resign call with ResignedFrame and
// stops) gives the socket to StartTakingOver; one that answers it as any
// other call keeps it.
TEST_F(LocalSocketTest, StartTakingOverTakesTheSocketOnlyFromAServerThatYields) {
  std::unique_ptr<LocalServer> keeper = std::move(LocalServer::Start(path_, Echo, 1)).value();
  Result<std::unique_ptr<LocalServer>> refused = LocalServer::StartTakingOver(path_, Echo, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists) << refused.status().ToString();
  keeper->Stop();

  std::atomic<bool> resigned{false};
  std::unique_ptr<LocalServer> yielding;
  std::thread stopper;
  auto yields = [&](const json& call) -> json {
    if (!IsResignCall(call)) return Echo(call);
    resigned = true;
    stopper = std::thread([&yielding] { yielding->Stop(); });  // as the server's main thread would
    return ResignedFrame();
  };
  yielding = std::move(LocalServer::Start(path_, yields, 1)).value();
  Result<std::unique_ptr<LocalServer>> taken = LocalServer::StartTakingOver(path_, Echo, 1);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  stopper.join();
  EXPECT_TRUE(resigned);
  // The newcomer answers, and the yielding server's stop left its socket.
  Result<std::optional<json>> answer = Call(path_, json{{"x", 1}}, kTimeout);
  ASSERT_TRUE(answer.ok() && answer->has_value());
  EXPECT_EQ((**answer)["answer"]["x"], 1);
  EXPECT_FALSE((*taken)->Gone());
}

// Gone: the socket file removed or replaced; a server whose path names
// another socket leaves that one when it stops.
TEST_F(LocalSocketTest, GoneWhenItsSocketFileIsRemovedOrReplaced) {
  std::unique_ptr<LocalServer> server = std::move(LocalServer::Start(path_, Echo, 1)).value();
  EXPECT_FALSE(server->Gone());
  const std::string aside = path_ + ".aside";
  fs::rename(path_, aside);
  EXPECT_TRUE(server->Gone());
  // Another file at the path: still gone, and kept at Stop.
  { std::ofstream(path_) << "not ours"; }
  EXPECT_TRUE(server->Gone());
  server->Stop();
  EXPECT_TRUE(fs::exists(path_));
  fs::rename(aside, path_ + ".old");
}

TEST_F(LocalSocketTest, AnswersACallAndRemovesItsSocketWhenStopped) {
  auto server = LocalServer::Start(path_, Echo, 2);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const json call = {{"operation", "search"}, {"request", {{"query", "caf\xc3\xa9"}}}};
  auto answer = Call(path_, call, kTimeout);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_TRUE(answer->has_value());
  EXPECT_EQ((**answer)["answer"], call);

  (*server)->Stop();
  // Counted once the answer is written, which the caller may read first:
  // final once Stop has let the calls taken finish.
  EXPECT_EQ((*server)->answered(), 1u);
  EXPECT_FALSE(fs::exists(path_));
  auto none = Call(path_, call, kTimeout);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(LocalSocketTest, NoServerMeansNoAnswerAndADeadServersFileIsReplaced) {
  auto none = Call(path_, json::object(), kTimeout);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  // A socket file nobody accepts on, as a killed server leaves it.
  {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path_.c_str(), sizeof(a.sun_path) - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    close(fd);
  }
  ASSERT_TRUE(fs::exists(path_));
  auto stale = Call(path_, json::object(), kTimeout);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->has_value());

  auto server = LocalServer::Start(path_, Echo, 1);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto answer = Call(path_, json{{"x", 1}}, kTimeout);
  ASSERT_TRUE(answer.ok() && answer->has_value());
  EXPECT_EQ((**answer)["answer"]["x"], 1);
}

TEST_F(LocalSocketTest, OneServerPerSocket) {
  auto first = LocalServer::Start(path_, Echo, 1);
  ASSERT_TRUE(first.ok());
  auto second = LocalServer::Start(path_, [](const json&) { return json{{"answer", "second"}}; }, 1);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists) << second.status().ToString();
  // The first still owns the socket.
  auto answer = Call(path_, json{{"x", 2}}, kTimeout);
  ASSERT_TRUE(answer.ok() && answer->has_value());
  EXPECT_EQ((**answer)["answer"]["x"], 2);
  // Once it stops, another may start.
  (*first)->Stop();
  auto third = LocalServer::Start(path_, Echo, 1);
  EXPECT_TRUE(third.ok()) << third.status().ToString();
}

TEST_F(LocalSocketTest, BadFramesAreRefusedWithAnError) {
  auto server = LocalServer::Start(path_, Echo, 1);
  ASSERT_TRUE(server.ok());
  // Over the limit: refused before the body is read.
  const std::string huge = {'\x7f', '\xff', '\xff', '\xff'};
  std::string out = Raw(huge);
  ASSERT_GT(out.size(), 4u);
  json j = json::parse(out.substr(4));
  EXPECT_EQ(j["error"]["code"], "invalid_argument");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("over the limit"), std::string::npos);
  // Not JSON.
  out = Raw(std::string("\0\0\0\3{x}", 7));
  ASSERT_GT(out.size(), 4u);
  j = json::parse(out.substr(4));
  EXPECT_EQ(j["error"]["code"], "invalid_argument");
  // Cut short: nothing answered.
  EXPECT_EQ(Raw(std::string("\0\0\0\x09{}", 6)), "");
  EXPECT_EQ((*server)->answered(), 0u);
  EXPECT_EQ((*server)->refused(), 3u);
}

TEST_F(LocalSocketTest, ConcurrentCallersAreAllAnswered) {
  auto server = LocalServer::Start(path_, Echo, 3);
  ASSERT_TRUE(server.ok());
  std::vector<std::thread> callers;
  std::atomic<int> right{0};
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        auto a = Call(path_, json{{"t", t}, {"i", i}}, kTimeout);
        if (a.ok() && a->has_value() && (**a)["answer"]["t"] == t && (**a)["answer"]["i"] == i) ++right;
      }
    });
  }
  for (std::thread& c : callers) c.join();
  EXPECT_EQ(right.load(), 200);
  (*server)->Stop();  // the last answers are counted after they are written
  EXPECT_EQ((*server)->answered(), 200u);
}

TEST_F(LocalSocketTest, AnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to call as another user";
  auto server = LocalServer::Start(path_, Echo, 1);
  ASSERT_TRUE(server.ok());
  // Open the way for the other user, as a careless chmod would: the
  // server's own check still refuses.
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0666), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    auto a = Call(path_, json{{"x", 1}}, kTimeout);
    if (!a.ok()) _exit(11);
    if (!a->has_value()) _exit(12);
    _exit((**a).contains("error") && (**a)["error"]["code"] == "forbidden" && !(**a).contains("answer") ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ((*server)->answered(), 0u);
  EXPECT_EQ((*server)->refused(), 1u);
}

TEST(LocalSocketPath, TooLongAPathHasNoSocket) {
  EXPECT_EQ(SocketPath("/x/data"), "/x/data/msp.sock");
  EXPECT_EQ(SocketPath("/x/data/"), "/x/data/msp.sock");
  EXPECT_EQ(SocketPath(std::string(120, 'a')), "");
  EXPECT_EQ(SocketPath(""), "");
}

}  // namespace
}  // namespace msp::local
