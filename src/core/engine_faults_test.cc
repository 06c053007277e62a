// The engine when its store fails: a SQLite store behind a FaultStore
// (tests/support/fault_store.h) that fails chosen Apply, GetMany and
// ChangesSince calls. A failed call must return its error, leave nothing of
// itself in the store, and leave the derived indexes no further ahead than
// the store, so that once the fault is gone every answer is right again.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "consolidate/extractor.h"
#include "core/engine.h"
#include "embed/embedder.h"
#include "index/index.h"
#include "msp/memory.h"
#include "store/store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fault_store.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using testing::FakeClock;
using testing::FaultPlan;
using testing::FaultRepeat;
using testing::FaultStore;
using testing::StoreOp;

constexpr TimeMs kFaultClockStart = 1767258000000;  // 2026-01-01T09:00:00Z

class EngineFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    options_.policy.max_items_per_user = 0;  // no evictions: a call's records stay
    options_.consolidation.every_n_episodes = 0;
    options_.actor = "tester";

    EngineParts parts;
    auto sqlite = OpenStore(options_.store);
    ASSERT_OK(sqlite.status());
    auto faults = std::make_unique<FaultStore>(std::move(sqlite).value());
    faults_ = faults.get();
    parts.store = std::move(faults);
    auto embedder = MakeEmbedder(options_.embedder);
    ASSERT_OK(embedder.status());
    parts.embedder = std::move(embedder).value();
    auto lexical = OpenLexicalIndex(options_.store.data_dir + "/lexical", options_.retrieval);
    ASSERT_OK(lexical.status());
    parts.lexical = std::move(lexical).value();
    parts.vector = MakeExactVectorIndex(parts.embedder->dimension());
    auto extractor = MakeExtractor(options_.consolidation);
    ASSERT_OK(extractor.status());
    parts.extractor = std::move(extractor).value();
    parts.clock = std::make_shared<FakeClock>(kFaultClockStart);
    parts.vector_file = options_.store.data_dir + "/vector/index.msv";
    auto engine = MakeEngine(options_, std::move(parts));
    ASSERT_OK(engine.status());
    engine_ = std::move(engine).value();

    // A second handle on the same database, past the faults: the truth.
    auto truth = OpenStore(options_.store);
    ASSERT_OK(truth.status());
    truth_ = std::move(truth).value();
  }

  WriteRequest Fact(const std::string& text) {
    WriteRequest r;
    r.ns.tenant = "acme";
    r.ns.user = "ann";
    r.text = text;
    r.tags = {"preference"};  // the write policy's stable tag
    return r;
  }

  // Every record of tenant acme, by id.
  std::map<std::string, Memory> Stored() {
    RecordQuery q;
    q.scope.tenant = "acme";
    auto listed = truth_->List(q);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::map<std::string, Memory> out;
    if (listed.ok()) {
      for (Memory& m : *listed) out[m.id] = std::move(m);
    }
    return out;
  }

  Result<std::vector<SearchHit>> Search(const std::string& query) {
    RetrieveRequest r;
    r.scope.tenant = "acme";
    r.scope.user = "ann";
    r.query = query;
    r.top_k = 10;
    return engine_->Retrieve(r);
  }

  static std::vector<std::string> HitIds(const std::vector<SearchHit>& hits) {
    std::vector<std::string> ids;
    for (const SearchHit& h : hits) ids.push_back(h.memory.id);
    return ids;
  }

  // A failed read of `op` during a search's catch-up (on the `nth` call of
  // it from now) fails the search; the next search finds what was written.
  void CheckFailedCatchUpRead(StoreOp op, int64_t nth);

  ::msp::testing::TempDir dir_{"engine-faults"};
  Options options_;
  FaultStore* faults_ = nullptr;  // owned by engine_
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<Store> truth_;
};

