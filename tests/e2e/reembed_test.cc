// The embedder identity of a store and `msp reembed`, against the scripted
// OpenAI stub: a store made by one embedder refuses another until it is
// re-embedded; MemoryLayer::Reembed moves every record to the new embedder
// in batches, resumes after a failure, a stop (max_batches) or a killed
// `msp reembed` process, embeds each record exactly once, and can go back.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/memory.h"
#include "store/store.h"
#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using msp::testing::kEmbeddingsPath;
using msp::testing::OpenAiStub;
using msp::testing::StubEmbedding;
using msp::testing::StubReply;
using msp::testing::StubRequest;
using msp::testing::TempDir;

constexpr int kStubDim = 32;
constexpr char kStubId[] = "openai:stub-model:32";
constexpr char kHashingId[] = "hashing-v1-64";

Options HashingOptions(const std::string& dir) {
  Options o;
  o.store.data_dir = dir;
  o.store.synchronous = "normal";
  o.embedder.provider = EmbedderProvider::kHashing;
  o.embedder.dimension = 64;
  o.consolidation.every_n_episodes = 0;
  return o;
}

Options StubOptions(const std::string& dir, const OpenAiStub& stub) {
  Options o = HashingOptions(dir);
  o.embedder.provider = EmbedderProvider::kOpenai;
  o.embedder.base_url = stub.base_url();
  o.embedder.model = "stub-model";
  o.embedder.dimension = kStubDim;
  o.embedder.batch_size = 4;
  o.embedder.timeout_ms = 10000;
  o.embedder.max_retries = 0;
  return o;
}

// A stub whose embeddings handler records the texts it embedded
// successfully and can be told to fail (HTTP 500) or hang after a number of
// successful requests.
class CountingStub {
 public:
  enum class After { kNothing, kFail, kHang };

  CountingStub() {
    stub_.set_embedding_dimension(kStubDim);
    stub_.SetDefault(kEmbeddingsPath, [this](const StubRequest& r) { return Answer(r); });
  }
  ~CountingStub() { stub_.Stop(); }
  CountingStub(const CountingStub&) = delete;
  CountingStub& operator=(const CountingStub&) = delete;

  OpenAiStub& stub() { return stub_; }
  // From now on, requests after the `ok`-th successful one fail or hang.
  void Limit(int ok, After after) {
    std::lock_guard<std::mutex> lock(mu_);
    ok_left_ = ok;
    after_ = after;
  }
  void Unlimit() { Limit(0, After::kNothing); }
  // How often each text was embedded successfully.
  std::map<std::string, int> Embedded() const {
    std::lock_guard<std::mutex> lock(mu_);
    return embedded_;
  }
  int Successes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return successes_;
  }

 private:
  StubReply Answer(const StubRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (after_ != After::kNothing) {
      if (ok_left_ == 0) {
        if (after_ == After::kFail) return StubReply::Error(500, "injected failure");
        StubReply hang = StubReply::Error(500, "hung");
        hang.delay_ms = 120000;  // cut short when the stub stops
        return hang;
      }
      --ok_left_;
    }
    std::vector<std::vector<float>> vectors;
    for (const auto& t : r.json["input"]) {
      vectors.push_back(StubEmbedding(t.get<std::string>(), kStubDim));
      ++embedded_[t.get<std::string>()];
    }
    ++successes_;
    return StubReply::Embeddings(vectors);
  }

  OpenAiStub stub_;
  mutable std::mutex mu_;
  int ok_left_ = 0;
  After after_ = After::kNothing;
  std::map<std::string, int> embedded_;
  int successes_ = 0;
};

struct Seeded {
  std::vector<std::pair<Namespace, std::string>> ids;  // (scope, id)
  std::vector<std::string> texts;
};

