// Tests of what is particular to the SQLite store: opening, options, schema
// migrations, several handles and processes on one file, error mapping.
// The behaviour every backend shares is in tests/conformance/.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "msp/status.h"
#include "tests/support/test_util.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"

namespace msp {
namespace {


WriteBatch Batch(std::vector<Memory> puts, std::vector<std::string> deletes = {}) {
  WriteBatch b;
  b.puts = std::move(puts);
  b.deletes = std::move(deletes);
  return b;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("msp-sqlite");
    ASSERT_FALSE(dir_.empty());
    db_path_ = dir_ + "/msp.db";
  }
  void TearDown() override { testing::RemoveTestDir(dir_); }

  StoreOptions Options() const {
    StoreOptions options;
    options.data_dir = dir_;
    return options;
  }

  // Runs `sql` on the database file through a separate raw connection.
  void RawExec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error != nullptr ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  static Memory Rec(const std::string& id) {
    Memory m;
    m.id = id;
    m.text = "text of " + id;
    m.created_at = 1;
    return m;
  }

  // 3,000 records of 3,000 bytes: a page each, ~10 MB in all.
  static std::vector<Memory> PageSizedRecords() {
    std::vector<Memory> records;
    for (int i = 0; i < 3000; ++i) {
      Memory m = Rec("r" + std::to_string(i));
      m.text = std::string(3000, static_cast<char>('a' + i % 26));
      records.push_back(std::move(m));
    }
    return records;
  }

  std::string dir_;
  std::string db_path_;
};

// ---- Opening ----

TEST_F(SqliteStoreTest, OpenCreatesDataDirAndDatabase) {
  StoreOptions options = Options();
  options.data_dir = dir_ + "/nested/data";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(options));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/nested/data/msp.db"));
  EXPECT_EQ(store->Describe(), dir_ + "/nested/data/msp.db");
}

// SetCacheBytes raises the connection's page cache: reading ~10 MB of
// records leaves SQLite's default cache (2 MB) full, and a raised one
// holding them all (SQLite's own count of the memory it holds, in this
// process where this store is the only connection).
TEST_F(SqliteStoreTest, SetCacheBytesKeepsMorePagesInMemory) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  const std::vector<Memory> records = PageSizedRecords();
  ASSERT_OK(store->Apply(Batch(records)).status());
  auto held_after_scan = [&] {
    size_t seen = 0;
    EXPECT_TRUE(store->Scan([&](const Memory&) { return ++seen > 0; }).ok());
    EXPECT_EQ(seen, 3000u);
    sqlite3_int64 now = 0, high = 0;
    sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &now, &high, /*resetFlag=*/0);
    return now;
  };
  const sqlite3_int64 by_default = held_after_scan();
  store->SetCacheBytes(size_t{64} << 20);
  const sqlite3_int64 raised = held_after_scan();
  EXPECT_LT(by_default, sqlite3_int64{5} << 20);
  EXPECT_GT(raised, sqlite3_int64{8} << 20);
}

// FillCache fills the raised cache now: nothing before SetCacheBytes; up
// to the cache (SQLite recycling its pages: full) on a store larger than
// it; the whole store on one smaller; the records read the same after.
TEST_F(SqliteStoreTest, FillCacheReadsPagesUpToTheCache) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  const std::vector<Memory> records = PageSizedRecords();
  ASSERT_OK(store->Apply(Batch(records)).status());
  EXPECT_EQ(store->FillCache(), 0u);  // not raised
  store->SetCacheBytes(size_t{4} << 20);
  const size_t four = store->FillCache();
  EXPECT_GT(four, size_t{3} << 20);
  EXPECT_LT(four, size_t{6} << 20);
  store->SetCacheBytes(size_t{64} << 20);
  const size_t all = store->FillCache();
  const size_t file = std::filesystem::file_size(db_path_) + std::filesystem::file_size(db_path_ + "-wal");
  EXPECT_GT(all, size_t{9} << 20);  // 3,000 pages of records and the id index
  EXPECT_LT(all, file + (size_t{4} << 20));
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> read, store->GetMany({"r0", "r1234", "r2999"}, false));
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[1].id, "r1234");
  EXPECT_EQ(read[1].text, records[1234].text);
}

TEST_F(SqliteStoreTest, DatabaseIsInWalMode) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  ASSERT_OK(store->Apply(Batch({Rec("a")})).status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path_));
  ASSERT_OK_AND_ASSIGN(Statement s, db->Prepare("PRAGMA journal_mode", "test"));
  ASSERT_OK_AND_ASSIGN(bool row, s.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(s.ColumnText(0), "wal");
}

