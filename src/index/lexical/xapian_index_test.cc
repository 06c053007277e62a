// Tests for the Xapian lexical index: indexing, BM25 search, stemming, stop
// words, filters, change-sequence stamping, sharing a directory, hostile
// query strings and Clear.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "index/index.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("MSP_TEST_TMP");
    std::string root = base && *base ? base : "/tmp";
    std::filesystem::create_directories(root);
    std::string tmpl = root + "/xapian_index_test.XXXXXX";
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Memory Rec(const std::string& id, const std::string& text) {
  Memory m;
  m.id = id;
  m.text = text;
  m.ns.tenant = "t1";
  m.ns.user = "ann";
  m.source = "user";
  m.created_at = 1000;
  return m;
}

IndexQuery Query(const std::string& text, const std::string& tenant = "t1") {
  IndexQuery q;
  q.scope.tenant = tenant;
  q.text = text;
  q.now = 5000;
  q.limit = 50;
  return q;
}

class XapianIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto idx = OpenLexicalIndex(dir_.path() + "/lexical", RetrievalOptions{});
    ASSERT_TRUE(idx.ok()) << idx.status().ToString();
    index_ = std::move(idx).value();
  }

  std::vector<std::string> Ids(const IndexQuery& q) {
    auto hits = index_->Search(q);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    std::vector<std::string> ids;
    if (hits.ok()) {
      for (const auto& h : *hits) ids.push_back(h.id);
    }
    return ids;
  }

  std::set<std::string> IdSet(const IndexQuery& q) {
    auto v = Ids(q);
    return {v.begin(), v.end()};
  }

  void Put(const std::vector<Memory>& records, int64_t seq) {
    ASSERT_TRUE(index_->Apply(records, {}, seq).ok());
  }

  TempDir dir_;
  std::unique_ptr<LexicalIndex> index_;
};

TEST_F(XapianIndexTest, NewIndexIsEmpty) {
  EXPECT_EQ(*index_->AppliedSeq(), 0);
  EXPECT_EQ(*index_->DocCount(), 0);
  EXPECT_TRUE(Ids(Query("anything")).empty());
  EXPECT_TRUE(std::filesystem::is_directory(dir_.path() + "/lexical"));
}

TEST_F(XapianIndexTest, IndexesSearchesReplacesAndDeletes) {
  Put({Rec("a", "The deploy pipeline uses GitHub Actions"),
       Rec("b", "Ann prefers tea over coffee in the morning"),
       Rec("c", "Coffee machine on floor three is broken")},
      3);
  EXPECT_EQ(*index_->DocCount(), 3);
  EXPECT_EQ(IdSet(Query("coffee")), (std::set<std::string>{"b", "c"}));
  EXPECT_EQ(Ids(Query("pipeline")), std::vector<std::string>{"a"});

  // Replace "c": the old text no longer matches, the new one does.
  ASSERT_TRUE(index_->Apply({Rec("c", "Printer on floor three is broken")}, {}, 4).ok());
  EXPECT_EQ(*index_->DocCount(), 3);
  EXPECT_EQ(Ids(Query("coffee")), std::vector<std::string>{"b"});
  EXPECT_EQ(Ids(Query("printer")), std::vector<std::string>{"c"});

  // Delete "b" (and a missing id, which is ignored).
  ASSERT_TRUE(index_->Apply({}, {"b", "no-such-id"}, 5).ok());
  EXPECT_EQ(*index_->DocCount(), 2);
  EXPECT_TRUE(Ids(Query("coffee")).empty());
}

TEST_F(XapianIndexTest, RanksByBm25AndHonoursLimit) {
  Put({Rec("once", "kafka appears here once among many other unrelated words in a longer text"),
       Rec("thrice", "kafka kafka kafka"), Rec("none", "nothing relevant")},
      1);
  auto hits = index_->Search(Query("kafka"));
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].id, "thrice");
  EXPECT_EQ((*hits)[1].id, "once");
  EXPECT_GT((*hits)[0].score, (*hits)[1].score);
  EXPECT_GT((*hits)[1].score, 0.0);

  IndexQuery q = Query("kafka");
  q.limit = 1;
  EXPECT_EQ(Ids(q), std::vector<std::string>{"thrice"});
  q.limit = 0;
  EXPECT_TRUE(Ids(q).empty());
}

