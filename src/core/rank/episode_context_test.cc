// Tests for episode-context ranking: the pure scoring, and the engine's
// retrieval with it (neighbours, explain, filters, tenants, min_score).
// Expiry inside session searches is tested with the index (xapian_index_test).
#include "core/rank/episode_context.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "msp/memory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

LexicalHit Hit(const std::string& id, double bm25, const std::string& session = "", int64_t step = 0) {
  LexicalHit h;
  h.hit = IndexHit{id, bm25};
  h.position = EpisodePosition{session, step};
  return h;
}

std::vector<std::string> Order(const std::vector<ContextScore>& scores) {
  std::vector<std::string> ids;
  for (const auto& s : scores) ids.emplace_back(s.id);
  return ids;
}

TEST(EpisodeContextTest, TurnNextToAStrongMatchOutranksAnIsolatedWeakMatch) {
  const std::vector<LexicalHit> hits = {Hit("strong", 10, "s", 2), Hit("weak", 2, "t", 1),
                                        Hit("next", 1, "s", 3)};
  EXPECT_EQ(Order(ScoreEpisodeContext(hits, {})), (std::vector<std::string>{"strong", "weak", "next"}));
  auto scored = ScoreEpisodeContext(hits, {0.5, 0.0});
  EXPECT_EQ(Order(scored), (std::vector<std::string>{"strong", "next", "weak"}));
  EXPECT_DOUBLE_EQ(scored[1].own, 0.1);
  EXPECT_DOUBLE_EQ(scored[1].neighbours, 0.5);
  EXPECT_DOUBLE_EQ(scored[1].score, 0.6);
  EXPECT_DOUBLE_EQ(scored[0].neighbours, 0.5 * 0.1);  // the strong turn gains from "next" too
}

TEST(EpisodeContextTest, ATurnSharingNoWordRanksByItsNeighboursTwoStepsAway) {
  const std::vector<LexicalHit> hits = {Hit("q", 8, "s", 5), Hit("far", 0, "s", 7), Hit("gap", 0, "s", 8)};
  auto scored = ScoreEpisodeContext(hits, {0.5, 0.25});
  // "far" is two steps from "q"; "gap" is three steps away and scores 0, so it is dropped.
  EXPECT_EQ(Order(scored), (std::vector<std::string>{"q", "far"}));
  EXPECT_DOUBLE_EQ(scored[1].score, 0.25);
  EXPECT_DOUBLE_EQ(scored[1].bm25, 0.0);
}

TEST(EpisodeContextTest, NeighboursCountOnlyWithinOneSessionAndOnlyForEpisodes) {
  const std::vector<LexicalHit> hits = {Hit("a", 10, "s", 1), Hit("b", 1, "other", 2), Hit("fact", 1),
                                        Hit("fact2", 1)};
  auto scored = ScoreEpisodeContext(hits, {1.0, 1.0});
  for (const auto& s : scored) {
    EXPECT_DOUBLE_EQ(s.neighbours, 0.0) << s.id;
  }
}

TEST(EpisodeContextTest, DuplicateIdsKeepTheirBestScoreAndEmptyInputIsEmpty) {
  const std::vector<LexicalHit> none;
  EXPECT_TRUE(ScoreEpisodeContext(none, {0.5, 0.5}).empty());
  const std::vector<LexicalHit> hits = {Hit("a", 1, "s", 1), Hit("a", 4, "s", 1), Hit("b", 2, "s", 9)};
  auto scored = ScoreEpisodeContext(hits, {});
  ASSERT_EQ(scored.size(), 2u);
  EXPECT_EQ(scored[0].id, "a");
  EXPECT_EQ(scored[0].candidate, 0u);  // the first hit of "a"
  EXPECT_EQ(scored[0].id.data(), hits[0].hit.id.data());  // a view, not a copy
  EXPECT_EQ(scored[1].candidate, 2u);
  EXPECT_DOUBLE_EQ(scored[0].bm25, 4.0);
  EXPECT_DOUBLE_EQ(scored[0].own, 1.0);
}

