// Several msp servers on one PostgreSQL database: each engine keeps its own
// derived indexes in its own data directory and catches up from the shared
// change sequence, so a write through any server is found through every
// other before its next query answers, and ranking is what SQLite gives.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "msp/memory.h"
#include "store/store.h"
#include "tests/postgres/pg_test_util.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using ::msp::testing::kTestPgUnset;
using ::msp::testing::TestPg;

using ::msp::testing::FakeClock;

// Every reading moves the clock on by a second.
std::shared_ptr<Clock> TickingClock() {
  return std::make_shared<FakeClock>(1767258000000, /*tick=*/1000);  // 2026-01-01T09:00:00Z
}

const char* const kFacts[] = {
    "The deploy key for the billing service rotates every ninety days",
    "Ann prefers tabs over spaces in every Go repository",
    "Staging runs on the cluster in Frankfurt, production in Dublin",
    "The nightly backup of the orders database finishes around 03:40",
    "Bob owns the incident runbook for the payments gateway",
    "Never deploy the payments gateway on a Friday afternoon",
    "The search service caches results for five minutes",
    "Ann's team reviews pull requests within one working day",
    "Database migrations must be backward compatible for one release",
    "The billing service reads its secrets from the vault at startup",
    "Frankfurt staging has half the memory of production nodes",
    "The orders database holds seven years of invoices",
};

class MultiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(TestPg().empty()) << kTestPgUnset;
    schema_ = ::msp::testing::NewSchemaName("multi");
    dir_ = ::msp::testing::MakeTestDir("msp-multi");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    ::msp::testing::DropSchema(schema_);
    ::msp::testing::RemoveTestDir(dir_);
  }

  // A server's options: the shared database, its own data directory.
  Options ServerOptions(const std::string& name) const {
    Options o;
    o.store = ::msp::testing::PgStoreOptions(schema_);
    o.store.data_dir = dir_ + "/" + name;
    o.actor = name;
    return o;
  }

  std::unique_ptr<MemoryLayer> Open(const Options& o) {
    auto r = MemoryLayer::Open(o, clock_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  static Namespace Ns() {
    Namespace ns;
    ns.tenant = "acme";
    ns.user = "ann";
    return ns;
  }

  static Result<WriteResult> Remember(MemoryLayer& server, const std::string& text) {
    WriteRequest r;
    r.ns = Ns();
    r.text = text;
    r.tags = {"preference"};
    return server.Write(r);
  }

  static std::vector<SearchHit> Search(MemoryLayer& server, const std::string& query, int k = 5) {
    RetrieveRequest r;
    r.scope = Ns();
    r.query = query;
    r.top_k = k;
    r.record_access = false;
    auto hits = server.Retrieve(r);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<SearchHit>{};
  }

  static bool Finds(MemoryLayer& server, const std::string& query, const std::string& id) {
    for (const SearchHit& h : Search(server, query)) {
      if (h.memory.id == id) return true;
    }
    return false;
  }

  std::string schema_;
  std::string dir_;
  std::shared_ptr<Clock> clock_ = TickingClock();
};

TEST_F(MultiServerTest, AWriteThroughOneServerIsFoundThroughTheOther) {
  auto a = Open(ServerOptions("a"));
  auto b = Open(ServerOptions("b"));
  ASSERT_TRUE(a && b);
  // b has answered a query (its indexes are caught up) before a writes.
  EXPECT_TRUE(Search(*b, "deploy key rotation").empty());

  ASSERT_OK_AND_ASSIGN(WriteResult written, Remember(*a, kFacts[0]));
  EXPECT_TRUE(Finds(*b, "how often does the deploy key rotate", written.id));
  ASSERT_OK_AND_ASSIGN(Memory got, b->Get(Ns(), written.id));
  EXPECT_EQ(got.text, kFacts[0]);

  // And back: b writes, a finds; b deletes, a no longer finds.
  ASSERT_OK_AND_ASSIGN(WriteResult second, Remember(*b, kFacts[1]));
  EXPECT_TRUE(Finds(*a, "tabs or spaces in Go", second.id));
  ASSERT_OK(b->Delete(Ns(), written.id, "rotated away", "b"));
  EXPECT_FALSE(Finds(*a, "how often does the deploy key rotate", written.id));
  EXPECT_FALSE(Finds(*b, "how often does the deploy key rotate", written.id));
}

TEST_F(MultiServerTest, WritersOnBothServersAtOnceAreAllFoundOnEach) {
  auto a = Open(ServerOptions("a"));
  auto b = Open(ServerOptions("b"));
  ASSERT_TRUE(a && b);
  constexpr int kEach = 12;
  std::vector<std::string> ids_a(kEach), ids_b(kEach);
  std::atomic<int> failures{0};
  auto write = [&](MemoryLayer* server, std::vector<std::string>* ids, const std::string& who) {
    for (int i = 0; i < kEach; ++i) {
      auto w = Remember(*server, "Note " + who + std::to_string(i) + ": the quartz" + who +
                                     std::to_string(i) + " widget needs calibration");
      if (w.ok()) {
        (*ids)[static_cast<size_t>(i)] = w->id;
      } else {
        ++failures;
      }
    }
  };
  std::thread ta(write, a.get(), &ids_a, "a");
  std::thread tb(write, b.get(), &ids_b, "b");
  ta.join();
  tb.join();
  ASSERT_EQ(failures.load(), 0);
  for (int i = 0; i < kEach; ++i) {
    const std::string ia = std::to_string(i);
    EXPECT_TRUE(Finds(*b, "quartza" + ia, ids_a[static_cast<size_t>(i)])) << i;
    EXPECT_TRUE(Finds(*a, "quartzb" + ia, ids_b[static_cast<size_t>(i)])) << i;
  }
  ASSERT_OK_AND_ASSIGN(Stats sa, a->GetStats(Ns()));
  ASSERT_OK_AND_ASSIGN(Stats sb, b->GetStats(Ns()));
  EXPECT_EQ(sa.records, 2 * kEach);
  EXPECT_EQ(sb.records, 2 * kEach);
  EXPECT_EQ(sa.last_seq, sb.last_seq);
}

// Two servers appending to one session at once: every step lands, each
// with its own number (the database refuses a taken one; the loser retries).
TEST_F(MultiServerTest, EpisodesFromTwoServersInOneSessionGetDistinctSteps) {
  Options o = ServerOptions("a");
  o.consolidation.every_n_episodes = 0;
  auto a = Open(o);
  o.store.data_dir = dir_ + "/b";
  auto b = Open(o);
  ASSERT_TRUE(a && b);
  constexpr int kEach = 10;
  std::atomic<int> failures{0};
  auto append = [&](MemoryLayer* server, const std::string& who) {
    for (int i = 0; i < kEach; ++i) {
      EpisodeStep step;
      step.ns = Ns();
      step.ns.session = "shared";
      step.type = EpisodeType::kUserMessage;
      step.text = who + " says hello number " + std::to_string(i);
      if (!server->AddEpisode(step).ok()) ++failures;
    }
  };
  std::thread ta(append, a.get(), "a");
  std::thread tb(append, b.get(), "b");
  ta.join();
  tb.join();
  EXPECT_EQ(failures.load(), 0);
  Namespace scope = Ns();
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> steps, b->LastSteps(scope, "shared", 100));
  ASSERT_EQ(steps.size(), static_cast<size_t>(2 * kEach));
  std::set<int64_t> numbers;
  for (const Memory& m : steps) numbers.insert(m.step_number);
  EXPECT_EQ(numbers.size(), static_cast<size_t>(2 * kEach));
  EXPECT_EQ(*numbers.begin(), 1);
  EXPECT_EQ(*numbers.rbegin(), 2 * kEach);
}

