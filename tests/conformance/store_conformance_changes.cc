// The Store conformance tests of the change sequence and of writers (see
// store_conformance.h): sequence numbers and ChangesSince, compare-and-swap
// (expect_seq), and several handles and threads on one store.
#include "tests/conformance/store_conformance.h"
#include "tests/conformance/store_conformance_util.h"
#include "tests/support/test_util.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace msp::conformance {
namespace {

// ---- The change sequence ----

TEST_P(StoreConformanceTest, ChangeSequenceIsStrictlyIncreasingOverPutsAndDeletes) {
  std::vector<int64_t> all;
  std::vector<std::pair<std::string, ChangeOp>> expected;
  for (int round = 0; round < 5; ++round) {
    WriteBatch b;
    for (int i = 0; i < 3; ++i) {
      b.puts.push_back(Rec("r" + std::to_string(round) + "-" + std::to_string(i), round * 10 + i));
      expected.emplace_back(b.puts.back().id, ChangeOp::kPut);
    }
    if (round > 0) {
      b.deletes.push_back("r" + std::to_string(round - 1) + "-0");
      expected.emplace_back(b.deletes.back(), ChangeOp::kDelete);
    }
    ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(b));
    ASSERT_EQ(seqs.size(), b.puts.size() + b.deletes.size());
    all.insert(all.end(), seqs.begin(), seqs.end());
    // Each put's stored seq is the number its change got.
    for (size_t i = 0; i < b.puts.size(); ++i) {
      ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get(b.puts[i].id));
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->seq, seqs[i]);
    }
  }
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1], all[i]) << i;

  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  ASSERT_EQ(changes.size(), expected.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    EXPECT_EQ(changes[i].seq, all[i]);
    EXPECT_EQ(changes[i].record_id, expected[i].first);
    EXPECT_EQ(changes[i].op, expected[i].second);
  }
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, all.back());
}

TEST_P(StoreConformanceTest, ChangesSinceHonoursAfterAndLimit) {
  std::vector<Memory> records;
  for (int i = 0; i < 10; ++i) records.push_back(Rec("c" + std::to_string(i), i));
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts(records)));
  ASSERT_EQ(seqs.size(), 10u);

  ASSERT_OK_AND_ASSIGN(std::vector<Change> page, store_->ChangesSince(seqs[2], 4));
  ASSERT_EQ(page.size(), 4u);
  for (size_t i = 0; i < page.size(); ++i) {
    EXPECT_EQ(page[i].seq, seqs[3 + i]);
    EXPECT_EQ(page[i].record_id, "c" + std::to_string(3 + i));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Change> rest, store_->ChangesSince(seqs[7], 0));
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[1].seq, seqs[9]);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> none, store_->ChangesSince(seqs[9], 0));
  EXPECT_TRUE(none.empty());
}

TEST_P(StoreConformanceTest, EmptyStoreHasNoChanges) {
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, 0);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  EXPECT_TRUE(changes.empty());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(WriteBatch{}));
  EXPECT_TRUE(seqs.empty());
  ASSERT_OK_AND_ASSIGN(last, store_->LastSeq());
  EXPECT_EQ(last, 0);
}

TEST_P(StoreConformanceTest, LargeBatchLandsWhole) {
  std::vector<Memory> records;
  for (int i = 0; i < 10000; ++i) {
    Memory m = Rec("big-" + std::to_string(100000 + i), i);
    m.tags = {"a", "b"};
    records.push_back(std::move(m));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts(records)));
  ASSERT_EQ(seqs.size(), records.size());
  EXPECT_EQ(seqs.back() - seqs.front(), 9999);
  RecordQuery q;
  q.scope.tenant = "t1";
  ASSERT_OK_AND_ASSIGN(int64_t n, store_->Count(q));
  EXPECT_EQ(n, 10000);
}

// ---- Compare-and-swap ----

