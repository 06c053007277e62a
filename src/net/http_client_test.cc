// HttpClient against the scripted OpenAI stub: URL parsing, headers,
// retries on 429/5xx/closed connections/malformed JSON, Retry-After, the
// retry budget, timeouts, and error mapping.
#include "net/http_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <vector>

#include "tests/support/openai_stub.h"
#include "tests/support/socket_probe.h"
#include "tests/support/test_util.h"

namespace msp::net {
namespace {

using msp::testing::OpenAiStub;
using msp::testing::StubReply;

constexpr const char* kPath = "/v1/things";
constexpr const char* kSecret = "sk-test-secret-123";

// Records the waits instead of sleeping.
struct SleepLog {
  std::mutex mu;
  std::vector<long long> waits_ms;
  std::function<void(std::chrono::milliseconds)> Fn() {
    return [this](std::chrono::milliseconds d) {
      std::lock_guard<std::mutex> lock(mu);
      waits_ms.push_back(d.count());
    };
  }
};

HttpClientOptions Opts(const OpenAiStub& stub, SleepLog* log) {
  HttpClientOptions o;
  o.base_url = stub.base_url();
  o.api_key = kSecret;
  o.connect_timeout_ms = 2000;
  o.read_timeout_ms = 5000;
  o.max_retries = 3;
  o.initial_backoff_ms = 100;
  o.max_backoff_ms = 1000;
  o.retry_budget_ms = 60000;
  o.sleep = log->Fn();
  return o;
}

TEST(ParseBaseUrlTest, AcceptsCommonForms) {
  ASSERT_OK_AND_ASSIGN(BaseUrl a, ParseBaseUrl("http://localhost:11434/v1"));
  EXPECT_EQ(a.scheme, "http");
  EXPECT_EQ(a.host, "localhost");
  EXPECT_EQ(a.port, 11434);
  EXPECT_EQ(a.path_prefix, "/v1");
  EXPECT_EQ(a.Join("/embeddings"), "http://localhost:11434/v1/embeddings");

  ASSERT_OK_AND_ASSIGN(BaseUrl b, ParseBaseUrl("HTTPS://api.openai.com/v1/"));
  EXPECT_EQ(b.scheme, "https");
  EXPECT_EQ(b.port, 443);
  EXPECT_EQ(b.path_prefix, "/v1");

  ASSERT_OK_AND_ASSIGN(BaseUrl c, ParseBaseUrl("http://10.0.0.2"));
  EXPECT_EQ(c.port, 80);
  EXPECT_EQ(c.path_prefix, "");

  ASSERT_OK_AND_ASSIGN(BaseUrl d, ParseBaseUrl("http://[::1]:8080/api/v1"));
  EXPECT_EQ(d.host, "[::1]");
  EXPECT_EQ(d.port, 8080);
  EXPECT_EQ(d.path_prefix, "/api/v1");
}

TEST(ParseBaseUrlTest, RejectsBadUrls) {
  for (const char* bad : {"localhost:11434/v1", "ftp://host/v1", "http://", "http://host:0",
                          "http://host:70000", "http://host:abc/v1", "http://host:/v1",
                          "http://host/v1?x=1", "http://user@host/v1", "http://[::1/v1"}) {
    Result<BaseUrl> r = ParseBaseUrl(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

TEST(HttpClientTest, CreateRejectsBadOptions) {
  HttpClientOptions o;
  o.base_url = "not a url";
  EXPECT_EQ(HttpClient::Create(o).status().code(), StatusCode::kInvalidArgument);
  o.base_url = "http://localhost:1/v1";
  o.read_timeout_ms = 0;
  EXPECT_EQ(HttpClient::Create(o).status().code(), StatusCode::kInvalidArgument);
  o.read_timeout_ms = 10;
  o.max_retries = -1;
  EXPECT_EQ(HttpClient::Create(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(HttpClientTest, PostsJsonWithBearerAndPathPrefix) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kPath, StubReply::Json({{"answer", 42}}));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK_AND_ASSIGN(nlohmann::json reply, client->PostJson("/things", {{"q", "hi"}}));
  EXPECT_EQ(reply["answer"], 42);
  auto requests = stub.Requests(kPath);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].headers["authorization"], std::string("Bearer ") + kSecret);
  EXPECT_EQ(requests[0].headers["content-type"], "application/json");
  EXPECT_EQ(requests[0].json["q"], "hi");
  EXPECT_TRUE(log.waits_ms.empty());
}

TEST(HttpClientTest, ConnectsWithNoDelay) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  // While the stub answers, the client's end of the connection is open in
  // this process: its TCP_NODELAY is read there.
  std::mutex mu;
  std::vector<bool> client_nodelay;
  stub.SetDefault(kPath, [&](const msp::testing::StubRequest&) {
    std::lock_guard<std::mutex> lock(mu);
    for (const msp::testing::TcpSocketInfo& s : msp::testing::TcpSocketsOfThisProcess()) {
      if (s.peer_port == stub.port()) client_nodelay.push_back(s.nodelay);
    }
    return StubReply::Json({{"ok", true}});
  });
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK(client->PostJson("/things", nlohmann::json::object()).status());
  ASSERT_OK(client->Get("/things").status());
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(client_nodelay.size(), 2u);
  EXPECT_TRUE(client_nodelay[0]);
  EXPECT_TRUE(client_nodelay[1]);
}

TEST(HttpClientTest, NoAuthorizationHeaderWithoutKey) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kPath, StubReply::Json({{"ok", true}}));
  SleepLog log;
  HttpClientOptions o = Opts(stub, &log);
  o.api_key.clear();
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(o));
  ASSERT_OK(client->PostJson("/things", nlohmann::json::object()).status());
  EXPECT_EQ(stub.Requests(kPath).at(0).headers.count("authorization"), 0u);
}

