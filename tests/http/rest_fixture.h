// The fixture of the REST tests over real sockets: an HttpServer with
// MountRestApi (and MCP over HTTP at /mcp, authenticated by the same keys)
// runs in-process on an any-port listener over a temporary data directory,
// and httplib::Client talks to it.
#ifndef MSP_TESTS_HTTP_REST_FIXTURE_H_
#define MSP_TESTS_HTTP_REST_FIXTURE_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "mcp/mcp_http.h"
#include "msp/memory.h"
#include "rest/rest_api.h"
#include "server/http_server.h"
#include "tests/support/test_util.h"

namespace msp {

// Keys of the tests: two of tenant alpha (the second with clearance 1), one
// of tenant beta.
inline const std::string kKeyA = "alpha-key-0123456789";
inline const std::string kKeyA2 = "alpha-second-key-0123";
inline const std::string kKeyB = "beta-key-0123456789ab";
inline constexpr size_t kMaxBody = 64 * 1024;

struct Answer {
  int status = 0;  // 0: no answer (transport error)
  std::string body;
  nlohmann::json j;  // the body parsed, or discarded
  httplib::Headers headers;

  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  std::string ErrorCode() const { return j.is_object() && j.contains("error") ? j["error"].value("code", "") : ""; }
  std::string ErrorMessage() const {
    return j.is_object() && j.contains("error") ? j["error"].value("message", "") : "";
  }
};

class RestFixture : public ::testing::Test {
 protected:
  using json = nlohmann::json;

  void SetUp() override {
    dir_ = testing::MakeTestDir("msp-rest-http");
    ASSERT_FALSE(dir_.empty());
    Options options;
    options.store.data_dir = dir_ + "/data";
    options.store.synchronous = "normal";
    std::filesystem::create_directories(options.store.data_dir);
    ASSERT_OK_AND_ASSIGN(engine_, MemoryLayer::Open(options));
    ServerOptions so;
    so.port = 0;
    so.threads = 4;
    so.max_body_bytes = kMaxBody;
    so.api_keys = {kKeyA + "=alpha", kKeyA2 + "=alpha:1", kKeyB + "=beta"};
    Configure(so);
    StartServer(so);
  }

  void TearDown() override {
    client_.reset();
    server_.reset();
    engine_.reset();
    testing::RemoveTestDir(dir_);
  }

  // Lets a test class change the server's options before it starts.
  virtual void Configure(ServerOptions&) {}

  void StartServer(const ServerOptions& so) {
    auto keys = ApiKeys::Load(so.api_keys, so.api_keys_file);
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    auto server = HttpServer::Create(so, std::move(keys).value(), &log_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    RestOptions rest;
    rest.tokens.counter = "estimate";
    MountRestApi(*server_, *engine_, rest);
    mcp::McpHttpOptions mcp_options;
    mcp_options.tokens.counter = "estimate";
    HttpServer* http = server_.get();
    auto authenticate = [http](const httplib::Request& req) -> Result<mcp::McpCaller> {
      std::optional<ApiPrincipal> key = http->Identify(req);
      if (!key) return Status::InvalidArgument("a valid API key is required");
      return mcp::McpCaller{key->tenant, "mcp", key->clearance};
    };
    ASSERT_OK(mcp::MountMcpHttp(server_->http(), *engine_, mcp_options, authenticate));
    server_->DeclareRoute("/mcp");
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
    client_ = NewClient();
  }

  std::unique_ptr<httplib::Client> NewClient() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_read_timeout(60, 0);
    return c;
  }

  static httplib::Headers Auth(const std::string& key, httplib::Headers extra = {}) {
    if (!key.empty()) extra.emplace("Authorization", "Bearer " + key);
    return extra;
  }

  static Answer From(const httplib::Result& res) {
    Answer a;
    if (!res) return a;
    a.status = res->status;
    a.body = res->body;
    a.headers = res->headers;
    a.j = json::parse(a.body, nullptr, /*allow_exceptions=*/false);
    return a;
  }

  Answer Get(const std::string& path, const std::string& key, httplib::Client* c = nullptr) {
    return From((c ? c : client_.get())->Get(path.c_str(), Auth(key)));
  }
  Answer Post(const std::string& path, const std::string& key, const std::string& body,
              const std::string& type = "application/json", httplib::Client* c = nullptr) {
    return From((c ? c : client_.get())->Post(path.c_str(), Auth(key), body, type.c_str()));
  }
  Answer PostJson(const std::string& path, const std::string& key, const json& body) {
    return Post(path, key, body.dump());
  }
  Answer PutJson(const std::string& path, const std::string& key, const json& body) {
    return From(client_->Put(path.c_str(), Auth(key), body.dump(), "application/json"));
  }
  Answer Delete(const std::string& path, const std::string& key) {
    return From(client_->Delete(path.c_str(), Auth(key)));
  }

  // Writes a decision through POST /v1/memories; returns its id.
  std::string WriteDecision(const std::string& key, const std::string& text) {
    Answer a = PostJson("/v1/memories", key, {{"kind", "decision"}, {"text", text}, {"tags", {"goal"}}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.j.is_object() ? a.j.value("id", "") : "";
  }

  size_t CountRecords(const std::string& key) {
    Answer a = Get("/v1/memories?limit=1000&include_superseded=true&include_expired=true", key);
    EXPECT_EQ(a.status, 200) << a.body;
    return a.j.is_object() ? a.j["memories"].size() : 0;
  }

  std::string dir_;
  std::ostringstream log_;
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
};

}  // namespace msp

#endif  // MSP_TESTS_HTTP_REST_FIXTURE_H_