// Many candidates, each id twice (the lookup table of ids grows past its
// first size): one score an id, its best BM25, ties in the candidates' order.
TEST(EpisodeContextTest, ManyRepeatedIdsScoreOnceEach) {
  for (const bool sessions : {false, true}) {
    std::vector<LexicalHit> hits;
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < 300; ++i) {
        const double bm25 = round == 0 ? i % 10 : (i % 10) + (i % 3 == 0 ? 5 : -5);
        hits.push_back(Hit("id" + std::to_string(i), bm25, sessions ? "s" + std::to_string(i) : "", 0));
      }
    }
    auto scored = ScoreEpisodeContext(hits, {});
    std::vector<std::string> want;
    for (double score = 14; score >= 1; --score) {
      for (int i = 0; i < 300; ++i) {
        const double best = std::max<double>(i % 10, (i % 10) + (i % 3 == 0 ? 5 : -5));
        if (best == score) want.push_back("id" + std::to_string(i));
      }
    }
    EXPECT_EQ(Order(scored), want) << (sessions ? "episodes" : "records");
    ASSERT_FALSE(scored.empty());
    EXPECT_DOUBLE_EQ(scored[0].own, 1.0);
    EXPECT_EQ(scored[0].bm25, 14.0);
    EXPECT_EQ(hits[scored[0].candidate].hit.id, scored[0].id);
    EXPECT_LT(scored[0].candidate, 300u);  // the first hit of its id
  }
}

