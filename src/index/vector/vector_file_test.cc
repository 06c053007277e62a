// Tests for the persisted vector index: a saved and loaded index answers as
// the one saved; a loaded index takes further changes like a built one
// (a long random sequence checked against an index built from a model of
// the records); a missing, foreign, torn or garbled file is refused and
// leaves the index unchanged; a concurrent save is refused, not mixed.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "embed/embedder.h"
#include "index/index.h"
#include "index/vector/file_reads.h"
#include "util/hash.h"

namespace msp {
namespace {

constexpr int kDim = 32;  // >= 16: the float16 copies are kept and saved too
constexpr char kIdentity[] = "store=abc|embedder=hash-32";

class VectorFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("msp_vector_file_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "vector" / "index.msv").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string ReadFile() const {
    std::ifstream in(path_, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  void WriteFile(const std::string& bytes) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  // Section s's (offset, bytes) in a file's header: the section table
  // starts at byte 80 (vector_file.cc's Header), 16 bytes a section.
  static std::pair<uint64_t, uint64_t> SectionOf(const std::string& file, size_t s) {
    uint64_t at[2];
    std::memcpy(at, file.data() + 80 + 16 * s, sizeof at);
    return {at[0], at[1]};
  }
  // A copy of `file` with about one 32-bit word in `one_in` of sections
  // `sections` replaced by noise.
  static std::string Garble(const std::string& file, std::initializer_list<size_t> sections, uint32_t one_in,
                            uint32_t seed) {
    std::string bad = file;
    std::mt19937 noise(seed);
    for (size_t s : sections) {
      const auto [at, bytes] = SectionOf(file, s);
      for (uint64_t i = at; i + 4 <= at + bytes; i += 4) {
        if (noise() % one_in != 0) continue;
        const uint32_t junk = static_cast<uint32_t>(noise());
        std::memcpy(&bad[i], &junk, 4);
      }
    }
    return bad;
  }

  std::filesystem::path dir_;
  std::string path_;
};

std::vector<float> RandomUnit(std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(kDim);
  double n = 0;
  for (float& x : v) {
    x = g(rng);
    n += static_cast<double>(x) * x;
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(n));
  return v;
}

// A record with random placement: one of three tenants, users, tags, kinds.
Memory RandomRecord(std::mt19937& rng, const std::string& id) {
  Memory m;
  m.id = id;
  m.ns.tenant = "t" + std::to_string(rng() % 3);
  m.ns.user = "u" + std::to_string(rng() % 4);
  m.source = rng() % 2 ? "user" : "tool";
  m.kind = rng() % 2 ? Kind::kFact : Kind::kEpisode;
  m.created_at = 1000 + static_cast<TimeMs>(rng() % 1000);
  for (uint32_t t = 0, n = rng() % 4; t < n; ++t) m.tags.push_back("tag" + std::to_string(rng() % 6));
  m.embedding = RandomUnit(rng);
  return m;
}

// `n` records as RandomRecord makes them, ids prefix + 0, 1, ...
std::vector<Memory> RandomRecords(std::mt19937& rng, int n, const std::string& prefix) {
  std::vector<Memory> out;
  for (int i = 0; i < n; ++i) out.push_back(RandomRecord(rng, prefix + std::to_string(i)));
  return out;
}

std::vector<IndexQuery> Queries() {
  std::vector<IndexQuery> out;
  for (const char* tenant : {"t0", "t1", "t2", "nobody"}) {
    IndexQuery q;
    q.scope.tenant = tenant;
    q.now = 5000;
    q.limit = 15;
    out.push_back(q);
    q.scope.user = "u1";
    out.push_back(q);
    q.scope.user.clear();
    q.filter.tags = {"tag2", "tag5"};
    out.push_back(q);
    q.filter.tags.clear();
    q.filter.kinds = {Kind::kEpisode};
    q.filter.sources = {"tool"};
    q.filter.created_from = 1300;
    out.push_back(q);
  }
  return out;
}

// Every query's hits (ids and scores) from both indexes are equal, and so
// are the scores of a few named records.
void ExpectSameAnswers(VectorIndex& a, VectorIndex& b, std::mt19937& rng, const std::vector<std::string>& names) {
  ASSERT_EQ(a.size(), b.size());
  std::vector<std::string_view> views(names.begin(), names.end());
  for (int round = 0; round < 3; ++round) {
    const auto query = RandomUnit(rng);
    for (const IndexQuery& q : Queries()) {
      auto ha = a.Search(query, q);
      auto hb = b.Search(query, q);
      ASSERT_TRUE(ha.ok() && hb.ok());
      ASSERT_EQ(ha->size(), hb->size()) << q.scope.tenant;
      for (size_t i = 0; i < ha->size(); ++i) {
        EXPECT_EQ((*ha)[i].id, (*hb)[i].id);
        EXPECT_EQ((*ha)[i].score, (*hb)[i].score);
      }
      auto sa = a.Score(query, views, q);
      auto sb = b.Score(query, views, q);
      ASSERT_TRUE(sa.ok() && sb.ok());
      for (size_t i = 0; i < names.size(); ++i) {
        EXPECT_TRUE((std::isnan((*sa)[i]) && std::isnan((*sb)[i])) || (*sa)[i] == (*sb)[i]) << names[i];
      }
    }
  }
}

TEST_F(VectorFileTest, SavedAndLoadedIndexAnswersAsTheSavedOne) {
  std::mt19937 rng(11);
  auto built = MakeExactVectorIndex(kDim);
  std::vector<Memory> records = RandomRecords(rng, 700, "rec-");
  ASSERT_TRUE(built->Apply(records, {}, 42).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());

  auto loaded = MakeExactVectorIndex(kDim);
  const Status s = loaded->Load(path_, kIdentity, /*verify_vectors=*/true);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(loaded->AppliedSeq(), 42);
  EXPECT_EQ(loaded->size(), 700u);
  ExpectSameAnswers(*built, *loaded, rng, {"rec-0", "rec-699", "rec-350", "missing"});
  // An older batch is still ignored after loading.
  ASSERT_TRUE(loaded->Apply({}, {"rec-0"}, 40).ok());
  EXPECT_EQ(loaded->size(), 700u);
}

// A long random sequence of upserts (new ids, moved records, tag changes)
// and deletes, saved and loaded every few batches, against an index built
// in one go from a model of the records: the id table's deletions, the
// pools' compaction and growth past a file mapping all keep answers equal.
TEST_F(VectorFileTest, LoadedIndexTakesChangesLikeABuiltOne) {
  std::mt19937 rng(12);
  std::map<std::string, Memory> model;
  auto index = MakeExactVectorIndex(kDim);
  int64_t seq = 0;
  int next_id = 0;
  for (int batch = 0; batch < 60; ++batch) {
    std::vector<Memory> upserts;
    std::vector<std::string> deletes;
    const int n = 1 + static_cast<int>(rng() % 80);
    for (int i = 0; i < n; ++i) {
      const uint32_t op = rng() % 10;
      if (op < 5 || model.size() < 10) {
        Memory m = RandomRecord(rng, "id-" + std::to_string(next_id++));
        model[m.id] = m;
        upserts.push_back(m);
      } else {
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        if (op < 8) {
          Memory m = RandomRecord(rng, it->first);  // same id, new everything
          it->second = m;
          upserts.push_back(m);
        } else {
          deletes.push_back(it->first);
          model.erase(it);
        }
      }
    }
    // A delete of an id upserted in the same batch: Apply upserts first.
    std::erase_if(upserts, [&](const Memory& m) { return !model.count(m.id); });
    ASSERT_TRUE(index->Apply(upserts, deletes, ++seq).ok());
    if (batch % 7 == 6) {
      ASSERT_TRUE(index->Save(path_, kIdentity).ok());
      auto loaded = MakeExactVectorIndex(kDim);
      ASSERT_TRUE(loaded->Load(path_, kIdentity, /*verify_vectors=*/batch % 2 == 0).ok());
      index = std::move(loaded);
    }
  }
  ASSERT_GT(model.size(), 500u);
  std::vector<Memory> all;
  for (const auto& [id, m] : model) all.push_back(m);
  auto fresh = MakeExactVectorIndex(kDim);
  ASSERT_TRUE(fresh->Apply(all, {}, seq).ok());
  EXPECT_EQ(index->AppliedSeq(), seq);
  std::vector<std::string> names{"id-0", "id-1", "id-" + std::to_string(next_id - 1), "never"};
  ExpectSameAnswers(*fresh, *index, rng, names);
}

TEST_F(VectorFileTest, RefusesWhatItCannotTrustAndStaysUnchanged) {
  std::mt19937 rng(13);
  auto built = MakeExactVectorIndex(kDim);
  std::vector<Memory> records = RandomRecords(rng, 300, "rec-");
  ASSERT_TRUE(built->Apply(records, {}, 9).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());
  const std::string good = ReadFile();
  ASSERT_EQ(good.size() % 4096, 0u);

  // The index under test holds one record of its own, which every refused
  // load must leave in place.
  auto index = MakeExactVectorIndex(kDim);
  Memory own = RandomRecord(rng, "own");
  own.ns.tenant = "t0";
  ASSERT_TRUE(index->Apply({own}, {}, 3).ok());
  IndexQuery q;
  q.scope.tenant = "t0";
  q.limit = 5;
  auto unchanged = [&] {
    auto hits = index->Search(own.embedding, q);
    return index->size() == 1 && index->AppliedSeq() == 3 && hits.ok() && hits->size() == 1 &&
           (*hits)[0].id == "own";
  };
  auto write = [&](const std::string& bytes) { WriteFile(bytes); };

  std::filesystem::remove(path_);
  EXPECT_TRUE(index->Load(path_, kIdentity, true).IsNotFound());
  EXPECT_TRUE(unchanged());

  write(good);
  EXPECT_EQ(index->Load(path_, "store=other|embedder=hash-32", true).code(), StatusCode::kCorruption);
  EXPECT_TRUE(unchanged());
  auto wider = MakeExactVectorIndex(kDim + 1);
  EXPECT_EQ(wider->Load(path_, kIdentity, true).code(), StatusCode::kCorruption);

  // Torn: cut at a page and inside one; empty.
  for (size_t cut : {good.size() - 4096, good.size() / 2 + 3, size_t{100}, size_t{0}}) {
    write(good.substr(0, cut));
    EXPECT_EQ(index->Load(path_, kIdentity, true).code(), StatusCode::kCorruption) << "cut at " << cut;
    EXPECT_TRUE(unchanged());
  }
  // One byte changed in the header, the identity, and at the start of
  // every page after them (each section starts on a page, and with these
  // sizes every page begins with data, none with padding).
  std::vector<size_t> spots = {9, 100, 520};
  for (size_t page = 4096; page < good.size(); page += 4096) spots.push_back(page + 5);
  for (size_t at : spots) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    write(bad);
    const Status s = index->Load(path_, kIdentity, /*verify_vectors=*/true);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << "a changed byte at " << at << ": " << s.ToString();
    EXPECT_TRUE(unchanged());
  }

  // A vector garbled to NaN: refused when verified; when not, the file
  // loads and that record ranks nothing, while the others answer.
  // The header's section table starts at byte 80 (vector_file.cc's
  // Header): (offset, bytes) pairs; the vectors are section 8.
  const uint64_t vectors_at = SectionOf(good, 8).first;
  ASSERT_EQ(vectors_at % 4096, 0u);
  ASSERT_LT(vectors_at, good.size());
  std::string nan_vector = good;
  const float nan = std::nanf("");
  for (size_t i = 0; i < kDim; ++i) std::memcpy(&nan_vector[vectors_at + 4 * i], &nan, 4);  // slot 0
  write(nan_vector);
  EXPECT_EQ(index->Load(path_, kIdentity, true).code(), StatusCode::kCorruption);
  EXPECT_TRUE(unchanged());
  ASSERT_TRUE(index->Load(path_, kIdentity, false).ok());
  EXPECT_EQ(index->size(), 300u);
  for (const IndexQuery& query : Queries()) {
    auto hits = index->Search(RandomUnit(rng), query);
    ASSERT_TRUE(hits.ok());
    for (const auto& h : *hits) EXPECT_FALSE(std::isnan(h.score));
  }

  // A folder where the file should be.
  std::filesystem::remove(path_);
  std::filesystem::create_directories(path_);
  EXPECT_FALSE(index->Load(path_, kIdentity, true).ok());
}

TEST_F(VectorFileTest, ASaveUnderWayElsewhereIsRefusedNotMixed) {
  std::mt19937 rng(14);
  auto index = MakeExactVectorIndex(kDim);
  ASSERT_TRUE(index->Apply({RandomRecord(rng, "a")}, {}, 1).ok());
  ASSERT_TRUE(index->Save(path_, kIdentity).ok());
  const int lock = open((path_ + ".lock").c_str(), O_RDWR);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(flock(lock, LOCK_EX | LOCK_NB), 0);
  ASSERT_TRUE(index->Apply({RandomRecord(rng, "b")}, {}, 2).ok());
  EXPECT_EQ(index->Save(path_, kIdentity).code(), StatusCode::kUnavailable);
  close(lock);
  auto loaded = MakeExactVectorIndex(kDim);
  ASSERT_TRUE(loaded->Load(path_, kIdentity, true).ok());
  EXPECT_EQ(loaded->AppliedSeq(), 1);  // the first save, whole
  EXPECT_EQ(loaded->size(), 1u);
  // A temporary file a killed saver left behind does not matter.
  { std::ofstream(path_ + ".tmp") << "half a file"; }
  ASSERT_TRUE(index->Save(path_, kIdentity).ok());
  ASSERT_TRUE(loaded->Load(path_, kIdentity, true).ok());
  EXPECT_EQ(loaded->size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

// ---- the graph (MakeVectorIndex) ------------------------------------------

VectorIndexOptions SmallGraph() {
  VectorIndexOptions o;
  o.graph_min_records = 500;
  o.graph_ef_search = 48;
  o.graph_m = 16;  // cheaper to build than the defaults; ample at these sizes
  o.graph_ef_construction = 100;
  o.build_threads = 1;
  o.cold_scan_bytes = 0;  // the graph's answers, also for a loaded index's first queries
  return o;
}

// A graph is saved with the rows and mapped back as it was: the loaded
// index answers exactly as the saved one (same graph, same search), takes
// the same changes with the same answers, and extends the same way. An
// index without a graph loads the same file and ignores the graph.
TEST_F(VectorFileTest, GraphIsSavedAndMappedNotRebuilt) {
  std::mt19937 rng(15);
  auto built = MakeVectorIndex(kDim, SmallGraph());
  std::vector<Memory> records;
  for (int i = 0; i < 2400; ++i) {
    Memory m = RandomRecord(rng, "g-" + std::to_string(i));
    m.ns.tenant = "t0";  // one tenant past the threshold
    records.push_back(std::move(m));
  }
  ASSERT_TRUE(built->Apply(records, {}, 5).ok());
  ASSERT_TRUE(built->ExtendGraph(2000).ok());  // 400 left pending
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());

  auto loaded = MakeVectorIndex(kDim, SmallGraph());
  const Status s = loaded->Load(path_, kIdentity, /*verify_vectors=*/true);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const VectorGraphInfo info = loaded->graph_info();
  EXPECT_TRUE(info.built);
  EXPECT_EQ(info.placed, 2000u);
  EXPECT_EQ(info.pending, 400u);
  const std::vector<std::string> names{"g-0", "g-2399", "g-1000", "missing"};
  ExpectSameAnswers(*built, *loaded, rng, names);

  // The same changes to both: moved vectors, deletes, new rows; then both
  // place everything.
  std::vector<Memory> upserts;
  for (int i = 0; i < 60; ++i) {
    Memory m = records[rng() % records.size()];
    m.embedding = RandomUnit(rng);
    upserts.push_back(m);
    upserts.push_back(RandomRecord(rng, "new-" + std::to_string(i)));
  }
  const std::vector<std::string> deletes{"g-3", "g-1500", "g-2100"};
  ASSERT_TRUE(built->Apply(upserts, deletes, 6).ok());
  ASSERT_TRUE(loaded->Apply(upserts, deletes, 6).ok());
  ExpectSameAnswers(*built, *loaded, rng, names);
  ASSERT_TRUE(built->ExtendGraph(SIZE_MAX).ok());
  ASSERT_TRUE(loaded->ExtendGraph(SIZE_MAX).ok());
  EXPECT_EQ(loaded->graph_info().pending, 0u);
  ExpectSameAnswers(*built, *loaded, rng, names);

  // Saved again from the loaded (partly mapped) index, and read by an
  // exact index: the graph is ignored, the answers are the exact scan's.
  ASSERT_TRUE(loaded->Save(path_, kIdentity).ok());
  auto exact = MakeExactVectorIndex(kDim);
  ASSERT_TRUE(exact->Load(path_, kIdentity, true).ok());
  EXPECT_FALSE(exact->graph_info().built);
  auto fresh = MakeExactVectorIndex(kDim);
  std::map<std::string, Memory> model;
  for (const Memory& m : records) model[m.id] = m;
  for (const Memory& m : upserts) model[m.id] = m;
  for (const std::string& id : deletes) model.erase(id);
  std::vector<Memory> all;
  for (const auto& [id, m] : model) all.push_back(m);
  ASSERT_TRUE(fresh->Apply(all, {}, 6).ok());
  ExpectSameAnswers(*fresh, *exact, rng, names);
}

// A loaded index's first queries read the file with pread and, while the
// tenant's rows are few enough (cold_scan_bytes), scan them instead of
// searching the graph: their answers are the exact scan's. Later queries
// go through the graph.
TEST_F(VectorFileTest, ALoadedIndexsFirstQueriesScanExactly) {
  std::mt19937 rng(16);
  VectorIndexOptions options = SmallGraph();
  options.cold_scan_bytes = size_t{1} << 20;
  auto built = MakeVectorIndex(kDim, options);
  auto exact = MakeExactVectorIndex(kDim);
  std::vector<Memory> records;
  for (int i = 0; i < 1500; ++i) {
    Memory m = RandomRecord(rng, "c-" + std::to_string(i));
    m.ns.tenant = "t0";
    records.push_back(std::move(m));
  }
  ASSERT_TRUE(built->Apply(records, {}, 3).ok());
  ASSERT_TRUE(exact->Apply(records, {}, 3).ok());
  ASSERT_TRUE(built->ExtendGraph(SIZE_MAX).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());
  auto loaded = MakeVectorIndex(kDim, options);
  ASSERT_TRUE(loaded->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
  EXPECT_EQ(loaded->graph_info().placed, 1500u);
  IndexQuery q;
  q.scope.tenant = "t0";
  q.now = 5000;
  q.limit = 25;
  for (int i = 0; i < 16; ++i) {
    const auto query = RandomUnit(rng);
    auto got = loaded->Search(query, q);
    auto want = exact->Search(query, q);
    ASSERT_TRUE(got.ok() && want.ok());
    ASSERT_EQ(got->size(), want->size());
    for (size_t h = 0; h < got->size(); ++h) {
      EXPECT_EQ((*got)[h].id, (*want)[h].id) << "query " << i << " hit " << h;
      EXPECT_EQ((*got)[h].score, (*want)[h].score);
    }
  }
  auto later = loaded->Search(RandomUnit(rng), q);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->size(), 25u);
}

// A long-lived process warms a loaded index (VectorIndex::Warm) while a
// writer goes on changing it: every answer after, read through the
// mapping rather than with pread, equals an index built from the same
// records, graph and all.
TEST_F(VectorFileTest, AWarmedIndexAnswersAsABuiltOne) {
  std::mt19937 rng(18);
  VectorIndexOptions options = SmallGraph();
  auto built = MakeVectorIndex(kDim, options);
  std::vector<Memory> records = RandomRecords(rng, 1200, "w-");
  ASSERT_TRUE(built->Apply(records, {}, 5).ok());
  ASSERT_TRUE(built->ExtendGraph(SIZE_MAX).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());
  auto loaded = MakeVectorIndex(kDim, options);
  ASSERT_TRUE(loaded->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
  // Changes while it warms: records moved, removed and added, some pages
  // of the mapping the process's own from then on.
  std::vector<Memory> changed;
  std::vector<std::string> removed;
  for (int i = 0; i < 300; ++i) {
    changed.push_back(RandomRecord(rng, "w-" + std::to_string(i * 4)));
    changed.push_back(RandomRecord(rng, "new-" + std::to_string(i)));
    removed.push_back("w-" + std::to_string(i * 4 + 1));
  }
  std::thread writer([&] {
    for (int b = 0; b < 30; ++b) {
      const std::vector<Memory> batch(changed.begin() + b * 20, changed.begin() + (b + 1) * 20);
      const std::vector<std::string> gone(removed.begin() + b * 10, removed.begin() + (b + 1) * 10);
      ASSERT_TRUE(loaded->Apply(batch, gone, 6 + b).ok());
    }
  });
  loaded->Warm(SIZE_MAX);
  writer.join();
  ASSERT_TRUE(built->Apply(changed, removed, 35).ok());
  ExpectSameAnswers(*built, *loaded, rng, {"w-0", "w-1", "w-2", "new-0", "new-299", "w-1199", "missing"});
  EXPECT_EQ(loaded->AppliedSeq(), 35);
}

// Warm within a budget leaves what would pass it to the queries (the
// float32 rows first): answers are the same whatever it left.
TEST_F(VectorFileTest, AWarmUpWithinABudgetAnswersAsABuiltOne) {
  std::mt19937 rng(19);
  auto built = MakeExactVectorIndex(kDim);
  std::vector<Memory> records = RandomRecords(rng, 900, "b-");
  ASSERT_TRUE(built->Apply(records, {}, 7).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());
  // Nothing; the small arrays only (the rows: 900 * 32 * 6 bytes); all.
  for (size_t budget : {size_t{0}, size_t{64} << 10, SIZE_MAX}) {
    auto loaded = MakeExactVectorIndex(kDim);
    ASSERT_TRUE(loaded->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
    loaded->Warm(budget);
    ExpectSameAnswers(*built, *loaded, rng, {"b-0", "b-899", "b-450", "missing"});
  }
}

// A garbled graph: its links are checked as they are read, so unverified
// it loads and searches stay in bounds with exact scores of real rows;
// verified, it is refused. A garbled node table is refused either way.
TEST_F(VectorFileTest, GarbledGraphIsRefusedOrHarmless) {
  std::mt19937 rng(16);
  auto built = MakeVectorIndex(kDim, SmallGraph());
  std::vector<Memory> records;
  for (int i = 0; i < 1200; ++i) {
    Memory m = RandomRecord(rng, "g-" + std::to_string(i));
    m.ns.tenant = "t0";
    records.push_back(std::move(m));
  }
  ASSERT_TRUE(built->Apply(records, {}, 5).ok());
  ASSERT_TRUE(built->ExtendGraph(SIZE_MAX).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());
  const std::string good = ReadFile();
  constexpr size_t kNodeOfSlot = 10, kLevel0 = 13;
  ASSERT_GT(SectionOf(good, kLevel0).second, 4096u);
  std::string bad = Garble(good, {kLevel0}, 3, 3);
  WriteFile(bad);
  auto index = MakeVectorIndex(kDim, SmallGraph());
  EXPECT_EQ(index->Load(path_, kIdentity, /*verify_vectors=*/true).code(), StatusCode::kCorruption);
  ASSERT_TRUE(index->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
  std::map<std::string, const Memory*> by_id;
  for (const Memory& m : records) by_id[m.id] = &m;
  // Searches answer with real rows and their exact scores.
  auto expect_real_hits = [&](int rounds) {
    for (int t = 0; t < rounds; ++t) {
      const auto query = RandomUnit(rng);
      IndexQuery q;
      q.scope.tenant = "t0";
      q.now = 5000;
      q.limit = 10;
      auto hits = index->Search(query, q);
      ASSERT_TRUE(hits.ok());
      EXPECT_LE(hits->size(), 10u);
      for (const auto& h : *hits) {
        ASSERT_TRUE(by_id.count(h.id)) << h.id;
        EXPECT_EQ(h.score, Dot(query.data(), by_id[h.id]->embedding.data(), kDim));
      }
    }
  };
  expect_real_hits(30);

  const auto [nodes_at, nodes_bytes] = SectionOf(good, kNodeOfSlot);
  ASSERT_GT(nodes_bytes, 8u);
  bad = good;
  std::swap(bad[nodes_at], bad[nodes_at + 4]);  // slots 0 and 1 swap nodes: the two tables disagree
  bad[nodes_at + 1] = static_cast<char>(bad[nodes_at + 1] ^ 0x40);
  WriteFile(bad);
  EXPECT_EQ(index->Load(path_, kIdentity, /*verify_vectors=*/true).code(), StatusCode::kCorruption);
  // Unverified, the node tables are checked where they are used: the
  // index still answers with real rows and their exact scores, and takes
  // changes to the two slots whose nodes were garbled.
  ASSERT_TRUE(index->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
  expect_real_hits(10);
  Memory moved = records[0];
  moved.embedding = RandomUnit(rng);
  ASSERT_TRUE(index->Apply({moved}, {"g-1"}, 6).ok());
  ASSERT_TRUE(index->ExtendGraph(SIZE_MAX).ok());
  IndexQuery q;
  q.scope.tenant = "t0";
  q.now = 5000;
  q.limit = 1;
  EXPECT_EQ(index->size(), 1199u);
  auto hits = index->Search(moved.embedding, q);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].id, "g-0");
}

// Garbled slot references (ids, tags, tenants) in a file loaded without
// verification are checked where they are used: searches, changes and a
// save of the damaged index stay in bounds, and verification refuses it.
TEST_F(VectorFileTest, GarbledSlotsAreRefusedWhenVerifiedAndHarmlessWhenNot) {
  std::mt19937 rng(17);
  auto built = MakeExactVectorIndex(kDim);
  std::vector<Memory> records = RandomRecords(rng, 400, "rec-");
  ASSERT_TRUE(built->Apply(records, {}, 5).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());
  WriteFile(Garble(ReadFile(), {1, 3}, 4, 4));  // the slots' metadata, and their id references
  auto index = MakeExactVectorIndex(kDim);
  EXPECT_EQ(index->Load(path_, kIdentity, /*verify_vectors=*/true).code(), StatusCode::kCorruption);
  ASSERT_TRUE(index->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
  const std::vector<std::string_view> named = {"rec-1", "rec-7", "rec-399", "nobody", "rec-1"};
  for (const IndexQuery& q : Queries()) {  // the first 16 calls are cold: batched reads
    auto hits = index->Search(RandomUnit(rng), q);
    ASSERT_TRUE(hits.ok());
    EXPECT_LE(hits->size(), 15u);
    auto scores = index->Score(RandomUnit(rng), named, q);
    ASSERT_TRUE(scores.ok());
    EXPECT_TRUE(std::isnan((*scores)[3]));  // no such record
  }
  std::vector<Memory> upserts;
  std::vector<std::string> deletes;
  for (int i = 0; i < 100; ++i) upserts.push_back(RandomRecord(rng, "rec-" + std::to_string(i)));
  for (int i = 100; i < 300; ++i) deletes.push_back("rec-" + std::to_string(i));
  for (int i = 0; i < 50; ++i) upserts.push_back(RandomRecord(rng, "more-" + std::to_string(i)));
  ASSERT_TRUE(index->Apply(upserts, deletes, 6).ok());
  ASSERT_TRUE(index->Save(path_, kIdentity).ok());
  auto again = MakeExactVectorIndex(kDim);
  ASSERT_TRUE(again->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
  for (const IndexQuery& q : Queries()) ASSERT_TRUE(again->Search(RandomUnit(rng), q).ok());
}

// A garbled id table (entries naming no slot, entries lost) in a file loaded
// without verification: a load reads none of it, queries stay in bounds
// (a lost entry only hides that record's vector), an unchanged index will
// not write it back, and the first change builds it again from the slots:
// from then on the index answers as one built with the same changes.
TEST_F(VectorFileTest, GarbledIdTableIsHarmlessAndRebuiltBeforeAChange) {
  std::mt19937 rng(29);
  auto built = MakeExactVectorIndex(kDim);
  std::vector<Memory> records = RandomRecords(rng, 400, "rec-");
  ASSERT_TRUE(built->Apply(records, {}, 5).ok());
  ASSERT_TRUE(built->Save(path_, kIdentity).ok());
  const std::string good = ReadFile();
  const std::string bad = Garble(good, {5}, 3, 8);  // section 5: the id table
  ASSERT_NE(bad, good);
  WriteFile(bad);
  auto index = MakeExactVectorIndex(kDim);
  EXPECT_EQ(index->Load(path_, kIdentity, /*verify_vectors=*/true).code(), StatusCode::kCorruption);
  ASSERT_TRUE(index->Load(path_, kIdentity, /*verify_vectors=*/false).ok());
  EXPECT_EQ(index->size(), 400u);
  std::vector<std::string> names;
  for (int i = 0; i < 400; i += 7) names.push_back("rec-" + std::to_string(i));
  names.push_back("nobody");
  const std::vector<std::string_view> named(names.begin(), names.end());
  for (int round = 0; round < 20; ++round) {  // cold reads first, then the mapping
    const auto query = RandomUnit(rng);
    for (const IndexQuery& q : Queries()) {
      auto hits = index->Search(query, q);
      ASSERT_TRUE(hits.ok());
      auto want = built->Score(query, named, q);
      auto got = index->Score(query, named, q);
      ASSERT_TRUE(want.ok() && got.ok());
      for (size_t i = 0; i < named.size(); ++i) {  // a score found is the right one
        EXPECT_TRUE(std::isnan((*got)[i]) || (*got)[i] == (*want)[i]) << names[i];
      }
      EXPECT_TRUE(std::isnan((*got).back()));
    }
  }
  // Nothing changed: not written back over the file.
  EXPECT_EQ(index->Save(path_, kIdentity).code(), StatusCode::kCorruption);
  EXPECT_EQ(ReadFile(), bad);
  // A change: the table is built again first; no record is lost or doubled.
  const Memory added = RandomRecord(rng, "added");
  ASSERT_TRUE(index->Apply({added, records[3]}, {"rec-10"}, 6).ok());
  ASSERT_TRUE(built->Apply({added, records[3]}, {"rec-10"}, 6).ok());
  EXPECT_EQ(index->size(), 400u);
  ExpectSameAnswers(*index, *built, rng, names);
  ASSERT_TRUE(index->Save(path_, kIdentity).ok());
  auto again = MakeExactVectorIndex(kDim);
  ASSERT_TRUE(again->Load(path_, kIdentity, /*verify_vectors=*/true).ok());
  ExpectSameAnswers(*again, *built, rng, names);
}

// Scattered pieces of a file (the small reads of a cold query) come back
// as pread reads them, through the io_uring where the kernel gives one and
// without it; a piece past the end fails the run.
TEST_F(VectorFileTest, FileReadsReadScatteredPiecesWithOrWithoutTheRing) {
  std::mt19937 rng(23);
  std::string bytes(1 << 20, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  WriteFile(bytes);
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  for (const bool ring : {true, false}) {
    FileReads reads(ring);
    for (int round = 0; round < 2; ++round) {  // the ring is set up once and used again
      std::vector<std::pair<size_t, std::string>> pieces(600);  // more than the ring holds at once
      for (auto& [at, got] : pieces) {
        got.assign(1 + rng() % 2000, '\0');
        at = rng() % (bytes.size() - got.size() + 1);
        reads.Add(at, got.data(), got.size());
      }
      char last[3];
      reads.Add(bytes.size() - sizeof last, last, sizeof last);  // the last bytes exactly
      ASSERT_TRUE(reads.Run(fd));
      EXPECT_EQ(reads.queued(), 0u);
      for (size_t i = 0; i < pieces.size(); ++i) {
        EXPECT_EQ(pieces[i].second, bytes.substr(pieces[i].first, pieces[i].second.size()));
      }
      EXPECT_EQ(std::string(last, sizeof last), bytes.substr(bytes.size() - sizeof last));
    }
    if (!ring) {
      EXPECT_FALSE(reads.used_ring());
    }
    char past[8], first[1];
    reads.Add(bytes.size() - 4, past, sizeof past);
    reads.Add(0, first, sizeof first);
    EXPECT_FALSE(reads.Run(fd));
  }
  close(fd);
}

TEST(Checksum64Test, IsStableAndSeesEveryByte) {
  // Stored in files: these values must never change.
  EXPECT_EQ(Checksum64("", 0), Checksum64("", 0, 0));
  const std::string text = "the quick brown fox jumps over the lazy dog, twice over and then some";
  const uint64_t base = Checksum64(text.data(), text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    std::string t = text;
    t[i] = static_cast<char>(t[i] ^ 1);
    EXPECT_NE(Checksum64(t.data(), t.size()), base) << i;
  }
  EXPECT_NE(Checksum64(text.data(), text.size() - 1), base);
  EXPECT_NE(Checksum64(text.data(), text.size(), 1), base);
}

}  // namespace
}  // namespace msp
