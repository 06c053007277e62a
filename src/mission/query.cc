// workflow_memory_query: routing, ranking (degraded mode included), the
// budgeted digest and the retrieval log (see msp/digest.h, docs/mission.md).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "mission/degraded.h"
#include "mission/digest_builder.h"
#include "mission/records.h"
#include "mission/render.h"
#include "util/utf8.h"
#include "mission/retrieval_log.h"
#include "msp/digest.h"
#include "util/fence.h"
#include "util/time.h"
#include "util/uuid.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

constexpr size_t kTitleQueryChars = 120;  // a task description in the heading
constexpr size_t kTitleChars = 300;       // a title given (MissionQuery::title)

struct Candidate {
  Memory memory;
  double similarity = 0.0;
  double score = 0.0;
  // Near-duplicates collapsed into this one (mission.near_duplicate).
  std::vector<const Memory*> duplicates;
};

// The words of a text for near-duplicate detection: lowered ASCII letters
// and digits plus any non-ASCII bytes, split at everything else; numbers
// (timestamps, counters, ids) and one-letter words dropped.
std::set<std::string> WordSet(const std::string& text) {
  std::set<std::string> out;
  std::string w;
  bool letter = false;
  auto flush = [&]() {
    if (letter && w.size() > 1) out.insert(w);
    w.clear();
    letter = false;
  };
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalpha(c) || c >= 0x80) {
      w.push_back(static_cast<char>(std::tolower(c)));
      letter = true;
    } else if (std::isdigit(c)) {
      w.push_back(ch);
    } else {
      flush();
    }
  }
  flush();
  return out;
}

// Records that repeat (alerts, events, observations, chunks) collapse;
// decisions, principles and corrections are each their own record however
// alike they read.
bool Collapsible(Kind k) {
  return k != Kind::kDecision && k != Kind::kPrinciple && k != Kind::kCorrection;
}