TEST(EpisodeContextTest, SessionBoostLiftsTheTurnsOfTheBestSession) {
  // "b" and "c" tie on their own; "b" sits in the session of the best match.
  const std::vector<LexicalHit> hits = {Hit("a", 10, "s", 1), Hit("c", 2, "t", 9), Hit("b", 2, "s", 9),
                                        Hit("z", 0, "s", 20), Hit("f", 2)};
  auto plain = ScoreEpisodeContext(hits, {});
  EXPECT_EQ(Order(plain), (std::vector<std::string>{"a", "c", "b", "f"}));
  auto scored = ScoreEpisodeContext(hits, {0.0, 0.0, 0.5, 0.0});
  EXPECT_EQ(Order(scored), (std::vector<std::string>{"a", "b", "c", "f"}));
  EXPECT_DOUBLE_EQ(scored[1].session, 0.5);   // 0.5 x best of s (1.0)
  EXPECT_DOUBLE_EQ(scored[2].session, 0.1);   // 0.5 x best of t (0.2)
  EXPECT_DOUBLE_EQ(scored[3].session, 0.0);   // not an episode of a session
  // mix 1: by the sessions' BM25, relative to the largest among the
  // candidates' sessions ("u" is not among them); no scores: no boost.
  const SessionScores match = {{"s", 2.0}, {"t", 3.0}, {"u", 9.0}};
  auto by_match = ScoreEpisodeContext(hits, {0.0, 0.0, 1.0, 1.0}, &match);
  EXPECT_EQ(Order(by_match), (std::vector<std::string>{"a", "c", "b", "f"}));
  EXPECT_DOUBLE_EQ(by_match[0].session, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(by_match[1].session, 1.0);
  EXPECT_DOUBLE_EQ(ScoreEpisodeContext(hits, {0.0, 0.0, 1.0, 1.0})[0].session, 0.0);
  // mix 0.5: half each.
  auto mixed = ScoreEpisodeContext(hits, {0.0, 0.0, 1.0, 0.5}, &match);
  EXPECT_DOUBLE_EQ(mixed[0].session, 0.5 * 2.0 / 3.0 + 0.5 * 1.0);
}

// The failure of additive context on long conversations: every turn of the
// best session rises, and an answer that matches well on its own (in
// another session) falls below turns that match little but sit among
// matches. Under kPrior a turn's score is its own evidence and its
// neighbours' discounted (noisy-or, on [0, 1]) plus a bounded session prior.
TEST(EpisodeContextTest, PriorRanksATurnByItsOwnEvidenceNotByTheCrowdAroundIt) {
  // Session "s": the best match and weak matches around it; "t": one
  // answer turn matching well on its own.
  const std::vector<LexicalHit> hits = {Hit("best", 10, "s", 5), Hit("answer", 8, "t", 3), Hit("w4", 2, "s", 4),
                                        Hit("w6", 2, "s", 6),    Hit("w3", 2, "s", 3),     Hit("w7", 2, "s", 7)};
  auto rank = [](const std::vector<ContextScore>& v, std::string_view id) {
    return static_cast<size_t>(std::find_if(v.begin(), v.end(), [&](const ContextScore& s) { return s.id == id; }) -
                               v.begin());
  };
  auto summed = ScoreEpisodeContext(hits, {0.5, 0.4, 0.75, 0.0, ContextMode::kSum});
  EXPECT_GT(rank(summed, "answer"), rank(summed, "w4")) << "additive context buries the answer";
  auto scored = ScoreEpisodeContext(hits, {0.5, 0.4, 0.15, 0.0, ContextMode::kPrior});
  EXPECT_EQ(Order(scored), (std::vector<std::string>{"best", "answer", "w4", "w6", "w3", "w7"}));
  // w4: own 0.2, beside best (1.0) and two steps from w6 (0.2):
  // 1 - 0.8 x (1 - 0.5 x 1) x (1 - 0.4 x 0.2); its session "s" ranks
  // first (prior 0.15 / 1), "t" second (0.15 / 2).
  const ContextScore& w4 = scored[rank(scored, "w4")];
  EXPECT_DOUBLE_EQ(w4.own, 0.2);
  EXPECT_NEAR(w4.own + w4.neighbours, 1.0 - 0.8 * 0.5 * 0.92, 1e-12);
  EXPECT_DOUBLE_EQ(w4.session, 0.15);
  const ContextScore& answer = scored[1];
  EXPECT_DOUBLE_EQ(answer.neighbours, 0.0);
  EXPECT_DOUBLE_EQ(answer.session, 0.075);
  EXPECT_NEAR(answer.score, 0.875, 1e-12);
  // Without the session prior every score is on [0, 1] and below the best
  // match's.
  auto no_session = ScoreEpisodeContext(hits, {0.5, 0.4, 0.0, 0.0, ContextMode::kPrior});
  EXPECT_EQ(Order(no_session)[0], "best");
  EXPECT_DOUBLE_EQ(no_session[0].score, 1.0);
  for (size_t i = 1; i < no_session.size(); ++i) EXPECT_LT(no_session[i].score, 1.0);
}

// A step that shares no word with the query takes the better of its
// neighbours, discounted, not their sum: it stays below the step it borrows
// from, and two matches around it lift it no more than one.
TEST(EpisodeContextTest, PriorTakesTheBestNeighbourNotTheSum) {
  // "mid" sits between two equal matches; "edge" beside one of them.
  const std::vector<LexicalHit> hits = {Hit("a", 10, "s", 1), Hit("mid", 0, "s", 2), Hit("b", 10, "s", 3),
                                        Hit("edge", 0, "s", 4)};
  auto scored = ScoreEpisodeContext(hits, {0.5, 0.0, 0.0, 0.0, ContextMode::kPrior});
  ASSERT_EQ(scored.size(), 4u);
  for (const ContextScore& s : scored) {
    if (s.id == "mid" || s.id == "edge") {
      EXPECT_DOUBLE_EQ(s.score, 0.5) << s.id;
    }
  }
  // Summed, "mid" gains from both and ties the matches it sits between.
  auto summed = ScoreEpisodeContext(hits, {0.5, 0.0, 0.0, 0.0, ContextMode::kSum});
  for (const ContextScore& s : summed) {
    if (s.id == "mid") {
      EXPECT_DOUBLE_EQ(s.score, 1.0);
    }
  }
}

TEST(EpisodeContextTest, SessionsAreRankedBesideTheTurns) {
  const std::vector<LexicalHit> hits = {Hit("a", 10, "s", 1), Hit("c", 6, "t", 9), Hit("b", 8, "s", 9),
                                        Hit("d", 7, "t", 2),  Hit("f", 9),         Hit("u1", 1, "u", 1)};
  std::vector<SessionRank> sessions;
  // mix 0: by the best own score of each session.
  ScoreEpisodeContext(hits, {0.0, 0.0, 0.0, 0.0, ContextMode::kPrior}, nullptr, &sessions);
  ASSERT_EQ(sessions.size(), 3u);
  EXPECT_EQ(sessions[0].session, "s");
  EXPECT_DOUBLE_EQ(sessions[0].score, 1.0);
  EXPECT_EQ(sessions[0].best, 0u);
  EXPECT_EQ(sessions[1].session, "t");
  EXPECT_DOUBLE_EQ(sessions[1].score, 0.7);
  EXPECT_EQ(sessions[1].best, 3u);  // "d", t's best turn
  EXPECT_EQ(sessions[2].session, "u");
  // mix 1: by session BM25, relative to the best among the candidates'
  // sessions; a session without one scores 0 and is left out.
  const SessionScores match = {{"s", 2.0}, {"t", 4.0}};
  ScoreEpisodeContext(hits, {0.0, 0.0, 0.0, 1.0, ContextMode::kPrior}, &match, &sessions);
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].session, "t");
  EXPECT_DOUBLE_EQ(sessions[0].score, 1.0);
  EXPECT_EQ(sessions[1].session, "s");
  EXPECT_DOUBLE_EQ(sessions[1].score, 0.5);
  // The prior follows that ranking: t's turns gain 0.15, s's 0.075.
  auto scored = ScoreEpisodeContext(hits, {0.0, 0.0, 0.15, 1.0, ContextMode::kPrior}, &match);
  for (const ContextScore& s : scored) {
    if (s.id == "c" || s.id == "d") {
      EXPECT_DOUBLE_EQ(s.session, 0.15) << s.id;
    }
    if (s.id == "a" || s.id == "b") {
      EXPECT_DOUBLE_EQ(s.session, 0.075) << s.id;
    }
    if (s.id == "f") {
      EXPECT_DOUBLE_EQ(s.session, 0.0);
    }
  }
  // No sessions among the candidates: none ranked.
  const std::vector<LexicalHit> facts = {Hit("f", 9), Hit("g", 3)};
  ScoreEpisodeContext(facts, {}, nullptr, &sessions);
  EXPECT_TRUE(sessions.empty());
}

