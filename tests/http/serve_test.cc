// `msp serve` as a real process: started on port 0, it prints the address it
// listens on; a write and a search go through it over HTTP; SIGTERM stops it
// cleanly (exit 0). Without API keys it refuses to start.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/child_process.h"
#include "tests/support/test_util.h"

namespace {

using msp::testing::ChildProcess;
using nlohmann::json;

const std::string kKey = "serve-test-key-0123456789";

ChildProcess SpawnMsp(std::vector<std::string> args) {
  args.insert(args.begin(), MSP_BINARY);
  return msp::testing::SpawnWithStderr(std::move(args));
}

// Everything the child writes until it exits.
std::string ReadToEnd(ChildProcess& child) {
  msp::testing::ReadStderrUntil(child, [](const std::string&) { return false; });
  return child.err;
}

TEST(ServeTest, ServesRestOnAnyPortAndStopsOnSigterm) {
  msp::testing::TempDir dir("msp-serve");
  ASSERT_TRUE(dir.ok());
  ChildProcess child =
      SpawnMsp({"serve", "--data-dir", dir.path() + "/data", "--port", "0", "--api-keys", kKey + "=acme"});
  ASSERT_GT(child.pid, 0);
  const int port = msp::testing::WaitForListening(child);
  ASSERT_GT(port, 0) << child.err;

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
  const std::string err = ReadToEnd(child);
  EXPECT_EQ(msp::testing::Stop(child), 0) << err;
  EXPECT_NE(err.find("SIGTERM"), std::string::npos) << err;
  // The access log is on stderr, one JSON object a line, and never shows the key.
  EXPECT_NE(err.find("\"route\":\"/v1/search\""), std::string::npos) << err;
  EXPECT_EQ(err.find(kKey), std::string::npos);
}

TEST(ServeTest, RefusesToStartWithoutKeys) {
  msp::testing::TempDir dir("msp-serve");
  ASSERT_TRUE(dir.ok());
  ChildProcess child = SpawnMsp({"serve", "--data-dir", dir.path() + "/data", "--port", "0"});
  ASSERT_GT(child.pid, 0);
  const std::string err = ReadToEnd(child);
  EXPECT_EQ(msp::testing::Stop(child), 1) << err;
  EXPECT_NE(err.find("server.api_keys"), std::string::npos) << err;
  EXPECT_NE(err.find("server.allow_anonymous"), std::string::npos) << err;
}

TEST(ServeTest, RefusesAnonymousOnANonLoopbackAddress) {
  msp::testing::TempDir dir("msp-serve");
  ASSERT_TRUE(dir.ok());
  ChildProcess child = SpawnMsp(
      {"serve", "--data-dir", dir.path() + "/data", "--port", "0", "--allow-anonymous", "true", "--bind", "0.0.0.0"});
  ASSERT_GT(child.pid, 0);
  const std::string err = ReadToEnd(child);
  EXPECT_EQ(msp::testing::Stop(child), 1) << err;
  EXPECT_NE(err.find("loopback"), std::string::npos) << err;
}

// A keys file its group or others can read is used, with one clear warning;
// a private one gets none. (Both stop after reading the keys: keys and
// allow_anonymous together are refused, exit 2.)
TEST(ServeTest, WarnsOnceAboutAKeysFileOthersCanRead) {
  msp::testing::TempDir dir("msp-serve");
  ASSERT_TRUE(dir.ok());
  const std::string keys = dir.path() + "/keys";
  for (const mode_t mode : {0644, 0600}) {
    {
      std::ofstream out(keys, std::ios::trunc);
      out << kKey << " acme\n";
    }
    ASSERT_EQ(chmod(keys.c_str(), mode), 0);
    ChildProcess child = SpawnMsp({"serve", "--data-dir", dir.path() + "/data", "--port", "0", "--api-keys-file",
                                   keys, "--allow-anonymous", "true"});
    ASSERT_GT(child.pid, 0);
    const std::string err = ReadToEnd(child);
    EXPECT_EQ(msp::testing::Stop(child), 2) << err;
    EXPECT_NE(err.find("allow_anonymous is set but API keys"), std::string::npos) << err;
    const size_t at = err.find("warning: server.api_keys_file");
    if (mode == 0644) {
      ASSERT_NE(at, std::string::npos) << err;
      EXPECT_NE(err.find("mode 0644"), std::string::npos) << err;
      EXPECT_NE(err.find("chmod 600 " + keys), std::string::npos) << err;
      EXPECT_EQ(err.find("warning: server.api_keys_file", at + 1), std::string::npos) << "warned twice: " << err;
    } else {
      EXPECT_EQ(at, std::string::npos) << err;
    }
  }
}

}  // namespace