TEST_F(SqliteStoreTest, SynchronousMustBeFullOrNormal) {
  for (const char* good : {"full", "normal"}) {
    StoreOptions options = Options();
    options.synchronous = good;
    auto opened = OpenStore(options);
    EXPECT_TRUE(opened.ok()) << good << ": " << opened.status().ToString();
  }
  std::filesystem::remove_all(dir_ + "/msp.db");
  for (const char* bad : {"off", "FULLY", "", "extra"}) {
    StoreOptions options = Options();
    options.synchronous = bad;
    auto opened = OpenStore(options);
    ASSERT_FALSE(opened.ok()) << bad;
    EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(Contains(opened.status().message(), "synchronous")) << opened.status().message();
  }
  EXPECT_FALSE(std::filesystem::exists(db_path_));  // refused before touching the file
}

TEST_F(SqliteStoreTest, NegativeBusyTimeoutIsRefused) {
  StoreOptions options = Options();
  options.busy_timeout_ms = -1;
  auto opened = OpenStore(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SqliteStoreTest, DataDirUnderARegularFileIsAnIoErrorNamingThePath) {
  const std::string file = dir_ + "/plain-file";
  std::ofstream(file) << "not a directory";
  StoreOptions options = Options();
  options.data_dir = file + "/data";
  auto opened = OpenStore(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kIoError);
  EXPECT_TRUE(Contains(opened.status().message(), options.data_dir)) << opened.status().message();

  options.data_dir = file;  // the data dir itself is a file
  opened = OpenStore(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kIoError);
  EXPECT_TRUE(Contains(opened.status().message(), file)) << opened.status().message();
}

TEST_F(SqliteStoreTest, UnopenableDatabasePathIsAnIoErrorNamingThePath) {
  std::filesystem::create_directories(db_path_);  // msp.db is a directory
  auto opened = OpenStore(Options());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kIoError);
  EXPECT_TRUE(Contains(opened.status().message(), db_path_)) << opened.status().message();
}

TEST_F(SqliteStoreTest, ReadOnlyDirectoryIsAnIoErrorNamingThePath) {
  // A read-only bind of the scratch dir is not available here, so use a
  // directory that no process may write even as root: /proc.
  StoreOptions options = Options();
  options.data_dir = "/proc/msp-cannot-exist";
  auto opened = OpenStore(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kIoError);
  EXPECT_TRUE(Contains(opened.status().message(), "/proc/msp-cannot-exist"))
      << opened.status().message();
}

TEST_F(SqliteStoreTest, FileThatIsNotADatabaseIsCorruptionNamingThePath) {
  std::ofstream(db_path_) << std::string(8192, 'x');
  auto opened = OpenStore(Options());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(Contains(opened.status().message(), db_path_)) << opened.status().message();
}

// ---- Migrations ----

TEST_F(SqliteStoreTest, FreshDatabaseGetsTheCurrentSchemaVersion) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path_));
  ASSERT_OK_AND_ASSIGN(int version, ReadSchemaVersion(*db));
  EXPECT_EQ(version, static_cast<int>(SchemaMigrations().size()));
  EXPECT_GE(version, 1);
}

TEST_F(SqliteStoreTest, Version3KeepsRecordsOfAVersion2DatabaseAtAccessLevelZero) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path_));
    std::vector<Migration> v2 = {SchemaMigrations()[0], SchemaMigrations()[1]};
    ASSERT_OK(Migrate(*db, v2));
    ASSERT_OK(db->Exec(
        "INSERT INTO records (id, tenant, layer, kind, text, sensitivity, criticality, confidence, "
        "state, step_number, embedder_id, seq, embedding) VALUES ('old', 't', 'semantic', 'fact', "
        "'kept across the migration', 'low', 'normal', 0.5, 'active', 0, 'e', 1, "
        "X'0000803F00000040')",
        "test"));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> old, store->Get("old"));
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->text, "kept across the migration");
  EXPECT_EQ(old->access_level, 0);
  EXPECT_EQ(old->embedding, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_DOUBLE_EQ(old->confidence, 0.5);
  // The rebuilt table keeps the unique step index of version 2.
  Memory a = Rec("step-a");
  a.kind = Kind::kEpisode;
  a.ns.session = "s";
  a.step_number = 1;
  Memory b = a;
  b.id = "step-b";
  ASSERT_OK(store->Apply(Batch({a})).status());
  auto dup = store->Apply(Batch({b}));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
}

