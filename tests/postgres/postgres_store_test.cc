// The PostgreSQL store beyond the conformance suite: migrations raced by
// several openers, the gapless change sequence under concurrent writers,
// leases, change notifications, timeouts, and losing the database and
// getting it back.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_migrations.h"
#include "store/postgres/postgres_store.h"
#include "tests/postgres/pg_test_util.h"
#include "tests/postgres/tcp_proxy.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using ::msp::testing::DropSchema;
using ::msp::testing::kTestPgUnset;
using ::msp::testing::NewSchemaName;
using ::msp::testing::PgStoreOptions;
using ::msp::testing::TestPg;

Memory Rec(const std::string& id, const std::string& text = "some text") {
  Memory m;
  m.id = id;
  m.ns.tenant = "t1";
  m.kind = Kind::kFact;
  m.layer = DefaultLayer(m.kind);
  m.text = text;
  m.created_at = 1000;
  m.updated_at = 1000;
  return m;
}

WriteBatch Puts(std::vector<Memory> records) {
  WriteBatch b;
  b.puts = std::move(records);
  return b;
}

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(TestPg().empty()) << kTestPgUnset;
    schema_ = NewSchemaName("pgstore");
  }
  void TearDown() override { DropSchema(schema_); }

  StoreOptions Options() const { return PgStoreOptions(schema_); }

  std::unique_ptr<PostgresStore> Open(const StoreOptions& options) {
    auto opened = OpenPostgresStore(options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  // A plain connection to the test database with search_path = the schema.
  std::unique_ptr<PgConnection> Raw() {
    PgConnectOptions options;
    options.conninfo = TestPg();
    options.schema = schema_;
    options.describe = "$MSP_TEST_PG";
    auto conn = PgConnection::Connect(options);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    return conn.ok() ? std::move(conn).value() : nullptr;
  }

  std::string schema_;
};

// ---- migrations ----

TEST_F(PostgresStoreTest, ServersStartingAtOnceMigrateOnce) {
  constexpr int kOpeners = 6;
  std::vector<std::unique_ptr<PostgresStore>> stores(kOpeners);
  std::vector<Status> results(kOpeners);
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back([&, i] {
      auto opened = OpenPostgresStore(Options());
      results[static_cast<size_t>(i)] = opened.status();
      if (opened.ok()) stores[static_cast<size_t>(i)] = std::move(opened).value();
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();

  auto raw = Raw();
  ASSERT_NE(raw, nullptr);
  ASSERT_OK_AND_ASSIGN(PgResult rows, raw->Exec("SELECT count(*), max(version) FROM schema_version",
                                                PgParams(), "count versions", false));
  ASSERT_EQ(rows.rows(), 1);
  EXPECT_EQ(rows.Int(0, 0), static_cast<int64_t>(PgSchemaMigrations().size()));
  EXPECT_EQ(rows.Int(0, 1), static_cast<int64_t>(PgSchemaMigrations().size()));
  ASSERT_NE(stores[0], nullptr);
  ASSERT_OK(stores[0]->Apply(Puts({Rec("a")})).status());
  ASSERT_NE(stores[1], nullptr);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> seen, stores[1]->Get("a"));
  EXPECT_TRUE(seen.has_value());
}

TEST_F(PostgresStoreTest, RefusesASchemaNewerThanThisBuild) {
  ASSERT_NE(Open(Options()), nullptr);
  auto raw = Raw();
  ASSERT_NE(raw, nullptr);
  ASSERT_OK(raw->Script("INSERT INTO schema_version (version, applied_at, description) "
                        "VALUES (999, 0, 'from the future')",
                        "add a version"));
  auto refused = OpenPostgresStore(Options());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("999"), std::string::npos)
      << refused.status().message();
}

TEST_F(PostgresStoreTest, RejectsBadSettingsNamingThem) {
  StoreOptions bad_schema = Options();
  bad_schema.postgres_schema = "Robert'); DROP TABLE";
  auto a = OpenPostgresStore(bad_schema);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("store.postgres_schema"), std::string::npos);

  StoreOptions bad_pool = Options();
  bad_pool.postgres_pool_size = 0;
  auto b = OpenPostgresStore(bad_pool);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("store.postgres_pool_size"), std::string::npos);

  StoreOptions bad_url = Options();
  bad_url.postgres_url = "host=localhost port";  // a keyword without a value
  auto c = OpenPostgresStore(bad_url);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("store.postgres_url"), std::string::npos);
}