// 10 episodes in one session of tenant default and 6 facts of tenant acme,
// embedded by the hashing embedder.
Seeded Seed(const std::string& dir) {
  Seeded s;
  auto engine = MemoryLayer::Open(HashingOptions(dir));
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  if (!engine.ok()) return s;
  const std::vector<std::string> topics = {"sailing boats",  "mountain hiking", "sourdough bread",
                                           "chess openings", "jazz piano",      "rust compiler",
                                           "garden tomatoes", "night photography", "marathon training",
                                           "espresso machines"};
  Namespace episodes_ns;
  episodes_ns.session = "s1";
  for (const auto& t : topics) {
    EpisodeStep step;
    step.ns = episodes_ns;
    step.text = "The user talked at length about " + t + " today";
    auto m = (*engine)->AddEpisode(step);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (!m.ok()) continue;
    Namespace scope;
    s.ids.emplace_back(scope, m->id);
    s.texts.push_back(step.text);
  }
  Namespace acme;
  acme.tenant = "acme";
  for (int i = 0; i < 6; ++i) {
    FactRequest f;
    f.ns = acme;
    f.text = "Acme fact number " + std::to_string(i) + ": the customer prefers " + topics[static_cast<size_t>(i)];
    auto w = (*engine)->AddFact(f);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) continue;
    EXPECT_FALSE(w->merged);
    s.ids.emplace_back(acme, w->id);
    s.texts.push_back(f.text);
  }
  return s;
}

// The embedder_id of every seeded record, counted.
std::map<std::string, int> EmbedderIds(MemoryLayer& engine, const Seeded& s) {
  std::map<std::string, int> out;
  for (const auto& [scope, id] : s.ids) {
    auto m = engine.Get(scope, id);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (m.ok()) ++out[m->embedder_id];
  }
  return out;
}

// The query's own record comes first, and the vector signal found it first.
void ExpectVectorFinds(MemoryLayer& engine, const Namespace& scope, const std::string& text) {
  RetrieveRequest r;
  r.scope = scope;
  r.query = text;
  r.top_k = 3;
  r.explain = true;
  auto hits = engine.Retrieve(r);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_FALSE(hits->empty());
  EXPECT_EQ(hits->front().memory.text, text);
  bool cosine_first = false;
  for (const auto& c : hits->front().explain) cosine_first = cosine_first || (c.signal == "cosine" && c.rank == 1);
  EXPECT_TRUE(cosine_first) << "the vector signal did not rank the record first";
}

TEST(EmbedderIdentityTest, StoreMadeByAnotherEmbedderIsRefusedNamingReembed) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  Seeded s = Seed(dir.path());
  ASSERT_EQ(s.ids.size(), 16u);
  auto other = MemoryLayer::Open(StubOptions(dir.path(), cs.stub()));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  const std::string m = other.status().message();
  EXPECT_NE(m.find(kHashingId), std::string::npos) << m;
  EXPECT_NE(m.find(kStubId), std::string::npos) << m;
  EXPECT_NE(m.find("msp reembed"), std::string::npos) << m;
  // Another hashing dimension is another embedder too.
  Options wider = HashingOptions(dir.path());
  wider.embedder.dimension = 128;
  auto w = MemoryLayer::Open(wider);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(cs.stub().RequestCount(kEmbeddingsPath), 0u);  // refused before any request
  // The store still opens with its own embedder, and records carry its id.
  ASSERT_OK_AND_ASSIGN(auto same, MemoryLayer::Open(HashingOptions(dir.path())));
  EXPECT_EQ(EmbedderIds(*same, s), (std::map<std::string, int>{{kHashingId, 16}}));
}

TEST(EmbedderIdentityTest, StoreWithoutRecordsSwitchesWithAnInstantReembed) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  { ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(HashingOptions(dir.path()))); }
  auto refused = MemoryLayer::Open(StubOptions(dir.path(), cs.stub()));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("no records yet"), std::string::npos) << refused.status().message();
  ASSERT_OK_AND_ASSIGN(ReembedProgress p,
                       MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), ReembedOptions{}, nullptr));
  EXPECT_TRUE(p.finished);
  EXPECT_EQ(p.total, 0);
  EXPECT_EQ(p.embedded, 0);
  EXPECT_EQ(cs.stub().RequestCount(kEmbeddingsPath), 0u);
  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(StubOptions(dir.path(), cs.stub())));
  ASSERT_OK_AND_ASSIGN(Stats st, e->GetStats(Namespace{}));
  EXPECT_EQ(st.embedder_id, kStubId);
  EpisodeStep step;
  step.ns.session = "s";
  step.text = "a step embedded by the stub server";
  ASSERT_OK_AND_ASSIGN(Memory m, e->AddEpisode(step));
  EXPECT_EQ(m.embedder_id, kStubId);
  ASSERT_OK_AND_ASSIGN(Memory got, e->Get(Namespace{}, m.id));
  EXPECT_EQ(got.embedder_id, kStubId);
  e.reset();
  // Now it has a record: hashing is refused, without the "no records" hint.
  auto back = MemoryLayer::Open(HashingOptions(dir.path()));
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(back.status().message().find("no records yet"), std::string::npos) << back.status().message();
}

