// OpenAiEmbedder and the embedder factory against the scripted OpenAI stub:
// batching, order by index, normalisation, retries on 429 and 5xx, malformed
// and wrong-shaped replies, timeouts, and configuration errors.
#include "provider/openai_embedder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "provider/embedder_factory.h"
#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using msp::testing::kEmbeddingsPath;
using msp::testing::OpenAiStub;
using msp::testing::StubEmbedding;
using msp::testing::StubReply;

constexpr int kDim = 8;

// Counts the waits between retries instead of sleeping.
struct SleepLog {
  std::mutex mu;
  int waits = 0;
  std::function<void(std::chrono::milliseconds)> Fn() {
    return [this](std::chrono::milliseconds) {
      std::lock_guard<std::mutex> lock(mu);
      ++waits;
    };
  }
};

EmbedderOptions Opts(const OpenAiStub& stub) {
  EmbedderOptions o;
  o.provider = EmbedderProvider::kOpenai;
  o.base_url = stub.base_url();
  o.model = "stub-model";
  o.dimension = kDim;
  o.batch_size = 4;
  o.timeout_ms = 5000;
  o.max_retries = 2;
  return o;
}

std::unique_ptr<OpenAiEmbedder> Make(const EmbedderOptions& o, SleepLog* log) {
  auto e = OpenAiEmbedder::Create(o, log->Fn());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

std::vector<std::string> Texts(int n) {
  std::vector<std::string> t;
  for (int i = 0; i < n; ++i) t.push_back("text number " + std::to_string(i) + " about topic " + std::to_string(i % 3));
  return t;
}

void ExpectNear(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << "component " << i;
}

std::string Message(const Status& s) { return s.message(); }

TEST(OpenAiEmbedderTest, IdNamesProviderModelAndDimension) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  auto e = Make(Opts(stub), &log);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->id(), "openai:stub-model:8");
  EXPECT_EQ(e->dimension(), kDim);
  ASSERT_OK_AND_ASSIGN(auto vecs, e->Embed({"one"}));
  EXPECT_EQ(vecs.at(0).size(), static_cast<size_t>(kDim));
}

TEST(OpenAiEmbedderTest, BatchesRequestsAndKeepsInputOrder) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.set_embedding_dimension(kDim);
  SleepLog log;
  auto e = Make(Opts(stub), &log);
  ASSERT_NE(e, nullptr);
  const std::vector<std::string> texts = Texts(10);
  ASSERT_OK_AND_ASSIGN(auto vecs, e->Embed(texts));
  ASSERT_EQ(vecs.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) ExpectNear(vecs[i], StubEmbedding(texts[i], kDim));
  // ceil(10 / 4) = 3 requests of 4, 4 and 2 inputs, in order, naming the model.
  const auto requests = stub.Requests(kEmbeddingsPath);
  ASSERT_EQ(requests.size(), 3u);
  const std::vector<size_t> sizes = {4, 4, 2};
  size_t next = 0;
  for (size_t r = 0; r < requests.size(); ++r) {
    EXPECT_EQ(requests[r].method, "POST");
    EXPECT_EQ(requests[r].json["model"], "stub-model");
    ASSERT_TRUE(requests[r].json["input"].is_array());
    ASSERT_EQ(requests[r].json["input"].size(), sizes[r]);
    for (const auto& t : requests[r].json["input"]) EXPECT_EQ(t, texts[next++]);
  }
  EXPECT_EQ(log.waits, 0);
}

TEST(OpenAiEmbedderTest, ExactMultipleOfBatchSizeMakesNoEmptyRequest) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  auto e = Make(Opts(stub), &log);
  ASSERT_NE(e, nullptr);
  ASSERT_OK_AND_ASSIGN(auto vecs, e->Embed(Texts(8)));
  EXPECT_EQ(vecs.size(), 8u);
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 2u);
  ASSERT_OK_AND_ASSIGN(auto none, e->Embed({}));
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 2u);
}