TEST_F(PostgresStoreTest, UnreachableDatabaseIsUnavailable) {
  // A port nothing listens on: the proxy's, once it is down.
  auto proxy = ::msp::testing::TcpProxy::Start("127.0.0.1", 1);
  ASSERT_NE(proxy, nullptr);
  const int port = proxy->port();
  proxy->Down();
  StoreOptions options = Options();
  options.postgres_url = "host=127.0.0.1 port=" + std::to_string(port) + " user=msp dbname=msp";
  auto opened = OpenStore(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(opened.status().message().find("cannot connect"), std::string::npos)
      << opened.status().message();
  EXPECT_NE(opened.status().message().find(std::to_string(port)), std::string::npos)
      << opened.status().message();
}

// ---- the change sequence ----

// Writers on two handles commit concurrently; a reader following
// ChangesSince never sees a gap (which would mean a change it skipped for
// good, since it never looks back), and every change is seen once.
TEST_F(PostgresStoreTest, ReadersFollowingTheChangeSequenceNeverSkipAChange) {
  auto a = Open(Options());
  auto b = Open(Options());
  auto reader = Open(Options());
  ASSERT_TRUE(a && b && reader);
  constexpr int kWritersPerStore = 2;
  constexpr int kBatches = 25;
  std::atomic<int> writers_left{2 * kWritersPerStore};
  std::atomic<int> write_failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2 * kWritersPerStore; ++w) {
    PostgresStore* store = w % 2 == 0 ? a.get() : b.get();
    writers.emplace_back([&, store, w] {
      for (int i = 0; i < kBatches; ++i) {
        std::vector<Memory> batch = {Rec("w" + std::to_string(w) + "-" + std::to_string(i))};
        if (i % 5 == 0) batch.push_back(Rec("w" + std::to_string(w) + "-" + std::to_string(i) + "b"));
        if (!store->Apply(Puts(batch)).ok()) ++write_failures;
      }
      --writers_left;
    });
  }
  int64_t cursor = 0;
  int gaps = 0;
  int read_failures = 0;
  while (true) {
    const bool done = writers_left.load() == 0;
    auto changes = reader->ChangesSince(cursor, 7);
    if (!changes.ok()) {
      ++read_failures;
      break;
    }
    for (const Change& c : *changes) {
      if (c.seq != cursor + 1) ++gaps;
      cursor = c.seq;
    }
    if (done && changes->empty()) break;
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(write_failures.load(), 0);
  EXPECT_EQ(read_failures, 0);
  EXPECT_EQ(gaps, 0);
  const int64_t expected = 2 * kWritersPerStore * (kBatches + kBatches / 5);
  EXPECT_EQ(cursor, expected);
  ASSERT_OK_AND_ASSIGN(int64_t last, reader->LastSeq());
  EXPECT_EQ(last, expected);
}

TEST_F(PostgresStoreTest, AnEpisodeStepIsTakenByExactlyOneOfTwoServers) {
  auto a = Open(Options());
  auto b = Open(Options());
  ASSERT_TRUE(a && b);
  int wins = 0;
  for (int step = 1; step <= 10; ++step) {
    auto episode = [&](const std::string& id) {
      Memory m = Rec(id);
      m.kind = Kind::kEpisode;
      m.layer = DefaultLayer(m.kind);
      m.ns.session = "s1";
      m.step_number = step;
      return m;
    };
    Result<std::vector<int64_t>> ra = Status::Internal("not run");
    Result<std::vector<int64_t>> rb = Status::Internal("not run");
    std::thread ta([&] { ra = a->Apply(Puts({episode("a" + std::to_string(step))})); });
    std::thread tb([&] { rb = b->Apply(Puts({episode("b" + std::to_string(step))})); });
    ta.join();
    tb.join();
    EXPECT_NE(ra.ok(), rb.ok()) << "step " << step;
    const Status& loser = ra.ok() ? rb.status() : ra.status();
    EXPECT_EQ(loser.code(), StatusCode::kAlreadyExists) << loser.ToString();
    wins += (ra.ok() ? 1 : 0) + (rb.ok() ? 1 : 0);
  }
  EXPECT_EQ(wins, 10);
  ASSERT_OK_AND_ASSIGN(int64_t last, a->LastSeq());
  EXPECT_EQ(last, 10);  // the losers left no gap
}

TEST_F(PostgresStoreTest, TextWithANulByteIsRefusedAndNothingLands) {
  auto store = Open(Options());
  ASSERT_NE(store, nullptr);
  Memory bad = Rec("bad", std::string("before\0after", 12));
  auto applied = store->Apply(Puts({Rec("good"), bad}));
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> good, store->Get("good"));
  EXPECT_FALSE(good.has_value());
}