TEST(ReembedTest, HashingToStubEndToEnd) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  Seeded s = Seed(dir.path());
  ASSERT_EQ(s.ids.size(), 16u);
  std::vector<ReembedProgress> seen;
  ASSERT_OK_AND_ASSIGN(ReembedProgress p,
                       MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), ReembedOptions{},
                                            [&](const ReembedProgress& x) { seen.push_back(x); }));
  EXPECT_TRUE(p.finished);
  EXPECT_EQ(p.from_embedder, kHashingId);
  EXPECT_EQ(p.to_embedder, kStubId);
  EXPECT_EQ(p.total, 16);
  EXPECT_EQ(p.done, 16);
  EXPECT_EQ(p.embedded, 16);
  // Batches of embedder.batch_size (4): 16 records in 4 requests, each text once.
  EXPECT_EQ(cs.stub().RequestCount(kEmbeddingsPath), 4u);
  const auto embedded = cs.Embedded();
  EXPECT_EQ(embedded.size(), 16u);
  for (const auto& t : s.texts) EXPECT_EQ(embedded.count(t) ? embedded.at(t) : 0, 1) << t;
  // Progress: a first report, one per batch, and the last; done never goes back.
  ASSERT_GE(seen.size(), 5u);
  EXPECT_EQ(seen.front().done, 0);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].done, seen[i - 1].done);
  EXPECT_TRUE(seen.back().finished);
  for (size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_FALSE(seen[i].finished);

  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(StubOptions(dir.path(), cs.stub())));
  EXPECT_EQ(EmbedderIds(*e, s), (std::map<std::string, int>{{kStubId, 16}}));
  ASSERT_OK_AND_ASSIGN(Stats st, e->GetStats(Namespace{}));
  EXPECT_EQ(st.embedder_id, kStubId);
  Namespace acme;
  acme.tenant = "acme";
  ExpectVectorFinds(*e, Namespace{}, s.texts[3]);
  ExpectVectorFinds(*e, acme, s.texts[12]);
  // One audit event per tenant says what happened.
  ASSERT_OK_AND_ASSIGN(auto audit, e->Audit(acme, "", 10));
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit.front().action, AuditAction::kUpdate);
  EXPECT_NE(audit.front().reason.find("re-embedded 6 records with openai:stub-model:32"), std::string::npos)
      << audit.front().reason;
  e.reset();
  // The old embedder is refused now.
  auto old = MemoryLayer::Open(HashingOptions(dir.path()));
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("msp reembed"), std::string::npos);
  // A second run has nothing to do.
  const size_t requests = cs.stub().RequestCount(kEmbeddingsPath);
  ASSERT_OK_AND_ASSIGN(ReembedProgress again,
                       MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), ReembedOptions{}, nullptr));
  EXPECT_TRUE(again.finished);
  EXPECT_EQ(again.embedded, 0);
  EXPECT_EQ(again.done, 16);
  EXPECT_EQ(cs.stub().RequestCount(kEmbeddingsPath), requests);
}

// The native embedder (embedder.provider = "native") on the tiny random BERT
// of tests/data/native_bert: the store moves onto it, records carry its id,
// and a record's own text finds it by the vector signal first; then onto
// its int8 form.
TEST(ReembedTest, HashingToNativeEndToEnd) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  Seeded s = Seed(dir.path());
  ASSERT_EQ(s.ids.size(), 16u);
  Options native = HashingOptions(dir.path());
  native.embedder.provider = EmbedderProvider::kNative;
  native.embedder.model = std::string(MSP_SOURCE_DIR) + "/tests/data/native_bert";
  native.embedder.threads = 2;
  ASSERT_OK_AND_ASSIGN(ReembedProgress p, MemoryLayer::Reembed(native, ReembedOptions{}, nullptr));
  EXPECT_TRUE(p.finished);
  EXPECT_EQ(p.to_embedder, "native:native_bert:mean:32");
  EXPECT_EQ(p.embedded, 16);
  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(native));
  EXPECT_EQ(EmbedderIds(*e, s), (std::map<std::string, int>{{"native:native_bert:mean:32", 16}}));
  ExpectVectorFinds(*e, Namespace{}, s.texts[3]);
  e.reset();
  // int8 (embedder.quantize) is another embedder: fp32's store refuses it
  // until reembedded, then its vectors find the records too.
  Options int8 = native;
  int8.embedder.quantize = "int8";
  auto refused = MemoryLayer::Open(int8);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("native:native_bert:mean:32:int8"), std::string::npos)
      << refused.status().ToString();
  ASSERT_OK_AND_ASSIGN(p, MemoryLayer::Reembed(int8, ReembedOptions{}, nullptr));
  EXPECT_EQ(p.to_embedder, "native:native_bert:mean:32:int8");
  ASSERT_OK_AND_ASSIGN(e, MemoryLayer::Open(int8));
  EXPECT_EQ(EmbedderIds(*e, s), (std::map<std::string, int>{{"native:native_bert:mean:32:int8", 16}}));
  ExpectVectorFinds(*e, Namespace{}, s.texts[3]);
  e.reset();
  // A broken model directory is a clear error when the store opens.
  native.embedder.model = dir.path() + "/no-such-model";
  auto broken = MemoryLayer::Open(native);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("no-such-model"), std::string::npos) << broken.status().ToString();
}

