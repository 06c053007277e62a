// Episode context scoring (see episode_context.h).
#include "core/rank/episode_context.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <set>
#include <unordered_set>
#include <utility>

namespace msp {

namespace {

// (session, step) as a hash key; the session views a candidate's string.
struct StepKey {
  std::string_view session;
  int64_t step;
  bool operator==(const StepKey&) const = default;
};

struct StepKeyHash {
  size_t operator()(const StepKey& k) const {
    return std::hash<std::string_view>{}(k.session) ^ (std::hash<int64_t>{}(k.step) * 0x9e3779b97f4a7c15ULL);
  }
};

// Those with score > 0, best first; ties keep their order.
std::vector<ContextScore> SortedBestFirst(std::vector<ContextScore> scores) {
  scores.erase(std::remove_if(scores.begin(), scores.end(), [](const ContextScore& s) { return !(s.score > 0.0); }),
               scores.end());
  std::stable_sort(scores.begin(), scores.end(),
                   [](const ContextScore& a, const ContextScore& b) { return a.score > b.score; });
  return scores;
}

}  // namespace

std::vector<ContextScore> ScoreEpisodeContext(const std::vector<LexicalHit>& candidates,
                                              const EpisodeContextOptions& options, const SessionScores* match,
                                              std::vector<SessionRank>* sessions) {
  if (sessions != nullptr) sessions->clear();
  std::vector<ContextScore> out;
  out.reserve(candidates.size());
  std::vector<const EpisodePosition*> where;  // views into `candidates`
  where.reserve(candidates.size());
  // Each id's place in `out`: open addressing over positions, so telling
  // repeated ids apart allocates once, not once an id.
  constexpr uint32_t kEmpty = UINT32_MAX;
  size_t capacity = 16;
  while (capacity < 2 * candidates.size()) capacity <<= 1;
  std::vector<uint32_t> slot(capacity, kEmpty);
  const std::hash<std::string_view> hash;
  double best = 0.0;
  bool any_session = false;
  for (size_t ci = 0; ci < candidates.size(); ++ci) {
    const LexicalHit& c = candidates[ci];
    const std::string_view id = c.hit.id;
    size_t h = hash(id) & (capacity - 1);
    while (slot[h] != kEmpty && out[slot[h]].id != id) h = (h + 1) & (capacity - 1);
    if (slot[h] == kEmpty) {
      slot[h] = static_cast<uint32_t>(out.size());
      out.push_back(ContextScore{id, c.hit.score, 0.0, 0.0, 0.0, 0.0, !c.position.session.empty(), ci});
      where.push_back(&c.position);
      any_session = any_session || !c.position.session.empty();
    } else {
      out[slot[h]].bm25 = std::max(out[slot[h]].bm25, c.hit.score);
    }
    best = std::max(best, c.hit.score);
  }
  if (best <= 0.0) return {};
  if (!any_session) {  // no neighbours and no sessions: each scores its own
    for (ContextScore& s : out) s.score = s.own = s.bm25 / best;
    return SortedBestFirst(std::move(out));
  }
  // (session, step) -> own score, for the neighbour look-ups.
  std::unordered_map<StepKey, double, StepKeyHash> by_step;
  by_step.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].own = out[i].bm25 / best;
    if (!where[i]->session.empty()) {
      double& v = by_step[StepKey{where[i]->session, where[i]->step}];
      v = std::max(v, out[i].own);
    }
  }
  auto own_at = [&](std::string_view session, int64_t step) {
    auto it = by_step.find(StepKey{session, step});
    return it == by_step.end() ? 0.0 : it->second;
  };
  const bool prior = options.mode == ContextMode::kPrior;
  for (size_t i = 0; i < out.size(); ++i) {
    ContextScore& s = out[i];
    const EpisodePosition& p = *where[i];
    if (!p.session.empty()) {
      const double before_1 = own_at(p.session, p.step - 1), after_1 = own_at(p.session, p.step + 1);
      const double before_2 = own_at(p.session, p.step - 2), after_2 = own_at(p.session, p.step + 2);
      if (prior) {
        // Three chances that the step is what the query asks for: its own
        // match, and the best discounted match one and two steps away;
        // combined as independent evidence (noisy-or), so the score stays
        // in [0, 1] and a step that does not match itself stays below the
        // step it borrows from (while w1 + w2 <= 1).
        // 1 - (1 - own) x miss1 x miss2 = own + (1 - own) x (1 - miss1 x miss2).
        auto chance = [](double x) { return std::clamp(x, 0.0, 1.0); };
        const double miss = (1.0 - chance(options.neighbour_weight_1 * std::max(before_1, after_1))) *
                            (1.0 - chance(options.neighbour_weight_2 * std::max(before_2, after_2)));
        s.neighbours = (1.0 - chance(s.own)) * (1.0 - miss);
      } else {
        s.neighbours = options.neighbour_weight_1 * (before_1 + after_1) + options.neighbour_weight_2 * (before_2 + after_2);
      }
    }
    s.score = s.own + s.neighbours;
  }
  if (options.session_weight > 0.0 || sessions != nullptr) {
    // The candidates' sessions in order of first appearance, with the
    // first candidate of each session's best own score.
    struct Session {
      std::string_view key;
      size_t best = 0;  // index into `out`
      double score = 0.0;
    };
    std::vector<Session> ranked;
    std::unordered_map<std::string_view, size_t> index;  // key -> place in `ranked`
    for (size_t i = 0; i < out.size(); ++i) {
      if (where[i]->session.empty()) continue;
      auto [it, added] = index.emplace(where[i]->session, ranked.size());
      if (added) {
        ranked.push_back(Session{where[i]->session, i, 0.0});
      } else if (out[i].own > out[ranked[it->second].best].own) {
        ranked[it->second].best = i;
      }
    }
    // The largest session BM25 among the candidates' sessions.
    double best_match = 0.0;
    const bool with_match = match != nullptr && options.session_mix > 0.0;
    if (with_match) {
      for (const Session& r : ranked) {
        auto m = match->find(r.key);
        if (m != match->end()) best_match = std::max(best_match, m->second);
      }
    }
    for (Session& r : ranked) {
      double relative = 0.0;
      if (best_match > 0.0) {
        auto m = match->find(r.key);
        if (m != match->end()) relative = m->second / best_match;
      }
      r.score = options.session_mix * relative + (1.0 - options.session_mix) * out[r.best].own;
    }
    std::vector<size_t> order(ranked.size());  // places in `ranked`, best session first
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ranked[a].score > ranked[b].score; });
    std::vector<size_t> rank_of(ranked.size());
    for (size_t r = 0; r < order.size(); ++r) rank_of[order[r]] = r;
    if (options.session_weight > 0.0) {
      for (size_t i = 0; i < out.size(); ++i) {
        ContextScore& s = out[i];
        if (where[i]->session.empty() || !(s.score > 0.0)) continue;
        const size_t place = index.find(where[i]->session)->second;
        s.session = prior ? options.session_weight / (1.0 + static_cast<double>(rank_of[place]))
                          : options.session_weight * ranked[place].score;
        s.score += s.session;
      }
    }
    if (sessions != nullptr) {
      const double top = order.empty() ? 0.0 : ranked[order.front()].score;
      sessions->reserve(order.size());
      for (size_t place : order) {
        const Session& r = ranked[place];
        if (!(r.score > 0.0)) break;  // best first: the rest score 0 too
        sessions->push_back(SessionRank{r.key, r.score / top, out[r.best].candidate});
      }
    }
  }
  return SortedBestFirst(std::move(out));
}

