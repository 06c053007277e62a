// Tests for the lexical index's docid -> id map (docid_map.h): searches
// return the right ids through writes, deletes, replaces, passages, a
// reindex and another process's writes; a damaged, foreign or stale map is
// never trusted and the next write repairs it; kill -9 while the map is
// written leaves nothing wrong.
#include "index/lexical/docid_map.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xapian.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "index/index.h"
#include "index/lexical/xapian_document.h"
#include "tests/support/test_util.h"
#include "util/hash.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

Memory Rec(const std::string& id, const std::string& text) {
  Memory m;
  m.id = id;
  m.text = text;
  m.ns.tenant = "t1";
  m.source = "user";
  m.created_at = 1000;
  return m;
}

IndexQuery Query(const std::string& text) {
  IndexQuery q;
  q.scope.tenant = "t1";
  q.text = text;
  q.now = 5000;
  q.limit = 50;
  return q;
}

// A word only record `n` holds ("x0q", "x1q", ...: no stemming rule
// touches them).
std::string Word(int n) { return "x" + std::to_string(n) + "q"; }

std::vector<std::string> Ids(LexicalIndex& index, const std::string& text) {
  auto hits = index.Search(Query(text));
  EXPECT_TRUE(hits.ok()) << hits.status().ToString();
  std::vector<std::string> ids;
  if (hits.ok()) {
    for (const IndexHit& h : *hits) ids.push_back(h.id);
  }
  return ids;
}

struct MapState {
  size_t docs = 0;      // documents in the index
  size_t found = 0;     // of them, held by the map
  size_t wrong = 0;     // held with another id or passage than the document's
  size_t passages = 0;  // held with a passage (part of a record)
};

// What the map says of every document of the index at `dir`.
MapState ReadMap(const std::string& dir) {
  MapState s;
  Xapian::Database db(dir);
  std::vector<uint32_t> docids;
  for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) docids.push_back(*it);
  DocidMapReader reader(dir + "/" + std::string(kDocidMapFile));
  std::vector<DocidMapEntry> entries;
  reader.Lookup(db.get_uuid(), db.get_lastdocid(), docids, entries);
  s.docs = docids.size();
  for (size_t i = 0; i < docids.size(); ++i) {
    const DocidMapEntry& e = entries[i];
    if (e.id.empty()) continue;
    ++s.found;
    const Xapian::Document doc = db.get_document(docids[i]);
    const xapian_lexical::PassageSpan passage = xapian_lexical::PassageOf(doc);
    if (e.id != doc.get_data() ||
        (e.passage_known && (e.passage_begin != passage.begin || e.passage_end != passage.end))) {
      ++s.wrong;
    }
    if (e.passage_known && e.passage_end > 0) ++s.passages;
  }
  return s;
}

// Every record of `expected` (id -> its word) is found by its word, alone.
void ExpectFoundByWord(LexicalIndex& index, const std::map<std::string, std::string>& expected) {
  for (const auto& [id, word] : expected) {
    EXPECT_EQ(Ids(index, word), std::vector<std::string>{id}) << word;
  }
}