LexicalHit Matching(const std::string& id, const std::string& session, std::vector<TermMatch> terms) {
  LexicalHit h = Hit(id, 1.0, session, 1);
  h.terms = std::move(terms);
  return h;
}

TEST(EpisodeContextTest, SessionBm25FavoursASessionCoveringMoreOfTheQuery) {
  // Session "s" holds both query terms in two turns; "t" holds term 0 three
  // times in one turn. k1 = 1: tf 1 scores idf x 1, tf 3 idf x 1.5.
  const std::vector<LexicalHit> hits = {Matching("t1", "t", {{0, 3, 1.0}}), Matching("s1", "s", {{0, 1, 1.0}}),
                                        Matching("s2", "s", {{1, 1, 1.0}}),
                                        Matching("s2", "s", {{1, 1, 1.0}}),  // again: counted once
                                        Matching("f", "", {{0, 1, 1.0}}),    // not an episode of a session
                                        Hit("u1", 0.0, "u", 1)};             // no term: no score
  const SessionScores match = SessionBm25(hits, 1.0);
  ASSERT_EQ(match.size(), 2u);
  EXPECT_DOUBLE_EQ(match.at("s"), 2.0);
  EXPECT_DOUBLE_EQ(match.at("t"), 1.5);
  // idf weighs each term; the repeated term saturates at idf x (k1 + 1).
  const std::vector<LexicalHit> two = {Matching("a", "s", {{0, 1, 1.0}}), Matching("b", "t", {{1, 1, 3.0}})};
  const SessionScores rare = SessionBm25(two, 1.0);
  EXPECT_GT(rare.at("t"), rare.at("s"));
  const std::vector<LexicalHit> one = {Matching("a", "s", {{0, 1000, 1.0}})};
  EXPECT_NEAR(SessionBm25(one, 1.0).at("s"), 2.0, 0.01);
  const std::vector<LexicalHit> none;
  EXPECT_TRUE(SessionBm25(none, 1.0).empty());
}

