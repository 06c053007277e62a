// Retriever: ranked search over the derived indexes, checked against the
// store.
#include "core/retriever.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/calibration.h"
#include "core/rank/episode_context.h"
#include "core/write_policy.h"
#include "util/text.h"

namespace msp {
namespace {

// Retrieve scores the sessions of the first hits as wholes (session BM25):
// at most this many sessions, in order of the hits, which bounds the
// episodes read. On LoCoMo (up to 35 sessions a conversation) 20 scores as
// well as all of them.
constexpr size_t kMatchSessions = 20;
// The most steps a hit's context reaches on each side.
constexpr int kMaxContextSteps = 20;

}  // namespace

const TokenCounter& Retriever::Counter() const {
  std::call_once(counter_once_, [this] {
    Result<std::unique_ptr<TokenCounter>> c = MakeTokenCounter(ctx_.options.tokens);
    counter_ = c.ok() ? std::move(c).value() : std::make_unique<EstimateTokenCounter>();
  });
  return *counter_;
}

void Retriever::ShowPassage(SearchHit& hit, TextSpan span) const {
  const std::string& text = hit.memory.text;
  if (span.end == 0 || span.end > text.size() || span.begin >= span.end) span = TextSpan{0, text.size()};
  const int max_tokens = ctx_.options.retrieval.max_tokens_per_hit;
  std::string_view shown = std::string_view(text).substr(span.begin, span.end - span.begin);
  // A token is at least one byte: a text of at most max_tokens bytes fits
  // uncounted (so short records never load the counter).
  if (max_tokens > 0 && shown.size() > static_cast<size_t>(max_tokens)) {
    const TokenCounter& counter = Counter();
    const size_t max = static_cast<size_t>(max_tokens);
    // Look no further than 16 bytes a token (cl100k's tokens are shorter).
    shown = shown.substr(0, Utf8Prefix(shown, max * 16));
    if (counter.Count(shown) > max) {
      size_t lo = 0, hi = shown.size();  // the longest prefix that fits: within (lo, hi]
      while (lo < hi) {
        const size_t mid = Utf8Prefix(shown, lo + (hi - lo + 1) / 2);
        if (mid <= lo) break;
        if (counter.Count(shown.substr(0, mid)) <= max) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      size_t cut = lo;
      // End at a word's end when one lies in the second half.
      for (size_t i = cut; i > lo / 2; --i) {
        if (IsAsciiSpace(shown[i - 1])) {
          cut = i - 1;
          break;
        }
      }
      shown = shown.substr(0, cut);
    }
    span.end = span.begin + shown.size();
  }
  if (span.begin == 0 && span.end == text.size()) return;  // the whole text
  hit.passage = std::string(shown);
  hit.passage_begin = static_cast<int64_t>(span.begin);
  hit.passage_end = static_cast<int64_t>(span.end);
}

// Fills signals[1], the vector signal of a retrieval whose lexical signal
// is signals[0] (scores on [0, 1] when `by_score`). Returns whether the
// vector index's own top candidates were searched.
//
// With score fusion every lexical candidate gets its exact cosine
// (VectorIndex::Score), and the index's own top candidates are searched
// only when one of them could still reach the top k: a record found by
// the vector signal alone scores at most w_v / (w_l + w_v), so when k
// lexical candidates already score above that, the search cannot change
// the top k (exact, not an approximation; it runs anyway with explain,
// as of a time, when forced, and for rank fusion). Candidates under
// vector_min_cosine get no vector score.
//
// When the search is skipped, the fused ranking follows from the lexical
// candidates and their cosines alone: it is set in *direct
// (FuseAlignedScores, the same as FuseScores of the two signals) and
// vector.hits is left empty. Otherwise *direct is left unset.
Result<bool> Retriever::VectorSignal(const std::vector<float>& query_vector, const IndexQuery& q,
                                     const RetrieveRequest& r, bool by_score, bool force_scan,
                                     std::vector<RankedSignal>& signals,
                                     std::optional<std::vector<FusedHit>>* direct) const {
  const RetrievalOptions& ro = ctx_.options.retrieval;
  const RankedSignal& lexical = signals[0];
  RankedSignal& vector = signals[1];
  vector.hits.clear();
  if (!(ro.vector_weight > 0)) return false;
  const double min_cos = ro.vector_min_cosine;
  bool scan = force_scan || !by_score || r.explain || r.as_of > 0;
  if (by_score) {
    std::vector<std::string_view> ids;
    ids.reserve(lexical.hits.size());
    for (const IndexHit& h : lexical.hits) ids.push_back(h.id);
    MSP_ASSIGN_OR_RETURN(std::vector<float> cosines, ctx_.vector.Score(query_vector, ids, q));
    const double total = ro.lexical_weight + ro.vector_weight;
    std::vector<double> fused;
    fused.reserve(ids.size());
    AlignedScores aligned{ro.vector_weight, std::vector<double>(ids.size(), std::nan(""))};
    for (size_t i = 0; i < ids.size(); ++i) {
      const double c = cosines[i] >= min_cos ? std::clamp(static_cast<double>(cosines[i]), 0.0, 1.0) : 0.0;
      fused.push_back((ro.lexical_weight * std::clamp(lexical.hits[i].score, 0.0, 1.0) + ro.vector_weight * c) /
                      total);
      if (cosines[i] >= min_cos) aligned.scores[i] = cosines[i];
    }
    const size_t k = static_cast<size_t>(r.top_k);
    if (!scan && fused.size() >= k) {
      std::nth_element(fused.begin(), fused.begin() + static_cast<std::ptrdiff_t>(k - 1), fused.end(),
                       std::greater<double>());
      scan = !(fused[k - 1] > ro.vector_weight / total);
    } else {
      scan = true;
    }
    if (!scan) {
      *direct = FuseAlignedScores(lexical, {std::move(aligned)});
      return false;
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!std::isnan(aligned.scores[i])) vector.hits.push_back(IndexHit{lexical.hits[i].id, aligned.scores[i]});
    }
  }
  if (scan) {
    IndexQuery vq = q;
    vq.limit = std::max(ro.vector_candidates > 0 ? ro.vector_candidates : ro.candidates, r.top_k);
    MSP_ASSIGN_OR_RETURN(std::vector<IndexHit> found, ctx_.vector.Search(query_vector, vq));
    std::unordered_set<std::string_view> have;
    for (const IndexHit& h : vector.hits) have.insert(h.id);
    for (IndexHit& h : found) {
      if (h.score >= min_cos && !have.count(h.id)) vector.hits.push_back(std::move(h));
    }
  }
  // Best first (ties: first seen), so ranks read as ranks among the
  // candidates the vector signal scored.
  std::stable_sort(vector.hits.begin(), vector.hits.end(),
                   [](const IndexHit& a, const IndexHit& b) { return a.score > b.score; });
  return scan;
}

Result<std::vector<LexicalHit>> Retriever::SearchLexical(const IndexQuery& q, LexicalRest* rest) const {
  const int64_t resets = ctx_.index_sync.lexical_resets();
  Result<std::vector<LexicalHit>> hits = ctx_.lexical.SearchEpisodes(q, rest);
  if (hits.ok() || hits.status().code() != StatusCode::kCorruption) return hits;
  MSP_RETURN_IF_ERROR(ctx_.index_sync.RepairLexical(hits.status(), resets));
  return ctx_.lexical.SearchEpisodes(q, rest);
}

Result<std::vector<SearchHit>> Retriever::Retrieve(const RetrieveRequest& r) {
  RetrieveRequest hits_only = r;
  hits_only.top_sessions = 0;
  MSP_ASSIGN_OR_RETURN(RetrieveResult result, Search(hits_only));
  return std::move(result.hits);
}

Result<std::vector<SessionHit>> Retriever::ResolveSessions(const RetrieveRequest& r, const IndexQuery& q,
                                                           std::vector<SessionHit> ranked,
                                                           const std::vector<SearchHit>& hits) const {
  std::unordered_map<std::string_view, const Memory*> known;
  for (const SearchHit& h : hits) known.emplace(h.memory.id, &h.memory);
  std::vector<std::string> missing;
  for (const SessionHit& s : ranked) {
    if (!known.count(s.best_id)) missing.push_back(s.best_id);
  }
  std::vector<Memory> read;
  if (!missing.empty()) {
    MSP_ASSIGN_OR_RETURN(read, ctx_.store.GetMany(missing, /*with_embeddings=*/false));
    for (const Memory& m : read) {
      // The same visibility as a hit: the index may lag a concurrent writer.
      if (MatchesQuery(m, q) && (r.as_of <= 0 || HeldAt(m, r.as_of))) known.emplace(m.id, &m);
    }
  }
  std::vector<SessionHit> out;
  out.reserve(ranked.size());
  for (SessionHit& s : ranked) {
    auto it = known.find(s.best_id);
    if (it == known.end()) continue;
    s.ns = it->second->ns;
    out.push_back(std::move(s));
  }
  return out;
}

Status Retriever::AddContext(const RetrieveRequest& r, const IndexQuery& q, std::vector<SearchHit>& hits) const {
  std::unordered_set<std::string> shown;
  for (const SearchHit& h : hits) shown.insert(h.memory.id);
  for (SearchHit& h : hits) {
    const Memory& m = h.memory;
    if (m.kind != Kind::kEpisode || m.ns.session.empty() || m.step_number <= 0) continue;
    RecordQuery around;
    around.scope = m.ns;
    around.kinds = {Kind::kEpisode};
    around.session = m.ns.session;
    around.min_step = std::max<int64_t>(1, m.step_number - r.context_steps);
    around.order = RecordQuery::Order::kStepAsc;
    around.limit = 2 * r.context_steps + 1;
    around.with_embeddings = false;
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> steps, ctx_.store.List(around));
    for (Memory& s : steps) {
      if (s.step_number > m.step_number + r.context_steps || shown.count(s.id)) continue;
      if (!MatchesQuery(s, q) || (r.as_of > 0 && !HeldAt(s, r.as_of))) continue;
      SearchHit step;
      step.memory = std::move(s);
      ShowPassage(step, TextSpan{});
      h.context.push_back(std::move(step));
    }
  }
  return Status::Ok();
}