class DocidMapTest : public ::testing::Test {
 protected:
  // The index at dir_, long records cut into passages of 64 bytes.
  std::unique_ptr<LexicalIndex> OpenWithPassages() {
    RetrievalOptions options;
    options.passage_bytes = 64;
    auto opened = OpenLexicalIndex(dir_, options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }

  void IdsRightThroughChanges(bool warm);

  testing::TempDir tmp_{"docid_map_test"};
  const std::string dir_ = tmp_.path() + "/lexical";
};

// With `warm`, the index keeps its copy of the map from after the first
// write on (LexicalIndex::Warm, as a server does): the ids stay right
// through the changes that follow, a reset (a new database) included.
void DocidMapTest::IdsRightThroughChanges(bool warm) {
  const std::unique_ptr<LexicalIndex> opened = OpenWithPassages();
  ASSERT_NE(opened, nullptr);
  LexicalIndex& index = *opened;
  std::map<std::string, std::string> expected;
  std::vector<Memory> batch;
  for (int i = 0; i < 300; ++i) {
    const std::string id = "rec-" + std::to_string(i);
    batch.push_back(Rec(id, "common " + Word(i)));
    expected[id] = Word(i);
  }
  // An id longer than a slot holds: read from its document instead.
  const std::string long_id(80, 'L');
  batch.push_back(Rec(long_id, "common " + Word(1000)));
  expected[long_id] = Word(1000);
  ASSERT_TRUE(index.Apply(batch, {}, 1).ok());
  if (warm) index.Warm(size_t{1} << 20);
  MapState s = ReadMap(dir_);
  EXPECT_EQ(s.docs, 301u);
  EXPECT_EQ(s.found, 300u);  // all but the long id
  EXPECT_EQ(s.wrong, 0u);
  ExpectFoundByWord(index, expected);
  EXPECT_EQ(Ids(index, "common").size(), 50u);  // limit 50 of 301

  // Replace some (same docid), delete others, make one long (passages).
  std::vector<Memory> changes;
  for (int i = 0; i < 300; i += 3) {
    const std::string id = "rec-" + std::to_string(i);
    changes.push_back(Rec(id, "common " + Word(2000 + i)));
    expected[id] = Word(2000 + i);
  }
  const std::string long_text = Word(5000) + " stands at the start of a text long enough to be cut into passages, " +
                                "and " + Word(5001) + " stands near its end, well past the first passage.";
  changes.push_back(Rec("rec-1", long_text));
  expected.erase("rec-1");
  std::vector<std::string> deletes;
  for (int i = 2; i < 300; i += 3) {
    deletes.push_back("rec-" + std::to_string(i));
    expected.erase("rec-" + std::to_string(i));
  }
  ASSERT_TRUE(index.Apply(changes, deletes, 2).ok());
  s = ReadMap(dir_);
  EXPECT_EQ(s.wrong, 0u);
  EXPECT_EQ(s.found + 1, s.docs);
  EXPECT_GT(s.passages, 1u);  // rec-1's passages, each with its offsets
  ExpectFoundByWord(index, expected);
  EXPECT_EQ(Ids(index, Word(5000)), std::vector<std::string>{"rec-1"});
  EXPECT_EQ(Ids(index, Word(5001)), std::vector<std::string>{"rec-1"});
  EXPECT_EQ(Ids(index, Word(2)), std::vector<std::string>{});  // deleted
  EXPECT_EQ(Ids(index, Word(0)), std::vector<std::string>{});  // replaced
  // The passages' offsets, from the map: the passage holds the word.
  auto hits = index.SearchEpisodes(Query(Word(5001)));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_NE(long_text.substr((*hits)[0].passage_begin, (*hits)[0].passage_end - (*hits)[0].passage_begin)
                .find(Word(5001)),
            std::string::npos);

  // A reindex: cleared, then replayed. Then a reset (a new database).
  std::vector<Memory> all;
  for (const auto& [id, word] : expected) all.push_back(Rec(id, "common " + word));
  ASSERT_TRUE(index.Clear().ok());
  ASSERT_TRUE(index.Apply(all, {}, 3).ok());
  s = ReadMap(dir_);
  EXPECT_EQ(s.wrong, 0u);
  EXPECT_EQ(s.found + 1, s.docs);
  ExpectFoundByWord(index, expected);
  ASSERT_TRUE(index.Reset().ok());
  ASSERT_TRUE(index.Apply(all, {}, 1).ok());
  s = ReadMap(dir_);
  EXPECT_EQ(s.wrong, 0u);
  EXPECT_EQ(s.found + 1, s.docs);
  ExpectFoundByWord(index, expected);
}

TEST_F(DocidMapTest, IdsRightThroughWritesDeletesReplacesPassagesAndReindex) { IdsRightThroughChanges(false); }

TEST_F(DocidMapTest, IdsRightThroughChangesWithTheMapInMemory) { IdsRightThroughChanges(true); }

TEST_F(DocidMapTest, AnotherProcessesWritesAreSeenWithTheirIds) {
  auto opened = OpenLexicalIndex(dir_, RetrievalOptions{});
  ASSERT_TRUE(opened.ok());
  LexicalIndex& index = **opened;
  ASSERT_TRUE(index.Apply({Rec("mine", "common " + Word(1))}, {}, 1).ok());
  ASSERT_EQ(Ids(index, Word(1)), std::vector<std::string>{"mine"});  // a reader is open and cached
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto idx = OpenLexicalIndex(dir_, RetrievalOptions{});
    if (!idx.ok()) _exit(100);
    std::vector<Memory> batch;
    for (int i = 0; i < 200; ++i) batch.push_back(Rec("child-" + std::to_string(i), "common " + Word(100 + i)));
    _exit((*idx)->Apply(batch, {"mine"}, 2).ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(Ids(index, Word(1)).empty());
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(Ids(index, Word(100 + i)), std::vector<std::string>{"child-" + std::to_string(i)});
  }
  const MapState s = ReadMap(dir_);
  EXPECT_EQ(s.docs, 200u);
  EXPECT_EQ(s.found, 200u);
  EXPECT_EQ(s.wrong, 0u);
}

TEST_F(DocidMapTest, DamagedForeignOrStaleMapsAreNotTrustedAndTheNextWriteRepairs) {
  const std::string map_path = dir_ + "/" + std::string(kDocidMapFile);
  struct Damage {
    const char* name;
    void (*apply)(const std::string& map_path, const std::string& foreign);
  };
  const Damage damages[] = {
      {"removed", [](const std::string& p, const std::string&) { fs::remove(p); }},
      {"truncated mid-slot", [](const std::string& p, const std::string&) { fs::resize_file(p, 64 * 50 + 20); }},
      {"header garbled", [](const std::string& p, const std::string&) { ASSERT_TRUE(testing::GarbleFile(p, 0, 64)); }},
      {"slots garbled", [](const std::string& p, const std::string&) { ASSERT_TRUE(testing::GarbleFile(p, 64 * 10, 64 * 40)); }},
      {"two slots swapped",
       [](const std::string& p, const std::string&) {
         std::string bytes = testing::ReadWholeFile(p);
         ASSERT_GT(bytes.size(), 64u * 21);
         std::string a = bytes.substr(64 * 5, 64);
         bytes.replace(64 * 5, 64, bytes.substr(64 * 20, 64));
         bytes.replace(64 * 20, 64, a);
         std::FILE* f = std::fopen(p.c_str(), "wb");
         std::fwrite(bytes.data(), 1, bytes.size(), f);
         std::fclose(f);
       }},
      {"another index's map", [](const std::string& p, const std::string& foreign) {
         fs::copy_file(foreign, p, fs::copy_options::overwrite_existing);
       }},
  };
  // Another index whose docids hold other ids.
  const std::string other = tmp_.path() + "/other";
  {
    auto idx = OpenLexicalIndex(other, RetrievalOptions{});
    ASSERT_TRUE(idx.ok());
    std::vector<Memory> batch;
    for (int i = 0; i < 100; ++i) batch.push_back(Rec("other-" + std::to_string(i), "common " + Word(i)));
    ASSERT_TRUE((*idx)->Apply(batch, {}, 1).ok());
  }
  int seq = 0;
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.name);
    fs::remove_all(dir_);
    auto opened = OpenLexicalIndex(dir_, RetrievalOptions{});
    ASSERT_TRUE(opened.ok());
    LexicalIndex& index = **opened;
    std::map<std::string, std::string> expected;
    std::vector<Memory> batch;
    for (int i = 0; i < 100; ++i) {
      batch.push_back(Rec("rec-" + std::to_string(i), "common " + Word(i)));
      expected["rec-" + std::to_string(i)] = Word(i);
    }
    ASSERT_TRUE(index.Apply(batch, {}, ++seq).ok());
    damage.apply(map_path, other + "/" + std::string(kDocidMapFile));
    MapState s = ReadMap(dir_);
    EXPECT_EQ(s.wrong, 0u);
    EXPECT_LT(s.found, 100u);
    ExpectFoundByWord(index, expected);
    ASSERT_TRUE(index.Apply({Rec("late", "common " + Word(500))}, {}, ++seq).ok());
    expected["late"] = Word(500);
    s = ReadMap(dir_);
    EXPECT_EQ(s.wrong, 0u);
    ExpectFoundByWord(index, expected);
    if (std::string(damage.name) != "slots garbled" && std::string(damage.name) != "two slots swapped") {
      EXPECT_EQ(s.found, 101u);  // started over: whole again
    } else {
      EXPECT_EQ(s.found, 101u - (std::string(damage.name) == "two slots swapped" ? 2 : 40));  // left as they are
    }
  }
}