// ---- notifications and leases ----

TEST_F(PostgresStoreTest, WaitForChangeWakesWhenAnotherServerWrites) {
  auto writer = Open(Options());
  auto waiter = Open(Options());
  ASSERT_TRUE(writer && waiter);
  ASSERT_OK_AND_ASSIGN(int64_t before, waiter->LastSeq());
  // Nothing happens: the wait ends at its timeout with the same seq.
  ASSERT_OK_AND_ASSIGN(int64_t unchanged, waiter->WaitForChange(before, 20));
  EXPECT_EQ(unchanged, before);

  Result<int64_t> woke = Status::Internal("not run");
  std::thread t([&] { woke = waiter->WaitForChange(before, 60000); });
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, writer->Apply(Puts({Rec("new")})));
  t.join();
  ASSERT_TRUE(woke.ok()) << woke.status().ToString();
  EXPECT_EQ(*woke, seqs[0]);
}

TEST_F(PostgresStoreTest, ALongSchemaNameStillGetsNotified) {
  const std::string unique = NewSchemaName("l");
  schema_ = std::string(60 - unique.size(), 'x') + unique;  // 60 bytes: "msp_changes_" + it is 72
  ASSERT_EQ(schema_.size(), 60u);
  EXPECT_LE(ChangeChannel(schema_).size(), 63u);
  EXPECT_NE(ChangeChannel(schema_), ChangeChannel(schema_ + "y"));
  auto writer = Open(Options());
  auto waiter = Open(Options());
  ASSERT_TRUE(writer && waiter);
  Result<int64_t> woke = Status::Internal("not run");
  std::thread t([&] { woke = waiter->WaitForChange(0, 60000); });
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, writer->Apply(Puts({Rec("new")})));
  t.join();
  ASSERT_TRUE(woke.ok()) << woke.status().ToString();
  EXPECT_EQ(*woke, seqs[0]);
}

TEST_F(PostgresStoreTest, ALeaseIsHeldByOneServerAtATime) {
  auto a = Open(Options());
  auto b = Open(Options());
  ASSERT_TRUE(a && b);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreLease> first, a->TryLease("consolidation"));
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->held());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreLease> second, b->TryLease("consolidation"));
  EXPECT_EQ(second, nullptr);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreLease> same_store, a->TryLease("consolidation"));
  EXPECT_EQ(same_store, nullptr);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreLease> other_name, b->TryLease("refresh"));
  EXPECT_NE(other_name, nullptr);
  first.reset();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreLease> after, b->TryLease("consolidation"));
  EXPECT_NE(after, nullptr);

  // Another schema's lease of the same name is another lease.
  const std::string other_schema = NewSchemaName("pglease");
  StoreOptions other = Options();
  other.postgres_schema = other_schema;
  auto c = Open(other);
  ASSERT_NE(c, nullptr);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StoreLease> elsewhere, c->TryLease("consolidation"));
  EXPECT_NE(elsewhere, nullptr);
  elsewhere.reset();
  c.reset();
  DropSchema(other_schema);
}

// ---- timeouts, lost connections, a database that goes away ----

