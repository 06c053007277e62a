// Episode context scoring (see episode_context.h).
#include "core/rank/episode_context.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
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
                                              const EpisodeContextOptions& options, const SessionScores* match) {
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
  for (size_t i = 0; i < out.size(); ++i) {
    ContextScore& s = out[i];
    const EpisodePosition& p = *where[i];
    if (!p.session.empty()) {
      s.neighbours = options.neighbour_weight_1 * (own_at(p.session, p.step - 1) + own_at(p.session, p.step + 1)) +
                     options.neighbour_weight_2 * (own_at(p.session, p.step - 2) + own_at(p.session, p.step + 2));
    }
    s.score = s.own + s.neighbours;
  }
  if (options.session_weight > 0.0) {
    std::unordered_map<std::string_view, double> best_own;  // by session
    for (size_t i = 0; i < out.size(); ++i) {
      if (where[i]->session.empty()) continue;
      double& top = best_own[where[i]->session];
      top = std::max(top, out[i].own);
    }
    // The largest session BM25 among the candidates' sessions.
    double best_match = 0.0;
    if (match != nullptr && options.session_mix > 0.0) {
      for (const auto& [session, top] : best_own) {
        auto m = match->find(session);
        if (m != match->end()) best_match = std::max(best_match, m->second);
      }
    }
    for (size_t i = 0; i < out.size(); ++i) {
      ContextScore& s = out[i];
      if (where[i]->session.empty() || !(s.score > 0.0)) continue;
      double relative = 0.0;
      if (best_match > 0.0) {
        auto m = match->find(where[i]->session);
        if (m != match->end()) relative = m->second / best_match;
      }
      s.session = options.session_weight *
                  (options.session_mix * relative + (1.0 - options.session_mix) * best_own[where[i]->session]);
      s.score += s.session;
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
  std::unordered_set<std::string_view> counted;  // each id once
  for (const LexicalHit& h : hits) {
    if (h.position.session.empty() || h.terms.empty() || !counted.insert(h.hit.id).second) continue;
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
