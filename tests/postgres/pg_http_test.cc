// `msp serve` on PostgreSQL, over real sockets: two HTTP servers, each with
// its own engine and data directory, on one database (a write through one is
// found by a search through the other), and /healthz reporting the store
// down while the database cannot be reached, up again once it can.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "msp/memory.h"
#include "rest/rest_api.h"
#include "server/http_server.h"
#include "tests/postgres/pg_test_util.h"
#include "tests/postgres/tcp_proxy.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using json = nlohmann::json;
using ::msp::testing::kTestPgUnset;
using ::msp::testing::TestPg;

const std::string kKey = "acme-key-0123456789abcdef";

// One `msp serve`: an engine and an HTTP server with the REST API.
struct Server {
  std::unique_ptr<MemoryLayer> engine;
  std::unique_ptr<HttpServer> http;
  std::unique_ptr<httplib::Client> client;
};

class PgHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(TestPg().empty()) << kTestPgUnset;
    schema_ = ::msp::testing::NewSchemaName("http");
    dir_ = ::msp::testing::MakeTestDir("msp-pg-http");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    servers_.clear();
    ::msp::testing::DropSchema(schema_);
    ::msp::testing::RemoveTestDir(dir_);
  }

  // Starts a server named `name` on `postgres_url` (default: the test database).
  Server* Start(const std::string& name, const std::string& postgres_url = "") {
    Options options;
    options.store = ::msp::testing::PgStoreOptions(schema_);
    if (!postgres_url.empty()) options.store.postgres_url = postgres_url;
    options.store.postgres_connect_timeout_ms = 2000;
    options.store.data_dir = dir_ + "/" + name;
    auto engine = MemoryLayer::Open(options);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    if (!engine.ok()) return nullptr;
    ServerOptions so;
    so.port = 0;
    so.threads = 4;
    so.api_keys = {kKey + "=acme"};
    so.access_log = false;
    auto keys = ApiKeys::Load(so.api_keys, so.api_keys_file);
    EXPECT_TRUE(keys.ok()) << keys.status().ToString();
    auto http = HttpServer::Create(so, std::move(keys).value(), &log_);
    EXPECT_TRUE(http.ok()) << http.status().ToString();
    if (!http.ok()) return nullptr;
    auto server = std::make_unique<Server>();
    server->engine = std::move(engine).value();
    server->http = std::move(http).value();
    MountRestApi(*server->http, *server->engine, RestOptions{});
    auto port = server->http->Start();
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    if (!port.ok()) return nullptr;
    server->client = std::make_unique<httplib::Client>("127.0.0.1", *port);
    server->client->set_read_timeout(30, 0);
    servers_.push_back(std::move(server));
    return servers_.back().get();
  }

  static httplib::Headers Auth() { return {{"Authorization", "Bearer " + kKey}}; }

  static std::pair<int, json> Post(Server& s, const std::string& path, const json& body) {
    auto res = s.client->Post(path, Auth(), body.dump(), "application/json");
    if (!res) return {0, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  static std::pair<int, json> Health(Server& s) {
    auto res = s.client->Get("/healthz");
    if (!res) return {0, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  std::string schema_;
  std::string dir_;
  std::ostringstream log_;
  std::vector<std::unique_ptr<Server>> servers_;
};

TEST_F(PgHttpTest, AWriteThroughOneServerIsFoundThroughTheOther) {
  Server* a = Start("a");
  Server* b = Start("b");
  ASSERT_TRUE(a && b);
  auto [written, w] = Post(*a, "/v1/memories",
                           {{"text", "The user prefers dark mode in every editor"}, {"tags", {"preference"}}});
  ASSERT_EQ(written, 201) << w.dump();
  const std::string id = w.value("id", "");
  ASSERT_FALSE(id.empty());

  auto [searched, hits] = Post(*b, "/v1/search", {{"query", "which editor theme does the user like"}, {"top_k", 3}});
  ASSERT_EQ(searched, 200) << hits.dump();
  ASSERT_TRUE(hits.contains("hits") && !hits["hits"].empty()) << hits.dump();
  EXPECT_EQ(hits["hits"][0]["memory"]["id"], id);

  auto [ha, ja] = Health(*a);
  EXPECT_EQ(ha, 200);
  EXPECT_EQ(ja["store"], "up");
}

TEST_F(PgHttpTest, HealthzReportsTheStoreDownWhileTheDatabaseIsUnreachable) {
  const std::string host = ::msp::testing::ConninfoValue(TestPg(), "host");
  const std::string port = ::msp::testing::ConninfoValue(TestPg(), "port");
  auto proxy = ::msp::testing::TcpProxy::Start(host, port.empty() ? 5432 : std::stoi(port));
  ASSERT_NE(proxy, nullptr);
  Server* s = Start("a", ::msp::testing::RewriteConninfo(
                             TestPg(), {{"host", "127.0.0.1"}, {"hostaddr", "127.0.0.1"},
                                        {"port", std::to_string(proxy->port())}}));
  ASSERT_NE(s, nullptr);
  auto [up, up_body] = Health(*s);
  EXPECT_EQ(up, 200);
  EXPECT_EQ(up_body["status"], "ok");
  EXPECT_EQ(up_body["store"], "up");

  proxy->Down();
  auto [down, down_body] = Health(*s);
  EXPECT_EQ(down, 503) << down_body.dump();
  EXPECT_EQ(down_body["status"], "unavailable");
  EXPECT_EQ(down_body["store"], "down");
  // A call that needs the store says so (503), and the server stays up.
  auto [refused, refused_body] = Post(*s, "/v1/search", {{"query", "anything"}});
  EXPECT_EQ(refused, 503) << refused_body.dump();

  ASSERT_TRUE(proxy->Up());
  auto [back, back_body] = Health(*s);
  EXPECT_EQ(back, 200) << back_body.dump();
  EXPECT_EQ(back_body["store"], "up");
  auto [written, w] = Post(*s, "/v1/memories",
                           {{"text", "The user prefers tea over coffee in the afternoon"}, {"tags", {"preference"}}});
  EXPECT_EQ(written, 201) << w.dump();
}

}  // namespace
}  // namespace msp
