// Retriever: the engine's ranked search (MemoryLayer::Retrieve). It catches
// the indexes up, gathers the lexical candidates and their episode context
// (core/rank/episode_context.h), scores them against the query's vector,
// fuses the two signals (core/fusion.h), reads the best hits back from the
// store as they are now, and notes their accesses in the access log.
//
// Thread-safety: Retrieve is safe from several threads.
#ifndef MSP_CORE_RETRIEVER_H_
#define MSP_CORE_RETRIEVER_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/engine_context.h"
#include "core/fusion.h"
#include "util/passages.h"
#include "working/tokens.h"

namespace msp {

class Retriever {
 public:
  // `ctx` must outlive this object.
  explicit Retriever(const EngineContext& ctx) : ctx_(ctx) {}

  // MemoryLayer::Retrieve.
  Result<std::vector<SearchHit>> Retrieve(const RetrieveRequest& r);
  // MemoryLayer::Search: the hits and the session ranking.
  Result<RetrieveResult> Search(const RetrieveRequest& r);

 private:
  // The lexical index's SearchEpisodes; when the index answers Corruption
  // (damaged under a running engine), it is repaired from the store
  // (IndexSync::RepairLexical) and the search runs again.
  Result<std::vector<LexicalHit>> SearchLexical(const IndexQuery& q, LexicalRest* rest) const;

  // Search past its checks: `candidates` lexical candidates, ranked and
  // read back into `result`; true when it did. With `shallow`, false
  // (`result` unspecified, no access noted) unless the result is the one
  // every candidate (retrieval.candidates) would give: the index holds no
  // episodes of sessions, no hit was stale, and the candidates left out
  // (LexicalRest) cannot reach the top top_k; see the definition.
  Result<bool> Ranked(const RetrieveRequest& r, TimeMs now, int candidates, bool shallow, RetrieveResult& result);

  // Fills signals[1], the vector signal, from the lexical one in
  // signals[0]; see the definition.
  Result<bool> VectorSignal(const std::vector<float>& query_vector, const IndexQuery& q,
                            const RetrieveRequest& r, bool by_score, bool force_scan,
                            std::vector<RankedSignal>& signals,
                            std::optional<std::vector<FusedHit>>* direct) const;

  // The sessions of `ranked` (best first, at most r.top_sessions) with the
  // namespace of each one's best episode, read from `hits` or the store;
  // a session whose best episode the store no longer shows this query is
  // left out.
  Result<std::vector<SessionHit>> ResolveSessions(const RetrieveRequest& r, const IndexQuery& q,
                                                  std::vector<SessionHit> ranked,
                                                  const std::vector<SearchHit>& hits) const;

  // Fills SearchHit::context of each episode hit in `hits`: the episodes of
  // its session within r.context_steps steps, read from the store, that `q`
  // (and r.as_of) lets the caller see and that are not among `hits`.
  Status AddContext(const RetrieveRequest& r, const IndexQuery& q, std::vector<SearchHit>& hits) const;

  // What `hit` shows of its record (SearchHit::passage): `span` (the
  // passage that matched, or the whole text) cut to max_tokens_per_hit.
  void ShowPassage(SearchHit& hit, TextSpan span) const;
  // The tokens.* counter, made on first use (a cl100k vocabulary takes a
  // while to load, and most hits are short enough not to need it).
  const TokenCounter& Counter() const;

  // The first search's candidates when it can be exact: this many a hit
  // asked for, at least kShallowMin. Most queries' top 10 stand apart from
  // their 40th candidate, and Xapian's query costs less the fewer
  // documents it ranks (bench/README.md, "Session 38").
  static constexpr int kShallowPerHit = 6;
  static constexpr int kShallowMin = 60;

  const EngineContext& ctx_;
  // Whether the lexical index held episodes of sessions at the last search
  // (then the shallow first search is not tried).
  std::atomic<bool> sessions_seen_{false};
  mutable std::once_flag counter_once_;
  mutable std::unique_ptr<TokenCounter> counter_;
};

}  // namespace msp

#endif  // MSP_CORE_RETRIEVER_H_