TEST(ReembedTest, FailureAfterSomeBatchesResumesEmbeddingEachRecordOnce) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  Seeded s = Seed(dir.path());
  ASSERT_EQ(s.ids.size(), 16u);
  cs.Limit(2, CountingStub::After::kFail);  // two batches land, the third fails
  auto failed = MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), ReembedOptions{}, nullptr);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.status().message().find("injected failure"), std::string::npos) << failed.status().message();
  EXPECT_EQ(cs.Successes(), 2);

  // Unfinished: both embedders are refused, and the message says how to go on.
  for (const Options& o : {StubOptions(dir.path(), cs.stub()), HashingOptions(dir.path())}) {
    auto open = MemoryLayer::Open(o);
    ASSERT_FALSE(open.ok());
    EXPECT_EQ(open.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(open.status().message().find("being re-embedded from 'hashing-v1-64' to 'openai:stub-model:32'"),
              std::string::npos)
        << open.status().message();
    EXPECT_NE(open.status().message().find("msp reembed"), std::string::npos);
  }

  cs.Unlimit();
  std::vector<ReembedProgress> seen;
  ASSERT_OK_AND_ASSIGN(ReembedProgress p,
                       MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), ReembedOptions{},
                                            [&](const ReembedProgress& x) { seen.push_back(x); }));
  EXPECT_TRUE(p.finished);
  EXPECT_EQ(p.embedded, 8);  // only what the first run had not done
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().done, 8);
  const auto embedded = cs.Embedded();
  EXPECT_EQ(embedded.size(), 16u);
  for (const auto& t : s.texts) EXPECT_EQ(embedded.count(t) ? embedded.at(t) : 0, 1) << t;
  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(StubOptions(dir.path(), cs.stub())));
  EXPECT_EQ(EmbedderIds(*e, s), (std::map<std::string, int>{{kStubId, 16}}));
  ExpectVectorFinds(*e, Namespace{}, s.texts[7]);
}

TEST(ReembedTest, MaxBatchesStopsAndTheNextRunContinues) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  Seeded s = Seed(dir.path());
  ASSERT_EQ(s.ids.size(), 16u);
  ReembedOptions two;
  two.batch_size = 3;
  two.max_batches = 2;
  ASSERT_OK_AND_ASSIGN(ReembedProgress first, MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), two, nullptr));
  EXPECT_FALSE(first.finished);
  EXPECT_EQ(first.done, 6);
  EXPECT_EQ(first.embedded, 6);
  EXPECT_FALSE(MemoryLayer::Open(StubOptions(dir.path(), cs.stub())).ok());
  ASSERT_OK_AND_ASSIGN(ReembedProgress second, MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), two, nullptr));
  EXPECT_FALSE(second.finished);
  EXPECT_EQ(second.done, 12);
  ASSERT_OK_AND_ASSIGN(ReembedProgress third, MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), two, nullptr));
  EXPECT_TRUE(third.finished);
  EXPECT_EQ(third.done, 16);
  EXPECT_EQ(third.embedded, 4);
  const auto embedded = cs.Embedded();
  EXPECT_EQ(embedded.size(), 16u);
  for (const auto& [text, n] : embedded) EXPECT_EQ(n, 1) << text;
  EXPECT_TRUE(MemoryLayer::Open(StubOptions(dir.path(), cs.stub())).ok());
}