Result<RetrieveResult> Retriever::Search(const RetrieveRequest& r) {
  MSP_RETURN_IF_ERROR(ValidateText("query", r.query, ctx_.options.policy.max_text_bytes));
  MSP_RETURN_IF_ERROR(ValidateCommon(r.scope, r.filter.tags, "", 1.0, "", {}));
  if (r.top_k < 1 || r.top_k > 1000) {
    return Status::InvalidArgument("top_k must be between 1 and 1000, got " + std::to_string(r.top_k));
  }
  if (!(r.min_score >= 0.0 && r.min_score <= 1.0)) {
    return Status::InvalidArgument("min_score must be between 0 and 1");
  }
  if (r.as_of < 0) return Status::InvalidArgument("as_of must be >= 0");
  if (r.context_steps < 0 || r.context_steps > kMaxContextSteps) {
    return Status::InvalidArgument("context_steps must be between 0 and " + std::to_string(kMaxContextSteps) +
                                   ", got " + std::to_string(r.context_steps));
  }
  if (r.top_sessions < 0 || r.top_sessions > 1000) {
    return Status::InvalidArgument("top_sessions must be between 0 and 1000, got " + std::to_string(r.top_sessions));
  }
  MSP_RETURN_IF_ERROR(ctx_.index_sync.CatchUp());
  const TimeMs now = ctx_.clock.NowMs();
  const RetrievalOptions& ro = ctx_.options.retrieval;
  const int candidates = std::max(ro.candidates, r.top_k);
  // A few candidates first, where that can be exact (see Ranked): score
  // fusion, no explain (it shows ranks among all candidates), no time
  // travel (it reads every candidate), and an index that held no episodes
  // of sessions at the last search (so no session ranking either).
  const int shallow = std::max(kShallowPerHit * r.top_k, kShallowMin);
  if (shallow < candidates && ro.fusion != Fusion::kRrf && !r.explain && r.as_of <= 0 &&
      !sessions_seen_.load(std::memory_order_relaxed)) {
    RetrieveResult first;
    MSP_ASSIGN_OR_RETURN(bool exact, Ranked(r, now, shallow, /*shallow=*/true, first));
    if (exact) return first;
  }
  RetrieveResult result;
  MSP_ASSIGN_OR_RETURN(bool answered, Ranked(r, now, candidates, /*shallow=*/false, result));
  (void)answered;  // always, unless shallow
  return result;
}