TEST(OpenAiEmbedderTest, SendsBearerKeyWhenConfigured) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  EmbedderOptions o = Opts(stub);
  o.api_key = "sk-embed-test";
  auto e = Make(o, &log);
  ASSERT_NE(e, nullptr);
  ASSERT_OK(e->Embed({"hello there"}).status());
  auto requests = stub.Requests(kEmbeddingsPath);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].headers["authorization"], "Bearer sk-embed-test");
  EXPECT_EQ(requests[0].path, "/v1/embeddings");
}

TEST(OpenAiEmbedderTest, OrdersByIndexAndNormalises) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  EmbedderOptions o = Opts(stub);
  o.dimension = 2;
  auto e = Make(o, &log);
  ASSERT_NE(e, nullptr);
  // The server answers out of order and with vectors that are not unit length.
  stub.Enqueue(kEmbeddingsPath,
               StubReply::Json({{"object", "list"},
                                {"data", {{{"index", 1}, {"embedding", {0.0, 5.0}}},
                                          {{"index", 0}, {"embedding", {3.0, 4.0}}}}}}));
  ASSERT_OK_AND_ASSIGN(auto vecs, e->Embed({"first", "second"}));
  ASSERT_EQ(vecs.size(), 2u);
  ExpectNear(vecs[0], {0.6f, 0.8f});
  ExpectNear(vecs[1], {0.0f, 1.0f});
}

TEST(OpenAiEmbedderTest, BlankTextsGetZeroVectorsAndAreNotSent) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  auto e = Make(Opts(stub), &log);
  ASSERT_NE(e, nullptr);
  ASSERT_OK_AND_ASSIGN(auto vecs, e->Embed({"", "real words here", " \n\t"}));
  ASSERT_EQ(vecs.size(), 3u);
  ExpectNear(vecs[0], std::vector<float>(kDim, 0.0f));
  ExpectNear(vecs[1], StubEmbedding("real words here", kDim));
  ExpectNear(vecs[2], std::vector<float>(kDim, 0.0f));
  auto requests = stub.Requests(kEmbeddingsPath);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].json["input"], nlohmann::json::array({"real words here"}));
  // Only blank texts: no request at all.
  ASSERT_OK_AND_ASSIGN(auto blank, e->Embed({" "}));
  ExpectNear(blank[0], std::vector<float>(kDim, 0.0f));
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 1u);
}

TEST(OpenAiEmbedderTest, RetriesA429ThenSucceeds) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  auto e = Make(Opts(stub), &log);
  ASSERT_NE(e, nullptr);
  stub.Enqueue(kEmbeddingsPath, StubReply::Error(429, "rate limited, slow down"));
  ASSERT_OK_AND_ASSIGN(auto vecs, e->Embed({"the cat sat"}));
  ExpectNear(vecs[0], StubEmbedding("the cat sat", kDim));
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 2u);
  EXPECT_EQ(log.waits, 1);
}

TEST(OpenAiEmbedderTest, Exhausted500sAreAClearError) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  auto e = Make(Opts(stub), &log);  // max_retries 2: three attempts
  ASSERT_NE(e, nullptr);
  for (int i = 0; i < 3; ++i) stub.Enqueue(kEmbeddingsPath, StubReply::Error(500, "model crashed"));
  auto r = e->Embed({"anything at all"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  const std::string m = Message(r.status());
  EXPECT_NE(m.find("/v1/embeddings"), std::string::npos) << m;
  EXPECT_NE(m.find("3 attempt"), std::string::npos) << m;
  EXPECT_NE(m.find("500"), std::string::npos) << m;
  EXPECT_NE(m.find("model crashed"), std::string::npos) << m;
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 3u);
  EXPECT_EQ(stub.Pending(kEmbeddingsPath), 0u);
}

