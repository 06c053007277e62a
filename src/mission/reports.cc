// Usage marks, the retrieval-correction signal and redundancy (see
// msp/digest.h and docs/mission.md).
#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "mission/records.h"
#include "mission/retrieval_log.h"
#include "msp/digest.h"
#include "util/time.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

constexpr int kCasAttempts = 8;

double Share(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / whole : 0.0; }

void Finish(RedundancySession* s) {
  s->unused_share_tokens = Share(s->served_tokens - s->used_tokens, s->served_tokens);
  s->unused_share_count = Share(s->served_entries - s->used_entries, s->served_entries);
}

// Every correction of the mission, whatever its level (reports are an
// administrator's view).
Result<std::vector<Correction>> AllCorrections(MemoryLayer& engine, const Namespace& mission) {
  Asker admin;
  admin.clearance = kMaxAccessLevel;
  return ListCorrections(engine, MissionNamespace(mission), CorrectionFilter{}, admin);
}

}  // namespace

Result<MarkUsedResult> WorkflowMemory::MarkUsed(const Namespace& mission, const std::string& retrieval_id,
                                                const std::vector<std::string>& entry_ids, const std::string& actor,
                                                std::optional<int> clearance) {
  MSP_RETURN_IF_ERROR(RequireMission(mission));
  if (retrieval_id.empty()) return Status::InvalidArgument("retrieval id is empty");
  if (entry_ids.empty()) return Status::InvalidArgument("name at least one served entry to mark as used");
  const Namespace scope = MissionNamespace(mission);
  for (int attempt = 0;; ++attempt) {
    Result<Memory> got = engine_.Get(scope, retrieval_id);
    if (got.ok() && clearance && got->access_level > *clearance) {
      got = Status::NotFound("hidden");  // answered as if absent, below
    }
    if (!got.ok()) {
      if (got.status().IsNotFound()) {
        return Status::NotFound("no retrieval " + retrieval_id + " in mission " + mission.mission);
      }
      return got.status();
    }
    Memory m = std::move(got).value();
    if (!IsRetrievalLog(m)) return Status::InvalidArgument("record " + retrieval_id + " is not a retrieval log");
    MSP_ASSIGN_OR_RETURN(RetrievalLog log, RetrievalLogFromMemory(m));
    std::set<std::string> served;
    for (const ServedRef& s : log.served) served.insert(s.id);
    std::vector<std::string> used = log.used;
    bool changed = false;
    for (const std::string& id : entry_ids) {
      if (served.count(id) == 0) {
        return Status::InvalidArgument("entry " + id + " was not served by retrieval " + retrieval_id +
                                       " (it served " + std::to_string(served.size()) + " entries)");
      }
      if (std::find(used.begin(), used.end(), id) == used.end()) {
        used.push_back(id);
        changed = true;
      }
    }
    MarkUsedResult result;
    result.retrieval_id = retrieval_id;
    result.served = served.size();
    result.used = used;
    if (!changed) return result;
    MSP_ASSIGN_OR_RETURN(json body, ParseJsonObject(m.body_json, "retrieval log " + retrieval_id));
    body["used"] = used;
    m.body_json = body.dump();
    RecordBatch batch;
    batch.scope = scope;
    const int64_t seq = m.seq;
    batch.puts.push_back(std::move(m));
    batch.expected_seq = {seq};
    batch.actor = actor;
    batch.reason = "retrieval entries used";
    Result<std::vector<Memory>> stored = engine_.Commit(batch);
    if (stored.ok()) return result;
    if (stored.status().code() != StatusCode::kConflict || attempt + 1 >= kCasAttempts) return stored.status();
  }
}

Result<CorrectionsReport> WorkflowMemory::Corrections(const Namespace& mission, TimeMs from, TimeMs to) {
  MSP_RETURN_IF_ERROR(RequireMission(mission));
  MSP_ASSIGN_OR_RETURN(std::vector<RetrievalLog> logs, ListRetrievalLogs(engine_, mission, from, to));
  MSP_ASSIGN_OR_RETURN(std::vector<Correction> corrections, AllCorrections(engine_, mission));
  CorrectionsReport report;
  std::map<std::string, CorrectionWeek> weeks;
  std::map<std::string, std::string> week_of;  // retrieval id -> week
  for (const RetrievalLog& log : logs) {
    const std::string week = IsoWeek(log.created_at);
    weeks[week].week = week;
    weeks[week].retrievals += 1;
    week_of[log.id] = week;
  }
  report.retrievals = static_cast<int64_t>(logs.size());
  std::set<std::string> corrected;
  std::map<std::string, int64_t> by_component;
  for (const Correction& c : corrections) {
    auto it = c.retrieval_id.empty() ? week_of.end() : week_of.find(c.retrieval_id);
    if (it == week_of.end()) {
      const bool in_period = (from == 0 || c.created_at >= from) && (to == 0 || c.created_at < to);
      if (in_period) report.unlinked_corrections += 1;
      continue;
    }
    report.linked_corrections += 1;
    weeks[it->second].corrections += 1;
    if (corrected.insert(c.retrieval_id).second) weeks[it->second].corrected_retrievals += 1;
    by_component[c.component.empty() ? "(none)" : c.component] += 1;
  }
  for (auto& [name, w] : weeks) {
    w.rate = Share(w.corrections, w.retrievals);
    report.weeks.push_back(w);
  }
  for (const auto& [component, n] : by_component) {
    report.components.push_back(CorrectionComponent{component, n, Share(n, report.retrievals)});
  }
  std::stable_sort(report.components.begin(), report.components.end(),
                   [](const CorrectionComponent& a, const CorrectionComponent& b) {
                     return a.corrections > b.corrections;
                   });
  report.rate = Share(report.linked_corrections, report.retrievals);
  return report;
}