TEST_F(XapianIndexTest, StemmingMatchesWordForms) {
  Put({Rec("r", "She runs every day"), Rec("d", "The deployments were configured yesterday")}, 1);
  EXPECT_EQ(Ids(Query("running")), std::vector<std::string>{"r"});
  EXPECT_EQ(Ids(Query("Running")), std::vector<std::string>{"r"});
  EXPECT_EQ(Ids(Query("deployment configuration")), std::vector<std::string>{"d"});
}

TEST_F(XapianIndexTest, StopWordsAreIgnored) {
  Put({Rec("cat", "a cat sat on the mat"), Rec("dog", "the dog and the owner of the house"),
       Rec("x", "is it was")},
      1);
  // The stop words in the query match nothing on their own.
  EXPECT_EQ(Ids(Query("the cat of the")), std::vector<std::string>{"cat"});
  // A query of nothing but stop words (or nothing at all) finds nothing.
  for (const char* text : {"the", "the of and", "Was", "IS IT", "", "   ", "?!"}) {
    auto hits = index_->Search(Query(text));
    ASSERT_TRUE(hits.ok()) << text;
    EXPECT_TRUE(hits->empty()) << "'" << text << "' found " << hits->size();
  }
}

// Positions are not stored: a quoted phrase matches as the AND of its words.
TEST_F(XapianIndexTest, QuotedPhrasesMatchAllTheirWords) {
  Put({Rec("ab", "blue green red"), Rec("ba", "green blue red"), Rec("b", "blue yellow")}, 1);
  EXPECT_EQ(IdSet(Query("\"blue green\"")), (std::set<std::string>{"ab", "ba"}));
  EXPECT_EQ(IdSet(Query("blue green")), (std::set<std::string>{"ab", "ba", "b"}));
  EXPECT_EQ(IdSet(Query("e-mail blue")), (std::set<std::string>{"ab", "ba", "b"}));
}

TEST_F(XapianIndexTest, FindsNonAsciiWords) {
  Put({Rec("jp", "昨日は東京タワーに行きました"), Rec("fr", "Le café était très bon"),
       Rec("en", "plain english")},
      1);
  EXPECT_EQ(Ids(Query("東京")), std::vector<std::string>{"jp"});
  EXPECT_EQ(Ids(Query("café")), std::vector<std::string>{"fr"});
  EXPECT_EQ(Ids(Query("Très")), std::vector<std::string>{"fr"});
}

TEST_F(XapianIndexTest, TenantsAndScopesAreIsolated) {
  Memory a = Rec("a", "shared secret word");
  Memory b = Rec("b", "shared secret word");
  b.ns.tenant = "t2";
  Memory c = Rec("c", "shared secret word");
  c.ns.user = "bob";
  c.ns.session = "s1";
  Put({a, b, c}, 1);
  EXPECT_EQ(IdSet(Query("secret", "t1")), (std::set<std::string>{"a", "c"}));
  EXPECT_EQ(IdSet(Query("secret", "t2")), (std::set<std::string>{"b"}));
  EXPECT_TRUE(IdSet(Query("secret", "t3")).empty());
  EXPECT_TRUE(IdSet(Query("secret", "")).empty());
  IndexQuery q = Query("secret");
  q.scope.user = "bob";
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"c"}));
  q.scope.session = "s2";
  EXPECT_TRUE(IdSet(q).empty());
  q.scope.user = "";
  q.scope.session = "s1";
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"c"}));
}

