// Tests for the Xapian lexical index: indexing, BM25 search, stemming, stop
// words, filters, hostile query strings, Clear, and the options checked at
// open (the index's files are tested in xapian_index_files_test.cc,
// episodes, dates and passages in xapian_index_episodes_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "index/index.h"
#include "index/lexical/xapian_index_test_util.h"

namespace msp {
namespace {

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

}  // namespace
}  // namespace msp
