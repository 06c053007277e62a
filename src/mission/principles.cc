// The principles registry: versioned principles, edited with compare-and-swap.
//
// Each version is its own record with a deterministic id (mission, principle
// id, version). An edit of version N writes version N+1 with "must not exist
// yet" and marks version N superseded with "seq unchanged", in one Commit:
// two concurrent edits of version N (in any processes) race for the same new
// id, so exactly one lands and the other gets Conflict.
#include <algorithm>
#include <utility>

#include "mission/access.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp {
namespace {

std::string PrincipleTag(const std::string& principle_id) { return "principle:" + principle_id; }

Status CheckPrincipleId(const std::string& principle_id) {
  if (!IsPrincipleId(principle_id)) {
    return Status::InvalidArgument("'" + principle_id +
                                   "' is not a principle id: a letter, then letters, digits, '.', '_', '-' "
                                   "(at most 32), e.g. P-7");
  }
  return Status::Ok();
}

// Every stored version of `principle_id` (no clearance limit), by version.
Result<std::vector<Principle>> AllVersions(MemoryLayer& engine, const Namespace& ns, const std::string& principle_id,
                                          std::optional<int> clearance) {
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> all, ListAll(engine, ns, Kind::kPrinciple, clearance,
                                                        /*include_superseded=*/true, PrincipleTag(principle_id)));
  std::vector<Principle> out;
  for (const Memory& m : all) {
    Result<Principle> p = PrincipleFromMemory(m);
    if (!p.ok() || p->principle_id != principle_id) continue;
    out.push_back(std::move(p).value());
  }
  std::sort(out.begin(), out.end(), [](const Principle& a, const Principle& b) { return a.version < b.version; });
  return out;
}

// The current version number of `principle_id` (0 when there is none).
Result<int> CurrentVersion(MemoryLayer& engine, const Namespace& ns, const std::string& principle_id) {
  MSP_ASSIGN_OR_RETURN(std::vector<Principle> all, AllVersions(engine, ns, principle_id, std::nullopt));
  int current = 0;
  for (const Principle& p : all) {
    if (p.current) current = std::max(current, p.version);
  }
  if (current == 0 && !all.empty()) current = all.back().version;
  return current;
}

}  // namespace

Result<Principle> AddPrinciple(MemoryLayer& engine, const Namespace& scope, const Principle& p,
                               const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  const Namespace ns = MissionNamespace(scope);
  Principle first = p;
  first.version = 1;
  first.current = true;
  first.id.clear();
  first.created_at = 0;
  MSP_RETURN_IF_ERROR(ValidatePrinciple(first));
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {PrincipleToMemory(ns, first)};
  batch.expected_seq = {0};
  batch.actor = actor;
  batch.reason = "principle add " + first.principle_id;
  Result<std::vector<Memory>> stored = engine.Commit(batch);
  if (!stored.ok() && stored.status().code() == StatusCode::kConflict) {
    MSP_ASSIGN_OR_RETURN(int current, CurrentVersion(engine, ns, first.principle_id));
    return Status::AlreadyExists("principle " + first.principle_id + " already exists in mission '" + ns.mission +
                                 "' (current version " + std::to_string(current) +
                                 "); edit it naming that version (`msp principle edit " + first.principle_id +
                                 " --base-version " + std::to_string(current) + " ...`)");
  }
  if (!stored.ok()) return stored.status();
  return PrincipleFromMemory(stored->at(0));
}