TEST_F(XapianIndexTest, FiltersByKindLayerTagSourceCriticality) {
  Memory a = Rec("a", "alpha topic");
  a.kind = Kind::kEpisode;
  a.layer = Layer::kEpisodic;
  a.tags = {"x", "y"};
  a.source = "tool";
  a.criticality = Criticality::kHigh;
  Memory b = Rec("b", "alpha topic");
  b.tags = {"z"};
  Put({a, b}, 1);
  IndexQuery q = Query("alpha");
  q.filter.kinds = {Kind::kEpisode};
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a"}));
  q.filter.kinds = {Kind::kEpisode, Kind::kFact};
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a", "b"}));
  q = Query("alpha");
  q.filter.layers = {Layer::kSemantic};
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"b"}));
  q = Query("alpha");
  q.filter.tags = {"y", "nope"};
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a"}));
  q.filter.tags = {"nope"};
  EXPECT_TRUE(IdSet(q).empty());
  q = Query("alpha");
  q.filter.sources = {"user"};
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"b"}));
  q = Query("alpha");
  q.filter.criticalities = {Criticality::kHigh, Criticality::kCritical};
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a"}));
}

TEST_F(XapianIndexTest, FiltersByCreationTimeExpiryAndState) {
  Memory early = Rec("early", "gamma");
  early.created_at = 100;
  Memory late = Rec("late", "gamma");
  late.created_at = 200;
  Memory expired = Rec("expired", "gamma");
  expired.expires_at = 5000;  // == now: expired
  Memory expiring = Rec("expiring", "gamma");
  expiring.expires_at = 5001;
  Memory old = Rec("old", "gamma");
  old.state = RecordState::kSuperseded;
  Put({early, late, expired, expiring, old}, 1);

  IndexQuery q = Query("gamma");
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"early", "late", "expiring"}));
  q.filter.include_superseded = true;
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"early", "late", "expiring", "old"}));
  q.filter.include_superseded = false;
  q.filter.created_from = 200;  // inclusive; "expiring" was created at 1000
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"late", "expiring"}));
  q.filter.created_from = 0;
  q.filter.created_to = 200;  // exclusive
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"early"}));
  q.filter.created_to = 0;
  q.now = 0;  // nothing counts as expired
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"early", "late", "expired", "expiring"}));
  q.now = 5001;
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"early", "late"}));
}

// A filter every document passes is left out of the query; once a document
// fails it (a later write), it counts again on the next search.
TEST_F(XapianIndexTest, FiltersEveryDocumentPassesStillCountAfterWrites) {
  Memory a = Rec("a", "delta");
  a.tags = {"t"};
  Memory b = Rec("b", "delta");
  b.tags = {"t"};
  Put({a, b}, 1);
  IndexQuery q = Query("delta");
  q.scope.user = "ann";
  q.filter.tags = {"t"};
  q.filter.max_access_level = 0;
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a", "b"}));

  Memory other = Rec("other", "delta");  // another user, no tag, restricted
  other.ns.user = "bob";
  other.access_level = 3;
  Memory expired = Rec("expired", "delta");
  expired.tags = {"t"};
  expired.expires_at = 4000;
  Memory old = Rec("old", "delta");
  old.tags = {"t"};
  old.state = RecordState::kSuperseded;
  Put({other, expired, old}, 2);
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a", "b"}));
  q.scope.user.clear();
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a", "b"}));  // the tag still filters
  q.filter.tags.clear();
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a", "b"}));  // the access level still filters
  q.filter.max_access_level.reset();
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a", "b", "other"}));
  q.filter.include_superseded = true;
  q.now = 0;
  EXPECT_EQ(IdSet(q), (std::set<std::string>{"a", "b", "other", "expired", "old"}));
}

TEST_F(XapianIndexTest, LongFilterValuesWork) {
  const std::string long_tag(300, 't');
  std::string other_long = long_tag;
  other_long.back() = 'u';  // same 160-byte prefix, different value
  Memory a = Rec("a", "delta");
  a.tags = {long_tag};
  a.ns.tenant = std::string(250, 'q');
  Put({a}, 1);
  IndexQuery q = Query("delta", a.ns.tenant);
  EXPECT_EQ(Ids(q), std::vector<std::string>{"a"});
  q.filter.tags = {long_tag};
  EXPECT_EQ(Ids(q), std::vector<std::string>{"a"});
  q.filter.tags = {other_long};
  EXPECT_TRUE(Ids(q).empty());
}

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