double Jaccard(const std::set<std::string>& a, const std::set<std::string>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t common = 0;
  for (const std::string& w : a) common += b.count(w);
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

// The passage of `text` that best matches `query`: the line with most of the
// query's words and the lines around it, up to about kExcerptChars; the
// first line (a decision's title) always leads. Empty when the text is
// short enough to be its own excerpt.
std::string ExcerptOf(const std::string& text, const std::string& query) {
  constexpr size_t kExcerptChars = 600;
  if (Utf8Chars(text) <= kExcerptChars) return "";
  std::vector<std::string> lines;
  for (size_t start = 0; start <= text.size();) {
    const size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  const std::set<std::string> words = WordSet(query);
  size_t best = 0, best_hits = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t hits = 0;
    for (const std::string& w : WordSet(lines[i])) hits += words.count(w);
    if (hits > best_hits) {
      best_hits = hits;
      best = i;
    }
  }
  std::string out = lines[0];
  if (best == 0) {
    for (size_t i = 1; i < lines.size() && Utf8Chars(out) < kExcerptChars; ++i) out += "\n" + lines[i];
    return out;
  }
  // Lines before and after the best one, while the passage is short.
  size_t lo = best, hi = best;
  size_t chars = Utf8Chars(lines[best]);
  while (chars < kExcerptChars && (lo > 1 || hi + 1 < lines.size())) {
    if (hi + 1 < lines.size()) chars += Utf8Chars(lines[++hi]) + 1;
    if (chars < kExcerptChars && lo > 1) chars += Utf8Chars(lines[--lo]) + 1;
  }
  if (lo > 1) out += "\n…";
  for (size_t i = lo; i <= hi; ++i) out += "\n" + lines[i];
  if (hi + 1 < lines.size()) out += "\n…";
  return out;
}

std::vector<Layer> LayersOf(QueryScope s) {
  switch (s) {
    case QueryScope::kAll: return {Layer::kDomain, Layer::kWorkflow, Layer::kPractitioner};
    case QueryScope::kDomain: return {Layer::kDomain};
    case QueryScope::kWorkflow: return {Layer::kWorkflow};
    case QueryScope::kPractitioner: return {Layer::kPractitioner};
  }
  return {};
}

// Where a layer's records live for this asker: the mission, and for the
// practitioner layer the asker's own namespace (every operator's when the
// asker is anonymous).
Namespace LayerScope(const MissionQuery& q, Layer layer) {
  Namespace ns = MissionNamespace(q.mission);
  if (layer == Layer::kPractitioner) ns.operator_id = q.asker.operator_id;
  return ns;
}

bool Servable(const Memory& m, const QueryFilters& f) {
  if (IsRetrievalLog(m)) return false;
  if (m.kind == Kind::kEntity || m.kind == Kind::kRelation || m.kind == Kind::kEpisode) return false;
  if (!f.component.empty() && ComponentOf(m) != f.component) return false;
  return true;
}

std::string DecisionTitle(const Memory& m) {
  if (m.kind != Kind::kDecision) return "";
  Result<Decision> d = DecisionFromMemory(m);
  return d.ok() ? d->title : "";
}

DigestEntry EntryOf(const Candidate& c) {
  DigestEntry e;
  e.id = c.memory.id;
  e.layer = c.memory.layer;
  e.kind = c.memory.kind;
  e.score = c.score;
  e.similarity = c.similarity;
  e.criticality = c.memory.criticality;
  e.access_level = c.memory.access_level;
  e.component = ComponentOf(c.memory);
  e.title = DecisionTitle(c.memory);
  e.text = c.memory.text;
  e.provenance = c.memory.provenance;
  e.source = c.memory.source;
  if (e.kind == Kind::kEvent) e.event_type = BodyType(c.memory);
  e.created_at = c.memory.created_at;
  e.duplicates = 1 + static_cast<int>(c.duplicates.size());
  e.first_at = e.last_at = c.memory.created_at;
  for (const Memory* m : c.duplicates) {
    e.duplicate_ids.push_back(m->id);
    e.first_at = std::min(e.first_at, m->created_at);
    e.last_at = std::max(e.last_at, m->created_at);
  }
  return e;
}

// "2026-01-02 10:00Z".
std::string ShortTime(TimeMs t) {
  std::string s = FormatIso8601(t);
  if (s.size() >= 16) s = s.substr(0, 10) + " " + s.substr(11, 5) + "Z";
  return s;
}

DigestItem ItemOf(const DigestEntry& e, size_t section, bool degraded, const std::string& query,
                  const TokenCounter& counter, bool trusted) {
  DigestItem item;
  item.section = section;
  item.head = "- [" + FormatScore(e.score) + "]";
  if (degraded) item.head += " (similarity " + FormatScore(e.similarity) + ")";
  item.head += " " + (e.kind == Kind::kEvent && !e.event_type.empty() ? e.event_type : std::string(KindName(e.kind)));
  if (!e.component.empty()) item.head += " · " + FenceLine(e.component);
  item.head += " · " + std::string(CriticalityName(e.criticality));
  // Stored text is data: its source and trust lead, its text is fenced.
  if (!e.source.empty()) item.head += " · from " + FenceLine(e.source);
  item.head += trusted ? " · trusted" : " · untrusted";
  if (e.duplicates > 1) {
    item.head += " · ×" + std::to_string(e.duplicates) + " near-identical, " + ShortTime(e.first_at) + " – " +
                 ShortTime(e.last_at);
  }
  item.head += ": ";
  item.text = FenceBody(e.text);
  item.tail = "\n  provenance: " + ProvenanceText(e.provenance, e.source) + " · id " + e.id;
  // Over budget: the passage that matched, and where the whole is.
  const std::string passage = ExcerptOf(e.text, query);
  if (!passage.empty()) item.excerpt = FenceBody(passage);
  // The excerpt's tail is short (it must fit small budgets): documents by
  // their file name; the id leads to everything else.
  std::vector<ProvenanceRef> brief = e.provenance;
  for (ProvenanceRef& r : brief) {
    if (r.type == "document") {
      if (const size_t slash = r.ref.find_last_of('/'); slash != std::string::npos) r.ref = r.ref.substr(slash + 1);
    }
  }
  item.excerpt_tail = "\n  excerpt of " + std::to_string(counter.Count(e.text)) + " tokens · provenance: " +
                      ProvenanceText(brief, e.source) + " · full record: msp get " + e.id;
  return item;
}

json EntryJson(const DigestEntry& e) {
  return json{{"id", e.id},
              {"layer", LayerName(e.layer)},
              {"kind", KindName(e.kind)},
              {"score", e.score},
              {"similarity", e.similarity},
              {"criticality", CriticalityName(e.criticality)},
              {"access_level", e.access_level},
              {"component", e.component},
              {"title", e.title},
              {"text", e.text},
              {"provenance", ProvenanceJson(e.provenance)},
              {"source", e.source},
              {"event_type", e.event_type},
              {"created_at", e.created_at == 0 ? json(nullptr) : json(FormatIso8601(e.created_at))},
              {"tokens", e.tokens},
              {"truncated", e.truncated},
              {"duplicates", e.duplicates},
              {"duplicate_ids", e.duplicate_ids},
              {"first_at", e.first_at == 0 ? json(nullptr) : json(FormatIso8601(e.first_at))},
              {"last_at", e.last_at == 0 ? json(nullptr) : json(FormatIso8601(e.last_at))}};
}

json LoadJson(const LoadState& l) {
  return json{{"active", l.degraded},         {"alpha", l.alpha},
              {"rate_per_min", l.rate_per_min}, {"events_in_window", l.events_in_window},
              {"window_min", l.window_min},     {"capacity_per_min", l.capacity_per_min},
              {"mode", l.mode}};
}

std::string_view FormName(DigestForm f) {
  switch (f) {
    case DigestForm::kFull: return "full";
    case DigestForm::kFooterOnly: return "footer_only";
    case DigestForm::kEmpty: return "empty";
  }
  return "full";
}

}  // namespace