Result<Principle> EditPrinciple(MemoryLayer& engine, const Namespace& scope, const PrincipleEdit& edit,
                                const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_RETURN_IF_ERROR(CheckPrincipleId(edit.principle_id));
  if (edit.base_version < 1) {
    return Status::InvalidArgument("base_version is required: the version the edit changes (see `msp principle show " +
                                   edit.principle_id + "`)");
  }
  const Namespace ns = MissionNamespace(scope);
  const std::string& pid = edit.principle_id;
  MSP_ASSIGN_OR_RETURN(std::optional<Memory> base_m,
                       FindRecord(engine, ns, PrincipleRecordId(ns, pid, edit.base_version)));
  if (!base_m || base_m->kind != Kind::kPrinciple) {
    MSP_ASSIGN_OR_RETURN(int current, CurrentVersion(engine, ns, pid));
    if (current == 0) return Status::NotFound("no principle " + pid + " in mission '" + ns.mission + "'");
    return Status::NotFound("principle " + pid + " has no version " + std::to_string(edit.base_version) +
                            "; the current version is " + std::to_string(current));
  }
  MSP_ASSIGN_OR_RETURN(Principle base, PrincipleFromMemory(*base_m));
  auto stale = [&]() -> Status {
    Result<int> current = CurrentVersion(engine, ns, pid);
    if (!current.ok()) return current.status();
    return Status::Conflict("principle " + pid + ": version " + std::to_string(edit.base_version) +
                            " was already edited; the current version is " + std::to_string(*current) +
                            " (re-read it and edit version " + std::to_string(*current) + ")");
  };
  if (!base.current) return stale();

  Principle next = base;
  next.version = base.version + 1;
  next.id.clear();
  next.current = true;
  next.created_at = 0;
  if (!edit.statement.empty()) next.statement = edit.statement;
  if (!edit.rationale.empty()) next.rationale = edit.rationale;
  next.author = edit.author;
  if (edit.access_level) next.access_level = *edit.access_level;
  MSP_RETURN_IF_ERROR(ValidatePrinciple(next));
  Memory next_m = PrincipleToMemory(ns, next);
  next_m.supersedes = base_m->id;

  Memory old_m = *base_m;
  old_m.state = RecordState::kSuperseded;
  old_m.superseded_by = next_m.id;

  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {next_m, old_m};
  batch.expected_seq = {0, base_m->seq};
  batch.actor = actor;
  batch.reason = "principle edit " + pid + " v" + std::to_string(base.version) + " -> v" +
                 std::to_string(next.version);
  Result<std::vector<Memory>> stored = engine.Commit(batch);
  if (!stored.ok() && stored.status().code() == StatusCode::kConflict) return stale();
  if (!stored.ok()) return stored.status();
  return PrincipleFromMemory(stored->at(0));
}

Result<Principle> GetPrinciple(MemoryLayer& engine, const Namespace& scope, const std::string& principle_id,
                               int version, const Asker& asker) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_RETURN_IF_ERROR(CheckPrincipleId(principle_id));
  if (version < 0) return Status::InvalidArgument("version must be >= 0 (0: the current one)");
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(engine, scope, asker));
  const Namespace ns = MissionNamespace(scope);
  if (version > 0) {
    MSP_ASSIGN_OR_RETURN(std::optional<Memory> m,
                         FindRecord(engine, ns, PrincipleRecordId(ns, principle_id, version)));
    if (!m || m->kind != Kind::kPrinciple || m->access_level > clearance) {
      return Status::NotFound("no principle " + principle_id + " version " + std::to_string(version) +
                              " in mission '" + ns.mission + "' visible at clearance " + std::to_string(clearance));
    }
    return PrincipleFromMemory(*m);
  }
  MSP_ASSIGN_OR_RETURN(std::vector<Principle> all, AllVersions(engine, ns, principle_id, std::nullopt));
  for (const Principle& p : all) {
    if (p.current && p.access_level <= clearance) return p;
  }
  return Status::NotFound("no principle " + principle_id + " in mission '" + ns.mission + "' visible at clearance " +
                          std::to_string(clearance));
}

Result<std::vector<Principle>> PrincipleVersions(MemoryLayer& engine, const Namespace& scope,
                                                 const std::string& principle_id, const Asker& asker) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_RETURN_IF_ERROR(CheckPrincipleId(principle_id));
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(engine, scope, asker));
  const Namespace ns = MissionNamespace(scope);
  MSP_ASSIGN_OR_RETURN(std::vector<Principle> all, AllVersions(engine, ns, principle_id, clearance));
  if (all.empty()) {
    return Status::NotFound("no principle " + principle_id + " in mission '" + ns.mission + "' visible at clearance " +
                            std::to_string(clearance));
  }
  return all;
}

Result<std::vector<Principle>> ListPrinciples(MemoryLayer& engine, const Namespace& scope, const Asker& asker) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(engine, scope, asker));
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> all, ListAll(engine, MissionNamespace(scope), Kind::kPrinciple, clearance,
                                                        /*include_superseded=*/false));
  std::vector<Principle> out;
  for (const Memory& m : all) {
    Result<Principle> p = PrincipleFromMemory(m);
    if (p.ok() && p->current) out.push_back(std::move(p).value());
  }
  std::sort(out.begin(), out.end(),
            [](const Principle& a, const Principle& b) { return a.principle_id < b.principle_id; });
  return out;
}

}  // namespace msp