// The map as version 1 wrote it for the index at `dir`: the header (magic,
// version 1, slot size, the UUID's seed, the docids covered, its checksum)
// and per document its id under a checksum of (docid, id), no passage.
void WriteVersion1Map(const std::string& dir) {
  Xapian::Database db(dir);
  const std::string uuid = db.get_uuid();
  const uint64_t seed = Checksum64(uuid.data(), uuid.size(), 0x6d73702d646f6369ull);
  std::string bytes(64 * (db.get_lastdocid() + 1), '\0');
  auto put = [&bytes](size_t at, const void* p, size_t n) { std::memcpy(bytes.data() + at, p, n); };
  const uint32_t version = 1, slot = 64;
  const uint64_t covered = db.get_lastdocid();
  put(0, "MSPDOCID", 8);
  put(8, &version, 4);
  put(12, &slot, 4);
  put(16, &seed, 8);
  put(24, &covered, 8);
  const uint64_t header_check = Checksum64(bytes.data(), 56);
  put(56, &header_check, 8);
  for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) {
    const std::string id = db.get_document(*it).get_data();
    if (id.size() > 55) continue;
    const uint64_t docid = *it;
    const uint64_t check = Checksum64(id.data(), id.size(), Checksum64(&docid, sizeof docid, seed));
    const uint8_t len = static_cast<uint8_t>(id.size());
    put(64 * docid, &check, 8);
    put(64 * docid + 8, &len, 1);
    put(64 * docid + 9, id.data(), id.size());
  }
  std::FILE* f = std::fopen((dir + "/" + std::string(kDocidMapFile)).c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

TEST_F(DocidMapTest, AVersion1MapIsReadForItsIdsAndTheNextWriteAddsPassages) {
  const std::unique_ptr<LexicalIndex> opened = OpenWithPassages();
  ASSERT_NE(opened, nullptr);
  LexicalIndex& index = *opened;
  const std::string long_text = Word(7000) + " opens a record long enough to be cut into several passages, and " +
                                Word(7001) + " stands near its end, well past the first of them.";
  std::vector<Memory> batch = {Rec("long", long_text)};
  for (int i = 0; i < 50; ++i) batch.push_back(Rec("rec-" + std::to_string(i), "common " + Word(i)));
  ASSERT_TRUE(index.Apply(batch, {}, 1).ok());
  MapState s = ReadMap(dir_);
  EXPECT_EQ(s.found, s.docs);
  EXPECT_GT(s.passages, 1u);

  WriteVersion1Map(dir_);
  s = ReadMap(dir_);
  EXPECT_EQ(s.found, s.docs);  // every id, from the version 1 slots
  EXPECT_EQ(s.wrong, 0u);
  EXPECT_EQ(s.passages, 0u);  // none known: read from the documents
  auto hits = index.SearchEpisodes(Query(Word(7001)));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].hit.id, "long");
  const auto& h = (*hits)[0];
  ASSERT_GT(h.passage_end, h.passage_begin);
  EXPECT_NE(long_text.substr(h.passage_begin, h.passage_end - h.passage_begin).find(Word(7001)), std::string::npos);

  ASSERT_TRUE(index.Apply({Rec("late", "common " + Word(500))}, {}, 2).ok());
  s = ReadMap(dir_);
  EXPECT_EQ(s.found, s.docs);  // started over as version 2
  EXPECT_EQ(s.wrong, 0u);
  EXPECT_GT(s.passages, 1u);
}

