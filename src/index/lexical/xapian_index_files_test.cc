// Tests for the Xapian lexical index's files: change-sequence stamping,
// reopening, sharing a directory between objects, processes and threads,
// damaged or deleted files and Reset, and a read-only index.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "index/index.h"
#include "index/lexical/xapian_index_test_util.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

TEST_F(XapianIndexTest, StampsAppliedSeqAndIgnoresOlderBatches) {
  Put({Rec("a", "first version")}, 10);
  EXPECT_EQ(*index_->AppliedSeq(), 10);
  // An older or equal batch is a no-op.
  ASSERT_TRUE(index_->Apply({Rec("a", "second version"), Rec("b", "new record")}, {}, 10).ok());
  ASSERT_TRUE(index_->Apply({}, {"a"}, 7).ok());
  EXPECT_EQ(*index_->AppliedSeq(), 10);
  EXPECT_EQ(*index_->DocCount(), 1);
  EXPECT_EQ(Ids(Query("first")), std::vector<std::string>{"a"});
  EXPECT_TRUE(Ids(Query("second")).empty());
  // A newer one applies.
  ASSERT_TRUE(index_->Apply({Rec("a", "second version")}, {}, 11).ok());
  EXPECT_EQ(*index_->AppliedSeq(), 11);
  EXPECT_EQ(Ids(Query("second")), std::vector<std::string>{"a"});
}

TEST_F(XapianIndexTest, SurvivesReopen) {
  Put({Rec("a", "persistent words")}, 4);
  index_.reset();
  auto again = OpenLexicalIndex(dir_.path() + "/lexical", RetrievalOptions{});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*(*again)->AppliedSeq(), 4);
  auto hits = (*again)->Search(Query("persistent"));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].id, "a");
}

TEST_F(XapianIndexTest, TwoIndexObjectsShareOneDirectory) {
  auto other_or = OpenLexicalIndex(dir_.path() + "/lexical", RetrievalOptions{});
  ASSERT_TRUE(other_or.ok()) << other_or.status().ToString();
  auto other = std::move(other_or).value();
  // Prime both readers, then write through one and read through the other.
  EXPECT_TRUE(Ids(Query("omega")).empty());
  ASSERT_TRUE(other->Search(Query("omega")).ok());
  Put({Rec("a", "omega point")}, 1);
  auto hits = other->Search(Query("omega"));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ(*other->AppliedSeq(), 1);
  ASSERT_TRUE(other->Apply({Rec("b", "omega again")}, {"a"}, 2).ok());
  EXPECT_EQ(Ids(Query("omega")), std::vector<std::string>{"b"});
  EXPECT_EQ(*index_->AppliedSeq(), 2);
}

