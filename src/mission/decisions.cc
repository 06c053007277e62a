// Decision records: add, read under a clearance, list, change status,
// supersede.
#include <algorithm>
#include <utility>

#include "mission/access.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp {
namespace {

bool Matches(const Decision& d, const DecisionFilter& f) {
  if (!AnyOf(f.components, d.component)) return false;
  if (!AnyOf(f.statuses, d.status)) return false;
  if (!AnyOf(f.criticalities, d.criticality)) return false;
  if (f.from > 0 && d.decided_at < f.from) return false;
  if (f.to > 0 && d.decided_at >= f.to) return false;
  return true;
}

// Rewrites the decision-owned parts of stored record `m` from `d`, keeping
// the record's other fields (confidence, access counts, ...).
void Refresh(Memory* m, const Decision& d) {
  m->text = DecisionText(d);
  m->body_json = DecisionBody(d).dump();
  m->state = d.status == DecisionStatus::kSuperseded ? RecordState::kSuperseded : RecordState::kActive;
  m->supersedes = d.supersedes;
  m->superseded_by = d.superseded_by;
}

}  // namespace

Result<Decision> AddDecision(MemoryLayer& engine, const Namespace& scope, const Decision& d,
                             const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (!d.id.empty() || !d.supersedes.empty() || !d.superseded_by.empty()) {
    return Status::InvalidArgument(
        "a new decision has no id or supersede links (they are assigned; use SupersedeDecision)");
  }
  if (d.status == DecisionStatus::kSuperseded) {
    return Status::InvalidArgument("a new decision cannot be superseded; add it, then supersede it by its successor");
  }
  MSP_RETURN_IF_ERROR(ValidateDecision(d));
  const Namespace ns = MissionNamespace(scope);
  for (const std::string& p : d.principles) {
    MSP_ASSIGN_OR_RETURN(std::optional<Memory> first, FindRecord(engine, ns, PrincipleRecordId(ns, p, 1)));
    if (!first || first->kind != Kind::kPrinciple) {
      return Status::InvalidArgument("principles: '" + p + "' is not in the registry of mission '" + ns.mission +
                                     "'; add it first (`msp principle add " + p + " ...`)");
    }
  }
  Decision copy = d;
  copy.created_at = 0;
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {DecisionToMemory(ns, copy, kMissionSource)};
  batch.actor = actor;
  batch.reason = "decision add";
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine.Commit(batch));
  return DecisionFromMemory(stored.at(0));
}

Result<Decision> GetDecision(MemoryLayer& engine, const Namespace& scope, const std::string& id,
                             const Asker& asker) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(engine, scope, asker));
  MSP_ASSIGN_OR_RETURN(Memory m, GetVisible(engine, MissionNamespace(scope), id, Kind::kDecision, clearance,
                                            "decision"));
  return DecisionFromMemory(m);
}

Result<std::vector<Decision>> ListDecisions(MemoryLayer& engine, const Namespace& scope,
                                            const DecisionFilter& filter, const Asker& asker) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (filter.limit < 0) return Status::InvalidArgument("limit must be >= 0");
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(engine, scope, asker));
  const Namespace ns = MissionNamespace(scope);
  std::vector<Decision> out;
  if (!filter.query.empty()) {
    RetrieveRequest req;
    req.scope = ns;
    req.query = filter.query;
    req.top_k = std::clamp(std::max(filter.limit, 10) * 5, 10, 1000);
    req.filter.kinds = {Kind::kDecision};
    req.filter.criticalities = filter.criticalities;
    req.filter.include_superseded = AnyOf(filter.statuses, DecisionStatus::kSuperseded) && !filter.statuses.empty();
    req.filter.max_access_level = clearance;
    req.record_access = false;
    MSP_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, engine.Retrieve(req));
    for (const SearchHit& h : hits) {
      if (h.memory.access_level > clearance) continue;
      Result<Decision> d = DecisionFromMemory(h.memory);
      if (!d.ok() || !Matches(*d, filter)) continue;
      out.push_back(std::move(d).value());
    }
  } else {
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> all,
                         ListAll(engine, ns, Kind::kDecision, clearance, /*include_superseded=*/true));
    for (const Memory& m : all) {
      Result<Decision> d = DecisionFromMemory(m);
      if (!d.ok() || !Matches(*d, filter)) continue;
      out.push_back(std::move(d).value());
    }
    std::stable_sort(out.begin(), out.end(), [&](const Decision& a, const Decision& b) {
      if (a.decided_at != b.decided_at) {
        return filter.newest_first ? a.decided_at > b.decided_at : a.decided_at < b.decided_at;
      }
      return filter.newest_first ? a.created_at > b.created_at : a.created_at < b.created_at;
    });
  }
  if (filter.limit > 0 && out.size() > static_cast<size_t>(filter.limit)) out.resize(filter.limit);
  return out;
}