TEST_F(DocidMapTest, AMapAheadOfItsDatabaseIsIgnoredAndStartedOver) {
  // What a power loss that kept the map's pages but not the index's last
  // commit would leave: a map covering docids the database has not got,
  // which the next commits give to other records.
  const std::string copy = tmp_.path() + "/copy";
  {
    auto idx = OpenLexicalIndex(dir_, RetrievalOptions{});
    ASSERT_TRUE(idx.ok());
    ASSERT_TRUE((*idx)->Apply({Rec("a", "common " + Word(1))}, {}, 1).ok());
  }
  fs::copy(dir_, copy);
  {
    auto idx = OpenLexicalIndex(dir_, RetrievalOptions{});
    ASSERT_TRUE(idx.ok());
    ASSERT_TRUE((*idx)->Apply({Rec("b", "common " + Word(2)), Rec("c", "common " + Word(3))}, {}, 2).ok());
  }
  fs::copy_file(dir_ + "/" + std::string(kDocidMapFile), copy + "/" + std::string(kDocidMapFile),
                fs::copy_options::overwrite_existing);
  // The copy's database has docid 1; its map covers 1..3.
  auto opened = OpenLexicalIndex(copy, RetrievalOptions{});
  ASSERT_TRUE(opened.ok());
  LexicalIndex& index = **opened;
  EXPECT_EQ(ReadMap(copy).found, 0u);
  EXPECT_EQ(Ids(index, Word(1)), std::vector<std::string>{"a"});
  ASSERT_TRUE(index.Apply({Rec("x", "common " + Word(7)), Rec("y", "common " + Word(8))}, {}, 2).ok());
  const MapState s = ReadMap(copy);
  EXPECT_EQ(s.docs, 3u);
  EXPECT_EQ(s.found, 3u);
  EXPECT_EQ(s.wrong, 0u);
  EXPECT_EQ(Ids(index, Word(7)), std::vector<std::string>{"x"});
  EXPECT_EQ(Ids(index, Word(8)), std::vector<std::string>{"y"});
}