TEST(HttpClientTest, RetriesOn429HonouringRetryAfter) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  StubReply limited = StubReply::Error(429, "slow down");
  limited.headers.push_back({"Retry-After", "3"});
  stub.Enqueue(kPath, limited);
  stub.Enqueue(kPath, StubReply::Json({{"ok", true}}));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK_AND_ASSIGN(HttpResponse r, client->Post("/things", "{}"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(stub.RequestCount(kPath), 2u);
  ASSERT_EQ(log.waits_ms.size(), 1u);
  EXPECT_EQ(log.waits_ms[0], 3000);  // Retry-After beats the 100 ms backoff
}

TEST(HttpClientTest, RetriesOn500WithGrowingJitteredBackoff) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kPath, StubReply::Error(500, "boom"));
  stub.Enqueue(kPath, StubReply::Error(502, "bad gateway"));
  stub.Enqueue(kPath, StubReply::Error(503, "busy"));
  stub.Enqueue(kPath, StubReply::Json({{"ok", true}}));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK_AND_ASSIGN(nlohmann::json j, client->PostJson("/things", nlohmann::json::object()));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(stub.RequestCount(kPath), 4u);
  ASSERT_EQ(log.waits_ms.size(), 3u);
  // Steps 100, 200, 400 ms; equal jitter keeps each wait in [step/2, step].
  const long long steps[] = {100, 200, 400};
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(log.waits_ms[i], steps[i] / 2) << i;
    EXPECT_LE(log.waits_ms[i], steps[i]) << i;
  }
}

TEST(HttpClientTest, BackoffIsCappedAtMaxBackoff) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  for (int i = 0; i < 6; ++i) stub.Enqueue(kPath, StubReply::Error(500, "boom"));
  SleepLog log;
  HttpClientOptions o = Opts(stub, &log);
  o.max_retries = 5;
  o.max_backoff_ms = 250;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(o));
  EXPECT_FALSE(client->Post("/things", "{}").ok());
  ASSERT_EQ(log.waits_ms.size(), 5u);
  for (long long w : log.waits_ms) EXPECT_LE(w, 250);
}

TEST(HttpClientTest, ExhaustedRetriesAreUnavailableNamingUrlAndStatus) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  for (int i = 0; i < 4; ++i) stub.Enqueue(kPath, StubReply::Error(503, "model loading"));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  Result<nlohmann::json> r = client->PostJson("/things", nlohmann::json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find(stub.base_url() + "/things"), std::string::npos) << m;
  EXPECT_NE(m.find("4 attempt"), std::string::npos) << m;
  EXPECT_NE(m.find("HTTP 503"), std::string::npos) << m;
  EXPECT_NE(m.find("model loading"), std::string::npos) << m;
  EXPECT_EQ(m.find(kSecret), std::string::npos) << m;
  EXPECT_EQ(stub.RequestCount(kPath), 4u);
}

TEST(HttpClientTest, RetryAfterBeyondBudgetGivesUp) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  StubReply limited = StubReply::Error(429, "quota");
  limited.headers.push_back({"Retry-After", "100"});
  stub.Enqueue(kPath, limited);
  stub.Enqueue(kPath, StubReply::Json({{"ok", true}}));
  SleepLog log;
  HttpClientOptions o = Opts(stub, &log);
  o.retry_budget_ms = 1000;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(o));
  Result<HttpResponse> r = client->Post("/things", "{}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("retry budget"), std::string::npos) << r.status().message();
  EXPECT_EQ(stub.RequestCount(kPath), 1u);
  EXPECT_TRUE(log.waits_ms.empty());
}

