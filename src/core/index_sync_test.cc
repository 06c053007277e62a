// Tests for IndexSync over the real parts (SQLite store, Xapian index,
// vector file): a catch-up past the threshold writes the vector file; the
// next opener loads it and replays only what came after; a damaged,
// foreign or future file is set aside and the index rebuilt with the same
// answers; a store without a uid is not persisted.
#include "core/index_sync.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_util.h"

namespace msp {
namespace {

constexpr int kDim = 24;
constexpr char kEmbedder[] = "test-embedder";

class IndexSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    StoreOptions so;
    so.data_dir = dir_.path();
    auto store = OpenStore(so);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    WriteBatch uid;
    uid.meta.emplace_back(kStoreUidMetaKey, "uid-1");
    ASSERT_TRUE(store_->Apply(uid).ok());
  }

  // A process's view: fresh indexes over the shared files.
  struct View {
    std::unique_ptr<LexicalIndex> lexical;
    std::unique_ptr<VectorIndex> vector;
    std::unique_ptr<IndexSync> sync;
  };
  // With `graph`: a vector index that keeps a graph from 300 rows on.
  View Open(const std::string& embedder = kEmbedder, bool graph = false) {
    View v;
    auto lexical = OpenLexicalIndex(dir_.path() + "/lexical", RetrievalOptions{});
    EXPECT_TRUE(lexical.ok());
    v.lexical = std::move(*lexical);
    VectorIndexOptions small;
    small.graph_min_records = 300;
    small.graph_m = 8;
    small.graph_ef_construction = 40;
    small.build_threads = 1;
    small.cold_scan_bytes = 0;  // a loaded graph answers as the graph it saved
    v.vector = graph ? MakeVectorIndex(kDim, small) : MakeExactVectorIndex(kDim);
    v.sync = std::make_unique<IndexSync>(*store_, *v.lexical, *v.vector, embedder, file());
    EXPECT_TRUE(v.sync->Open().ok());
    return v;
  }

  void Write(int n, const std::string& embedder = kEmbedder) {
    WriteBatch b;
    for (int i = 0; i < n; ++i) {
      Memory m;
      m.id = "rec-" + std::to_string(next_++);
      m.ns.tenant = "t";
      m.kind = Kind::kArtifact;
      m.layer = Layer::kSemantic;
      m.text = "record " + m.id;
      m.source = "user";
      m.created_at = m.updated_at = 1000;
      m.embedder_id = embedder;
      std::normal_distribution<float> g;
      for (int d = 0; d < kDim; ++d) m.embedding.push_back(g(rng_));
      b.puts.push_back(std::move(m));
    }
    ASSERT_TRUE(store_->Apply(b).ok());
  }

  std::vector<std::string> Top(View& v) {
    IndexQuery q;
    q.scope.tenant = "t";
    q.limit = 20;
    auto hits = v.vector->Search(probe_, q);
    EXPECT_TRUE(hits.ok());
    std::vector<std::string> ids;
    for (const auto& h : *hits) ids.push_back(h.id);
    return ids;
  }

  std::string file() const { return dir_.path() + "/vector/index.msv"; }

  testing::TempDir dir_{"msp-index-sync"};
  std::unique_ptr<Store> store_;
  std::mt19937 rng_{5};
  int next_ = 0;
  const std::vector<float> probe_ = std::vector<float>(kDim, 0.3f);
};