TEST_F(DocidMapTest, KilledWhileWritingLeavesNothingWrong) {
  std::mt19937 rng(7);
  int seq = 0;
  int next = 0;
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE(round);
    const int first = next;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto idx = OpenLexicalIndex(dir_, RetrievalOptions{});
      if (!idx.ok()) _exit(100);
      for (int b = 0; b < 30; ++b) {  // until killed, mostly
        std::vector<Memory> batch;
        for (int i = 0; i < 500; ++i) {
          const int n = first + 500 * b + i;
          batch.push_back(Rec("rec-" + std::to_string(n), "common " + Word(n)));
        }
        if (!(*idx)->Apply(batch, {}, seq + b + 1).ok()) _exit(1);
      }
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 400)(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << status;
    // Whatever the index holds, each document found by its word has its id.
    auto opened = OpenLexicalIndex(dir_, RetrievalOptions{});
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    LexicalIndex& index = **opened;
    Result<int64_t> applied = index.AppliedSeq();
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    seq = static_cast<int>(*applied);
    MapState s = ReadMap(dir_);
    EXPECT_EQ(s.wrong, 0u);
    const int held = static_cast<int>(s.docs);
    for (int n = 0; n < held; n += 37) {
      EXPECT_EQ(Ids(index, Word(n)), std::vector<std::string>{"rec-" + std::to_string(n)});
    }
    // The next write makes the map whole.
    next = held;
    ASSERT_TRUE(index.Apply({Rec("rec-" + std::to_string(next), "common " + Word(next))}, {}, ++seq).ok());
    ++next;
    s = ReadMap(dir_);
    EXPECT_EQ(s.wrong, 0u);
    EXPECT_EQ(s.found, s.docs);
    EXPECT_EQ(s.docs, static_cast<size_t>(next));
  }
}