TEST_F(SqliteStoreTest, ReopeningIsIdempotent) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
    ASSERT_OK(store->Apply(Batch({Rec("kept")})).status());
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
    ASSERT_OK_AND_ASSIGN(std::optional<Memory> kept, store->Get("kept"));
    EXPECT_TRUE(kept.has_value());
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path_));
  ASSERT_OK_AND_ASSIGN(Statement s, db->Prepare("SELECT count(*) FROM schema_version", "test"));
  ASSERT_OK_AND_ASSIGN(bool row, s.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(s.ColumnInt(0), static_cast<int64_t>(SchemaMigrations().size()));
}

TEST_F(SqliteStoreTest, DatabaseFromTheFutureIsRefused) {
  { ASSERT_OK(OpenStore(Options()).status()); }
  const int future = static_cast<int>(SchemaMigrations().size()) + 1;
  RawExec("INSERT INTO schema_version(version, applied_at, description) VALUES (" +
          std::to_string(future) + ", 0, 'from a newer msp')");
  auto opened = OpenStore(Options());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition);
  const std::string& message = opened.status().message();
  EXPECT_TRUE(Contains(message, db_path_)) << message;
  EXPECT_TRUE(Contains(message, std::to_string(future))) << message;
}

TEST_F(SqliteStoreTest, ANewMigrationIsAppliedToAnOlderDatabase) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path_));
  std::vector<Migration> v1 = {SchemaMigrations()[0]};
  ASSERT_OK(Migrate(*db, v1));
  ASSERT_OK(db->Exec("INSERT INTO meta(key, value) VALUES ('k', 'v')", "test"));

  std::vector<Migration> v2 = v1;
  v2.push_back({2, "meta notes", "ALTER TABLE meta ADD COLUMN note TEXT NOT NULL DEFAULT 'n';"});
  ASSERT_OK(Migrate(*db, v2));
  ASSERT_OK_AND_ASSIGN(int version, ReadSchemaVersion(*db));
  EXPECT_EQ(version, 2);
  ASSERT_OK_AND_ASSIGN(Statement s, db->Prepare("SELECT value, note FROM meta", "test"));
  ASSERT_OK_AND_ASSIGN(bool row, s.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(s.ColumnText(0), "v");
  EXPECT_EQ(s.ColumnText(1), "n");
  ASSERT_OK(Migrate(*db, v2));  // again: nothing to do
  ASSERT_OK_AND_ASSIGN(version, ReadSchemaVersion(*db));
  EXPECT_EQ(version, 2);
}

TEST_F(SqliteStoreTest, FailingMigrationLeavesTheDatabaseAsItWas) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path_));
  std::vector<Migration> v1 = {SchemaMigrations()[0]};
  ASSERT_OK(Migrate(*db, v1));
  std::vector<Migration> broken = v1;
  broken.push_back({2, "half good", "CREATE TABLE half (a INTEGER); THIS IS NOT SQL;"});
  const Status status = Migrate(*db, broken);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message(), "migration 2")) << status.message();
  ASSERT_OK_AND_ASSIGN(int version, ReadSchemaVersion(*db));
  EXPECT_EQ(version, 1);
  ASSERT_OK_AND_ASSIGN(
      Statement s,
      db->Prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half'", "test"));
  ASSERT_OK_AND_ASSIGN(bool row, s.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(s.ColumnInt(0), 0);
}

TEST_F(SqliteStoreTest, MigrationListMustBeNumberedInOrder) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path_));
  std::vector<Migration> gap = {SchemaMigrations()[0], {3, "skips two", "SELECT 1;"}};
  const Status status = Migrate(*db, gap);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInternal);
}

// ---- Several handles and processes ----

// GetMany reads 16 ids a statement: order, repeats and missing ids hold
// across chunks, for every count around the chunk size.
TEST_F(SqliteStoreTest, GetManyKeepsOrderRepeatsAndGapsAcrossChunks) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  std::vector<Memory> records;
  for (int i = 0; i < 40; ++i) records.push_back(Rec("r" + std::to_string(i)));
  ASSERT_OK(store->Apply(Batch(records)).status());
  std::vector<std::string> ids;
  std::vector<std::string> want;
  for (int i = 39; i >= 0; --i) {
    const std::string id = "r" + std::to_string(i);
    ids.push_back(id);
    want.push_back(id);
    if (i % 5 == 0) ids.push_back("missing-" + id);
    if (i % 7 == 0) {  // asked again, in this chunk or a later one
      ids.push_back(id);
      want.push_back(id);
    }
  }
  for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{33}, ids.size()}) {
    const std::vector<std::string> asked(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<std::string> expected;
    for (const std::string& id : asked) {
      if (id.rfind("missing-", 0) != 0) expected.push_back(id);
    }
    ASSERT_OK_AND_ASSIGN(std::vector<Memory> got, store->GetMany(asked, /*with_embeddings=*/false));
    std::vector<std::string> got_ids;
    for (const Memory& m : got) {
      got_ids.push_back(m.id);
      EXPECT_EQ(m.text, "text of " + m.id);
    }
    EXPECT_EQ(got_ids, expected) << n << " ids";
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> all, store->GetMany(ids));
  ASSERT_EQ(all.size(), want.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].id, want[i]);
}