TEST_P(StoreConformanceTest, ExpectSeqZeroMeansTheIdMustNotExist) {
  WriteBatch create = Puts({Rec("cas", 100)});
  create.expect_seq = {{"cas", 0}};
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(create));
  ASSERT_EQ(seqs.size(), 1u);

  Memory again = Rec("cas", 200);
  again.text = "second create";
  WriteBatch twice = Puts({again, Rec("other", 100)});
  twice.expect_seq = {{"cas", 0}};
  auto second = store_->Apply(twice);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kConflict);
  EXPECT_NE(second.status().message().find(std::to_string(seqs[0])), std::string::npos)
      << second.status().message();
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> kept, store_->Get("cas"));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->text, "text of cas");
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> other, store_->Get("other"));
  EXPECT_FALSE(other.has_value());  // the whole batch was refused
}

TEST_P(StoreConformanceTest, ExpectSeqMustMatchTheCurrentSeq) {
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> first, store_->Apply(Puts({Rec("v", 100)})));
  Memory edit = Rec("v", 100);
  edit.text = "edit one";
  WriteBatch one = Puts({edit});
  one.expect_seq = {{"v", first[0]}};
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> second, store_->Apply(one));

  Memory stale = Rec("v", 100);
  stale.text = "edit from a stale read";
  WriteBatch two = Puts({stale});
  two.expect_seq = {{"v", first[0]}};
  auto refused = store_->Apply(two);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kConflict);
  EXPECT_NE(refused.status().message().find(std::to_string(second[0])), std::string::npos)
      << refused.status().message();
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> now, store_->Get("v"));
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->text, "edit one");
  EXPECT_EQ(now->seq, second[0]);

  WriteBatch missing = Puts({Rec("w", 100)});
  missing.expect_seq = {{"w", 5}};  // w does not exist
  auto absent = store_->Apply(missing);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kConflict);
}

TEST_P(StoreConformanceTest, ConcurrentCompareAndSwapLetsExactlyOneWinEachRound) {
  Memory counter = Rec("counter", 100);
  counter.text = "0";
  ASSERT_OK(store_->Apply(Puts({counter})).status());
  constexpr int kThreads = 4;
  constexpr int kIncrements = 25;
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int done = 0; done < kIncrements;) {
        auto got = store_->Get("counter");
        if (!got.ok() || !got->has_value()) return;
        Memory m = **got;
        m.text = std::to_string(std::stoi(m.text) + 1);
        WriteBatch b = Puts({m});
        b.expect_seq = {{m.id, m.seq}};
        auto applied = store_->Apply(b);
        if (applied.ok()) {
          ++done;
        } else if (applied.status().code() == StatusCode::kConflict) {
          ++conflicts;
        } else {
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> final_record, store_->Get("counter"));
  ASSERT_TRUE(final_record.has_value());
  EXPECT_EQ(final_record->text, std::to_string(kThreads * kIncrements));
}

// ---- Several handles ----

TEST_P(StoreConformanceTest, SecondHandleSeesWrites) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> other, OpenAgain());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> s1, store_->Apply(Puts({Rec("from-first", 1)})));
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> seen, other->Get("from-first"));
  EXPECT_TRUE(seen.has_value());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> s2, other->Apply(Puts({Rec("from-second", 2)})));
  EXPECT_GT(s2[0], s1[0]);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> back, store_->Get("from-second"));
  EXPECT_TRUE(back.has_value());
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, s2[0]);
}

TEST_P(StoreConformanceTest, WritesSurviveReopen) {
  ASSERT_OK(store_->Apply(Puts({FullRecord("durable")})).status());
  store_.reset();
  ASSERT_OK_AND_ASSIGN(store_, OpenAgain());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get("durable"));
  ASSERT_TRUE(got.has_value());
  Memory want = FullRecord("durable");
  want.seq = got->seq;
  EXPECT_EQ(*got, want);
}

TEST_P(StoreConformanceTest, ConcurrentThreadsLoseNoWrites) {
  constexpr int kThreads = 4;
  constexpr int kBatches = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        auto applied = store_->Apply(Puts({Rec("th" + std::to_string(t) + "-" + std::to_string(b), b)}));
        if (!applied.ok()) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  RecordQuery q;
  q.scope.tenant = "t1";
  ASSERT_OK_AND_ASSIGN(int64_t n, store_->Count(q));
  EXPECT_EQ(n, kThreads * kBatches);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  EXPECT_EQ(changes.size(), static_cast<size_t>(kThreads * kBatches));
}

}  // namespace
}  // namespace msp::conformance
