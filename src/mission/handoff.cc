// The handoff digest for operator rotation (see msp/digest.h and
// docs/mission.md): open threats and questions, what is escalating, the
// decisions and events since, in causal order, and the predecessor's
// correction profile, packed into a token budget.
#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "mission/degraded.h"
#include "mission/digest_builder.h"
#include "mission/records.h"
#include "mission/render.h"
#include "mission/retrieval_log.h"
#include "mission/timeline.h"
#include "msp/digest.h"
#include "util/fence.h"
#include "util/time.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

constexpr size_t kOpenLineChars = 160;
constexpr size_t kCauseLineChars = 60;
constexpr size_t kProfileTop = 5;

enum HandoffSection : size_t { kThreats, kQuestions, kEscalating, kTimeline, kProfile, kSectionCount };

// "2026-01-02 10:00Z".
std::string ShortTime(TimeMs t) {
  std::string s = FormatIso8601(t);
  if (s.size() >= 16) s = s.substr(0, 10) + " " + s.substr(11, 5) + "Z";
  return s;
}

int CritRank(Criticality c) { return static_cast<int>(c); }

// One budget candidate, before packing.
struct Pending {
  DigestItem item;
  int group = 0;           // priority group (lower first)
  int crit = 0;            // within a group: more critical first
  TimeMs at = 0;           // then newest first
  std::string id;          // record id, or "escalation:<c>" / "profile:..."
  std::string kind;        // "threat", "question", "escalation", "decision", "event", "profile"
};

std::vector<CountedName> TopCounts(const std::map<std::string, int64_t>& counts) {
  std::vector<CountedName> out;
  for (const auto& [name, n] : counts) out.push_back(CountedName{name, n});
  std::stable_sort(out.begin(), out.end(), [](const CountedName& a, const CountedName& b) {
    return a.count > b.count;
  });
  if (out.size() > kProfileTop) out.resize(kProfileTop);
  return out;
}

std::string CountList(const std::vector<CountedName>& v) {
  std::string out;
  for (const CountedName& c : v) out += (out.empty() ? "" : ", ") + c.name + " " + std::to_string(c.count);
  return out.empty() ? "none" : out;
}

std::string DecisionBodyText(const Decision& d) {
  std::string t = "**" + OneLineText(d.title, 200) + "**";
  if (!d.decision.empty()) t += "\nDecision: " + d.decision;
  if (!d.context.empty()) t += "\nWhy: " + d.context;
  if (!d.alternatives.empty()) {
    t += "\nRejected:";
    for (const Alternative& a : d.alternatives) {
      t += "\n- " + OneLineText(a.option, 200) + (a.reason.empty() ? "" : ": " + a.reason);
    }
  }
  if (!d.consequences.empty()) t += "\nConsequences: " + d.consequences;
  if (!d.principles.empty()) {
    t += "\nPrinciples:";
    for (const std::string& p : d.principles) t += " " + p;
  }
  return t;
}

json DecisionJson(const Decision& d) {
  json alts = json::array();
  for (const Alternative& a : d.alternatives) alts.push_back({{"option", a.option}, {"reason", a.reason}});
  return json{{"id", d.id},
              {"title", d.title},
              {"context", d.context},
              {"decision", d.decision},
              {"alternatives", alts},
              {"consequences", d.consequences},
              {"principles", d.principles},
              {"component", d.component},
              {"criticality", CriticalityName(d.criticality)},
              {"status", DecisionStatusName(d.status)},
              {"decided_by", d.decided_by},
              {"decided_at", FormatIso8601(d.decided_at != 0 ? d.decided_at : d.created_at)},
              {"provenance", ProvenanceJson(d.provenance)},
              {"access_level", d.access_level}};
}

}  // namespace