// Another process writes (while this one writes too); this one sees it.
TEST_F(XapianIndexTest, AnotherProcessSharesTheDirectory) {
  ASSERT_TRUE(Ids(Query("zeta")).empty());  // this process has a reader open
  const std::string dir = dir_.path() + "/lexical";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int failures = 0;
    auto idx = OpenLexicalIndex(dir, RetrievalOptions{});
    if (!idx.ok()) _exit(100);
    for (int i = 0; i < 20; ++i) {
      // Odd sequence numbers; the parent uses even ones below 40.
      if (!(*idx)->Apply({Rec("child-" + std::to_string(i), "zeta from child")}, {}, 2 * i + 1).ok()) {
        ++failures;
      }
    }
    if (!(*idx)->Apply({Rec("child-last", "zeta final")}, {}, 100).ok()) ++failures;
    _exit(failures);
  }
  int failures = 0;
  for (int i = 0; i < 20; ++i) {
    if (!index_->Apply({Rec("parent-" + std::to_string(i), "zeta from parent")}, {}, 2 * i + 2).ok()) {
      ++failures;
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(*index_->AppliedSeq(), 100);
  const std::set<std::string> found = IdSet(Query("zeta"));
  EXPECT_TRUE(found.count("child-last"));
  EXPECT_EQ(found.size(), static_cast<size_t>(*index_->DocCount()));
}

TEST_F(XapianIndexTest, ConcurrentWritersAndReadersAgree) {
  auto other_or = OpenLexicalIndex(dir_.path() + "/lexical", RetrievalOptions{});
  ASSERT_TRUE(other_or.ok());
  auto other = std::move(other_or).value();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 2; ++t) {
    LexicalIndex* idx = t == 0 ? index_.get() : other.get();
    threads.emplace_back([&, idx, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string id = "w" + std::to_string(t) + "-" + std::to_string(i);
        // Sequences interleave; a writer that finds a newer stamp skips.
        if (!idx->Apply({Rec(id, "concurrent sigma")}, {}, t * 1000 + i + 1).ok()) ++failures[t];
      }
    });
    threads.emplace_back([&, idx, t] {
      for (int i = 0; i < 20; ++i) {
        if (!idx->Search(Query("sigma")).ok()) ++failures[2 + t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
  EXPECT_EQ(*index_->AppliedSeq(), *other->AppliedSeq());
  EXPECT_GE(*index_->AppliedSeq(), 20);
  // Every document that made it in is found through both objects.
  EXPECT_EQ(IdSet(Query("sigma")).size(), static_cast<size_t>(*index_->DocCount()));
  auto via_other = other->Search(Query("sigma"));
  ASSERT_TRUE(via_other.ok());
  EXPECT_EQ(via_other->size(), static_cast<size_t>(*other->DocCount()));
}

// Damaged files never fail the open: the first read answers Corruption
// naming the directory, and Reset sets the files aside (kept beside the
// index) and starts an empty index that works, without reading them.
struct Damage {
  const char* name;
  void (*apply)(const std::string& dir);
};

void TruncateTo(const std::string& file, std::uintmax_t size) { std::filesystem::resize_file(file, size); }

void Overwrite(const std::string& file, size_t offset, size_t bytes) {
  ASSERT_TRUE(testing::GarbleFile(file, offset, bytes)) << file;
}

const Damage kDamages[] = {
    {"postlist.glass truncated to 0", [](const std::string& d) { TruncateTo(d + "/postlist.glass", 0); }},
    {"termlist.glass truncated to 0", [](const std::string& d) { TruncateTo(d + "/termlist.glass", 0); }},
    {"iamglass truncated", [](const std::string& d) { TruncateTo(d + "/iamglass", 10); }},
    {"iamglass garbled", [](const std::string& d) { Overwrite(d + "/iamglass", 0, 40); }},
    {"iamglass removed", [](const std::string& d) { std::filesystem::remove(d + "/iamglass"); }},
    {"a file in place of the folder",
     [](const std::string& d) {
       std::filesystem::remove_all(d);
       std::FILE* f = std::fopen(d.c_str(), "w");
       std::fputs("not an index", f);
       std::fclose(f);
     }},
};

TEST(XapianIndexDamageTest, DamageIsCorruptionNamingTheDirectoryAndResetRepairs) {
  for (const Damage& damage : kDamages) {
    SCOPED_TRACE(damage.name);
    TempDir dir;
    const std::string path = dir.path() + "/lexical";
    {
      auto idx = OpenLexicalIndex(path, RetrievalOptions{});
      ASSERT_TRUE(idx.ok());
      ASSERT_TRUE((*idx)->Apply({Rec("a", "kafka broker down"), Rec("b", "printer jam")}, {}, 2).ok());
    }
    damage.apply(path);
    auto idx = OpenLexicalIndex(path, RetrievalOptions{});
    ASSERT_TRUE(idx.ok()) << idx.status().ToString();
    Result<int64_t> seq = (*idx)->AppliedSeq();
    Result<std::vector<IndexHit>> hits = (*idx)->Search(Query("kafka"));
    // At least one of the two reads meets the damage.
    const Status met = !seq.ok() ? seq.status() : hits.status();
    ASSERT_FALSE(met.ok()) << "the damage went unnoticed";
    EXPECT_EQ(met.code(), StatusCode::kCorruption) << met.ToString();
    EXPECT_NE(met.message().find(path), std::string::npos) << met.ToString();

    ASSERT_TRUE((*idx)->Reset().ok());
    EXPECT_TRUE(std::filesystem::exists(path + ".set-aside"));
    ASSERT_TRUE((*idx)->AppliedSeq().ok());
    EXPECT_EQ(*(*idx)->AppliedSeq(), 0);
    EXPECT_EQ(*(*idx)->DocCount(), 0);
    ASSERT_TRUE((*idx)->Apply({Rec("a", "kafka broker down")}, {}, 2).ok());
    auto again = (*idx)->Search(Query("kafka"));
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    ASSERT_EQ(again->size(), 1u);
    EXPECT_EQ(again->front().id, "a");
  }
}

// A folder deleted under an open index (its readers pooled): reads answer
// Corruption, and Reset starts a new index there.
TEST(XapianIndexDamageTest, FolderDeletedUnderAnOpenIndexIsCorruptionUntilReset) {
  TempDir dir;
  const std::string path = dir.path() + "/lexical";
  auto idx = OpenLexicalIndex(path, RetrievalOptions{});
  ASSERT_TRUE(idx.ok());
  ASSERT_TRUE((*idx)->Apply({Rec("a", "kafka broker down")}, {}, 1).ok());
  ASSERT_TRUE((*idx)->Search(Query("kafka")).ok());  // a reader is pooled
  std::filesystem::remove_all(path);
  const Result<int64_t> seq = (*idx)->AppliedSeq();
  ASSERT_FALSE(seq.ok());
  EXPECT_EQ(seq.status().code(), StatusCode::kCorruption) << seq.status().ToString();
  ASSERT_TRUE((*idx)->Reset().ok());
  EXPECT_EQ(*(*idx)->AppliedSeq(), 0);
  ASSERT_TRUE((*idx)->Apply({Rec("b", "kafka again")}, {}, 2).ok());
  EXPECT_EQ((*idx)->Search(Query("kafka"))->size(), 1u);
}

// What a process killed while creating the index leaves (seen in
// docid_map_test's kill loop): Xapian's version file still in its temporary
// name, empty tables and the lock file. Nothing was ever committed there:
// the next open starts the index over (the files set aside), so its first
// use answers rather than reporting damage.
TEST(XapianIndexDamageTest, FilesOfAnInterruptedCreationAreStartedOverAtOpen) {
  TempDir dir;
  const std::string path = dir.path() + "/lexical";
  std::filesystem::create_directories(path);
  std::ofstream(path + "/v.tmp") << std::string(77, 'x');
  for (const char* empty : {"postlist.glass", "termlist.glass", "flintlock"}) std::ofstream(path + "/" + empty);
  auto idx = OpenLexicalIndex(path, RetrievalOptions{});
  ASSERT_TRUE(idx.ok()) << idx.status().ToString();
  const Result<int64_t> seq = (*idx)->AppliedSeq();
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(*seq, 0);
  EXPECT_TRUE(std::filesystem::exists(path + ".set-aside/v.tmp"));
  ASSERT_TRUE((*idx)->Apply({Rec("a", "kafka broker down")}, {}, 1).ok());
  const Result<std::vector<IndexHit>> hits = (*idx)->Search(Query("kafka"));
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ(hits->front().id, "a");
}

// Every file below `dir`, with its bytes.
std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[e.path().string()] = testing::ReadWholeFile(e.path());
  }
  return out;
}

// A read-only index reads the files as they are, and moves into memory
// (a copy of them) at its first write: it answers old and new documents,
// and the files never change; without files it starts empty in memory.
TEST(XapianIndexReadOnlyTest, WritesGoToMemoryAndTheFilesNeverChange) {
  TempDir dir;
  const std::string path = dir.path() + "/lexical";
  {
    auto idx = OpenLexicalIndex(path, RetrievalOptions{});
    ASSERT_TRUE(idx.ok());
    ASSERT_TRUE((*idx)->Apply({Rec("a", "kafka broker down"), Rec("b", "printer jam")}, {}, 2).ok());
  }
  const auto before = Files(path);
  ASSERT_FALSE(before.empty());
  auto idx = OpenLexicalIndex(path, RetrievalOptions{}, /*sync_commits=*/false, /*read_only=*/true);
  ASSERT_TRUE(idx.ok()) << idx.status().ToString();
  EXPECT_EQ(*(*idx)->AppliedSeq(), 2);
  EXPECT_EQ((*idx)->Search(Query("kafka"))->size(), 1u);
  const Status applied = (*idx)->Apply({Rec("c", "kafka consumer lag")}, {"b"}, 3);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  EXPECT_EQ(*(*idx)->AppliedSeq(), 3);
  EXPECT_EQ(*(*idx)->DocCount(), 2);
  auto hits = (*idx)->Search(Query("kafka"));
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  std::set<std::string> ids;
  for (const auto& h : *hits) ids.insert(h.id);
  EXPECT_EQ(ids, (std::set<std::string>{"a", "c"}));
  ASSERT_TRUE((*idx)->Reset().ok());
  EXPECT_EQ(*(*idx)->AppliedSeq(), 0);
  EXPECT_EQ(Files(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + ".set-aside"));

  const std::string none = dir.path() + "/none";
  auto empty = OpenLexicalIndex(none, RetrievalOptions{}, /*sync_commits=*/false, /*read_only=*/true);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*(*empty)->AppliedSeq(), 0);
  ASSERT_TRUE((*empty)->Apply({Rec("d", "zookeeper quorum")}, {}, 1).ok());
  EXPECT_EQ((*empty)->Search(Query("zookeeper"))->size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(none));
}

}  // namespace
}  // namespace msp