std::vector<SignalContribution> ExplainContext(const SignalContribution& c, const ContextScore& s,
                                               bool with_neighbours, bool with_session) {
  std::vector<SignalContribution> out{c};
  if (!s.in_session || !(with_neighbours || with_session)) return out;
  auto share = [&](double part) { return s.score > 0.0 ? c.contribution * part / s.score : 0.0; };
  out[0].contribution = share(s.own);
  if (with_neighbours) out.push_back(SignalContribution{"neighbours", c.rank, s.neighbours, share(s.neighbours)});
  if (with_session) out.push_back(SignalContribution{"session", c.rank, s.session, share(s.session)});
  return out;
}

SessionScores SessionBm25(const std::vector<LexicalHit>& hits, double k1) {
  struct Terms {
    std::vector<double> tf;   // by query term
    std::vector<double> idf;  // by query term
  };
  std::unordered_map<std::string_view, Terms> sessions;
  // Each hit once: a record's id, and its passage's offset for a record
  // indexed as passages (whose passages are hits of their own).
  std::unordered_set<std::string_view> counted;
  std::set<std::pair<std::string_view, size_t>> counted_passages;  // passages after a record's first
  for (const LexicalHit& h : hits) {
    if (h.position.session.empty() || h.terms.empty()) continue;
    const bool first = h.passage_begin == 0 ? counted.insert(h.hit.id).second
                                            : counted_passages.emplace(h.hit.id, h.passage_begin).second;
    if (!first) continue;
    Terms& st = sessions[h.position.session];
    for (const TermMatch& t : h.terms) {
      if (st.tf.size() <= t.term) {
        st.tf.resize(t.term + 1, 0.0);
        st.idf.resize(t.term + 1, 0.0);
      }
      st.tf[t.term] += t.wdf;
      st.idf[t.term] = t.idf;
    }
  }
  SessionScores out;
  out.reserve(sessions.size());
  for (const auto& [session, st] : sessions) {
    double score = 0.0;
    for (size_t t = 0; t < st.tf.size(); ++t) {
      if (st.tf[t] > 0.0) score += st.idf[t] * st.tf[t] * (k1 + 1.0) / (st.tf[t] + k1);
    }
    if (score > 0.0) out.emplace(session, score);
  }
  return out;
}

std::vector<std::string> HitSessions(const std::vector<LexicalHit>& hits, size_t n) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  for (const LexicalHit& h : hits) {
    if (out.size() >= n) break;
    if (!h.position.session.empty() && seen.insert(h.position.session).second) out.push_back(h.position.session);
  }
  return out;
}

std::vector<std::string> TopSessions(const std::vector<std::string>& sessions, const SessionScores& match, int n) {
  std::vector<std::pair<double, size_t>> ranked;  // (match, index in sessions)
  ranked.reserve(sessions.size());
  for (size_t i = 0; i < sessions.size(); ++i) {
    auto m = match.find(sessions[i]);
    ranked.emplace_back(m == match.end() ? 0.0 : m->second, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < n; ++i) out.push_back(sessions[ranked[i].second]);
  return out;
}

}  // namespace msp