TEST(OpenAiEmbedderTest, MalformedJsonIsRetriedThenReported) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  auto e = Make(Opts(stub), &log);
  ASSERT_NE(e, nullptr);
  // Once malformed, then fine: the retry hides it.
  stub.Enqueue(kEmbeddingsPath, StubReply::Raw(200, "{\"data\": [", "application/json"));
  ASSERT_OK(e->Embed({"one text"}).status());
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 2u);
  // Always malformed: reported.
  for (int i = 0; i < 3; ++i) stub.Enqueue(kEmbeddingsPath, StubReply::Raw(200, "<html>proxy error</html>", "text/html"));
  auto r = e->Embed({"one text"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(Message(r.status()).find("malformed JSON"), std::string::npos) << Message(r.status());
}

TEST(OpenAiEmbedderTest, WrongDimensionNamesBothSizesAndTheSetting) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.set_embedding_dimension(16);
  SleepLog log;
  auto e = Make(Opts(stub), &log);  // configured 8
  ASSERT_NE(e, nullptr);
  auto r = e->Embed({"some text"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  const std::string m = Message(r.status());
  EXPECT_NE(m.find("16 dimensions"), std::string::npos) << m;
  EXPECT_NE(m.find("embedder.dimension is 8"), std::string::npos) << m;
  EXPECT_NE(m.find("embedder.dimension = 16"), std::string::npos) << m;
}

TEST(OpenAiEmbedderTest, WrongCountIsAnErrorNamingBoth) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  auto e = Make(Opts(stub), &log);
  ASSERT_NE(e, nullptr);
  stub.Enqueue(kEmbeddingsPath, StubReply::Embeddings({StubEmbedding("a", kDim)}));
  auto r = e->Embed({"first text", "second text"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(Message(r.status()).find("1 embeddings for 2 inputs"), std::string::npos) << Message(r.status());
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 1u);  // a well-formed wrong answer is not retried
}

TEST(OpenAiEmbedderTest, BadShapesAreErrorsNamingTheField) {
  struct Case {
    nlohmann::json body;
    std::string expect;
  };
  const std::vector<float> v = StubEmbedding("x", kDim);
  const std::vector<Case> cases = {
      {{{"object", "list"}}, "no \"data\" array"},
      {{{"data", {{{"index", 0}, {"embedding", v}}, {{"index", 0}, {"embedding", v}}}}}, "index 0 appears twice"},
      {{{"data", {{{"index", 0}, {"embedding", v}}, {{"index", 7}, {"embedding", v}}}}}, "data[1].index is 7"},
      {{{"data", {{{"index", 0}, {"embedding", v}}, {{"index", 1}, {"embedding", "AAAA"}}}}},
       "data[1].embedding is not an array"},
      {{{"data", {{{"index", 0}, {"embedding", v}}, {{"index", 1}, {"embedding", {1, 2, 3, 4, 5, 6, 7, "x"}}}}}},
       "data[1].embedding[7] is not a number"},
  };
  for (const Case& c : cases) {
    OpenAiStub stub;
    ASSERT_TRUE(stub.ok());
    SleepLog log;
    auto e = Make(Opts(stub), &log);
    ASSERT_NE(e, nullptr);
    stub.Enqueue(kEmbeddingsPath, StubReply::Json(c.body));
    auto r = e->Embed({"first text", "second text"});
    ASSERT_FALSE(r.ok()) << c.body.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << c.body.dump();
    EXPECT_NE(Message(r.status()).find(c.expect), std::string::npos) << Message(r.status());
  }
}

TEST(OpenAiEmbedderTest, TimeoutIsUnavailable) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  EmbedderOptions o = Opts(stub);
  o.timeout_ms = 200;
  o.max_retries = 1;
  auto e = Make(o, &log);
  ASSERT_NE(e, nullptr);
  for (int i = 0; i < 2; ++i) {
    StubReply slow = StubReply::Embeddings({StubEmbedding("late", kDim)});
    slow.delay_ms = 60000;  // cut short when the stub stops
    stub.Enqueue(kEmbeddingsPath, slow);
  }
  auto r = e->Embed({"late"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(Message(r.status()).find("timed out"), std::string::npos) << Message(r.status());
  EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 2u);
  stub.Stop();
}

TEST(OpenAiEmbedderTest, UnauthorizedIsFailedPreconditionWithoutTheKey) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  SleepLog log;
  EmbedderOptions o = Opts(stub);
  o.api_key = "sk-secret-do-not-print";
  auto e = Make(o, &log);
  ASSERT_NE(e, nullptr);
  stub.Enqueue(kEmbeddingsPath, StubReply::Error(401, "invalid api key"));
  auto r = e->Embed({"words"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Message(r.status()).find("sk-secret-do-not-print"), std::string::npos);
  EXPECT_NE(Message(r.status()).find("invalid api key"), std::string::npos);
}

TEST(OpenAiEmbedderTest, CreateRejectsBadSettingsNamingThem) {
  struct Case {
    void (*change)(EmbedderOptions&);
    std::string expect;
  };
  const std::vector<Case> cases = {
      {[](EmbedderOptions& o) { o.model.clear(); }, "embedder.model is required"},
      {[](EmbedderOptions& o) { o.dimension = 0; }, "embedder.dimension 0"},
      {[](EmbedderOptions& o) { o.batch_size = 0; }, "embedder.batch_size"},
      {[](EmbedderOptions& o) { o.timeout_ms = 0; }, "embedder.timeout_ms"},
      {[](EmbedderOptions& o) { o.max_retries = -1; }, "embedder.max_retries"},
      {[](EmbedderOptions& o) { o.base_url = "localhost:11434"; }, "embedder.base_url"},
  };
  for (const Case& c : cases) {
    EmbedderOptions o;
    o.provider = EmbedderProvider::kOpenai;
    o.model = "m";
    o.dimension = kDim;
    c.change(o);
    auto e = OpenAiEmbedder::Create(o);
    ASSERT_FALSE(e.ok()) << c.expect;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << c.expect;
    EXPECT_NE(Message(e.status()).find(c.expect), std::string::npos) << Message(e.status());
  }
}

TEST(EmbedderFactoryTest, OpensEachProviderByName) {
  EmbedderOptions hashing;
  ASSERT_OK_AND_ASSIGN(auto h, OpenEmbedder(hashing));
  EXPECT_EQ(h->id(), "hashing-v1-384");

  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  ASSERT_OK_AND_ASSIGN(auto o, OpenEmbedder(Opts(stub)));
  EXPECT_EQ(o->id(), "openai:stub-model:8");
  ASSERT_OK_AND_ASSIGN(auto vecs, o->Embed({"through the factory"}));
  ExpectNear(vecs[0], StubEmbedding("through the factory", kDim));
  // (An unknown provider cannot be named: embedder.provider is an enum,
  // and the config loader refuses other names, config_test.)
}

TEST(EmbedderFactoryTest, OpenAiKeyFromEnvironmentOnlyForOpenAi) {
  EmbedderOptions o;
  o.provider = EmbedderProvider::kOpenai;
  o.base_url = "https://api.openai.com/v1";
  EXPECT_EQ(EffectiveApiKey(o, "sk-env"), "sk-env");
  o.base_url = "https://API.OpenAI.com/v1/";
  EXPECT_EQ(EffectiveApiKey(o, "sk-env"), "sk-env");
  o.api_key = "sk-configured";
  EXPECT_EQ(EffectiveApiKey(o, "sk-env"), "sk-configured");
  o.api_key.clear();
  for (const char* other : {"http://localhost:11434/v1", "http://api.openai.com/v1", "https://example.com/v1",
                            "https://api.openai.com.evil.example/v1"}) {
    o.base_url = other;
    EXPECT_EQ(EffectiveApiKey(o, "sk-env"), "") << other;
  }
}

}  // namespace
}  // namespace msp