// The copy answers what the file held when it was read: slots garbled in
// the file afterwards are still answered right through it (and not
// without it); a new database on the same docids (a reset) is answered
// with its own ids, the copied slots failing their check; nothing is
// held before Load, nor past its budget.
TEST_F(DocidMapTest, TheCopyInMemoryAnswersAsTheFileDidAndNeverForAnotherDatabase) {
  const std::string map_path = dir_ + "/" + std::string(kDocidMapFile);
  auto opened = OpenLexicalIndex(dir_, RetrievalOptions{});
  ASSERT_TRUE(opened.ok());
  std::vector<Memory> batch;
  for (int i = 0; i < 300; ++i) batch.push_back(Rec("first-" + std::to_string(i), "common " + Word(i)));
  ASSERT_TRUE((*opened)->Apply(batch, {}, 1).ok());
  std::vector<uint32_t> docids;
  std::string uuid;
  uint32_t last = 0;
  {
    Xapian::Database db(dir_);
    for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) docids.push_back(*it);
    uuid = db.get_uuid();
    last = db.get_lastdocid();
  }
  ASSERT_EQ(docids.size(), 300u);
  auto ids_of = [&](DocidMapReader& reader, const std::string& db_uuid, uint32_t db_last) {
    std::vector<DocidMapEntry> entries;
    reader.Lookup(db_uuid, db_last, docids, entries);
    std::vector<std::string> ids;
    for (const DocidMapEntry& e : entries) ids.push_back(e.id);
    return ids;
  };
  std::vector<std::string> expected;
  {
    Xapian::Database db(dir_);
    for (uint32_t d : docids) expected.push_back(db.get_document(d).get_data());
  }

  DocidMapCache cache;
  EXPECT_FALSE(cache.active());
  DocidMapReader before_load(map_path, &cache);
  EXPECT_EQ(ids_of(before_load, uuid, last), expected);  // from the file
  EXPECT_EQ(cache.held(), 0u);                            // nothing kept before Load
  cache.Load(map_path, uuid, last, size_t{1} << 20);
  EXPECT_TRUE(cache.active());
  EXPECT_EQ(cache.held(), 300u);

  ASSERT_TRUE(testing::GarbleFile(map_path, 64 * 10, 64 * 100));
  DocidMapReader through_copy(map_path, &cache);
  DocidMapReader from_file(map_path);
  EXPECT_EQ(ids_of(through_copy, uuid, last), expected);
  const std::vector<std::string> garbled = ids_of(from_file, uuid, last);
  EXPECT_EQ(std::count(garbled.begin(), garbled.end(), std::string()), 100);  // docids 10..109 lost
  // A header ahead of the database (one that lost commits): nothing, copy or not.
  EXPECT_EQ(ids_of(through_copy, uuid, last - 1), std::vector<std::string>(300));

  // A new database on the same docids, with other ids.
  ASSERT_TRUE((*opened)->Reset().ok());
  batch.clear();
  for (int i = 0; i < 300; ++i) batch.push_back(Rec("second-" + std::to_string(i), "common " + Word(i)));
  ASSERT_TRUE((*opened)->Apply(batch, {}, 1).ok());
  std::string new_uuid;
  std::vector<std::string> now_expected;
  {
    Xapian::Database db(dir_);
    new_uuid = db.get_uuid();
    ASSERT_NE(new_uuid, uuid);
    ASSERT_EQ(db.get_lastdocid(), last);
    for (uint32_t d : docids) now_expected.push_back(db.get_document(d).get_data());
  }
  ASSERT_EQ(now_expected[0].rfind("second-", 0), 0u);
  // A reset's new readers (the old ones are dropped), with the same copy.
  DocidMapReader after_reset(map_path, &cache);
  EXPECT_EQ(ids_of(after_reset, new_uuid, last), now_expected);
  EXPECT_EQ(cache.held(), 300u);  // the slots replaced, no more
  // A copy made before the map was there (a new store's) takes the slots
  // lookups read.
  DocidMapCache late;
  late.Load(tmp_.path() + "/no-map-yet", new_uuid, last, size_t{1} << 20);
  EXPECT_TRUE(late.active());
  EXPECT_EQ(late.held(), 0u);
  DocidMapReader through_late(map_path, &late);
  EXPECT_EQ(ids_of(through_late, new_uuid, last), now_expected);
  EXPECT_EQ(late.held(), 300u);
  // A budget smaller than one chunk of slots holds nothing.
  DocidMapCache small;
  small.Load(map_path, new_uuid, last, 1000);
  EXPECT_EQ(small.held(), 0u);
  DocidMapReader through_small(map_path, &small);
  EXPECT_EQ(ids_of(through_small, new_uuid, last), now_expected);
  EXPECT_EQ(small.held(), 0u);
  // The copies hold the new slots: answered with the file's slots garbled.
  ASSERT_TRUE(testing::GarbleFile(map_path, 64, 64 * 300));
  EXPECT_EQ(ids_of(after_reset, new_uuid, last), now_expected);
  EXPECT_EQ(ids_of(through_late, new_uuid, last), now_expected);
  DocidMapReader new_from_file(map_path);
  EXPECT_EQ(ids_of(new_from_file, new_uuid, last), std::vector<std::string>(300));
}

TEST(DocidMapReaderTest, NoFileOrAnEmptyOneHoldsNothing) {
  testing::TempDir tmp("docid_map_test");
  std::vector<DocidMapEntry> entries;
  auto none_held = [&entries] {
    return entries.size() == 3 && std::all_of(entries.begin(), entries.end(), [](const DocidMapEntry& e) {
             return e.id.empty() && e.passage_begin == 0 && e.passage_end == 0;
           });
  };
  DocidMapReader missing(tmp.path() + "/none");
  missing.Lookup("uuid", 10, {1, 2, 3}, entries);
  EXPECT_TRUE(none_held());
  std::FILE* f = std::fopen((tmp.path() + "/empty").c_str(), "w");
  std::fclose(f);
  DocidMapReader empty(tmp.path() + "/empty");
  empty.Lookup("uuid", 10, {1, 2, 3}, entries);
  EXPECT_TRUE(none_held());
}

}  // namespace
}  // namespace msp