Result<HandoffDigest> WorkflowMemory::Handoff(const HandoffRequest& r) {
  MSP_RETURN_IF_ERROR(RequireMission(r.mission));
  if (!IsMissionIdentifier(r.from_operator)) {
    return Status::InvalidArgument("from operator '" + r.from_operator + "' must be an identifier (--from)");
  }
  if (!IsMissionIdentifier(r.to_operator)) {
    return Status::InvalidArgument("to operator '" + r.to_operator + "' must be an identifier (--to)");
  }
  if (r.token_budget < 0) {
    return Status::InvalidArgument("token_budget is " + std::to_string(r.token_budget) + "; it must be >= 0");
  }
  const Namespace mission = MissionNamespace(r.mission);
  Asker asker;
  asker.operator_id = r.to_operator;
  asker.clearance = r.clearance;
  MSP_ASSIGN_OR_RETURN(const int clearance, ResolveClearance(engine_, mission, asker));
  asker.clearance = clearance;
  const TimeMs now = clock_->NowMs();
  MSP_ASSIGN_OR_RETURN(const LoadState load, Load(mission, clearance));

  // Every event: resolution state counts resolutions the asker may not read
  // (only the fact that an item was resolved, never their content).
  MSP_ASSIGN_OR_RETURN(std::vector<MissionEvent> all_events, Events(mission, 0, 0, std::nullopt));
  std::set<std::string> resolved;
  for (const MissionEvent& e : all_events) {
    if (!e.resolves_id.empty()) resolved.insert(e.resolves_id);
  }
  std::vector<MissionEvent> events;  // visible
  for (MissionEvent& e : all_events) {
    if (e.access_level <= clearance) events.push_back(std::move(e));
  }
  std::map<std::string, const MissionEvent*> event_by_id;
  for (const MissionEvent& e : events) event_by_id[e.id] = &e;

  HandoffDigest out;
  out.token_budget = r.token_budget;
  out.counter = std::string(counter_->name());
  out.clearance = clearance;
  out.load = load;

  DecisionFilter df;
  df.from = r.since;
  MSP_ASSIGN_OR_RETURN(std::vector<Decision> listed, ListDecisions(engine_, mission, df, asker));
  // A superseded decision is never served without its successor: it is
  // folded into the current decision that replaced it (fetched even when it
  // was decided before `since`), and left out when that one is not visible.
  std::vector<Decision> decisions;
  std::map<std::string, std::vector<const Decision*>> replaced;  // current id -> the ones it replaced
  std::deque<Decision> successors;  // fetched; stable addresses
  {
    std::map<std::string, const Decision*> by_id;
    for (const Decision& d : listed) by_id[d.id] = &d;
    std::map<std::string, std::string> current_of;  // superseded id -> current successor id ("" when hidden)
    for (const Decision& d : listed) {
      if (d.status != DecisionStatus::kSuperseded) continue;
      std::string next = d.superseded_by;
      std::set<std::string> seen{d.id};
      while (!next.empty() && seen.insert(next).second) {
        const Decision* n = nullptr;
        if (auto it = by_id.find(next); it != by_id.end()) {
          n = it->second;
        } else {
          Result<Decision> fetched = GetDecision(engine_, mission, next, asker);
          if (!fetched.ok()) {
            if (!fetched.status().IsNotFound()) return fetched.status();
            next.clear();
            break;
          }
          successors.push_back(std::move(fetched).value());
          n = &successors.back();
          by_id[n->id] = n;
        }
        if (n->status != DecisionStatus::kSuperseded) break;
        next = n->superseded_by;
      }
      current_of[d.id] = next;
    }
    std::set<std::string> added;
    for (const Decision& d : listed) {
      if (d.status == DecisionStatus::kSuperseded) continue;
      decisions.push_back(d);
      added.insert(d.id);
    }
    for (const Decision& d : successors) {
      if (d.status != DecisionStatus::kSuperseded && added.insert(d.id).second) decisions.push_back(d);
    }
    for (const Decision& d : listed) {
      auto it = current_of.find(d.id);
      if (it == current_of.end()) continue;
      if (it->second.empty()) {
        out.superseded_hidden.push_back(d.id);
      } else {
        replaced[it->second].push_back(&d);
      }
    }
  }

  CorrectionFilter cf;
  cf.operator_id = r.from_operator;
  MSP_ASSIGN_OR_RETURN(std::vector<Correction> corrections, ListCorrections(engine_, mission, cf, asker));


  std::vector<Pending> pending;
  auto cause_line = [&](const std::string& cause) {
    auto it = event_by_id.find(cause);
    if (it == event_by_id.end()) return "\n  caused by: " + cause;
    const MissionEvent& c = *it->second;
    return "\n  caused by: " + c.type + " " + c.id + " (" + OneLineText(c.text, kCauseLineChars) + ")";
  };

  // Open threats and questions (whenever they were raised).
  for (const MissionEvent& e : events) {
    if ((e.type != "threat" && e.type != "question") || resolved.count(e.id) != 0) continue;
    const bool threat = e.type == "threat";
    (threat ? out.open_threats : out.open_questions).push_back(e.id);
    Pending p;
    p.item.section = threat ? kThreats : kQuestions;
    p.item.head = "- " + std::string(CriticalityName(e.criticality)) + " · " + FenceLine(e.component) + " · from " +
                  std::string(kEventSource) + (IsTrustedSource(kEventSource, trusted_sources_) ? " · trusted" : " · untrusted") +
                  ": ";
    p.item.text = OneLineText(e.text, kOpenLineChars);
    p.item.tail = " (raised " + ShortTime(e.created_at) + " · id " + e.id + ")";
    p.item.order = 0;
    p.group = threat ? 0 : 1;  // open threats, then questions, before anything else
    p.crit = CritRank(e.criticality);
    p.at = e.created_at;
    p.id = e.id;
    p.kind = e.type;
    pending.push_back(std::move(p));
  }

  // Escalation.
  std::vector<ComponentEvent> component_events;
  for (const MissionEvent& e : events) component_events.push_back(ComponentEvent{e.component, e.created_at});
  out.escalating = DetectEscalation(component_events, now, options_);
  for (size_t i = 0; i < out.escalating.size(); ++i) {
    const Escalation& x = out.escalating[i];
    Pending p;
    p.item.section = kEscalating;
    p.item.head = "- " + x.component + ": ";
    p.item.text = std::to_string(x.recent) + " events in the last " + std::to_string(options_.escalation_window_min) +
                  " min, " + std::to_string(x.earlier) + " in the " + std::to_string(options_.escalation_window_min) +
                  " min before";
    p.item.order = i;
    p.group = 2;
    p.crit = static_cast<int>(out.escalating.size() - i);
    p.id = "escalation:" + x.component;
    p.kind = "escalation";
    pending.push_back(std::move(p));
  }

  // The timeline: decisions and events since, causes before effects.
  std::vector<TimelineNode> nodes;
  for (const Decision& d : decisions) {
    TimelineNode n{d.id, d.decided_at != 0 ? d.decided_at : d.created_at, {}};
    for (const ProvenanceRef& ref : d.provenance) {
      if (ref.type == "event") n.causes.push_back(ref.ref);
    }
    nodes.push_back(std::move(n));
  }
  const size_t first_event = nodes.size();
  std::vector<const MissionEvent*> window_events;
  for (const MissionEvent& e : events) {
    if (e.created_at < r.since) continue;
    TimelineNode n{e.id, e.created_at, {}};
    if (!e.cause_id.empty()) n.causes.push_back(e.cause_id);
    if (!e.resolves_id.empty()) n.causes.push_back(e.resolves_id);
    nodes.push_back(std::move(n));
    window_events.push_back(&e);
  }
  const std::vector<size_t> order = CausalOrder(nodes);
  std::vector<size_t> position(nodes.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Pending p;
    p.item.section = kTimeline;
    p.item.order = position[i];
    if (i < first_event) {
      const Decision& d = decisions[i];
      out.decisions.push_back(d.id);
      p.item.head = "- " + ShortTime(nodes[i].at) + " · decision" + (d.component.empty() ? "" : " · " + d.component) +
                    " · " + std::string(CriticalityName(d.criticality)) + " · " +
                    std::string(DecisionStatusName(d.status)) +
                    (d.decided_by.empty() ? "" : " (by " + OneLineText(d.decided_by, 60) + ")") +
                    (d.source.empty() ? "" : " · from " + FenceLine(d.source)) +
                    (IsTrustedSource(d.source, trusted_sources_) ? " · trusted" : " · untrusted") + ": ";
      // What it replaced leads, right under the title, so that an excerpt
      // keeps it.
      std::string body = DecisionBodyText(d);
      std::string replaces;
      for (const Decision* old : replaced[d.id]) {
        replaces += "\nReplaces (superseded): " + OneLineText(old->title, 200) + " · id " + old->id;
      }
      body.insert(std::min(body.find('\n'), body.size()), replaces);
      p.item.text = FenceBody(body);
      p.item.tail = "\n  provenance: " + ProvenanceText(d.provenance) + " · id " + d.id;
      for (const std::string& c : nodes[i].causes) p.item.tail += cause_line(c);
      p.group = 3;
      p.crit = CritRank(d.criticality);
      p.kind = "decision";
    } else {
      const MissionEvent& e = *window_events[i - first_event];
      p.item.head = "- " + ShortTime(e.created_at) + " · " + FenceLine(e.type) + " · " + FenceLine(e.component) +
                    " · " + std::string(CriticalityName(e.criticality)) + " · from " + std::string(kEventSource) +
                    (IsTrustedSource(kEventSource, trusted_sources_) ? " · trusted" : " · untrusted") + ": ";
      p.item.text = FenceBody(e.text);
      p.item.tail = " · id " + e.id;
      if (!e.cause_id.empty()) p.item.tail += cause_line(e.cause_id);
      if (!e.resolves_id.empty()) p.item.tail += "\n  resolves: " + e.resolves_id;
      p.group = 4;
      p.crit = CritRank(e.criticality);
      p.kind = "event";
    }
    p.at = nodes[i].at;
    p.id = nodes[i].id;
    pending.push_back(std::move(p));
  }

  // The predecessor's correction profile.
  std::map<std::string, int64_t> classes, components;
  for (const Correction& c : corrections) {
    classes[c.correction_class] += 1;
    if (!c.component.empty()) components[c.component] += 1;
  }
  out.correction_classes = TopCounts(classes);
  out.attention_components = TopCounts(components);
  {
    Pending p;
    p.item.section = kProfile;
    p.item.head = "- correction classes: ";
    p.item.text = CountList(out.correction_classes) + " (" + std::to_string(corrections.size()) + " corrections)";
    p.item.order = 0;
    p.group = 5;
    p.crit = 1;
    p.id = "profile:classes";
    p.kind = "profile";
    pending.push_back(p);
    p.item.head = "- components that drew attention: ";
    p.item.text = CountList(out.attention_components);
    p.item.order = 1;
    p.crit = 0;
    p.id = "profile:components";
    pending.push_back(std::move(p));
  }

  // Priority: group, then more critical, then newest.
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.crit != b.crit) return a.crit > b.crit;
    if (a.at != b.at) return a.at > b.at;
    return a.id < b.id;
  });

  DigestLayout layout;
  layout.sections.resize(kSectionCount);
  layout.sections[kThreats] = "## Unresolved threats";
  layout.sections[kQuestions] = "## Open questions";
  layout.sections[kEscalating] = "## Escalating";
  layout.sections[kTimeline] = "## Since " + (r.since == 0 ? std::string("the start") : ShortTime(r.since)) +
                               ": decisions and events, causes before effects";
  layout.sections[kProfile] = "## Correction profile of " + r.from_operator;
  layout.title = "# Handoff: mission " + r.mission.mission + ", " + r.from_operator + " → " + r.to_operator +
                 "\nbuilt " + ShortTime(now) + " · clearance " + std::to_string(clearance);
  if (load.degraded) {
    layout.title += "\n**Degraded mode**" +
                    std::string(load.mode == "degraded" ? " (set by hand: mission.degraded_mode = degraded)" : "") +
                    ": " + FormatScore(load.rate_per_min) + " events/min over " +
                    std::to_string(load.window_min) + " min > capacity " + FormatScore(load.capacity_per_min) +
                    "/min (alpha " + FormatScore(load.alpha) + ")";
  }
  for (const Pending& p : pending) layout.items.push_back(p.item);
  const std::string counter_name = out.counter;
  layout.footer = [&](const DigestTally& t) {
    std::string f = "---\n" + std::to_string(t.shown) + " items shown, " + std::to_string(t.left_out) +
                    " left out by the budget";
    if (t.truncated > 0) f += " (" + std::to_string(t.truncated) + " as an excerpt)";
    return f + " · " + std::to_string(t.tokens) + "/" + std::to_string(t.budget) + " tokens (counter " +
           counter_name + ")";
  };
  layout.short_footer = [&](const DigestTally& t) {
    return "handoff: budget " + std::to_string(t.budget) + " tokens too small, " + std::to_string(t.left_out) +
           " items left out";
  };
  const BuiltDigest built = BuildDigest(layout, static_cast<size_t>(r.token_budget), *counter_);
  out.markdown = built.markdown;
  out.tokens_used = built.tokens;
  out.left_out = built.tally.left_out;

  // The timeline as shown, in display order.
  std::vector<size_t> shown_timeline;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (built.shown[i] && pending[i].item.section == kTimeline) shown_timeline.push_back(i);
  }
  std::stable_sort(shown_timeline.begin(), shown_timeline.end(),
                   [&](size_t a, size_t b) { return pending[a].item.order < pending[b].item.order; });
  for (size_t i : shown_timeline) out.timeline.push_back(pending[i].id);

  // JSON: what the Markdown shows, plus the ids the budget left out.
  std::set<std::string> shown_ids;
  json left = json::array();
  for (size_t i = 0; i < pending.size(); ++i) {
    if (built.shown[i]) {
      shown_ids.insert(pending[i].kind + "/" + pending[i].id);
    } else {
      left.push_back({{"id", pending[i].id}, {"kind", pending[i].kind}});
    }
  }
  auto shown = [&](const std::string& kind, const std::string& id) { return shown_ids.count(kind + "/" + id) != 0; };
  json threats = json::array(), questions = json::array(), timeline = json::array(), escalating = json::array();
  for (const MissionEvent& e : events) {
    if (e.type == "threat" && shown("threat", e.id)) threats.push_back(EventToJson(e));
    if (e.type == "question" && shown("question", e.id)) questions.push_back(EventToJson(e));
  }
  for (const Escalation& x : out.escalating) {
    if (!shown("escalation", "escalation:" + x.component)) continue;
    escalating.push_back({{"component", x.component},
                          {"recent", x.recent},
                          {"earlier", x.earlier},
                          {"window_min", options_.escalation_window_min}});
  }
  for (size_t i : shown_timeline) {
    const Pending& p = pending[i];
    json node;
    if (p.kind == "decision") {
      auto d = std::find_if(decisions.begin(), decisions.end(), [&](const Decision& x) { return x.id == p.id; });
      node = {{"kind", "decision"}, {"decision", DecisionJson(*d)}};
      json replaces = json::array();
      for (const Decision* old : replaced[d->id]) replaces.push_back({{"id", old->id}, {"title", old->title}});
      node["replaces"] = replaces;
    } else {
      node = {{"kind", "event"}, {"event", EventToJson(*event_by_id.at(p.id))}};
    }
    json causes = json::array();
    for (const TimelineNode& n : nodes) {
      if (n.id == p.id) causes = n.causes;
    }
    node["causes"] = causes;
    timeline.push_back(std::move(node));
  }
  json profile{{"operator", r.from_operator}, {"corrections", corrections.size()}};
  json cls = json::array(), comps = json::array();
  if (shown("profile", "profile:classes")) {
    for (const CountedName& c : out.correction_classes) cls.push_back({{"name", c.name}, {"count", c.count}});
  }
  if (shown("profile", "profile:components")) {
    for (const CountedName& c : out.attention_components) comps.push_back({{"name", c.name}, {"count", c.count}});
  }
  profile["classes"] = cls;
  profile["components"] = comps;
  json load_json{{"active", load.degraded},          {"alpha", load.alpha},
                 {"rate_per_min", load.rate_per_min}, {"events_in_window", load.events_in_window},
                 {"window_min", load.window_min},     {"capacity_per_min", load.capacity_per_min}};
  const json j{{"mission", r.mission.mission},
               {"from_operator", r.from_operator},
               {"to_operator", r.to_operator},
               {"since", r.since == 0 ? json(nullptr) : json(FormatIso8601(r.since))},
               {"built_at", FormatIso8601(now)},
               {"clearance", clearance},
               {"token_budget", r.token_budget},
               {"tokens_used", built.tokens},
               {"counter", out.counter},
               {"degraded", load_json},
               {"open_threats", threats},
               {"open_questions", questions},
               {"escalating", escalating},
               {"timeline", timeline},
               {"superseded_hidden", out.superseded_hidden},
               {"correction_profile", profile},
               {"left_out", left},
               {"markdown", built.markdown}};
  out.json = DumpJson(j);
  return out;
}

}  // namespace msp
