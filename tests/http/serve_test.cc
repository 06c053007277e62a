// `msp serve` as a real process: started on port 0, it prints the address it
// listens on; a write and a search go through it over HTTP; SIGTERM stops it
// cleanly (exit 0). Without API keys it refuses to start.
#include <signal.h>

#include <gtest/gtest.h>

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

}  // namespace