// The graph: a catch-up that replays a few changes places nothing; a save
// point places the backlog (bounded) and writes it with the file; the next
// opener maps it as saved, and reindex places every row.
TEST_F(IndexSyncTest, GraphGrowsAtSavePointsAndIsMappedByTheNextOpener) {
  Write(400);
  View first = Open(kEmbedder, /*graph=*/true);
  ASSERT_TRUE(first.sync->CatchUp().ok());  // 400 replayed: a save point
  first.sync->FinishMaintenance();           // done in the background
  VectorGraphInfo info = first.vector->graph_info();
  EXPECT_TRUE(info.built);
  EXPECT_EQ(info.placed, 400u);
  EXPECT_EQ(info.pending, 0u);
  Write(5);
  ASSERT_TRUE(first.sync->CatchUp().ok());  // 5 replayed: no save point
  EXPECT_EQ(first.vector->graph_info().pending, 5u);
  EXPECT_EQ(first.sync->unsaved_changes(), 5);

  View second = Open(kEmbedder, /*graph=*/true);
  EXPECT_EQ(second.sync->open_note(), "loaded");
  info = second.vector->graph_info();
  EXPECT_EQ(info.placed, 400u);  // as saved, not rebuilt
  ASSERT_TRUE(second.sync->CatchUp().ok());
  EXPECT_EQ(second.vector->graph_info().pending, 5u);
  EXPECT_EQ(Top(second), Top(first));
  ASSERT_TRUE(second.sync->Rebuild(/*lexical_too=*/false).ok());
  info = second.vector->graph_info();
  EXPECT_EQ(info.placed, 405u);
  EXPECT_EQ(info.pending, 0u);
}

// Changes that give neither index anything (records with no text and no
// vector, as retrieval logs are) are not replayed into the lexical index:
// a catch-up over them alone leaves its mark where it was (no write); the
// next change with text moves it past them, and what is found is the same.
TEST_F(IndexSyncTest, ChangesWithNothingToIndexAreNotWrittenToTheLexicalIndex) {
  Write(3);
  View v = Open();
  ASSERT_TRUE(v.sync->CatchUp().ok());
  ASSERT_OK_AND_ASSIGN(const int64_t marked, v.lexical->AppliedSeq());
  EXPECT_EQ(marked, *store_->LastSeq());
  WriteBatch logs;
  for (int i = 0; i < 5; ++i) {
    Memory m;
    m.id = "log-" + std::to_string(i);
    m.ns.tenant = "t";
    m.kind = Kind::kEvent;
    m.layer = Layer::kWorkflow;
    m.source = "retrieval-log";
    m.body_json = R"({"shown":[]})";
    m.created_at = m.updated_at = 1000;
    logs.puts.push_back(std::move(m));
  }
  ASSERT_TRUE(store_->Apply(logs).ok());
  View other = Open();  // another process
  ASSERT_TRUE(other.sync->CatchUp().ok());
  ASSERT_OK_AND_ASSIGN(int64_t lexical_at, other.lexical->AppliedSeq());
  EXPECT_EQ(lexical_at, marked);  // not written
  EXPECT_EQ(other.vector->AppliedSeq(), *store_->LastSeq());
  EXPECT_EQ(other.vector->size(), 3u);
  Write(1);
  ASSERT_TRUE(other.sync->CatchUp().ok());
  ASSERT_OK_AND_ASSIGN(lexical_at, other.lexical->AppliedSeq());
  EXPECT_EQ(lexical_at, *store_->LastSeq());  // moved past the logs with the record
  IndexQuery q;
  q.scope.tenant = "t";
  q.text = "record";
  q.limit = 10;
  ASSERT_OK_AND_ASSIGN(std::vector<IndexHit> hits, other.lexical->Search(q));
  EXPECT_EQ(hits.size(), 4u);
  EXPECT_EQ(other.vector->size(), 4u);
}

TEST_F(IndexSyncTest, SavesPastTheThresholdAndTheNextOpenerReplaysOnlyTheRest) {
  View first = Open();
  EXPECT_EQ(first.sync->open_note(), "none");
  Write(10);
  ASSERT_TRUE(first.sync->CatchUp().ok());
  EXPECT_EQ(first.sync->unsaved_changes(), 10);  // below the threshold (32)
  EXPECT_FALSE(std::filesystem::exists(file()));
  Write(40);
  ASSERT_TRUE(first.sync->CatchUp().ok());
  first.sync->FinishMaintenance();
  EXPECT_EQ(first.sync->unsaved_changes(), 0);
  ASSERT_TRUE(std::filesystem::exists(file()));
  EXPECT_EQ(first.sync->last_save_error(), "");

  Write(5);
  View second = Open();
  EXPECT_EQ(second.sync->open_note(), "loaded");
  EXPECT_EQ(second.vector->size(), 50u);
  ASSERT_TRUE(second.sync->CatchUp().ok());
  EXPECT_EQ(second.sync->unsaved_changes(), 5);  // only what came after the file
  EXPECT_EQ(second.vector->size(), 55u);
  ASSERT_TRUE(first.sync->CatchUp().ok());
  EXPECT_EQ(Top(first), Top(second));
  EXPECT_EQ(second.vector->AppliedSeq(), *store_->LastSeq());
}