TEST_F(XapianIndexTest, HostileQueryStringsNeverError) {
  Put({Rec("a", "unbalanced quotes and parentheses are fine"), Rec("b", "plain text here")}, 1);
  const std::vector<std::string> nasty = {
      "\"unbalanced", "AND OR (", "NOT", "OR", "AND", "foo AND", "NOT foo", "((((", "))))",
      "\"\"", "+", "-", "*", "foo*", "a:b:c", "title:foo", "[", "{}", "~", "\\", "'", "\"a\" NEAR b",
      "foo ADJ/3 bar", "XT:t2", "Qa", "NEAR", "\xff\xfe\xfd", std::string("nul\0byte", 8),
      "unbalanced) AND (quotes", std::string(5000, 'x'), "élan vital 東京", "-unbalanced",
      "+unbalanced -plain"};
  for (const std::string& text : nasty) {
    auto hits = index_->Search(Query(text));
    EXPECT_TRUE(hits.ok()) << "'" << text << "': " << hits.status().ToString();
  }
  // A broken query still finds its words.
  EXPECT_EQ(Ids(Query("\"unbalanced")), std::vector<std::string>{"a"});
  EXPECT_EQ(Ids(Query("unbalanced) AND (quotes")), std::vector<std::string>{"a"});
  // Filter terms cannot be reached through the query text.
  EXPECT_TRUE(Ids(Query("XT:t1")).empty());
}

TEST_F(XapianIndexTest, ClearEmptiesAndResetsSeq) {
  Put({Rec("a", "epsilon"), Rec("b", "epsilon")}, 9);
  ASSERT_TRUE(index_->Clear().ok());
  EXPECT_EQ(*index_->DocCount(), 0);
  EXPECT_EQ(*index_->AppliedSeq(), 0);
  EXPECT_TRUE(Ids(Query("epsilon")).empty());
  // It can be rebuilt afterwards.
  Put({Rec("c", "epsilon")}, 3);
  EXPECT_EQ(Ids(Query("epsilon")), std::vector<std::string>{"c"});
  EXPECT_EQ(*index_->AppliedSeq(), 3);
}