Result<bool> Retriever::Ranked(const RetrieveRequest& r, TimeMs now, int candidates, bool shallow,
                               RetrieveResult& result) {
  IndexQuery q;
  q.scope = r.scope;
  q.filter = r.filter;
  if (r.as_of > 0) q.filter.include_superseded = true;  // HeldAt decides
  q.now = now;
  q.text = r.query;
  q.limit = candidates;

  const RetrievalOptions& ro = ctx_.options.retrieval;
  LexicalRest left_out;
  MSP_ASSIGN_OR_RETURN(auto lexical_hits, SearchLexical(q, &left_out));
  sessions_seen_.store(left_out.sessions, std::memory_order_relaxed);
  // Episodes of sessions rank by their neighbours and sessions too, which
  // candidates left out can lift: only every candidate will do.
  if (shallow && left_out.sessions) return false;
  // How much of the query its best lexical hit matches, for the calibration
  // (core/calibration.h).
  const double match = lexical_hits.empty() ? 0.0 : lexical_hits.front().query_match;
  // The session BM25 of the first sessions the hits reach, over their
  // episodes that match the query: it picks the context sessions and
  // feeds the session boost. `session_match` views the strings of `matched`.
  std::vector<LexicalHit> matched;
  SessionScores session_match;
  if (ro.context_sessions > 0 || (ro.session_weight > 0 && ro.session_mix > 0)) {
    IndexQuery in_sessions = q;
    in_sessions.sessions = HitSessions(lexical_hits, kMatchSessions);
    in_sessions.session_terms = true;
    if (!in_sessions.sessions.empty()) {
      MSP_ASSIGN_OR_RETURN(matched, SearchLexical(in_sessions, nullptr));
      session_match = SessionBm25(matched, ro.bm25_k1);
    }
    if (ro.context_sessions > 0) {
      IndexQuery around = q;
      around.sessions = TopSessions(in_sessions.sessions, session_match, ro.context_sessions);
      if (!around.sessions.empty()) {
        MSP_ASSIGN_OR_RETURN(auto more, SearchLexical(around, nullptr));
        lexical_hits.insert(lexical_hits.end(), std::make_move_iterator(more.begin()),
                            std::make_move_iterator(more.end()));
      }
    }
  }
  const EpisodeContextOptions context_options{ro.neighbour_weight_1, ro.neighbour_weight_2, ro.session_weight,
                                              ro.session_mix,
                                              ro.context == "sum" ? ContextMode::kSum : ContextMode::kPrior};
  const bool with_neighbours = context_options.neighbour_weight_1 > 0 || context_options.neighbour_weight_2 > 0;
  std::vector<SessionRank> session_ranks;
  std::vector<ContextScore> context =
      ScoreEpisodeContext(lexical_hits, context_options, &session_match, r.top_sessions > 0 ? &session_ranks : nullptr);
  // The session ranking, copied before the candidates' ids move out.
  std::vector<SessionHit> sessions;
  for (const SessionRank& s : session_ranks) {
    if (static_cast<int>(sessions.size()) >= r.top_sessions) break;
    sessions.push_back(SessionHit{Namespace{}, s.score, lexical_hits[s.best].hit.id});
  }
  std::vector<RankedSignal> signals(2);
  RankedSignal& lexical = signals[0];
  lexical = RankedSignal{"bm25", ro.lexical_weight, {}};
  lexical.hits.reserve(context.size());
  // The passages that matched, of records indexed as passages (the
  // candidates' first hit of each: their best).
  std::unordered_map<std::string, TextSpan> passages;
  for (const LexicalHit& h : lexical_hits) {
    if (h.passage_end > 0) passages.try_emplace(h.hit.id, TextSpan{h.passage_begin, h.passage_end});
  }
  // The ids move out of the candidates (context[i].id, a view, is not used again).
  for (ContextScore& c : context) {
    lexical.hits.push_back(IndexHit{std::move(lexical_hits[c.candidate].hit.id), c.bm25});
  }
  lexical_hits.clear();
  std::vector<float> query_vector = r.query_embedding;
  if (query_vector.empty()) {
    MSP_ASSIGN_OR_RETURN(auto vecs, ctx_.embedder.Embed({r.query}));
    query_vector = std::move(vecs.front());
  } else if (static_cast<int>(query_vector.size()) != ctx_.embedder.dimension()) {
    return Status::InvalidArgument("query_embedding has " + std::to_string(query_vector.size()) +
                                   " dimensions; the embedder '" + ctx_.embedder.id() + "' makes " +
                                   std::to_string(ctx_.embedder.dimension()));
  }
  RankedSignal& vector = signals[1];
  vector = RankedSignal{"cosine", ro.vector_weight, {}};
  const bool by_score = ro.fusion != Fusion::kRrf;
  // The best context score (by score, the lexical signal is each one over it).
  double best = 0.0;
  for (const ContextScore& c : context) best = std::max(best, c.score);
  if (by_score) {
    for (size_t i = 0; i < context.size(); ++i) lexical.hits[i].score = best > 0 ? context[i].score / best : 0.0;
  }
  // Whether the vector index's own top candidates were searched; see
  // VectorSignal. Forced after a stale hit when they were not.
  std::optional<std::vector<FusedHit>> direct;
  MSP_ASSIGN_OR_RETURN(bool scanned,
                       VectorSignal(query_vector, q, r, by_score, /*force_scan=*/false, signals, &direct));
  // Calibrated scores: each fused score mapped through the curve (rising
  // in it, so the order stays), the relative score kept for explain.
  const bool calibrated = ro.scores != "relative";
  std::unordered_map<std::string, double> relative;
  auto calibrate = [&](std::vector<FusedHit>& hits) {
    if (!calibrated) return;
    for (size_t i = 0; i < hits.size(); ++i) {
      if (r.explain) relative[std::string(hits[i].id)] = hits[i].score;
      hits[i].score = CalibratedScore(hits[i].score, match, i);
    }
  };
  std::vector<FusedHit> fused = direct     ? std::move(*direct)
                                : by_score ? FuseScores(signals, r.explain)
                                           : FuseReciprocalRank(signals, std::max(1, ro.rrf_k), r.explain);
  if (shallow && !left_out.complete) {
    // A record left out scores at most its lexical bound (the last
    // candidate's BM25 over the best, as the candidates' own scores are
    // made) with a perfect cosine; a record found by the vector signal
    // alone, at most w_v / (w_l + w_v), which is less. When the top_k-th
    // fused score is above that, every candidate would give the same top
    // top_k, in the same order (ties keep the candidates' order, and a
    // left-out record cannot tie). The margin covers rounding.
    double best_bm25 = 0.0;
    for (const ContextScore& c : context) best_bm25 = std::max(best_bm25, c.bm25);
    const double lexical_bound =
        best_bm25 > 0 && best > 0 ? std::clamp(left_out.max_score / best_bm25 / best, 0.0, 1.0) : 1.0;
    const double bound = (ro.lexical_weight * lexical_bound + ro.vector_weight) / (ro.lexical_weight + ro.vector_weight);
    const size_t k = static_cast<size_t>(r.top_k);
    if (fused.size() < k || !(fused[k - 1].score > bound + 1e-9)) return false;
  }
  calibrate(fused);
  std::unordered_map<std::string_view, const ContextScore*> context_by_id;
  if (r.explain) {
    for (size_t i = 0; i < context.size(); ++i) context_by_id.emplace(lexical.hits[i].id, &context[i]);
  }
  // The records of the best hits, read a batch at a time: a hit the store
  // no longer shows this query (the index may lag a concurrent writer) is
  // skipped and the next one read. As of a time, one batch of every
  // candidate, since many may not have held then.
  const size_t batch = r.as_of > 0 ? static_cast<size_t>(q.limit) : static_cast<size_t>(r.top_k);
  std::vector<SearchHit> out;
  out.reserve(static_cast<size_t>(r.top_k));
  size_t next = 0;
  bool stale = false;
  while (static_cast<int>(out.size()) < r.top_k && next < fused.size()) {
    if (stale && !scanned) {
      // A hit was dropped, so hits past the first top_k count, where the
      // vector index's own candidates may rank: search them, fuse again
      // and go on from the same place (the hits served stay first).
      MSP_ASSIGN_OR_RETURN(scanned,
                           VectorSignal(query_vector, q, r, by_score, /*force_scan=*/true, signals, &direct));
      std::vector<FusedHit> again = by_score ? FuseScores(signals, r.explain)
                                             : FuseReciprocalRank(signals, std::max(1, ro.rrf_k), r.explain);
      calibrate(again);
      std::unordered_set<std::string_view> done;
      for (size_t i = 0; i < next; ++i) done.insert(fused[i].id);
      std::vector<FusedHit> rest;
      for (FusedHit& f : again) {
        if (!done.count(f.id)) rest.push_back(std::move(f));
      }
      fused.resize(next);
      for (FusedHit& f : rest) fused.push_back(std::move(f));
      continue;
    }
    std::vector<std::string> ids;
    size_t end = next;
    for (; end < fused.size() && ids.size() < batch; ++end) {
      if (fused[end].score + 1e-12 < r.min_score) break;  // sorted: the rest score lower
      ids.emplace_back(fused[end].id);
    }
    if (ids.empty()) break;
    MSP_ASSIGN_OR_RETURN(auto records, ctx_.store.GetMany(ids, /*with_embeddings=*/false));
    std::unordered_map<std::string_view, Memory*> by_id;
    by_id.reserve(records.size());
    for (auto& m : records) by_id.emplace(m.id, &m);
    for (; next < end && static_cast<int>(out.size()) < r.top_k; ++next) {
      const FusedHit& f = fused[next];
      auto it = by_id.find(f.id);
      // Re-check against the record as stored now: the index may lag a
      // concurrent writer, and visibility must never depend on it.
      if (it == by_id.end() || !MatchesQuery(*it->second, q) || (r.as_of > 0 && !HeldAt(*it->second, r.as_of))) {
        if (shallow) return false;  // the next hits may be among those left out
        stale = true;
        continue;
      }
      SearchHit hit;
      hit.memory = std::move(*it->second);
      hit.score = f.score;
      auto passage = passages.empty() ? passages.end() : passages.find(std::string(f.id));
      ShowPassage(hit, passage == passages.end() ? TextSpan{} : passage->second);
      if (r.explain) {
        for (SignalContribution c : f.contributions) {
          auto ctx = context_by_id.find(f.id);
          if (c.signal != lexical.name || ctx == context_by_id.end()) {
            hit.explain.push_back(c);
            continue;
          }
          c.raw = ctx->second->bm25;  // the BM25 weight, whatever the fusion saw
          for (auto& part : ExplainContext(c, *ctx->second, with_neighbours, ro.session_weight > 0)) {
            hit.explain.push_back(std::move(part));
          }
        }
        // The calibration's part: raw, how much of the query its best hit
        // matches; contribution, what the curve changed (so the entries
        // still sum to the score).
        if (auto rel = relative.find(std::string(f.id)); rel != relative.end()) {
          hit.explain.push_back(SignalContribution{"calibration", 0, match, f.score - rel->second});
        }
      }
      out.push_back(std::move(hit));
    }
    if (end < fused.size() && fused[end].score + 1e-12 < r.min_score) break;
    if (r.as_of > 0) break;  // every candidate was read
    next = end;
  }
  if (r.record_access && !out.empty()) {
    std::vector<std::string> served;
    for (auto& h : out) {
      served.push_back(h.memory.id);
      h.memory.access_count += 1;
      h.memory.last_accessed = now;
    }
    ctx_.access.Note(served, now);
  }
  if (r.context_steps > 0) MSP_RETURN_IF_ERROR(AddContext(r, q, out));
  if (!sessions.empty()) {
    MSP_ASSIGN_OR_RETURN(result.sessions, ResolveSessions(r, q, std::move(sessions), out));
  }
  result.hits = std::move(out);
  return true;
}

}  // namespace msp