std::string_view QueryScopeName(QueryScope s) {
  switch (s) {
    case QueryScope::kAll: return "all";
    case QueryScope::kDomain: return "domain";
    case QueryScope::kWorkflow: return "workflow";
    case QueryScope::kPractitioner: return "practitioner";
  }
  return "unknown";
}

std::optional<QueryScope> ParseQueryScope(std::string_view s) {
  for (QueryScope q : {QueryScope::kAll, QueryScope::kDomain, QueryScope::kWorkflow, QueryScope::kPractitioner}) {
    if (QueryScopeName(q) == s) return q;
  }
  return std::nullopt;
}

Result<QueryDigest> WorkflowMemory::Query(const MissionQuery& q) {
  MSP_RETURN_IF_ERROR(RequireMission(q.mission));
  if (OneLineText(q.task_description, 1).empty()) {
    return Status::InvalidArgument("task_description is empty: describe the task to find context for");
  }
  if (q.token_budget < 0) {
    return Status::InvalidArgument("token_budget is " + std::to_string(q.token_budget) + "; it must be >= 0");
  }
  if (!q.filters.component.empty() && !IsMissionIdentifier(q.filters.component)) {
    return Status::InvalidArgument("component filter '" + q.filters.component + "' is not an identifier");
  }
  if (q.filters.from != 0 && q.filters.to != 0 && q.filters.from >= q.filters.to) {
    return Status::InvalidArgument("time range is empty: from must be before to");
  }
  MSP_ASSIGN_OR_RETURN(const int clearance, ResolveClearance(engine_, q.mission, q.asker));
  MSP_ASSIGN_OR_RETURN(const LoadState load, Load(q.mission, clearance));
  const int top_k = std::clamp(options_.query_candidates, 1, 1000);

  // Questions and threats resolved: under load they are not triaged by
  // their criticality any more.
  std::set<std::string> resolved;
  if (load.degraded) {
    MSP_ASSIGN_OR_RETURN(std::vector<MissionEvent> events,
                         Events(MissionNamespace(q.mission), 0, 0, std::nullopt));
    for (const MissionEvent& e : events) {
      if (!e.resolves_id.empty()) resolved.insert(e.resolves_id);
    }
  }

  // Route: one retrieval per layer of the scope.
  const std::vector<Layer> layers = LayersOf(q.scope);
  std::vector<Candidate> candidates;
  std::set<std::string> seen;
  for (Layer layer : layers) {
    RetrieveRequest r;
    r.scope = LayerScope(q, layer);
    r.query = q.task_description;
    r.top_k = top_k;
    r.record_access = false;
    r.filter.layers = {layer};
    r.filter.criticalities = q.filters.criticalities;
    r.filter.created_from = q.filters.from;
    r.filter.created_to = q.filters.to;
    r.filter.max_access_level = clearance;
    MSP_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, engine_.Retrieve(r));
    for (SearchHit& h : hits) {
      if (!Servable(h.memory, q.filters) || !seen.insert(h.memory.id).second) continue;
      candidates.push_back(Candidate{std::move(h.memory), h.score, h.score, {}});
    }
    if (!load.degraded) continue;
    // Under load, triage by criticality: the layer's high and critical
    // records join the candidates even when they do not match the words
    // (a question or threat already resolved does not).
    ListRequest l;
    l.scope = r.scope;
    l.filter = r.filter;
    l.filter.criticalities.clear();
    for (Criticality c : {Criticality::kHigh, Criticality::kCritical}) {
      if (q.filters.criticalities.empty() ||
          std::find(q.filters.criticalities.begin(), q.filters.criticalities.end(), c) !=
              q.filters.criticalities.end()) {
        l.filter.criticalities.push_back(c);
      }
    }
    if (l.filter.criticalities.empty()) continue;
    l.limit = top_k;
    l.newest_first = true;
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> urgent, engine_.List(l));
    for (Memory& m : urgent) {
      if (!Servable(m, q.filters) || resolved.count(m.id) != 0 || !seen.insert(m.id).second) continue;
      candidates.push_back(Candidate{std::move(m), 0.0, 0.0, {}});
    }
  }
  for (Candidate& c : candidates) {
    const bool settled = resolved.count(c.memory.id) != 0;
    c.score = load.degraded && !settled ? DegradedScore(load.alpha, c.memory.criticality, c.similarity)
              : load.degraded           ? (1.0 - load.alpha) * c.similarity
                                        : c.similarity;
  }
  // The relevance floor: what scores below it is not served at all (a
  // nonsense task gets "no matching records", not the budget filled with
  // noise).
  std::erase_if(candidates, [&](const Candidate& c) { return c.score < options_.min_relevance; });
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.similarity != b.similarity) return a.similarity > b.similarity;
    if (a.memory.created_at != b.memory.created_at) return a.memory.created_at > b.memory.created_at;
    return a.memory.id < b.memory.id;
  });
  // Near-duplicates (twelve identical CI alerts) collapse into the highest
  // ranked of them, which then carries their count and time span.
  std::vector<Memory> absorbed;  // the collapsed ones (kept[k].duplicates point here)
  absorbed.reserve(candidates.size());
  {
    std::vector<Candidate> kept;
    std::vector<std::set<std::string>> kept_words;
    std::vector<std::pair<size_t, size_t>> links;  // (kept index, absorbed index)
    for (Candidate& c : candidates) {
      std::set<std::string> words = WordSet(c.memory.text);
      size_t into = kept.size();
      for (size_t k = 0; k < kept.size(); ++k) {
        if (Collapsible(c.memory.kind) && kept[k].memory.kind == c.memory.kind &&
            kept[k].memory.layer == c.memory.layer && Jaccard(kept_words[k], words) >= options_.near_duplicate) {
          into = k;
          break;
        }
      }
      if (into == kept.size()) {
        kept.push_back(std::move(c));
        kept_words.push_back(std::move(words));
      } else {
        absorbed.push_back(std::move(c.memory));
        links.emplace_back(into, absorbed.size() - 1);
      }
    }
    for (const auto& [k, a] : links) kept[k].duplicates.push_back(&absorbed[a]);
    candidates = std::move(kept);
  }

  // Pack.
  const TimeMs now = clock_->NowMs();
  const std::string retrieval_id = NewUuid(now);
  const std::string counter_name(counter_->name());
  const size_t budget = static_cast<size_t>(q.token_budget);
  std::map<Layer, size_t> section_of;
  DigestLayout layout;
  for (Layer l : layers) {
    section_of[l] = layout.sections.size();
    layout.sections.push_back("## " + LayerTitle(l));
  }
  layout.title = "# Mission memory: " +
                 (q.title.empty() ? OneLineText(q.task_description, kTitleQueryChars) : OneLineText(q.title, kTitleChars)) +
                 "\nretrieval " +
                 retrieval_id + " · mission " + q.mission.mission + " · scope " +
                 std::string(QueryScopeName(q.scope)) + " · clearance " + std::to_string(clearance);
  if (load.degraded) {
    layout.title += "\n**Degraded mode**: " +
                    (load.mode == "degraded" ? "set by hand (mission.degraded_mode = degraded), " : std::string()) +
                    FormatScore(load.rate_per_min) + " events/min over " + std::to_string(load.window_min) +
                    (load.mode == "degraded" ? " min, capacity " : " min > capacity ") +
                    FormatScore(load.capacity_per_min) + "/min; score = " + FormatScore(load.alpha) +
                    " × criticality + " + FormatScore(1.0 - load.alpha) + " × similarity";
  }
  std::vector<DigestEntry> entries;
  for (const Candidate& c : candidates) {
    entries.push_back(EntryOf(c));
    layout.items.push_back(
        ItemOf(entries.back(), section_of[c.memory.layer], load.degraded, q.task_description, *counter_,
               IsTrustedSource(c.memory.source, trusted_sources_)));
  }
  const bool none = candidates.empty();
  layout.footer = [&](const DigestTally& t) {
    std::string f = "---\n";
    if (none) {
      f += "no matching records";
    } else {
      f += std::to_string(t.shown) + " entries shown, " + std::to_string(t.left_out) + " left out by the budget";
      if (t.truncated > 0) f += " (" + std::to_string(t.truncated) + " as an excerpt)";
    }
    return f + " · " + std::to_string(t.tokens) + "/" + std::to_string(t.budget) + " tokens (counter " +
           counter_name + ")";
  };
  layout.short_footer = [&](const DigestTally& t) {
    return "retrieval " + retrieval_id + ": budget " + std::to_string(t.budget) + " tokens too small, " +
           std::to_string(t.left_out) + " entries left out";
  };
  const BuiltDigest built = BuildDigest(layout, budget, *counter_);

  QueryDigest out;
  out.retrieval_id = retrieval_id;
  out.markdown = built.markdown;
  out.tokens_used = built.tokens;
  out.token_budget = q.token_budget;
  out.counter = counter_name;
  out.clearance = clearance;
  out.load = load;
  RetrievalLog log;
  log.query = q.task_description;
  log.scope = std::string(QueryScopeName(q.scope));
  log.operator_id = q.asker.operator_id;
  log.clearance = clearance;
  int log_level = 0;
  for (size_t s = 0; s < layout.sections.size(); ++s) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!built.shown[i] || layout.items[i].section != s) continue;
      DigestEntry e = entries[i];
      e.tokens = built.item_tokens[i];
      if (built.excerpt[i]) {
        e.truncated = true;
        e.text = built.shown_text[i];  // as shown (indented lines, cut, "…")
      }
      log.served.push_back(ServedRef{e.id, e.layer, e.score, static_cast<int64_t>(e.tokens)});
      log_level = std::max(log_level, e.access_level);
      out.served.push_back(std::move(e));
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (built.shown[i]) continue;
    DigestEntry e = entries[i];
    const DigestItem& item = layout.items[i];
    e.tokens = counter_->Count(item.head + item.text + item.tail);
    out.left_out.push_back(std::move(e));
  }
  log.left_out = static_cast<int64_t>(out.left_out.size());
  log.tokens_used = static_cast<int64_t>(built.tokens);
  log.token_budget = q.token_budget;
  log.counter = counter_name;
  log.degraded = load.degraded;
  log.alpha = load.alpha;
  log.rate_per_min = load.rate_per_min;

  // The retrieval log: written before the digest is returned, so that a
  // correction can name it at once.
  Memory record;
  record.id = retrieval_id;
  record.ns = MissionNamespace(q.mission);
  record.ns.session = q.mission.session;
  record.layer = Layer::kWorkflow;
  record.kind = Kind::kEvent;
  record.text = "";
  record.body_json = RetrievalLogBody(log, q.filters).dump();
  record.source = std::string(kRetrievalLogSource);
  record.access_level = log_level;
  RecordBatch batch;
  batch.scope = MissionNamespace(q.mission);
  batch.puts.push_back(std::move(record));
  batch.expected_seq = {0};
  batch.actor = q.actor;
  batch.reason = "retrieval log";
  MSP_RETURN_IF_ERROR(engine_.Commit(batch).status());

  json sections = json::array();
  for (Layer l : layers) {
    json list = json::array();
    for (const DigestEntry& e : out.served) {
      if (e.layer == l) list.push_back(EntryJson(e));
    }
    sections.push_back({{"layer", LayerName(l)}, {"title", LayerTitle(l)}, {"entries", list}});
  }
  json left = json::array();
  for (const DigestEntry& e : out.left_out) {
    left.push_back({{"id", e.id}, {"layer", LayerName(e.layer)}, {"score", e.score}, {"tokens", e.tokens}});
  }
  json crits = json::array();
  for (Criticality c : q.filters.criticalities) crits.push_back(CriticalityName(c));
  const json j{{"retrieval_id", retrieval_id},
               {"mission", q.mission.mission},
               {"session", q.mission.session},
               {"query", q.task_description},
               {"scope", QueryScopeName(q.scope)},
               {"operator", q.asker.operator_id},
               {"clearance", clearance},
               {"filters",
                {{"component", q.filters.component},
                 {"criticalities", crits},
                 {"from", q.filters.from == 0 ? json(nullptr) : json(FormatIso8601(q.filters.from))},
                 {"to", q.filters.to == 0 ? json(nullptr) : json(FormatIso8601(q.filters.to))}}},
               {"token_budget", q.token_budget},
               {"tokens_used", built.tokens},
               {"counter", counter_name},
               {"form", FormName(built.form)},
               {"degraded", LoadJson(load)},
               {"sections", sections},
               {"left_out", left},
               {"markdown", built.markdown}};
  out.json = DumpJson(j);
  return out;
}

}  // namespace msp