Result<Decision> SetDecisionStatus(MemoryLayer& engine, const Namespace& scope, const std::string& id,
                                   DecisionStatus status, const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (status == DecisionStatus::kSuperseded) {
    return Status::InvalidArgument("a decision becomes superseded only by its successor: "
                                   "`msp decision supersede OLD --by NEW`");
  }
  const Namespace ns = MissionNamespace(scope);
  MSP_ASSIGN_OR_RETURN(Memory m, GetVisible(engine, ns, id, Kind::kDecision, std::nullopt, "decision"));
  MSP_ASSIGN_OR_RETURN(Decision d, DecisionFromMemory(m));
  if (d.status == DecisionStatus::kSuperseded) {
    return Status::FailedPrecondition("decision " + id + " is superseded by " + d.superseded_by +
                                      "; a superseded decision keeps its status");
  }
  d.status = status;
  Refresh(&m, d);
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {m};
  batch.expected_seq = {m.seq};
  batch.actor = actor;
  batch.reason = "decision status " + std::string(DecisionStatusName(status));
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine.Commit(batch));
  return DecisionFromMemory(stored.at(0));
}

Result<SupersedeResult> SupersedeDecision(MemoryLayer& engine, const Namespace& scope, const std::string& old_id,
                                          const std::string& new_id, const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (old_id == new_id) return Status::InvalidArgument("a decision cannot supersede itself (" + old_id + ")");
  const Namespace ns = MissionNamespace(scope);
  MSP_ASSIGN_OR_RETURN(Memory old_m, GetVisible(engine, ns, old_id, Kind::kDecision, std::nullopt, "decision"));
  MSP_ASSIGN_OR_RETURN(Memory new_m, GetVisible(engine, ns, new_id, Kind::kDecision, std::nullopt, "decision"));
  MSP_ASSIGN_OR_RETURN(Decision old_d, DecisionFromMemory(old_m));
  MSP_ASSIGN_OR_RETURN(Decision new_d, DecisionFromMemory(new_m));
  if (old_d.status == DecisionStatus::kSuperseded) {
    return Status::FailedPrecondition("decision " + old_id + " is already superseded by " +
                                      (old_d.superseded_by.empty() ? std::string("another decision")
                                                                   : old_d.superseded_by));
  }
  if (new_d.status == DecisionStatus::kSuperseded) {
    return Status::FailedPrecondition("decision " + new_id + " is itself superseded by " + new_d.superseded_by +
                                      "; supersede by the current decision");
  }
  old_d.status = DecisionStatus::kSuperseded;
  old_d.superseded_by = new_id;
  // A decision that replaces several names the first in `supersedes`; each
  // old one names it in superseded_by.
  if (new_d.supersedes.empty()) new_d.supersedes = old_id;
  Refresh(&old_m, old_d);
  Refresh(&new_m, new_d);
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {old_m, new_m};
  batch.expected_seq = {old_m.seq, new_m.seq};
  batch.actor = actor;
  batch.reason = "decision supersede";
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine.Commit(batch));
  MSP_ASSIGN_OR_RETURN(Decision o, DecisionFromMemory(stored.at(0)));
  MSP_ASSIGN_OR_RETURN(Decision n, DecisionFromMemory(stored.at(1)));
  return SupersedeResult{std::move(o), std::move(n)};
}

}  // namespace msp