TEST(HttpClientTest, ClientErrorsAreNotRetried) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kPath, StubReply::Error(400, "response_format is not supported"));
  stub.Enqueue(kPath, StubReply::Error(400, "again"));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  // Post hands the 400 back so the caller can read it.
  ASSERT_OK_AND_ASSIGN(HttpResponse raw, client->Post("/things", "{}"));
  EXPECT_EQ(raw.status, 400);
  EXPECT_EQ(ErrorSnippet(raw.body), "response_format is not supported");
  // PostJson turns it into InvalidArgument with the server's message.
  Result<nlohmann::json> r = client->PostJson("/things", nlohmann::json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("again"), std::string::npos);
  EXPECT_EQ(stub.RequestCount(kPath), 2u);
  EXPECT_TRUE(log.waits_ms.empty());
}

TEST(HttpClientTest, UnauthorizedIsFailedPreconditionWithoutTheKey) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kPath, StubReply::Error(401, "Incorrect API key provided"));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  Result<nlohmann::json> r = client->PostJson("/things", nlohmann::json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("Incorrect API key"), std::string::npos);
  EXPECT_EQ(r.status().message().find(kSecret), std::string::npos);
}

TEST(HttpClientTest, MalformedJsonIsRetriedThenReported) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kPath, StubReply::Raw(200, "{\"data\": [1, 2", "application/json"));
  stub.Enqueue(kPath, StubReply::Json({{"ok", true}}));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK_AND_ASSIGN(nlohmann::json j, client->PostJson("/things", nlohmann::json::object()));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(stub.RequestCount(kPath), 2u);

  for (int i = 0; i < 4; ++i) stub.Enqueue(kPath, StubReply::Raw(200, "<html>proxy</html>"));
  Result<nlohmann::json> r = client->PostJson("/things", nlohmann::json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("malformed JSON"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("<html>proxy"), std::string::npos) << r.status().message();
  EXPECT_EQ(stub.RequestCount(kPath), 6u);
}

TEST(HttpClientTest, ClosedConnectionIsRetried) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kPath, StubReply::Close());
  stub.Enqueue(kPath, StubReply::Json({{"ok", true}}));
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK_AND_ASSIGN(HttpResponse r, client->Post("/things", "{}"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.attempts, 2);

  stub.Enqueue(kPath, StubReply::Close());
  HttpClientOptions o = Opts(stub, &log);
  o.max_retries = 0;
  ASSERT_OK_AND_ASSIGN(auto once, HttpClient::Create(o));
  Result<HttpResponse> failed = once->Post("/things", "{}");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.status().message().find("connection closed"), std::string::npos)
      << failed.status().message();
}

TEST(HttpClientTest, ReadTimeoutIsUnavailable) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  StubReply slow = StubReply::Json({{"ok", true}});
  slow.delay_ms = 60000;  // cut short when the stub stops
  stub.Enqueue(kPath, slow);
  SleepLog log;
  HttpClientOptions o = Opts(stub, &log);
  o.read_timeout_ms = 200;
  o.max_retries = 0;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(o));
  Result<HttpResponse> r = client->Post("/things", "{}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos) << r.status().message();
  stub.Stop();
}

TEST(HttpClientTest, RefusedConnectionIsRetriedThenUnavailable) {
  int port = 0;
  {
    OpenAiStub gone;
    ASSERT_TRUE(gone.ok());
    port = gone.port();
  }
  SleepLog log;
  HttpClientOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.max_retries = 2;
  o.initial_backoff_ms = 10;
  o.sleep = log.Fn();
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(o));
  Result<HttpResponse> r = client->Post("/things", "{}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("could not connect"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("3 attempt"), std::string::npos) << r.status().message();
  EXPECT_EQ(log.waits_ms.size(), 2u);
}

TEST(HttpClientTest, GetReadsModels) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK_AND_ASSIGN(HttpResponse r, client->Get("/models"));
  EXPECT_EQ(r.status, 200);
  nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["data"][0]["id"], "stub-model");
}

TEST(OpenAiStubTest, DefaultEmbeddingsAreDeterministicUnitVectors) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.set_embedding_dimension(16);
  SleepLog log;
  ASSERT_OK_AND_ASSIGN(auto client, HttpClient::Create(Opts(stub, &log)));
  ASSERT_OK_AND_ASSIGN(nlohmann::json j,
                       client->PostJson("/embeddings", {{"model", "m"}, {"input", {"a cat", "a dog"}}}));
  ASSERT_EQ(j["data"].size(), 2u);
  std::vector<float> v0 = j["data"][0]["embedding"].get<std::vector<float>>();
  EXPECT_EQ(v0, msp::testing::StubEmbedding("a cat", 16));
  EXPECT_NE(v0, msp::testing::StubEmbedding("a dog", 16));
  double norm = 0;
  for (float x : v0) norm += static_cast<double>(x) * x;
  EXPECT_NEAR(norm, 1.0, 1e-5);
  EXPECT_EQ(j["model"], "m");
}

}  // namespace
}  // namespace msp::net