// A record another process changes while its batch is being embedded is
// not overwritten with the stale copy: the batch's write fails its
// compare-and-swap, the record is read again and its new text embedded.
TEST(ReembedTest, RecordChangedDuringItsBatchIsNotOverwritten) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  Seeded s = Seed(dir.path());
  ASSERT_EQ(s.ids.size(), 16u);
  std::string first = s.ids.front().second;  // the store scans in id order
  for (const auto& [scope, id] : s.ids) first = std::min(first, id);
  const std::string changed = "A completely new text about volcanoes and lava";
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.set_embedding_dimension(kStubDim);
  std::mutex mu;
  std::map<std::string, int> embedded;
  bool edited = false;
  std::string edit_error;
  stub.SetDefault(kEmbeddingsPath, [&](const StubRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    if (!edited) {
      // Another writer changes the first record while its batch is out.
      edited = true;
      StoreOptions so;
      so.data_dir = dir.path();
      auto store = OpenStore(so);
      if (!store.ok()) {
        edit_error = store.status().ToString();
      } else {
        auto m = (*store)->Get(first);
        if (!m.ok() || !m->has_value()) {
          edit_error = "record not found";
        } else {
          WriteBatch b;
          Memory edit = **m;
          edit.text = changed;
          b.puts.push_back(edit);
          auto applied = (*store)->Apply(b);
          if (!applied.ok()) edit_error = applied.status().ToString();
        }
      }
    }
    std::vector<std::vector<float>> vectors;
    for (const auto& t : r.json["input"]) {
      vectors.push_back(StubEmbedding(t.get<std::string>(), kStubDim));
      ++embedded[t.get<std::string>()];
    }
    return StubReply::Embeddings(vectors);
  });
  ASSERT_OK_AND_ASSIGN(ReembedProgress p, MemoryLayer::Reembed(StubOptions(dir.path(), stub), ReembedOptions{}, nullptr));
  EXPECT_TRUE(p.finished);
  EXPECT_EQ(p.embedded, 16);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_TRUE(edited);
    ASSERT_EQ(edit_error, "");
    // 4 batches and one more request for the changed record alone.
    EXPECT_EQ(stub.RequestCount(kEmbeddingsPath), 5u);
    EXPECT_EQ(embedded[changed], 1);
    int others = 0;
    for (const auto& t : s.texts) others += embedded.count(t) ? embedded[t] : 0;
    EXPECT_EQ(others, 16);  // every original text once (the first one before it changed)
  }
  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(StubOptions(dir.path(), stub)));
  ASSERT_OK_AND_ASSIGN(Memory m, e->Get(Namespace{}, first));
  EXPECT_EQ(m.text, changed);
  EXPECT_EQ(m.embedder_id, kStubId);
  ExpectVectorFinds(*e, Namespace{}, changed);
}

TEST(ReembedTest, UnfinishedReembedCanGoBackToTheOldEmbedder) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  Seeded s = Seed(dir.path());
  ASSERT_EQ(s.ids.size(), 16u);
  ReembedOptions one;
  one.max_batches = 1;
  ASSERT_OK_AND_ASSIGN(ReembedProgress part, MemoryLayer::Reembed(StubOptions(dir.path(), cs.stub()), one, nullptr));
  EXPECT_EQ(part.done, 4);
  // Back to hashing: only the 4 records the stub embedded are redone.
  ASSERT_OK_AND_ASSIGN(ReembedProgress back, MemoryLayer::Reembed(HashingOptions(dir.path()), ReembedOptions{}, nullptr));
  EXPECT_TRUE(back.finished);
  EXPECT_EQ(back.to_embedder, kHashingId);
  EXPECT_EQ(back.embedded, 4);
  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(HashingOptions(dir.path())));
  EXPECT_EQ(EmbedderIds(*e, s), (std::map<std::string, int>{{kHashingId, 16}}));
  ExpectVectorFinds(*e, Namespace{}, s.texts[0]);
}

// ---- `msp reembed`, the process -----------------------------------------