TEST(EpisodeContextTest, TopSessionsRanksBySessionBm25) {
  const std::vector<std::string> sessions = {"a", "b", "c", "d"};
  const SessionScores match = {{"b", 1.0}, {"c", 3.0}, {"d", 1.0}};
  EXPECT_EQ(TopSessions(sessions, match, 3), (std::vector<std::string>{"c", "b", "d"}));  // ties: in order
  EXPECT_EQ(TopSessions(sessions, match, 10), (std::vector<std::string>{"c", "b", "d", "a"}));
  EXPECT_TRUE(TopSessions(sessions, match, 0).empty());
}

TEST(EpisodeContextTest, ExplainSplitsTheLexicalContributionByParts) {
  ContextScore s{"x", 3.0, 0.25, 0.75, 0.0, 1.0, true};
  SignalContribution c{"bm25", 2, 3.0, 0.8};
  auto parts = ExplainContext(c, s, /*with_neighbours=*/true, /*with_session=*/false);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].signal, "bm25");
  EXPECT_EQ(parts[1].signal, "neighbours");
  EXPECT_DOUBLE_EQ(parts[0].contribution, 0.2);
  EXPECT_DOUBLE_EQ(parts[1].contribution, 0.6);
  EXPECT_DOUBLE_EQ(parts[1].raw, 0.75);
  EXPECT_EQ(parts[1].rank, 2);
  EXPECT_EQ(ExplainContext(c, s, /*with_neighbours=*/false, /*with_session=*/false).size(), 1u);
  s.session = 1.0;
  s.score = 2.0;
  parts = ExplainContext(c, s, /*with_neighbours=*/true, /*with_session=*/true);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].signal, "session");
  EXPECT_DOUBLE_EQ(parts[0].contribution + parts[1].contribution + parts[2].contribution, 0.8);
  EXPECT_DOUBLE_EQ(parts[2].contribution, 0.4);
  s.in_session = false;  // not an episode of a session: no neighbours entry
  EXPECT_EQ(ExplainContext(c, s, /*with_neighbours=*/true, /*with_session=*/false).size(), 1u);
}

TEST(EpisodeContextTest, HitSessionsTakesTheHitsSessionsOnceInOrder) {
  const std::vector<LexicalHit> hits = {Hit("a", 5, "s", 1), Hit("f", 4), Hit("b", 3, "s", 2), Hit("c", 2, "t", 1),
                                        Hit("d", 1, "u", 1)};
  EXPECT_EQ(HitSessions(hits, 2), (std::vector<std::string>{"s", "t"}));
  EXPECT_EQ(HitSessions(hits, 10), (std::vector<std::string>{"s", "t", "u"}));
  EXPECT_TRUE(HitSessions(hits, 0).empty());
}

// ---- through the engine ------------------------------------------------

using testing::FakeClock;

class ContextRetrievalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    options_.consolidation.every_n_episodes = 0;
    options_.policy.min_chars = 0;
    options_.policy.trivial_phrases.clear();
    options_.retrieval.vector_weight = 0.0;
    options_.retrieval.neighbour_weight_1 = 0.5;
    options_.retrieval.neighbour_weight_2 = 0.25;
    options_.retrieval.context_sessions = 5;
    options_.retrieval.session_weight = 0.5;
    auto e = MemoryLayer::Open(options_, std::make_shared<FakeClock>(now_));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }

  Namespace Ns(const std::string& session, const std::string& tenant = "acme") {
    Namespace ns;
    ns.tenant = tenant;
    ns.user = "ann";
    ns.session = session;
    return ns;
  }

  std::string Add(const Namespace& ns, int64_t step, const std::string& text, std::vector<std::string> tags = {}) {
    EpisodeStep s;
    s.ns = ns;
    s.step_number = step;
    s.text = text;
    s.tags = std::move(tags);
    s.timestamp = now_ - 1000;
    auto m = engine_->AddEpisode(s);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? m->id : "";
  }

  std::vector<SearchHit> Search(const std::string& q, const std::string& tenant = "acme",
                                SearchFilter filter = {}, double min_score = 0.0) {
    RetrieveRequest r;
    r.scope.tenant = tenant;
    r.scope.user = "ann";
    r.query = q;
    r.top_k = 10;
    r.explain = true;
    r.record_access = false;
    r.filter = std::move(filter);
    r.min_score = min_score;
    auto hits = engine_->Retrieve(r);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<SearchHit>{};
  }

  static int RankOf(const std::vector<SearchHit>& hits, const std::string& id) {
    for (size_t i = 0; i < hits.size(); ++i) {
      if (hits[i].memory.id == id) return static_cast<int>(i) + 1;
    }
    return 0;
  }

  testing::TempDir dir_{"rank"};
  TimeMs now_ = 1767258000000;  // 2026-01-01T09:00Z
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
};

TEST_F(ContextRetrievalTest, TheAnswerNextToTheQuestionIsFoundAndExplained) {
  const Namespace s1 = Ns("s1");
  Add(s1, 1, "Good morning!");
  const std::string question = Add(s1, 2, "What did you cook for the dinner party on Saturday?");
  const std::string answer = Add(s1, 3, "A spicy lentil curry with rice, everyone loved it.");
  Add(s1, 4, "I am training for a marathon in spring.");
  const Namespace s2 = Ns("s2");
  Add(s2, 1, "The weather is grey and cold, a long rainy week at the office and I read two novels.");
  const std::string weak = Add(s2, 2, "Some chat about the office, travel plans and a party much later in the year.");

  auto hits = Search("dinner party cook");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].memory.id, question);
  const int answer_rank = RankOf(hits, answer);
  ASSERT_GT(answer_rank, 0) << "a turn sharing no word with the query is found by its neighbour";
  const int weak_rank = RankOf(hits, weak);
  ASSERT_GT(weak_rank, 0);
  EXPECT_LT(answer_rank, weak_rank);
  for (const SearchHit& h : hits) {
    EXPECT_GE(h.score, 0.0);
    EXPECT_LE(h.score, 1.0 + 1e-12);
    double sum = 0;
    bool has_neighbours = false;
    bool has_session = false;
    for (const auto& c : h.explain) {
      sum += c.contribution;
      has_neighbours |= c.signal == "neighbours";
      has_session |= c.signal == "session";
    }
    EXPECT_NEAR(sum, h.score, 1e-9) << h.memory.text;
    EXPECT_TRUE(has_neighbours) << h.memory.text;
    EXPECT_TRUE(has_session) << h.memory.text;
  }
  const SearchHit& a = hits[answer_rank - 1];
  for (const auto& c : a.explain) {
    if (c.signal == "bm25") {
      EXPECT_DOUBLE_EQ(c.raw, 0.0);
    }
    if (c.signal == "neighbours") {
      EXPECT_GT(c.contribution, 0.0);
    }
  }
}

