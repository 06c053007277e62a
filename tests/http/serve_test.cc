// `msp serve` as a real process: started on port 0, it prints the address it
// listens on; a write and a search go through it over HTTP; SIGTERM stops it
// cleanly (exit 0). Without API keys it refuses to start.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/test_util.h"

extern char** environ;

namespace {

using nlohmann::json;

const std::string kKey = "serve-test-key-0123456789";

// A child process with its stderr on a pipe.
struct Child {
  pid_t pid = -1;
  int err_fd = -1;
};

Child SpawnMsp(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<std::string> argv = {MSP_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (std::string& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  // The environment of this process without MSP_* settings.
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).substr(0, 4) != "MSP_") env.push_back(*e);
  }
  env.push_back(nullptr);
  Child child;
  if (posix_spawn(&child.pid, MSP_BINARY, &actions, nullptr, cargs.data(), env.data()) != 0) child.pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  child.err_fd = fds[0];
  return child;
}

// Reads the child's stderr until `done` says so or the pipe closes; gives up
// after `limit` (a guard against a hung child, not a timing assertion).
std::string ReadUntil(int fd, const std::function<bool(const std::string&)>& done,
                      std::chrono::seconds limit = std::chrono::seconds(120)) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done(text) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

int WaitExit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ServeTest, ServesRestOnAnyPortAndStopsOnSigterm) {
  msp::testing::TempDir dir("msp-serve");
  ASSERT_TRUE(dir.ok());
  Child child = SpawnMsp({"serve", "--data-dir", dir.path() + "/data", "--port", "0", "--api-keys", kKey + "=acme"});
  ASSERT_GT(child.pid, 0);
  const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+))");
  std::smatch m;
  std::string err = ReadUntil(child.err_fd, [&](const std::string& t) { return std::regex_search(t, m, listening); });
  ASSERT_TRUE(std::regex_search(err, m, listening)) << err;
  const int port = std::stoi(m[1].str());
  ASSERT_GT(port, 0);

  httplib::Client client("127.0.0.1", port);
  client.set_tcp_nodelay(true);
  const httplib::Headers auth = {{"Authorization", "Bearer " + kKey}};
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto unauthorized = client.Get("/v1/memories");
  ASSERT_TRUE(unauthorized);
  EXPECT_EQ(unauthorized->status, 401);
  auto write = client.Post("/v1/memories", auth,
                           json{{"text", "The user prefers dark mode in every editor"}, {"tags", {"preference"}}}.dump(),
                           "application/json");
  ASSERT_TRUE(write);
  ASSERT_EQ(write->status, 201) << write->body;
  const std::string id = json::parse(write->body)["id"];
  auto search = client.Post("/v1/search", auth, json{{"query", "dark mode editor"}}.dump(), "application/json");
  ASSERT_TRUE(search);
  ASSERT_EQ(search->status, 200) << search->body;
  const json hits = json::parse(search->body)["hits"];
  ASSERT_GE(hits.size(), 1u);
  EXPECT_EQ(hits[0]["memory"]["id"], id);
  EXPECT_EQ(hits[0]["memory"]["namespace"]["tenant"], "acme");

  ASSERT_EQ(kill(child.pid, SIGTERM), 0);
  err += ReadUntil(child.err_fd, [](const std::string&) { return false; });
  EXPECT_EQ(WaitExit(child.pid), 0) << err;
  close(child.err_fd);
  EXPECT_NE(err.find("SIGTERM"), std::string::npos) << err;
  // The access log is on stderr, one JSON object a line, and never shows the key.
  EXPECT_NE(err.find("\"route\":\"/v1/search\""), std::string::npos) << err;
  EXPECT_EQ(err.find(kKey), std::string::npos);
}

TEST(ServeTest, RefusesToStartWithoutKeys) {
  msp::testing::TempDir dir("msp-serve");
  ASSERT_TRUE(dir.ok());
  Child child = SpawnMsp({"serve", "--data-dir", dir.path() + "/data", "--port", "0"});
  ASSERT_GT(child.pid, 0);
  const std::string err = ReadUntil(child.err_fd, [](const std::string&) { return false; });
  close(child.err_fd);
  EXPECT_EQ(WaitExit(child.pid), 1) << err;
  EXPECT_NE(err.find("server.api_keys"), std::string::npos) << err;
  EXPECT_NE(err.find("server.allow_anonymous"), std::string::npos) << err;
}

TEST(ServeTest, RefusesAnonymousOnANonLoopbackAddress) {
  msp::testing::TempDir dir("msp-serve");
  ASSERT_TRUE(dir.ok());
  Child child = SpawnMsp(
      {"serve", "--data-dir", dir.path() + "/data", "--port", "0", "--allow-anonymous", "true", "--bind", "0.0.0.0"});
  ASSERT_GT(child.pid, 0);
  const std::string err = ReadUntil(child.err_fd, [](const std::string&) { return false; });
  close(child.err_fd);
  EXPECT_EQ(WaitExit(child.pid), 1) << err;
  EXPECT_NE(err.find("loopback"), std::string::npos) << err;
}

}  // namespace