TEST_F(MultiServerTest, ANewServerCatchesUpFromTheChangeSequence) {
  auto a = Open(ServerOptions("a"));
  ASSERT_NE(a, nullptr);
  std::vector<std::string> ids;
  for (const char* fact : kFacts) {
    ASSERT_OK_AND_ASSIGN(WriteResult w, Remember(*a, fact));
    ids.push_back(w.id);
  }
  // A server started later, with an empty data directory.
  auto late = Open(ServerOptions("late"));
  ASSERT_NE(late, nullptr);
  EXPECT_TRUE(Finds(*late, "nightly backup orders database", ids[3]));
  ASSERT_OK_AND_ASSIGN(Stats s, late->GetStats(Ns()));
  EXPECT_EQ(s.records, static_cast<int64_t>(ids.size()));
  EXPECT_EQ(s.lexical_applied_seq, s.last_seq);
}

// A session another server is consolidating (it holds the session's lease)
// is left to it: consolidating it here lands nothing until the lease is free.
TEST_F(MultiServerTest, ASessionIsConsolidatedByOneServerAtATime) {
  Options o = ServerOptions("a");
  o.consolidation.every_n_episodes = 0;  // only when asked
  auto a = Open(o);
  ASSERT_NE(a, nullptr);
  Namespace ns = Ns();
  ns.session = "s1";
  for (const char* text : {"I prefer dark roast coffee in the morning.",
                           "I prefer short answers with code first."}) {
    EpisodeStep step;
    step.ns = ns;
    step.type = EpisodeType::kUserMessage;
    step.text = text;
    ASSERT_OK(a->AddEpisode(step).status());
  }
  // "Another server": a handle on the same database holding the lease the
  // engine takes for this session.
  auto other = OpenStore(::msp::testing::PgStoreOptions(schema_));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  Namespace owner = ns;
  owner.session.clear();
  const std::string key = "consolidated/" + owner.ToString() + "/session=s1";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreLease> held, (*other)->TryLease(key));
  ASSERT_NE(held, nullptr);

  ASSERT_OK_AND_ASSIGN(ConsolidationReport skipped, a->Consolidate(Ns(), "s1"));
  EXPECT_EQ(skipped.episodes_read, 0);
  EXPECT_EQ(skipped.facts_added, 0);

  held.reset();
  ASSERT_OK_AND_ASSIGN(ConsolidationReport done, a->Consolidate(Ns(), "s1"));
  EXPECT_EQ(done.episodes_read, 2);
  EXPECT_EQ(done.facts_added, 2);
}

// The same writes on SQLite and on PostgreSQL rank the same.
TEST_F(MultiServerTest, RankingIsTheSameAsOnSqlite) {
  Options pg = ServerOptions("pg");
  Options lite = ServerOptions("lite");
  lite.store = StoreOptions();
  lite.store.data_dir = dir_ + "/lite";
  lite.store.synchronous = "normal";
  auto on_pg = MemoryLayer::Open(pg, TickingClock());
  auto on_lite = MemoryLayer::Open(lite, TickingClock());
  ASSERT_TRUE(on_pg.ok()) << on_pg.status().ToString();
  ASSERT_TRUE(on_lite.ok()) << on_lite.status().ToString();
  for (const char* fact : kFacts) {
    ASSERT_OK(Remember(**on_pg, fact).status());
    ASSERT_OK(Remember(**on_lite, fact).status());
  }
  for (const char* query : {"payments gateway", "orders database", "Frankfurt staging memory",
                            "billing service secrets", "Ann"}) {
    const std::vector<SearchHit> want = Search(**on_lite, query, 8);
    const std::vector<SearchHit> got = Search(**on_pg, query, 8);
    ASSERT_FALSE(want.empty()) << query;
    ASSERT_EQ(got.size(), want.size()) << query;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].memory.text, want[i].memory.text) << query << " #" << i;
      EXPECT_DOUBLE_EQ(got[i].score, want[i].score) << query << " #" << i;
    }
  }
}

}  // namespace
}  // namespace msp