TEST_F(EngineFaultsTest, FailedApplyOfAWriteReturnsTheErrorAndStoresNothing) {
  faults_->Fail(StoreOp::kApply, testing::DiskFull());
  auto failed = engine_->Write(Fact("The billing service deploys from the release branch on Tuesdays"));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kDiskFull) << failed.status().ToString();
  EXPECT_TRUE(testing::Contains(failed.status().message(), "No space left on device"))
      << failed.status().ToString();
  EXPECT_EQ(faults_->failures(StoreOp::kApply), 1);
  EXPECT_TRUE(Stored().empty());
  ASSERT_OK_AND_ASSIGN(int64_t audited, truth_->CountAudit("acme"));
  EXPECT_EQ(audited, 0);
  // The health check reports the full disk until a write succeeds.
  EXPECT_EQ(engine_->CheckStore().code(), StatusCode::kDiskFull) << engine_->CheckStore().ToString();

  ASSERT_OK_AND_ASSIGN(WriteResult written,
                       engine_->Write(Fact("Staging runs on the cluster in Frankfurt, production in Dublin")));
  EXPECT_TRUE(engine_->CheckStore().ok()) << engine_->CheckStore().ToString();
  EXPECT_FALSE(written.merged);
  const std::map<std::string, Memory> stored = Stored();
  ASSERT_EQ(stored.size(), 1u);
  ASSERT_EQ(stored.begin()->first, written.id);
  EXPECT_EQ(stored.begin()->second.text, "Staging runs on the cluster in Frankfurt, production in Dublin");
  ASSERT_OK_AND_ASSIGN(audited, truth_->CountAudit("acme"));
  EXPECT_EQ(audited, 1);
}

void EngineFaultsTest::CheckFailedCatchUpRead(StoreOp op, int64_t nth) {
  ASSERT_OK_AND_ASSIGN(WriteResult billing,
                       engine_->Write(Fact("The billing service deploys from the release branch on Tuesdays")));
  ASSERT_OK_AND_ASSIGN(WriteResult backup,
                       engine_->Write(Fact("The nightly backup of the orders database finishes around 03:40")));

  faults_->Fail(op, testing::Unreachable(), FaultPlan{nth, FaultRepeat::kOnce});
  auto failed = Search("when does the billing service deploy");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable) << failed.status().ToString();
  EXPECT_EQ(faults_->failures(op), 1);

  ASSERT_OK_AND_ASSIGN(std::vector<SearchHit> hits, Search("when does the billing service deploy"));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits.front().memory.id, billing.id);
  ASSERT_OK_AND_ASSIGN(hits, Search("nightly backup of the orders database"));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits.front().memory.id, backup.id);
  for (const std::string& id : HitIds(hits)) EXPECT_TRUE(id == billing.id || id == backup.id) << id;
}

TEST_F(EngineFaultsTest, FailedGetManyDuringSearchCatchUpFailsTheSearchOnly) {
  CheckFailedCatchUpRead(StoreOp::kGetMany, 1);
}

TEST_F(EngineFaultsTest, FailedChangesSinceDuringSearchCatchUpFailsTheSearchOnly) {
  CheckFailedCatchUpRead(StoreOp::kChangesSince, 1);
}

// The catch-up reads the changes a page at a time (5,000 changes): a read
// that fails on the second page leaves the first applied, and the next
// search replays the rest, each record once.
TEST_F(EngineFaultsTest, CatchUpFailingOnItsSecondPageResumesWhereItStopped) {
  std::vector<WriteRequest> requests;
  for (int i = 0; i < 5200; ++i) {
    WriteRequest r = Fact("Artifact number " + std::to_string(i) + " of the build");
    r.kind = Kind::kArtifact;
    requests.push_back(std::move(r));
  }
  requests[5100].text = "The release checklist lives in the wiki under operations";
  ASSERT_OK_AND_ASSIGN(std::vector<WriteResult> written, engine_->WriteMany(requests));
  ASSERT_EQ(written.size(), requests.size());

  faults_->Fail(StoreOp::kGetMany, testing::Unreachable(), FaultPlan{2, FaultRepeat::kOnce});
  auto failed = Search("release checklist wiki");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable) << failed.status().ToString();
  EXPECT_EQ(faults_->failures(StoreOp::kGetMany), 1);

  ASSERT_OK_AND_ASSIGN(std::vector<SearchHit> hits, Search("release checklist wiki"));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits.front().memory.id, written[5100].id);
  const std::vector<std::string> ids = HitIds(hits);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());  // each record once
}

