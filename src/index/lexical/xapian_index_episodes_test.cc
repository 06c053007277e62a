// Tests for the Xapian lexical index's episodes and long records: the
// session and step of a hit, session searches (with their terms), month and
// year terms, and long records indexed as passages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "index/index.h"
#include "index/lexical/xapian_index_test_util.h"

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

// An index whose records longer than 64 bytes are indexed as passages.
class XapianPassagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RetrievalOptions options;
    options.passage_bytes = 64;
    auto opened = OpenLexicalIndex(dir_.path() + "/lexical", options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    index_ = std::move(opened).value();
  }
  TempDir dir_;
  std::unique_ptr<LexicalIndex> index_;
};

// A record longer than passage_bytes is one document per passage: it ranks
// by its best passage, is found once, and the hit names the passage; a
// replace or delete takes every passage, and a Clear and replay (reindex)
// makes them again.
TEST_F(XapianPassagesTest, LongRecordsAreFoundOnceByTheirBestPassage) {
  LexicalIndex& index = *index_;
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

// What a ranked search leaves out (LexicalRest): whether its hits are every
// match, the most a record left out can score (the weight of the last
// document it looked at, a passage of a long record included), and whether
// the index holds episodes of sessions at all.
TEST_F(XapianPassagesTest, SaysWhatTheSearchLeftOut) {
  LexicalIndex& index = *index_;
  std::vector<Memory> records;
  for (int i = 0; i < 30; ++i) {
    // "harbour" i % 4 + 1 times, among other words: weights fall by rank.
    std::string text = "note " + std::to_string(i);
    for (int n = 0; n <= i % 4; ++n) text += " harbour ferry";
    for (int n = 0; n < i % 7; ++n) text += " timetable";
    records.push_back(Rec("r" + std::to_string(i), text));
  }
  // A long record: several passages, each a document; found once.
  records.push_back(Rec("long",
                        "The harbour ferry leaves at dawn from the north pier. Tickets are sold on board only. "
                        "The harbour master keeps the ferry timetable in the harbour office by the north pier."));
  ASSERT_TRUE(index.Apply(records, {}, 1).ok());

  // Every match asked for: complete, nothing left out.
  LexicalRest rest;
  rest.complete = false;
  rest.sessions = true;
  IndexQuery all = Query("harbour ferry");
  auto every = index.SearchEpisodes(all, &rest);
  ASSERT_TRUE(every.ok()) << every.status().ToString();
  ASSERT_EQ(every->size(), 31u);
  EXPECT_TRUE(rest.complete);
  EXPECT_FALSE(rest.sessions);
  EXPECT_TRUE((*every)[0].position.session.empty());

  // Fewer asked for: the hits are the first of every match's, and no
  // record left out outscores max_score, which is at most the last hit's.
  for (int limit : {1, 5, 12, 30}) {
    IndexQuery few = Query("harbour ferry");
    few.limit = limit;
    auto hits = index.SearchEpisodes(few, &rest);
    ASSERT_TRUE(hits.ok());
    ASSERT_EQ(hits->size(), static_cast<size_t>(limit));
    EXPECT_FALSE(rest.complete) << limit;
    EXPECT_LE(rest.max_score, hits->back().hit.score) << limit;
    for (size_t i = 0; i < hits->size(); ++i) {
      EXPECT_EQ((*hits)[i].hit.id, (*every)[i].hit.id) << limit << " " << i;
      EXPECT_DOUBLE_EQ((*hits)[i].hit.score, (*every)[i].hit.score) << limit << " " << i;
    }
    double left_best = 0.0;
    for (size_t i = hits->size(); i < every->size(); ++i) left_best = std::max(left_best, (*every)[i].hit.score);
    EXPECT_LE(left_best, rest.max_score) << limit;
  }

  // One episode of a session anywhere in the index: sessions, whatever the
  // query finds.
  Memory step = Rec("step", "an unrelated turn about lunch");
  step.kind = Kind::kEpisode;
  step.layer = Layer::kEpisodic;
  step.ns.session = "s1";
  step.step_number = 1;
  ASSERT_TRUE(index.Apply({step}, {}, 2).ok());
  auto after = index.SearchEpisodes(Query("harbour ferry"), &rest);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(rest.sessions);
  EXPECT_TRUE(rest.complete);
  ASSERT_TRUE(index.Apply({}, {"step"}, 3).ok());
  ASSERT_TRUE(index.SearchEpisodes(Query("harbour ferry"), &rest).ok());
  EXPECT_FALSE(rest.sessions);
}

}  // namespace
}  // namespace msp