// The context sessions are those with the highest session BM25, not those
// of the best single hits: the session whose turns together hold every query
// term is scanned (its turn that shares no word ranks by its neighbours),
// not the one of the top hit, which holds one term twice.
TEST_F(ContextRetrievalTest, ContextSessionsAreTheSessionsMatchingBestAsWholes) {
  engine_.reset();
  options_.retrieval.context_sessions = 1;
  auto e = MemoryLayer::Open(options_, std::make_shared<FakeClock>(now_));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  engine_ = std::move(e).value();
  const Namespace a = Ns("a");
  const std::string top = Add(a, 1, "Lisbon, oh Lisbon.");
  const std::string tram = Add(a, 2, "The tram rides were fun.");
  const Namespace b = Ns("b");
  Add(b, 1, "The hotel was fine.");
  const std::string breakfast = Add(b, 2, "Yes, and the breakfast was great.");
  Add(b, 3, "The flight was late.");

  auto hits = Search("lisbon hotel flight");
  ASSERT_FALSE(hits.empty());
  // The best BM25 hit is in session a (the explain entry "bm25" is raw BM25).
  auto bm25 = [](const SearchHit& h) {
    for (const auto& c : h.explain) {
      if (c.signal == "bm25") return c.raw;
    }
    return 0.0;
  };
  ASSERT_GT(RankOf(hits, top), 0);
  const double best = bm25(hits[RankOf(hits, top) - 1]);
  for (const SearchHit& h : hits) {
    if (h.memory.id != top) {
      EXPECT_LT(bm25(h), best) << h.memory.text;
    }
  }
  EXPECT_GT(RankOf(hits, breakfast), 0) << "session b is scanned";
  EXPECT_EQ(RankOf(hits, tram), 0) << "session a is not";
}

// Search answers the session ranking beside the hits: the sessions whose
// episodes match the query, best first, each with its namespace and its
// best episode, never a session the query may not see.
TEST_F(ContextRetrievalTest, SearchRanksTheSessionsBesideTheHits) {
  const Namespace s1 = Ns("s1");
  Add(s1, 1, "We planned the Paris trip together.", {"trip"});
  const std::string museum = Add(s1, 2, "The Paris museum trip: the Louvre on Monday.", {"trip"});
  Add(s1, 3, "Then dinner by the river.", {"trip"});
  const Namespace s2 = Ns("s2");
  const std::string once = Add(s2, 1, "Paris was rainy, I hear.");
  Add(s2, 2, "Shall we cook tonight?");
  Add(Ns("s3"), 1, "Training for the marathon.");
  Add(Ns("s1", "other"), 1, "Paris museum trip of the other tenant, Paris museum trip.");

  RetrieveRequest r;
  r.scope.tenant = "acme";
  r.scope.user = "ann";
  r.query = "paris museum trip";
  r.record_access = false;
  r.top_sessions = 5;
  Result<RetrieveResult> found = engine_->Search(r);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ(found->sessions.size(), 2u);
  EXPECT_EQ(found->sessions[0].ns.session, "s1");
  EXPECT_EQ(found->sessions[0].ns.tenant, "acme");
  EXPECT_EQ(found->sessions[0].best_id, museum);
  EXPECT_DOUBLE_EQ(found->sessions[0].score, 1.0);
  EXPECT_EQ(found->sessions[1].ns.session, "s2");
  EXPECT_EQ(found->sessions[1].best_id, once);
  EXPECT_GT(found->sessions[1].score, 0.0);
  EXPECT_LT(found->sessions[1].score, 1.0);
  // The hits are Retrieve's.
  Result<std::vector<SearchHit>> hits = engine_->Retrieve(r);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), found->hits.size());
  for (size_t i = 0; i < hits->size(); ++i) EXPECT_EQ((*hits)[i].memory.id, found->hits[i].memory.id);

  // At most top_sessions; 0: none; out of range: refused.
  r.top_sessions = 1;
  found = engine_->Search(r);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->sessions.size(), 1u);
  EXPECT_EQ(found->sessions[0].ns.session, "s1");
  r.top_sessions = 0;
  found = engine_->Search(r);
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->sessions.empty());
  EXPECT_FALSE(found->hits.empty());
  r.top_sessions = -1;
  EXPECT_TRUE(engine_->Search(r).status().IsInvalidArgument());

  // A filter the untagged session fails leaves it out of the ranking too,
  // and the session's best episode is then the best it may see.
  r.top_sessions = 5;
  r.filter.tags = {"trip"};
  found = engine_->Search(r);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->sessions.size(), 1u);
  EXPECT_EQ(found->sessions[0].ns.session, "s1");
  r.filter = {};
  r.filter.kinds = {Kind::kFact};
  found = engine_->Search(r);
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->sessions.empty());
}