// An idle long-lived process writes the file below the save threshold when
// asked, so the next opener replays nothing; with nothing unsaved it
// writes nothing.
TEST_F(IndexSyncTest, PersistSoonWritesWhatIsUnsavedAndNothingElse) {
  View first = Open();
  ASSERT_TRUE(first.sync->CatchUp().ok());
  first.sync->PersistSoon();  // nothing replayed: no file
  first.sync->FinishMaintenance();
  EXPECT_FALSE(std::filesystem::exists(file()));
  Write(10);
  ASSERT_TRUE(first.sync->CatchUp().ok());
  EXPECT_EQ(first.sync->unsaved_changes(), 10);  // below the threshold (32): not saved by the catch-up
  first.sync->FinishMaintenance();
  EXPECT_FALSE(std::filesystem::exists(file()));
  first.sync->PersistSoon();
  first.sync->FinishMaintenance();
  EXPECT_EQ(first.sync->unsaved_changes(), 0);
  ASSERT_TRUE(std::filesystem::exists(file()));
  EXPECT_EQ(first.sync->last_save_error(), "");
  const auto written = std::filesystem::last_write_time(file());
  first.sync->PersistSoon();  // nothing new since
  first.sync->FinishMaintenance();
  EXPECT_EQ(std::filesystem::last_write_time(file()), written);

  View second = Open();
  EXPECT_EQ(second.sync->open_note(), "loaded");
  EXPECT_EQ(second.vector->AppliedSeq(), *store_->LastSeq());
  ASSERT_TRUE(second.sync->CatchUp().ok());
  EXPECT_EQ(second.sync->unsaved_changes(), 0);
  EXPECT_EQ(Top(first), Top(second));
}

// A save point's work is done in the background; a view closed with it
// asked for finishes it first, so the next opener loads everything: no
// replay, every row in the graph.
TEST_F(IndexSyncTest, ASavePointsWorkIsFinishedBeforeTheViewCloses) {
  Write(600);
  {
    View first = Open(kEmbedder, /*graph=*/true);
    ASSERT_TRUE(first.sync->CatchUp().ok());  // 600 replayed: a save point
    EXPECT_EQ(Top(first).size(), 20u);         // the graph may be half built
  }  // closed without FinishMaintenance
  View second = Open(kEmbedder, /*graph=*/true);
  EXPECT_EQ(second.sync->open_note(), "loaded");
  EXPECT_EQ(second.vector->AppliedSeq(), *store_->LastSeq());
  const VectorGraphInfo info = second.vector->graph_info();
  EXPECT_EQ(info.placed, 600u);
  EXPECT_EQ(info.pending, 0u);
  ASSERT_TRUE(second.sync->CatchUp().ok());
  EXPECT_EQ(second.sync->unsaved_changes(), 0);
  // The graph built in slices is the one a build in one go makes (one
  // thread: the same order, the same levels).
  View rebuilt = Open(kEmbedder, /*graph=*/true);
  ASSERT_TRUE(rebuilt.sync->Rebuild(/*lexical_too=*/false).ok());
  EXPECT_EQ(Top(second), Top(rebuilt));
}

