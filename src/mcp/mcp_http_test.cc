// Tests of the Streamable HTTP transport over a real socket on 127.0.0.1.
#include "mcp/mcp_http.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "mcp/jsonrpc.h"
#include "tests/support/test_util.h"

namespace msp::mcp {
namespace {

using nlohmann::json;

class McpHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Options options;
    options.store.data_dir = dir_.path() + "/data";
    options.store.synchronous = "normal";
    auto engine = MemoryLayer::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
  }
  void TearDown() override {
    if (server_) {
      server_->stop();
      if (thread_.joinable()) thread_.join();
    }
  }

  void Start(McpAuthenticator auth = nullptr) {
    McpHttpOptions o;
    o.mcp.allowed_origins = {"https://app.example.com"};
    server_ = std::make_unique<httplib::Server>();
    server_->set_tcp_nodelay(true);
    ASSERT_OK(MountMcpHttp(*server_, *engine_, o, std::move(auth)));
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_tcp_nodelay(true);
  }

  httplib::Result Post(const json& body, httplib::Headers headers = {}) {
    return client_->Post("/mcp", headers, body.dump(), "application/json");
  }

  // Opens a session; returns its id.
  std::string Initialize(httplib::Headers headers = {}) {
    json init = {{"jsonrpc", "2.0"},
                 {"id", 0},
                 {"method", "initialize"},
                 {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}}}};
    auto r = Post(init, headers);
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(json::parse(r->body)["result"]["protocolVersion"], "2025-11-25");
    return r->get_header_value("Mcp-Session-Id");
  }

  static json Ping(int id) { return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}; }

  testing::TempDir dir_{"mcp-http"};
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(McpHttpTest, SessionLifecycle) {
  Start();
  const std::string sid = Initialize();
  ASSERT_GE(sid.size(), 32u);
  const httplib::Headers with = {{"Mcp-Session-Id", sid}};

  auto r = Post(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, with);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_TRUE(r->body.empty());

  r = Post(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}}, with);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  EXPECT_GE(json::parse(r->body)["result"]["tools"].size(), 13u);

  r = Post(Ping(2));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);  // no session header
  r = Post(Ping(3), {{"Mcp-Session-Id", "no-such-session"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);

  r = client_->Get("/mcp", with);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);

  r = client_->Delete("/mcp");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  r = client_->Delete("/mcp", with);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204);
  r = Post(Ping(4), with);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);  // the session ended

  // Two sessions are independent.
  EXPECT_NE(Initialize(), Initialize());
}

TEST_F(McpHttpTest, RefusesBadRequests) {
  Start();
  const std::string sid = Initialize();
  const httplib::Headers with = {{"Mcp-Session-Id", sid}};
  auto r = client_->Post("/mcp", with, "[" + Ping(1).dump() + "]", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], kInvalidRequest);

  r = client_->Post("/mcp", with, "{oops", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], kParseError);

  r = client_->Post("/mcp", with, Ping(2).dump(), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);

  httplib::Headers version = with;
  version.emplace("MCP-Protocol-Version", "1999-01-01");
  r = Post(Ping(3), version);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);

  httplib::Headers good_version = with;
  good_version.emplace("MCP-Protocol-Version", "2025-06-18");
  r = Post(Ping(0), good_version);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["id"], json(0));

  r = Post(json{{"jsonrpc", "2.0"}, {"id", 5}, {"method", "server/discover"}}, with);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], kMethodNotFound);
}

TEST_F(McpHttpTest, ValidatesOrigin) {
  Start();
  const std::string sid = Initialize();
  auto r = Post(Ping(1), {{"Mcp-Session-Id", sid}, {"Origin", "https://evil.example"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  r = client_->Get("/mcp", {{"Origin", "https://evil.example"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  r = Post(Ping(2), {{"Mcp-Session-Id", sid}, {"Origin", "http://localhost:5173"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = Post(Ping(3), {{"Mcp-Session-Id", sid}, {"Origin", "https://app.example.com"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(Initialize({{"Origin", "http://127.0.0.1:9000"}}).size() > 0);
}

TEST_F(McpHttpTest, SessionsBelongToTheCallersTenant) {
  Start([](const httplib::Request& req) -> Result<McpCaller> {
    const std::string key = req.get_header_value("Authorization");
    if (key == "Bearer key-a") return McpCaller{"tenant-a", "alice", std::nullopt};
    if (key == "Bearer key-b") return McpCaller{"tenant-b", "bob", std::nullopt};
    return Status::NotFound("unknown API key");
  });
  json init = {{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "initialize"},
               {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}}}};
  auto r = Post(init);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  const std::string sid = Initialize({{"Authorization", "Bearer key-a"}});
  ASSERT_FALSE(sid.empty());
  // Tenant b's key cannot use tenant a's session.
  r = Post(Ping(2), {{"Mcp-Session-Id", sid}, {"Authorization", "Bearer key-b"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  // Writes land in the caller's tenant.
  const json call = json::parse(R"({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
      "name": "create_entities",
      "arguments": {"entities": [{"name": "X", "entityType": "t", "observations": []}]}}})");
  r = Post(call, {{"Mcp-Session-Id", sid}, {"Authorization", "Bearer key-a"}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["result"]["isError"], false);
  Namespace a;
  a.tenant = "tenant-a";
  ListRequest list;
  list.scope = a;
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> records, engine_->List(list));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind, Kind::kEntity);
  Namespace b;
  b.tenant = "tenant-b";
  list.scope = b;
  ASSERT_OK_AND_ASSIGN(records, engine_->List(list));
  EXPECT_TRUE(records.empty());
}

}  // namespace
}  // namespace msp::mcp