TEST_F(ContextRetrievalTest, NeighboursNeverBringInWhatTheQueryMayNotSee) {
  const Namespace s1 = Ns("s1");
  Add(s1, 1, "What did you cook for the dinner party?", {"kitchen"});
  const std::string untagged = Add(s1, 2, "A spicy lentil curry with rice.");
  // The same session id in another tenant.
  Add(Ns("s1", "other"), 2, "Secret curry of the other tenant.");
  auto hits = Search("dinner party cook");
  for (const auto& h : hits) EXPECT_EQ(h.memory.ns.tenant, "acme");
  ASSERT_GT(RankOf(hits, untagged), 0);

  SearchFilter tagged;
  tagged.tags = {"kitchen"};
  hits = Search("dinner party cook", "acme", tagged);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_NE(hits[0].memory.id, untagged);

  SearchFilter facts_only;
  facts_only.kinds = {Kind::kFact};
  EXPECT_TRUE(Search("dinner party cook", "acme", facts_only).empty());

  // min_score keeps its meaning: nothing below it.
  auto all = Search("dinner party cook");
  ASSERT_GE(all.size(), 2u);
  const double cut = (all[0].score + all[1].score) / 2;
  auto above = Search("dinner party cook", "acme", {}, cut);
  ASSERT_EQ(above.size(), 1u);
  EXPECT_EQ(above[0].memory.id, all[0].memory.id);
}

// context_steps: a hit carries its session's neighbouring steps, those the
// query may see and that are not hits themselves, instead of them taking
// hits' places.
TEST_F(ContextRetrievalTest, AHitCarriesItsNeighbouringStepsAsContext) {
  const Namespace s1 = Ns("s1");
  const std::string first = Add(s1, 1, "Morning: the weather was grey.");
  const std::string question = Add(s1, 2, "Where did you go on holiday?", {"travel"});
  const std::string answer = Add(s1, 3, "We went to Lisbon for the azulejo tiles.");
  const std::string food = Add(s1, 4, "Sounds lovely, how was the food?", {"travel"});
  const std::string last = Add(s1, 5, "Grilled sardines every night.");
  Add(s1, 6, "Out of reach of two steps.");
  Add(Ns("s2"), 2, "Another session, the same step numbers.");
  RetrieveRequest r;
  r.scope.tenant = "acme";
  r.scope.user = "ann";
  r.query = "Lisbon azulejo tiles";
  r.top_k = 1;
  r.record_access = false;
  r.context_steps = 2;
  auto ids = [](const std::vector<SearchHit>& hits) {
    std::vector<std::string> out;
    for (const SearchHit& h : hits) out.push_back(h.memory.id);
    return out;
  };
  ASSERT_OK_AND_ASSIGN(RetrieveResult found, engine_->Search(r));
  ASSERT_EQ(ids(found.hits), std::vector<std::string>{answer});
  EXPECT_EQ(ids(found.hits[0].context), (std::vector<std::string>{first, question, food, last}));
  for (const SearchHit& c : found.hits[0].context) EXPECT_EQ(c.score, 0.0);

  // Only steps the query may see, and no hit twice: with the tag filter the
  // untagged steps are out, and the two tagged ones are both hits.
  r.query = "holiday food";
  r.top_k = 10;
  r.context_steps = 1;
  r.filter.tags = {"travel"};
  ASSERT_OK_AND_ASSIGN(found, engine_->Search(r));
  const std::vector<std::string> tagged = ids(found.hits);
  EXPECT_EQ(std::set<std::string>(tagged.begin(), tagged.end()), (std::set<std::string>{question, food}));
  for (const SearchHit& h : found.hits) EXPECT_TRUE(h.context.empty()) << h.memory.text;

  r.context_steps = 0;
  r.filter.tags.clear();
  ASSERT_OK_AND_ASSIGN(found, engine_->Search(r));
  for (const SearchHit& h : found.hits) EXPECT_TRUE(h.context.empty());
  r.context_steps = 21;
  EXPECT_EQ(engine_->Search(r).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace msp