struct ProcessRun {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Starts `msp args...` with stdout and stderr to files under `dir`.
pid_t Spawn(const std::vector<std::string>& args, const std::string& dir) {
  const std::string out = dir + "/out.txt";
  const std::string err = dir + "/err.txt";
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(MSP_BINARY));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(MSP_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}

ProcessRun Finish(pid_t pid, const std::string& dir) {
  ProcessRun r;
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.rc = WEXITSTATUS(status);
  r.out = ReadFile(dir + "/out.txt");
  r.err = ReadFile(dir + "/err.txt");
  return r;
}

std::vector<std::string> ReembedArgs(const std::string& data_dir, const OpenAiStub& stub) {
  return {"reembed",          "--data-dir",          data_dir,      "--embedder",
          "openai",           "--embedder-base-url", stub.base_url(), "--embedder-model",
          "stub-model",       "--embedder-dimension", std::to_string(kStubDim), "--embedder-batch-size",
          "4",                "--embedder-max-retries", "0"};
}

TEST(ReembedCliTest, ShowsProgressAndSwitchesTheStore) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  const std::string data = dir.path() + "/data";
  Seeded s = Seed(data);
  ASSERT_EQ(s.ids.size(), 16u);
  std::vector<std::string> args = ReembedArgs(data, cs.stub());
  args.push_back("--json");
  ProcessRun r = Finish(Spawn(args, dir.path()), dir.path());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("reembed: hashing-v1-64 -> openai:stub-model:32, 16 of 16 records to embed"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("reembed: 16/16 records (100.0%)"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["finished"], true);
  EXPECT_EQ(j["embedded"], 16);
  EXPECT_EQ(j["to_embedder"], kStubId);
  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(StubOptions(data, cs.stub())));
  EXPECT_EQ(EmbedderIds(*e, s), (std::map<std::string, int>{{kStubId, 16}}));
}

// `msp reembed --embedder native` in a process of its own: the msp binary
// loads libmsp_native_embed.so from beside itself.
TEST(ReembedCliTest, NativeEmbedderFromTheCommandLine) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  const std::string data = dir.path() + "/data";
  Seeded s = Seed(data);
  ASSERT_EQ(s.ids.size(), 16u);
  const std::string model = std::string(MSP_SOURCE_DIR) + "/tests/data/native_bert";
  ProcessRun r = Finish(Spawn({"reembed", "--data-dir", data, "--embedder", "native", "--embedder-model", model,
                               "--embedder-threads", "2", "--embedder-pooling", "cls", "--json"},
                              dir.path()),
                        dir.path());
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["embedded"], 16);
  EXPECT_EQ(j["to_embedder"], "native:native_bert:cls:32");
  r = Finish(Spawn({"reembed", "--data-dir", data, "--embedder", "native", "--embedder-pooling", "max"}, dir.path()),
             dir.path());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("--embedder-pooling must be one of auto, mean, cls"), std::string::npos) << r.err;
}

TEST(ReembedCliTest, KilledMidwayThenResumedEmbedsEachRecordOnce) {
  TempDir dir("reembed");
  ASSERT_TRUE(dir.ok());
  CountingStub cs;
  ASSERT_TRUE(cs.stub().ok());
  const std::string data = dir.path() + "/data";
  Seeded s = Seed(data);
  ASSERT_EQ(s.ids.size(), 16u);
  // Two batches are answered, the third hangs; the process is killed there.
  cs.Limit(2, CountingStub::After::kHang);
  pid_t pid = Spawn(ReembedArgs(data, cs.stub()), dir.path());
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int status = 0;
  bool exited = false;
  while (cs.stub().RequestCount(kEmbeddingsPath) < 3 && std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(exited) << "msp reembed ended before it was killed: " << ReadFile(dir.path() + "/err.txt");
  ASSERT_EQ(cs.stub().RequestCount(kEmbeddingsPath), 3u);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(cs.Successes(), 2);

  auto refused = MemoryLayer::Open(StubOptions(data, cs.stub()));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("unfinished `msp reembed`"), std::string::npos)
      << refused.status().message();

  cs.Unlimit();
  ProcessRun r = Finish(Spawn(ReembedArgs(data, cs.stub()), dir.path()), dir.path());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("8 of 16 records to embed"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("re-embedded 8 records with openai:stub-model:32"), std::string::npos) << r.out;
  const auto embedded = cs.Embedded();
  EXPECT_EQ(embedded.size(), 16u);
  for (const auto& t : s.texts) EXPECT_EQ(embedded.count(t) ? embedded.at(t) : 0, 1) << t;
  ASSERT_OK_AND_ASSIGN(auto e, MemoryLayer::Open(StubOptions(data, cs.stub())));
  EXPECT_EQ(EmbedderIds(*e, s), (std::map<std::string, int>{{kStubId, 16}}));
  ExpectVectorFinds(*e, Namespace{}, s.texts[9]);
  e.reset();
  cs.stub().Stop();  // ends the hung reply
}

}  // namespace
}  // namespace msp
