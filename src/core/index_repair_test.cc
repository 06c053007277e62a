// Derived indexes never take the store down: an engine over a real SQLite
// store whose lexical index (Xapian files) or vector file is damaged —
// before it opens or while it runs — answers every search from the store,
// rebuilds the damaged index (kept aside for a look), logs and counts it.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "consolidate/extractor.h"
#include "core/engine.h"
#include "embed/embedder.h"
#include "index/index.h"
#include "msp/memory.h"
#include "store/store.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

Namespace Acme() {
  Namespace ns;
  ns.tenant = "acme";
  return ns;
}

class IndexRepairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    options_.consolidation.every_n_episodes = 0;
    options_.actor = "tester";
  }

  std::string lexical_dir() const { return options_.store.data_dir + "/lexical"; }
  std::string vector_file() const { return options_.store.data_dir + "/vector/index.msv"; }

  // An engine over the data directory, its warnings kept in warnings_.
  std::unique_ptr<MemoryLayer> Open() {
    EngineParts parts;
    auto store = OpenStore(options_.store);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    parts.store = std::move(store).value();
    parts.embedder = std::move(MakeEmbedder(options_.embedder)).value();
    auto lexical = OpenLexicalIndex(lexical_dir(), options_.retrieval);
    EXPECT_TRUE(lexical.ok()) << lexical.status().ToString();
    if (!lexical.ok()) return nullptr;
    parts.lexical = std::move(lexical).value();
    parts.vector = MakeExactVectorIndex(parts.embedder->dimension());
    parts.extractor = std::move(MakeExtractor(options_.consolidation)).value();
    parts.vector_file = vector_file();
    parts.warn = [this](const std::string& w) {
      std::lock_guard<std::mutex> lock(warnings_mu_);
      warnings_.push_back(w);
    };
    auto engine = MakeEngine(options_, std::move(parts));
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    if (!engine.ok()) return nullptr;
    return std::move(engine).value();
  }

  // Writes `n` facts about kafka and returns their ids.
  std::vector<std::string> WriteFacts(MemoryLayer& engine, int n, const std::string& topic = "kafka") {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      WriteRequest r;
      r.ns.tenant = "acme";
      r.text = "The " + topic + " broker number " + std::to_string(i) + " restarts every night at two";
      r.tags = {"preference"};
      auto w = engine.Write(r);
      EXPECT_TRUE(w.ok()) << w.status().ToString();
      if (w.ok()) ids.push_back(w->id);
    }
    return ids;
  }

  // The ids, sorted, of the hits of a search for `query` that the lexical
  // index found (failing the test on an error): with the default score
  // fusion those score above 0.9, hits of the vector signal alone at most
  // 0.1 (SearchHit::score), so this checks that BM25 answers.
  std::vector<std::string> Search(MemoryLayer& engine, const std::string& query) {
    RetrieveRequest r;
    r.scope.tenant = "acme";
    r.query = query;
    r.top_k = 50;
    auto hits = engine.Retrieve(r);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    std::vector<std::string> ids;
    if (hits.ok()) {
      for (const SearchHit& h : *hits) {
        if (h.score > 0.5) ids.push_back(h.memory.id);
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  Stats StatsOf(MemoryLayer& engine) {
    auto s = engine.GetStats(Acme());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : Stats{};
  }

  std::vector<std::string> Warnings() {
    std::lock_guard<std::mutex> lock(warnings_mu_);
    return warnings_;
  }

  testing::TempDir dir_{"msp-index-repair"};
  Options options_;
  std::mutex warnings_mu_;
  std::vector<std::string> warnings_;
};

void Truncate(const std::string& file, std::uintmax_t size) { fs::resize_file(file, size); }

void Garble(const std::string& file, size_t offset, size_t bytes) {
  ASSERT_TRUE(testing::GarbleFile(file, offset, bytes)) << file;
}

void ReplaceByFile(const std::string& dir) {
  fs::remove_all(dir);
  std::FILE* f = std::fopen(dir.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("not an index", f);
  std::fclose(f);
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

struct LexicalDamage {
  const char* name;
  void (*apply)(const std::string& dir);
};

const LexicalDamage kLexicalDamages[] = {
    {"postlist.glass truncated", [](const std::string& d) { Truncate(d + "/postlist.glass", 0); }},
    {"termlist.glass truncated", [](const std::string& d) { Truncate(d + "/termlist.glass", 0); }},
    {"iamglass truncated", [](const std::string& d) { Truncate(d + "/iamglass", 10); }},
    {"iamglass garbled", [](const std::string& d) { Garble(d + "/iamglass", 0, 40); }},
    {"the folder deleted", [](const std::string& d) { fs::remove_all(d); }},
    {"the folder replaced by a file", [](const std::string& d) { ReplaceByFile(d); }},
};

// Damaged before the engine opens: the open succeeds, the first search
// answers every record (the index rebuilt from the store), the rebuild is
// logged and counted once, the damaged files are kept aside, and writes and
// searches go on.
TEST_F(IndexRepairTest, LexicalIndexDamagedBeforeOpenIsRebuiltAndAnswers) {
  for (const LexicalDamage& damage : kLexicalDamages) {
    SCOPED_TRACE(damage.name);
    fs::remove_all(options_.store.data_dir);
    fs::remove_all(lexical_dir() + ".set-aside");
    warnings_.clear();
    std::vector<std::string> ids;
    {
      auto engine = Open();
      ASSERT_NE(engine, nullptr);
      ids = WriteFacts(*engine, 5);
      ASSERT_EQ(Search(*engine, "kafka broker"), Sorted(ids));
    }
    damage.apply(lexical_dir());
    auto engine = Open();
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(Search(*engine, "kafka broker"), Sorted(ids));
    const Stats s = StatsOf(*engine);
    EXPECT_EQ(s.lexical_applied_seq, s.last_seq);
    const bool deleted = std::string(damage.name) == "the folder deleted";
    // A deleted folder is simply made again: nothing was damaged.
    EXPECT_EQ(s.lexical_rebuilds, deleted ? 0 : 1);
    EXPECT_EQ(Warnings().size(), deleted ? 0u : 1u);
    if (!deleted) {
      EXPECT_TRUE(testing::Contains(Warnings().front(), lexical_dir())) << Warnings().front();
      EXPECT_TRUE(testing::Contains(Warnings().front(), "rebuilt from the store")) << Warnings().front();
      EXPECT_TRUE(fs::exists(lexical_dir() + ".set-aside"));
    }
    const std::vector<std::string> more = WriteFacts(*engine, 2, "zookeeper");
    EXPECT_EQ(Search(*engine, "zookeeper"), Sorted(more));
  }
}

// `msp reindex` never needs the old index: on a damaged one it succeeds
// without a search first.
TEST_F(IndexRepairTest, ReindexSucceedsOnADamagedLexicalIndex) {
  for (const LexicalDamage& damage : kLexicalDamages) {
    SCOPED_TRACE(damage.name);
    fs::remove_all(options_.store.data_dir);
    std::vector<std::string> ids;
    {
      auto engine = Open();
      ASSERT_NE(engine, nullptr);
      ids = WriteFacts(*engine, 3);
    }
    damage.apply(lexical_dir());
    auto engine = Open();
    ASSERT_NE(engine, nullptr);
    const Status reindexed = engine->Reindex();
    ASSERT_TRUE(reindexed.ok()) << reindexed.ToString();
    EXPECT_EQ(Search(*engine, "kafka broker"), Sorted(ids));
  }
}

// Damaged while the engine runs (its readers pooled): the next search
// repairs it online and answers every record; so do writes.
TEST_F(IndexRepairTest, LexicalIndexDamagedWhileRunningIsRepairedOnline) {
  for (const LexicalDamage& damage : kLexicalDamages) {
    SCOPED_TRACE(damage.name);
    fs::remove_all(options_.store.data_dir);
    auto engine = Open();
    ASSERT_NE(engine, nullptr);
    std::vector<std::string> ids = WriteFacts(*engine, 5);
    ASSERT_EQ(Search(*engine, "kafka broker"), Sorted(ids));
    damage.apply(lexical_dir());
    EXPECT_EQ(Search(*engine, "kafka broker"), Sorted(ids));
    const std::vector<std::string> more = WriteFacts(*engine, 2, "zookeeper");
    EXPECT_EQ(Search(*engine, "zookeeper"), Sorted(more));
    EXPECT_GE(StatsOf(*engine).lexical_rebuilds, 1);
  }
}

// A garbled vector file is set aside at open, rebuilt, logged and counted.
TEST_F(IndexRepairTest, GarbledVectorFileIsRebuiltLoggedAndCounted) {
  std::vector<std::string> ids;
  {
    auto engine = Open();
    ASSERT_NE(engine, nullptr);
    ids = WriteFacts(*engine, 40);  // past the save threshold: the file is written
    ASSERT_TRUE(engine->Reindex().ok());
  }
  ASSERT_TRUE(fs::exists(vector_file()));
  Garble(vector_file(), 0, 64);
  auto engine = Open();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(Search(*engine, "kafka broker"), Sorted(ids));
  const Stats s = StatsOf(*engine);
  EXPECT_EQ(s.vector_rebuilds, 1);
  EXPECT_EQ(s.vector_rows, 40);
  ASSERT_EQ(Warnings().size(), 1u);
  EXPECT_TRUE(testing::Contains(Warnings().front(), "index.msv")) << Warnings().front();
}

// One row's embedding set to 3 bytes: every verb still works (search,
// stats, export, reembed, writes); the record is found by BM25 and left
// out of vector search with a warning naming it, and `msp reembed` makes
// its vector again.
TEST_F(IndexRepairTest, MalformedEmbeddingSkipsOneRecordAndReembedRepairsIt) {
  std::vector<std::string> ids;
  {
    auto engine = Open();
    ASSERT_NE(engine, nullptr);
    ids = WriteFacts(*engine, 5);
  }
  const std::string bad = ids[2];
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((options_.store.data_dir + "/msp.db").c_str(), &db), SQLITE_OK);
    const std::string sql = "UPDATE records SET embedding = x'010203' WHERE id = '" + bad + "'";
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);
  }
  fs::remove_all(options_.store.data_dir + "/vector");  // the next catch-up reads every row
  {
    auto engine = Open();
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(Search(*engine, "kafka broker"), Sorted(ids));
    const Stats s = StatsOf(*engine);
    EXPECT_EQ(s.records, 5);
    EXPECT_EQ(s.vector_rows, 4);
    ASSERT_EQ(Warnings().size(), 1u);
    EXPECT_TRUE(testing::Contains(Warnings().front(), bad)) << Warnings().front();
    EXPECT_TRUE(testing::Contains(Warnings().front(), "msp reembed")) << Warnings().front();
    std::ostringstream exported;
    auto n = engine->Export(Acme(), exported);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, 5);
    auto got = engine->Get(Acme(), bad);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(WriteFacts(*engine, 1, "zookeeper").size(), 1u);
  }
  auto reembedded = MemoryLayer::Reembed(options_, ReembedOptions{}, nullptr);
  ASSERT_TRUE(reembedded.ok()) << reembedded.status().ToString();
  EXPECT_EQ(reembedded->embedded, 1);
  EXPECT_TRUE(reembedded->finished);
  warnings_.clear();
  auto engine = Open();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(StatsOf(*engine).vector_rows, 6);
  EXPECT_TRUE(Warnings().empty());
}

}  // namespace
}  // namespace msp
