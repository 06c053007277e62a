// Episode context: ranks lexical hits with what surrounds them. An episode's
// score draws on the episodes next to it in the same session (steps +-1 and
// +-2), because in a conversation the answer to a question often sits a turn
// or two away from the turn that shares its words, and on how well its
// session matches as a whole. Records that are not episodes of a session
// score by their own BM25 alone. The same pass ranks the sessions.
//
// Pure functions over the lexical index's hits; the engine calls them
// between the lexical search and rank fusion (core/fusion.h).
#ifndef MSP_CORE_RANK_EPISODE_CONTEXT_H_
#define MSP_CORE_RANK_EPISODE_CONTEXT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "index/index.h"
#include "msp/types.h"

namespace msp {

// How an episode's own score and its context combine (RetrievalOptions::
// context has the reasoning).
enum class ContextMode {
  // score = own + w1 x (own of steps +-1, summed) + w2 x (steps +-2) +
  // session_weight x the session's score.
  kSum,
  // score = 1 - (1 - own) x (1 - w1 x the best own of steps +-1) x
  // (1 - w2 x the best own of steps +-2) (noisy-or: independent evidence,
  // on [0, 1]) + session_weight / (1 + the session's rank): context is a
  // bounded prior; a step that shares no word with the query stays below
  // the step it borrows from (w1 + w2 <= 1), and many weak matches around a
  // step add no more than the best of them.
  kPrior,
};

struct EpisodeContextOptions {
  double neighbour_weight_1 = 0.0;  // share of the steps +-1
  double neighbour_weight_2 = 0.0;  // share of the steps +-2
  // An episode that already scores gains its session's part: kSum,
  // session_weight x the session's score; kPrior, session_weight / (1 + the
  // session's rank among the candidates' sessions). A session's score is
  // session_mix x match + (1 - session_mix) x best, where match is its
  // session BM25 (SessionBm25) divided by the largest among the candidates'
  // sessions, and best is the session's best own score.
  double session_weight = 0.0;
  double session_mix = 0.5;
  ContextMode mode = ContextMode::kSum;
};

// One session of the candidates, in the session ranking ScoreEpisodeContext
// gives: its score as above (on [0, 1]), and the first of the candidates
// with its best own score.
struct SessionRank {
  std::string_view session;  // views a candidate's EpisodePosition::session
  double score = 0.0;
  size_t best = 0;           // index into the candidates
};

// Session BM25 by session key (keys view the strings of the hits it was
// computed from).
using SessionScores = std::unordered_map<std::string_view, double>;

// Session BM25: the hits of each session that match the query (their
// LexicalHit::terms) taken together as one document, the sum over the
// query's terms of idf * tf * (k1 + 1) / (tf + k1), where tf is the term's wdf
// summed over the session's distinct hits. No length normalisation, so a
// session is not penalised for its length. It rewards a session whose turns
// together cover more of the query, where the best turn's score sees one
// turn. Sessions without a term are absent. REQUIRES: k1 >= 0.
SessionScores SessionBm25(const std::vector<LexicalHit>& hits, double k1);
SessionScores SessionBm25(std::vector<LexicalHit>&& hits, double k1) = delete;

// One candidate's score and its parts, all on BM25 divided by the best BM25
// among the candidates (so own is in [0, 1]); score = own + neighbours +
// session.
struct ContextScore {
  std::string_view id;      // views candidates[candidate].hit.id
  double bm25 = 0.0;        // the raw BM25 weight (0: found only as a neighbour)
  double own = 0.0;         // bm25 / best bm25
  double neighbours = 0.0;  // what the steps +-1, +-2 add (kSum: weight x their own, summed;
                            // kPrior: how far the noisy-or with the neighbours lifts own)
  double session = 0.0;     // the session boost (0 unless own + neighbours > 0)
  double score = 0.0;
  bool in_session = false;  // an episode of a session (it can have neighbours)
  size_t candidate = 0;     // the first of the candidates with this id
};

// Scores every candidate (several hits of one id keep the highest BM25) and
// returns those with score > 0, best first; ties keep the candidates' order.
// Neighbours are looked up among the candidates only: a step that is not a
// candidate adds nothing. Each score's id views the candidates' string (no
// copy): valid while `candidates` lives and that id is left as it is (a
// caller may move the id out through `candidate` once done with the view).
// REQUIRES: weights >= 0.
// `match` holds the session BM25 of the candidates' sessions (null or a
// session absent: 0). When `sessions` is not null it receives the
// candidates' sessions, best first (ties: the session of the earlier
// candidate first), whatever session_weight is; its views live as the ids'.
std::vector<ContextScore> ScoreEpisodeContext(const std::vector<LexicalHit>& candidates,
                                              const EpisodeContextOptions& options,
                                              const SessionScores* match = nullptr,
                                              std::vector<SessionRank>* sessions = nullptr);
std::vector<ContextScore> ScoreEpisodeContext(std::vector<LexicalHit>&& candidates,
                                              const EpisodeContextOptions& options,
                                              const SessionScores* match = nullptr,
                                              std::vector<SessionRank>* sessions = nullptr) = delete;

// The entries that stand in SearchHit::explain for the lexical signal's
// contribution `c` to a hit scored `s`: "bm25" (raw: the BM25 weight) and,
// for an episode of a session, "neighbours" (raw: s.neighbours; with
// `with_neighbours`) and "session" (raw: s.session; with `with_session`),
// sharing c.contribution in proportion to the parts of s.score, so the entries
// still sum to the hit's score. Both keep c's rank (in the context ranking).
std::vector<SignalContribution> ExplainContext(const SignalContribution& c, const ContextScore& s,
                                               bool with_neighbours, bool with_session);

// The sessions of the hits that are episodes of a session, in order of
// first appearance, each once, at most `n`.
std::vector<std::string> HitSessions(const std::vector<LexicalHit>& hits, size_t n);

// The `n` of `sessions` with the highest `match` (absent: 0), best first;
// ties keep the order of `sessions`.
std::vector<std::string> TopSessions(const std::vector<std::string>& sessions, const SessionScores& match, int n);

}  // namespace msp

#endif  // MSP_CORE_RANK_EPISODE_CONTEXT_H_