Result<int64_t> WorkflowMemory::ExportCorrectionPairs(const Namespace& mission, TimeMs from, TimeMs to,
                                                      std::ostream& out) {
  MSP_RETURN_IF_ERROR(RequireMission(mission));
  MSP_ASSIGN_OR_RETURN(std::vector<RetrievalLog> logs, ListRetrievalLogs(engine_, mission, from, to));
  MSP_ASSIGN_OR_RETURN(std::vector<Correction> corrections, AllCorrections(engine_, mission));
  std::map<std::string, const RetrievalLog*> by_id;
  for (const RetrievalLog& log : logs) by_id[log.id] = &log;
  std::stable_sort(corrections.begin(), corrections.end(), [](const Correction& a, const Correction& b) {
    return a.created_at < b.created_at;
  });
  const Namespace scope = MissionNamespace(mission);
  std::map<std::string, json> served_cache;  // retrieval id -> served array
  int64_t lines = 0;
  for (const Correction& c : corrections) {
    auto it = c.retrieval_id.empty() ? by_id.end() : by_id.find(c.retrieval_id);
    if (it == by_id.end()) continue;
    const RetrievalLog& log = *it->second;
    auto cached = served_cache.find(log.id);
    if (cached == served_cache.end()) {
      json served = json::array();
      for (const ServedRef& s : log.served) {
        json e{{"id", s.id}, {"layer", LayerName(s.layer)}, {"score", s.score}};
        Result<Memory> m = engine_.Get(scope, s.id);
        if (m.ok()) {
          e["kind"] = KindName(m->kind);
          e["text"] = m->text;
        } else if (m.status().IsNotFound()) {
          e["text"] = nullptr;
          e["missing"] = true;  // deleted since it was served
        } else {
          return m.status();
        }
        served.push_back(std::move(e));
      }
      cached = served_cache.emplace(log.id, std::move(served)).first;
    }
    const json line{{"retrieval_id", log.id},
                    {"query", log.query},
                    {"retrieved_at", FormatIso8601(log.created_at)},
                    {"week", IsoWeek(log.created_at)},
                    {"served", cached->second},
                    {"corrected_to",
                     {{"id", c.id},
                      {"class", c.correction_class},
                      {"category", c.category},
                      {"component", c.component},
                      {"outcome", CorrectionOutcomeName(c.outcome)},
                      {"summary", c.summary},
                      {"operator", c.operator_id},
                      {"created_at", FormatIso8601(c.created_at)}}}};
    out << DumpJson(line) << "\n";
    if (!out) return Status::IoError("cannot write the correction pairs");
    ++lines;
  }
  return lines;
}

Result<RedundancyReport> WorkflowMemory::Redundancy(const Namespace& mission, TimeMs from, TimeMs to) {
  MSP_RETURN_IF_ERROR(RequireMission(mission));
  MSP_ASSIGN_OR_RETURN(std::vector<RetrievalLog> logs, ListRetrievalLogs(engine_, mission, from, to));
  RedundancyReport report;
  report.counter = std::string(counter_->name());
  std::map<std::string, RedundancySession> sessions;
  for (const RetrievalLog& log : logs) {
    RedundancySession& s = sessions[log.ns.session];
    s.session = log.ns.session;
    s.retrievals += 1;
    const std::set<std::string> used(log.used.begin(), log.used.end());
    bool marked = false;
    for (const ServedRef& e : log.served) {
      s.served_entries += 1;
      s.served_tokens += e.tokens;
      if (used.count(e.id) != 0) {
        s.used_entries += 1;
        s.used_tokens += e.tokens;
        marked = true;
      }
    }
    if (marked) s.marked_retrievals += 1;
  }
  for (auto& [id, s] : sessions) {
    Finish(&s);
    report.total.retrievals += s.retrievals;
    report.total.marked_retrievals += s.marked_retrievals;
    report.total.served_entries += s.served_entries;
    report.total.used_entries += s.used_entries;
    report.total.served_tokens += s.served_tokens;
    report.total.used_tokens += s.used_tokens;
    report.sessions.push_back(s);
  }
  Finish(&report.total);
  return report;
}

}  // namespace msp