TEST_F(PostgresStoreTest, AStatementOverItsTimeoutIsUnavailable) {
  StoreOptions options = Options();
  options.postgres_statement_timeout_ms = 50;
  auto store = Open(options);
  ASSERT_NE(store, nullptr);
  // Another session holds the change counter: the store's write waits on it
  // until its statement timeout ends the wait.
  auto holder = Raw();
  ASSERT_NE(holder, nullptr);
  ASSERT_OK(holder->Script("BEGIN; UPDATE change_counter SET last_seq = last_seq", "hold the counter"));
  auto applied = store->Apply(Puts({Rec("late")}));
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(applied.status().message().find("postgres_statement_timeout_ms"), std::string::npos)
      << applied.status().message();
  ASSERT_OK(holder->Script("ROLLBACK", "release the counter"));
  ASSERT_OK(store->Apply(Puts({Rec("on time")})).status());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> late, store->Get("late"));
  EXPECT_FALSE(late.has_value());
}

TEST_F(PostgresStoreTest, KilledConnectionsAreReplacedTransparently) {
  const std::string app = "msp_" + schema_;
  StoreOptions options = Options();
  options.postgres_url = ::msp::testing::RewriteConninfo(TestPg(), {{"application_name", app}});
  ASSERT_FALSE(options.postgres_url.empty());
  auto store = Open(options);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Apply(Puts({Rec("before")})).status());
  // Several pooled connections, so that all of them die at once.
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) readers.emplace_back([&] { (void)store->Get("before"); });
  for (auto& t : readers) t.join();

  auto admin = Raw();
  ASSERT_NE(admin, nullptr);
  ASSERT_OK_AND_ASSIGN(PgResult killed,
                       admin->Exec("SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM "
                                   "pg_stat_activity WHERE application_name = $1) AS k",
                                   PgParams().Text(app), "terminate", false));
  ASSERT_GE(killed.Int(0, 0), 1);

  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store->Get("before"));
  EXPECT_TRUE(got.has_value());
  ASSERT_OK(store->Apply(Puts({Rec("after")})).status());
  ASSERT_OK_AND_ASSIGN(int64_t last, store->LastSeq());
  EXPECT_EQ(last, 2);
}

TEST_F(PostgresStoreTest, DatabaseDownIsUnavailableAndComingBackRecovers) {
  const std::string host = ::msp::testing::ConninfoValue(TestPg(), "host");
  const std::string port = ::msp::testing::ConninfoValue(TestPg(), "port");
  ASSERT_FALSE(host.empty()) << "MSP_TEST_PG names no host";
  auto proxy = ::msp::testing::TcpProxy::Start(host, port.empty() ? 5432 : std::stoi(port));
  ASSERT_NE(proxy, nullptr);
  StoreOptions options = Options();
  options.postgres_url = ::msp::testing::RewriteConninfo(
      TestPg(), {{"host", "127.0.0.1"}, {"hostaddr", "127.0.0.1"}, {"port", std::to_string(proxy->port())}});
  auto store = Open(options);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Apply(Puts({Rec("kept")})).status());
  ASSERT_OK(store->Ping());
  ASSERT_OK_AND_ASSIGN(int64_t seen, store->WaitForChange(0, 0));
  EXPECT_EQ(seen, 1);

  proxy->Down();
  auto get = store->Get("kept");
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(get.status().code(), StatusCode::kUnavailable) << get.status().ToString();
  auto put = store->Apply(Puts({Rec("lost")}));
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), StatusCode::kUnavailable) << put.status().ToString();
  Status ping = store->Ping();
  EXPECT_EQ(ping.code(), StatusCode::kUnavailable) << ping.ToString();
  EXPECT_NE(ping.message().find(std::to_string(proxy->port())), std::string::npos) << ping.ToString();
  auto wait = store->WaitForChange(1, 10);
  EXPECT_FALSE(wait.ok());

  ASSERT_TRUE(proxy->Up());
  ASSERT_OK(store->Ping());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> kept, store->Get("kept"));
  EXPECT_TRUE(kept.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> lost, store->Get("lost"));
  EXPECT_FALSE(lost.has_value());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store->Apply(Puts({Rec("again")})));
  EXPECT_EQ(seqs, (std::vector<int64_t>{2}));
  ASSERT_OK_AND_ASSIGN(int64_t woke, store->WaitForChange(1, 0));
  EXPECT_EQ(woke, 2);
}

}  // namespace
}  // namespace msp