// A write whose commit fails must not reach the indexes: were its vector
// indexed, the same fact written again would merge into a record the store
// never had, and a search would return it.
TEST_F(EngineFaultsTest, FailedCommitLeavesTheIndexesNoFurtherThanTheStore) {
  const std::string kLost = "Bob owns the incident runbook for the payments gateway";
  for (const Status& fault : {testing::FsyncFailed(), testing::DiskFull()}) {
    faults_->Fail(StoreOp::kApply, fault);
    auto failed = engine_->Write(Fact(kLost));
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.status().code(), fault.code()) << failed.status().ToString();
  }
  EXPECT_EQ(faults_->failures(StoreOp::kApply), 2);

  ASSERT_OK_AND_ASSIGN(std::vector<SearchHit> none, Search("who owns the incident runbook for payments"));
  EXPECT_TRUE(none.empty()) << ::testing::PrintToString(HitIds(none));

  ASSERT_OK_AND_ASSIGN(WriteResult other,
                       engine_->Write(Fact("Never deploy the payments gateway on a Friday afternoon")));
  ASSERT_OK_AND_ASSIGN(WriteResult again, engine_->Write(Fact(kLost)));
  EXPECT_FALSE(again.merged);  // no twin: the failed writes left nothing to merge into
  const std::map<std::string, Memory> stored = Stored();
  ASSERT_EQ(stored.size(), 2u);
  ASSERT_TRUE(stored.count(other.id));
  ASSERT_TRUE(stored.count(again.id));
  EXPECT_EQ(stored.at(again.id).text, kLost);

  ASSERT_OK_AND_ASSIGN(std::vector<SearchHit> hits, Search("who owns the incident runbook for payments"));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits.front().memory.id, again.id);
  for (const std::string& id : HitIds(hits)) EXPECT_TRUE(stored.count(id)) << id << " is not in the store";
}

// Group commit under failures: 8 threads of WriteMany calls while every 5th
// Apply fails. A failed group is applied call by call, so each call either
// succeeds with every record stored or fails with none of them stored.
TEST_F(EngineFaultsTest, ConcurrentWriteManyWithFailingAppliesIsAllOrNothingPerCall) {
  constexpr int kThreads = 8;
  constexpr int kCalls = 10;
  constexpr int kRecords = 3;
  struct Call {
    std::vector<std::string> texts;
    Result<std::vector<WriteResult>> result = Status::Internal("not run");
  };
  std::vector<std::vector<Call>> calls(kThreads, std::vector<Call>(kCalls));
  faults_->Fail(StoreOp::kApply, testing::DiskFull(), FaultPlan{5, FaultRepeat::kEveryNth});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        std::vector<WriteRequest> requests;
        for (int i = 0; i < kRecords; ++i) {
          WriteRequest r = Fact("Build artifact " + std::to_string(i) + " of call " + std::to_string(c) +
                                " on worker " + std::to_string(t));
          r.kind = Kind::kArtifact;
          calls[t][c].texts.push_back(r.text);
          requests.push_back(std::move(r));
        }
        calls[t][c].result = engine_->WriteMany(requests);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  faults_->HealAll();
  // Each thread's calls are sequential, so there are at least kCalls
  // Applies: at least two of them failed.
  EXPECT_GE(faults_->failures(StoreOp::kApply), 2);

  const std::map<std::string, Memory> stored = Stored();
  std::map<std::string, std::string> id_of_text;
  for (const auto& [id, m] : stored) id_of_text[m.text] = id;
  size_t expected_records = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int c = 0; c < kCalls; ++c) {
      const Call& call = calls[t][c];
      if (call.result.ok()) {
        ASSERT_EQ(call.result->size(), static_cast<size_t>(kRecords));
        for (int i = 0; i < kRecords; ++i) {
          const std::string& id = (*call.result)[i].id;
          ASSERT_TRUE(stored.count(id)) << "worker " << t << " call " << c << ": " << id << " not stored";
          EXPECT_EQ(stored.at(id).text, call.texts[i]);
        }
        expected_records += kRecords;
      } else {
        EXPECT_EQ(call.result.status().code(), StatusCode::kDiskFull) << call.result.status().ToString();
        for (const std::string& text : call.texts) {
          EXPECT_FALSE(id_of_text.count(text)) << "failed call stored \"" << text << "\"";
        }
      }
    }
  }
  EXPECT_EQ(stored.size(), expected_records);

  // And the indexes hold exactly the stored records.
  ASSERT_OK_AND_ASSIGN(std::vector<SearchHit> hits, Search("build artifact of call on worker"));
  for (const std::string& id : HitIds(hits)) EXPECT_TRUE(stored.count(id)) << id << " is not in the store";
}

}  // namespace
}  // namespace msp