TEST_F(IndexSyncTest, ADamagedForeignOrFutureFileIsSetAsideAndRebuilt) {
  Write(60);
  View built = Open();
  ASSERT_TRUE(built.sync->CatchUpAndPersist().ok());
  const std::vector<std::string> want = Top(built);
  ASSERT_EQ(want.size(), 20u);
  std::ifstream in(file(), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto put = [&](const std::string& bytes) {
    std::ofstream(file(), std::ios::binary | std::ios::trunc) << bytes;
    std::filesystem::remove(file() + ".set-aside");
  };
  auto check_rebuilt = [&](const std::string& why) {
    View v = Open();
    EXPECT_NE(v.sync->open_note().find("set aside"), std::string::npos) << why << ": " << v.sync->open_note();
    EXPECT_TRUE(std::filesystem::exists(file() + ".set-aside")) << why;
    EXPECT_EQ(v.vector->size(), 0u) << why;
    ASSERT_TRUE(v.sync->CatchUp().ok());
    EXPECT_EQ(Top(v), want) << why;
    v.sync->FinishMaintenance();  // the save is the background's
    EXPECT_TRUE(std::filesystem::exists(file())) << why << ": rebuilt and saved again";
  };

  std::string garbled = good;
  garbled[4096 + 7] = static_cast<char>(garbled[4096 + 7] ^ 0x40);
  put(garbled);
  check_rebuilt("garbled");
  put(good.substr(0, good.size() / 2));
  check_rebuilt("torn");
  put("");
  check_rebuilt("empty");

  // Made with another embedder: foreign.
  put(good);
  {
    View other = Open("another-embedder");
    EXPECT_NE(other.sync->open_note().find("set aside"), std::string::npos) << other.sync->open_note();
  }
  // Stamped past the store's last change (a store restored from a backup).
  {
    auto future = MakeExactVectorIndex(kDim);
    ASSERT_TRUE(future->Apply({}, {}, *store_->LastSeq() + 100).ok());
    ASSERT_TRUE(future->Save(file(), "store=uid-1;embedder=test-embedder;dimension=24").ok());
    std::filesystem::remove(file() + ".set-aside");
  }
  check_rebuilt("future");
}

TEST_F(IndexSyncTest, RecordsOfAnotherEmbedderStayOutOfTheVectorIndex) {
  Write(3);
  Write(2, "another-embedder");
  View v = Open();
  ASSERT_TRUE(v.sync->CatchUp().ok());
  EXPECT_EQ(v.vector->size(), 3u);
  EXPECT_EQ(*v.lexical->DocCount(), 5);
}

// The write path's twin search needs vectors only: CatchUpVectors leaves
// the lexical index (whose catch-up commits Xapian) for the next query.
TEST_F(IndexSyncTest, CatchUpVectorsLeavesTheLexicalIndexForTheNextQuery) {
  View v = Open();
  Write(4);
  ASSERT_TRUE(v.sync->CatchUpVectors().ok());
  const int64_t last = *store_->LastSeq();
  EXPECT_EQ(v.vector->AppliedSeq(), last);
  EXPECT_EQ(v.vector->size(), 4u);
  EXPECT_EQ(*v.lexical->AppliedSeq(), 0);
  Write(2);
  ASSERT_TRUE(v.sync->CatchUp().ok());
  EXPECT_EQ(*v.lexical->AppliedSeq(), *store_->LastSeq());
  EXPECT_EQ(*v.lexical->DocCount(), 6);
  EXPECT_EQ(v.vector->size(), 6u);
  EXPECT_EQ(v.sync->unsaved_changes(), 6);  // each change counted once
}

TEST_F(IndexSyncTest, AStoreWithoutAUidIsNotPersisted) {
  testing::TempDir other("msp-index-sync-nouid");
  StoreOptions so;
  so.data_dir = other.path();
  auto store = OpenStore(so);
  ASSERT_TRUE(store.ok());
  auto lexical = OpenLexicalIndex(other.path() + "/lexical", RetrievalOptions{});
  ASSERT_TRUE(lexical.ok());
  auto vector = MakeExactVectorIndex(kDim);
  IndexSync sync(**store, **lexical, *vector, kEmbedder, other.path() + "/vector/index.msv");
  ASSERT_TRUE(sync.Open().ok());
  EXPECT_NE(sync.open_note().find("not persisted"), std::string::npos);
  ASSERT_TRUE(sync.Rebuild(true).ok());
  EXPECT_FALSE(std::filesystem::exists(other.path() + "/vector/index.msv"));
}

}  // namespace
}  // namespace msp