TEST_F(SqliteStoreTest, TwoStoresOnOneFileSeeEachOthersWrites) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> a, OpenStore(Options()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> b, OpenStore(Options()));
  ASSERT_OK(a->Apply(Batch({Rec("from-a")})).status());
  ASSERT_OK(b->Apply(Batch({Rec("from-b")}, {"from-a"})).status());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> gone, a->Get("from-a"));
  EXPECT_FALSE(gone.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> seen, a->Get("from-b"));
  EXPECT_TRUE(seen.has_value());
  ASSERT_OK_AND_ASSIGN(int64_t last_a, a->LastSeq());
  ASSERT_OK_AND_ASSIGN(int64_t last_b, b->LastSeq());
  EXPECT_EQ(last_a, 3);
  EXPECT_EQ(last_b, 3);
}

TEST_F(SqliteStoreTest, ConcurrentProcessesLoseNoWrites) {
  constexpr int kChildren = 3;
  constexpr int kBatches = 20;
  constexpr int kPerBatch = 3;
  // No store yet: the children also race to create and migrate it.
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      StoreOptions options = Options();
      options.synchronous = "normal";
      auto opened = OpenStore(options);
      if (!opened.ok()) {
        std::fprintf(stderr, "child %d: %s\n", c, opened.status().ToString().c_str());
        _exit(2);
      }
      for (int b = 0; b < kBatches; ++b) {
        WriteBatch batch;
        for (int i = 0; i < kPerBatch; ++i) {
          batch.puts.push_back(
              Rec("p" + std::to_string(c) + "-" + std::to_string(b) + "-" + std::to_string(i)));
        }
        auto applied = (*opened)->Apply(batch);
        if (!applied.ok()) {
          std::fprintf(stderr, "child %d: %s\n", c, applied.status().ToString().c_str());
          _exit(3);
        }
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  RecordQuery all;
  ASSERT_OK_AND_ASSIGN(int64_t n, store->Count(all));
  EXPECT_EQ(n, kChildren * kBatches * kPerBatch);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store->ChangesSince(0, 0));
  ASSERT_EQ(changes.size(), static_cast<size_t>(kChildren * kBatches * kPerBatch));
  std::set<int64_t> seqs;
  for (const Change& c : changes) seqs.insert(c.seq);
  EXPECT_EQ(seqs.size(), changes.size());
}

// ---- Error mapping ----

TEST_F(SqliteStoreTest, LockedDatabaseIsUnavailableNamingThePath) {
  StoreOptions options = Options();
  options.busy_timeout_ms = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(options));
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto applied = store->Apply(Batch({Rec("blocked")}));
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(applied.status().message(), db_path_)) << applied.status().message();
  // Once the lock is gone the same store writes again.
  ASSERT_OK(store->Apply(Batch({Rec("after")})).status());
}

TEST_F(SqliteStoreTest, CorruptRowIsReportedNotThrown) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  ASSERT_OK(store->Apply(Batch({Rec("bad-kind"), Rec("bad-tags")})).status());
  RawExec("UPDATE records SET kind = 'gadget' WHERE id = 'bad-kind';"
          "UPDATE records SET tags_json = '[1, oops' WHERE id = 'bad-tags';");
  for (const char* id : {"bad-kind", "bad-tags"}) {
    auto got = store->Get(id);
    ASSERT_FALSE(got.ok()) << id;
    EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
    EXPECT_TRUE(Contains(got.status().message(), id)) << got.status().message();
  }
}

TEST_F(SqliteStoreTest, NonFiniteConfidenceIsRefused) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> store, OpenStore(Options()));
  Memory m = Rec("nan");
  m.confidence = std::numeric_limits<double>::quiet_NaN();
  auto applied = store->Apply(Batch({m}));
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace msp