TEST(XapianIndexOpenTest, RejectsUnknownLanguageAndEmptyDir) {
  TempDir dir;
  RetrievalOptions o;
  o.language = "klingon";
  auto idx = OpenLexicalIndex(dir.path() + "/x", o);
  ASSERT_FALSE(idx.ok());
  EXPECT_EQ(idx.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(idx.status().message().find("english"), std::string::npos);
  auto empty = OpenLexicalIndex("", RetrievalOptions{});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

// retrieval.bm25_b weighs document length: with b = 0 a term counts the
// same in a short and a long document; with b = 1 the short one wins.
// retrieval.bm25_k1 = 0 makes repeats count once.
TEST(XapianIndexOpenTest, Bm25ParametersShapeTheScores) {
  TempDir dir;
  auto scores = [&](const std::string& sub, double k1, double b) {
    RetrievalOptions o;
    o.bm25_k1 = k1;
    o.bm25_b = b;
    auto idx = OpenLexicalIndex(dir.path() + "/" + sub, o);
    EXPECT_TRUE(idx.ok()) << idx.status().ToString();
    std::map<std::string, double> out;
    if (!idx.ok()) return out;
    EXPECT_TRUE((*idx)->Apply({Rec("short", "kafka broker"),
                               Rec("long", "kafka broker with many more words about queues topics partitions"),
                               Rec("repeat", "kafka kafka kafka broker"), Rec("other", "nothing relevant")},
                              {}, 1)
                    .ok());
    auto hits = (*idx)->Search(Query("kafka"));
    EXPECT_TRUE(hits.ok());
    if (hits.ok()) {
      for (const auto& h : *hits) out[h.id] = h.score;
    }
    return out;
  };
  auto flat = scores("flat", 1.2, 0.0);
  ASSERT_EQ(flat.size(), 3u);
  EXPECT_DOUBLE_EQ(flat["short"], flat["long"]);
  EXPECT_GT(flat["repeat"], flat["short"]);
  auto full = scores("full", 1.2, 1.0);
  ASSERT_EQ(full.size(), 3u);
  EXPECT_GT(full["short"], full["long"]);
  auto once = scores("once", 0.0, 0.0);
  ASSERT_EQ(once.size(), 3u);
  EXPECT_DOUBLE_EQ(once["repeat"], once["short"]);

  RetrievalOptions bad;
  bad.bm25_b = 1.5;
  auto idx = OpenLexicalIndex(dir.path() + "/bad", bad);
  ASSERT_FALSE(idx.ok());
  EXPECT_EQ(idx.status().code(), StatusCode::kInvalidArgument);
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

namespace msp {
namespace {

Memory Step(const std::string& id, const std::string& session, int64_t step, const std::string& text) {
  Memory m = Rec(id, text);
  m.kind = Kind::kEpisode;
  m.layer = Layer::kEpisodic;
  m.ns.session = session;
  m.step_number = step;
  return m;
}

TEST_F(XapianIndexTest, EpisodesCarryTheirSessionAndStep) {
  Memory fact = Rec("f", "the garden needs water");
  ASSERT_TRUE(index_->Apply({Step("a", "s1", 3, "watering the garden"), Step("b", "s2", 7, "garden party"), fact},
                            {}, 1)
                  .ok());
  auto hits = index_->SearchEpisodes(Query("garden"));
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 3u);
  std::map<std::string, EpisodePosition> at;
  for (const auto& h : *hits) at[h.hit.id] = h.position;
  EXPECT_EQ(at["a"].step, 3);
  EXPECT_EQ(at["b"].step, 7);
  EXPECT_NE(at["a"].session, at["b"].session);
  EXPECT_FALSE(at["a"].session.empty());
  EXPECT_TRUE(at["f"].session.empty());  // not an episode
  EXPECT_EQ(at["f"].step, 0);
}

// A reader remembers what it read of the documents it returned; a commit
// that replaces a document under its docid must not leave it stale, nor
// may a delete and re-add.
TEST_F(XapianIndexTest, RepeatedSearchesSeeReplacedDocuments) {
  Put({Step("e1", "s1", 1, "the garden needs water"), Step("e2", "s1", 2, "water the roses")}, 1);
  auto find = [&](const std::string& text) {
    auto hits = index_->SearchEpisodes(Query(text));
    EXPECT_TRUE(hits.ok());
    std::map<std::string, std::pair<std::string, int64_t>> out;
    if (hits.ok()) {
      for (const auto& h : *hits) out[h.hit.id] = {h.position.session, h.position.step};
    }
    return out;
  };
  for (int i = 0; i < 3; ++i) EXPECT_EQ(find("water")["e1"].second, 1);
  EXPECT_EQ(find("water").size(), 2u);
  ASSERT_TRUE(index_->Apply({Step("e1", "s2", 7, "water everywhere")}, {}, 2).ok());
  auto after = find("water");
  ASSERT_EQ(after.size(), 2u);
  EXPECT_NE(after["e1"].first, after["e2"].first);  // moved to session s2
  EXPECT_EQ(after["e1"].second, 7);
  ASSERT_TRUE(index_->Apply({}, {"e2"}, 3).ok());
  ASSERT_TRUE(index_->Apply({Step("e3", "s1", 3, "water again")}, {}, 4).ok());
  auto last = find("water");
  EXPECT_EQ(last.size(), 2u);
  EXPECT_EQ(last.count("e2"), 0u);
  EXPECT_EQ(last["e3"].second, 3);
  EXPECT_EQ(last["e1"].second, 7);
}

TEST_F(XapianIndexTest, SessionSearchReturnsEveryVisibleEpisodeOfTheSessions) {
  Memory expired = Step("c", "s1", 3, "garden gnomes");
  expired.expires_at = 4000;  // before Query's now
  ASSERT_TRUE(index_
                  ->Apply({Step("a", "s1", 1, "the garden is green"), Step("b", "s1", 2, "nothing shared here"),
                           expired, Step("d", "s2", 1, "garden elsewhere")},
                          {}, 1)
                  .ok());
  auto first = index_->SearchEpisodes(Query("garden"));
  ASSERT_TRUE(first.ok());
  std::string s1;
  for (const auto& h : *first) {
    if (h.hit.id == "a") s1 = h.position.session;
  }
  ASSERT_FALSE(s1.empty());
  IndexQuery q = Query("garden");
  q.sessions = {s1};
  q.limit = 1;  // a session search returns the whole sessions
  auto hits = index_->SearchEpisodes(q);
  ASSERT_TRUE(hits.ok());
  std::map<std::string, double> score;
  for (const auto& h : *hits) score[h.hit.id] = h.hit.score;
  EXPECT_EQ(score.size(), 2u);  // a and b; not the expired c, not d of s2
  EXPECT_GT(score["a"], 0.0);
  EXPECT_EQ(score.count("b"), 1u);
  EXPECT_DOUBLE_EQ(score["b"], 0.0);
  // Another tenant's scope sees nothing of the session.
  IndexQuery other = Query("garden", "t2");
  other.sessions = {s1};
  auto none = index_->SearchEpisodes(other);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// session_terms: only the matching visible episodes of the sessions, each
// with the query terms it holds (sorted term order, wdf, idf), for session BM25.
TEST_F(XapianIndexTest, SessionTermsSearchReturnsTheMatchingEpisodesWithTheirTerms) {
  Memory expired = Step("c", "s1", 3, "garden gnomes");
  expired.expires_at = 4000;  // before Query's now
  ASSERT_TRUE(index_
                  ->Apply({Step("a", "s1", 1, "the garden, the garden is green"), Step("b", "s1", 2, "nothing shared here"),
                           expired, Step("d", "s2", 1, "garden elsewhere")},
                          {}, 1)
                  .ok());
  auto first = index_->SearchEpisodes(Query("green garden"));
  ASSERT_TRUE(first.ok());
  std::string s1;
  for (const auto& h : *first) {
    EXPECT_TRUE(h.terms.empty()) << h.hit.id;  // a plain search lists no terms
    if (h.hit.id == "a") s1 = h.position.session;
  }
  ASSERT_FALSE(s1.empty());
  IndexQuery q = Query("green garden");
  q.sessions = {s1};
  q.session_terms = true;
  q.limit = 1;  // does not apply
  auto hits = index_->SearchEpisodes(q);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 1u);  // a; not b (no match), not the expired c, not d of s2
  const LexicalHit& a = (*hits)[0];
  EXPECT_EQ(a.hit.id, "a");
  EXPECT_EQ(a.position.session, s1);
  ASSERT_EQ(a.terms.size(), 2u);
  EXPECT_EQ(a.terms[0].term, 0u);  // "garden" sorts before "green"
  EXPECT_EQ(a.terms[0].wdf, 2u);
  EXPECT_EQ(a.terms[1].term, 1u);
  EXPECT_EQ(a.terms[1].wdf, 1u);
  // idf = ln(1 + (N - df + 0.5) / (df + 0.5)) over the 4 documents: garden
  // is in 3 (the expired c too), green in 1.
  EXPECT_NEAR(a.terms[0].idf, std::log(1.0 + 1.5 / 3.5), 1e-12);
  EXPECT_NEAR(a.terms[1].idf, std::log(1.0 + 3.5 / 1.5), 1e-12);
}

TEST_F(XapianIndexTest, MonthAndYearOfCreatedAtAreSearchable) {
  Memory m = Rec("m", "we planted tomatoes");
  m.created_at = 1683554160000;  // 2023-05-08T13:56Z
  ASSERT_TRUE(index_->Apply({m, Rec("n", "we planted roses")}, {}, 1).ok());
  EXPECT_EQ(Ids(Query("May")), std::vector<std::string>{"m"});
  EXPECT_EQ(Ids(Query("2023")), std::vector<std::string>{"m"});
  EXPECT_TRUE(Ids(Query("june")).empty());
}

TEST(XapianIndexFormatTest, DateTermsOffLeavesThemOutAndReopeningRebuilds) {
  TempDir dir;
  RetrievalOptions off;
  off.date_terms = false;
  {
    auto idx = OpenLexicalIndex(dir.path() + "/lexical", off);
    ASSERT_TRUE(idx.ok());
    Memory m = Rec("m", "we planted tomatoes");
    m.created_at = 1683554160000;
    ASSERT_TRUE((*idx)->Apply({m}, {}, 4).ok());
    auto hits = (*idx)->Search(Query("2023"));
    ASSERT_TRUE(hits.ok());
    EXPECT_TRUE(hits->empty());
  }
  // Opening with the other layout empties the index for catch-up to rebuild.
  auto idx = OpenLexicalIndex(dir.path() + "/lexical", RetrievalOptions{});
  ASSERT_TRUE(idx.ok());
  EXPECT_EQ(*(*idx)->AppliedSeq(), 0);
  EXPECT_EQ(*(*idx)->DocCount(), 0);
}

}  // namespace
}  // namespace msp

namespace msp {
namespace {

// A record longer than passage_bytes is one document per passage: it ranks
// by its best passage, is found once, and the hit names the passage; a
// replace or delete takes every passage, and a Clear and replay (reindex)
// makes them again.
TEST(XapianIndexPassagesTest, LongRecordsAreFoundOnceByTheirBestPassage) {
  TempDir dir;
  RetrievalOptions options;
  options.passage_bytes = 64;
  auto opened = OpenLexicalIndex(dir.path() + "/lexical", options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  LexicalIndex& index = **opened;
  const std::string text =
      "We walked along the river to the old mill. The miller sold us bread. "
      "Later the lighthouse keeper told stories about storms. "
      "At night we counted stars over the river and the lighthouse.";
  Memory long_step = Step("long", "s1", 1, text);
  ASSERT_TRUE(index.Apply({long_step, Step("short", "s1", 2, "a story about the lighthouse")}, {}, 1).ok());
  EXPECT_GT(*index.DocCount(), 3);  // the passages and the short step

  auto hits = index.SearchEpisodes(Query("lighthouse keeper storms"));
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  std::map<std::string, int> seen;
  for (const LexicalHit& h : *hits) ++seen[h.hit.id];
  EXPECT_EQ(seen["long"], 1);  // once, though three of its passages match
  EXPECT_EQ(seen["short"], 1);
  const LexicalHit& best = (*hits)[0];
  ASSERT_EQ(best.hit.id, "long");
  ASSERT_GT(best.passage_end, best.passage_begin);
  const std::string passage = text.substr(best.passage_begin, best.passage_end - best.passage_begin);
  EXPECT_NE(passage.find("lighthouse keeper"), std::string::npos) << passage;
  EXPECT_LE(passage.size(), 64u);
  // Its passage holds "lighthouse" and "keeper", not "storms": two of the
  // three terms' idf (each in one document but lighthouse, in three).
  EXPECT_GT(best.query_match, 0.3);
  EXPECT_LT(best.query_match, 0.9);
  EXPECT_EQ((*hits)[1].passage_end, 0u);  // a short record is one document, no offsets

  // session_terms: every matching passage is a hit of its own.
  IndexQuery in_session = Query("river");
  in_session.sessions = {best.position.session};
  in_session.session_terms = true;
  auto terms = index.SearchEpisodes(in_session);
  ASSERT_TRUE(terms.ok());
  EXPECT_EQ(terms->size(), 2u);  // the first and the last passage say "river"

  // Replaced by a short text: one document, the old passages gone.
  ASSERT_TRUE(index.Apply({Step("long", "s1", 1, "now short")}, {}, 2).ok());
  EXPECT_EQ(*index.DocCount(), 2);
  EXPECT_TRUE(index.Search(Query("miller")).value().empty());
  // Long again, then deleted: nothing left of it.
  ASSERT_TRUE(index.Apply({long_step}, {}, 3).ok());
  EXPECT_EQ(index.Search(Query("miller")).value().size(), 1u);
  ASSERT_TRUE(index.Apply({}, {"long"}, 4).ok());
  EXPECT_EQ(*index.DocCount(), 1);
  // Clear and replay, as a reindex does: the passages again.
  ASSERT_TRUE(index.Clear().ok());
  ASSERT_TRUE(index.Apply({long_step}, {}, 5).ok());
  auto again = index.SearchEpisodes(Query("miller bread"));
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(text.substr((*again)[0].passage_begin, (*again)[0].passage_end - (*again)[0].passage_begin)
                .find("The miller sold us bread."),
            0u);
}

}  // namespace
}  // namespace msp
