// Corrections: per-operator structured abstractions, never raw text.
#include <algorithm>
#include <utility>

#include "mission/access.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp {
namespace {

std::string TrimSpaces(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

}  // namespace

Result<Correction> AddCorrection(MemoryLayer& engine, const Namespace& scope, const Correction& c,
                                 const std::string& actor) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (scope.operator_id.empty()) {
    return Status::InvalidArgument("a correction belongs to an operator: give one (--operator)");
  }
  if (!IsMissionIdentifier(scope.operator_id)) {
    return Status::InvalidArgument("operator id '" + scope.operator_id +
                                   "' is not an identifier: 1..64 characters, letters, digits and _-.:/");
  }
  Correction copy = c;
  copy.summary = TrimSpaces(copy.summary);
  MSP_RETURN_IF_ERROR(ValidateCorrection(copy));
  const Namespace ns = OperatorNamespace(scope);
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {CorrectionToMemory(ns, copy)};
  batch.actor = actor;
  batch.reason = "correction add";
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine.Commit(batch));
  return CorrectionFromMemory(stored.at(0));
}

Result<std::vector<Correction>> ListCorrections(MemoryLayer& engine, const Namespace& scope,
                                                const CorrectionFilter& filter, const Asker& asker) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (filter.limit < 0) return Status::InvalidArgument("limit must be >= 0");
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(engine, scope, asker));
  Namespace ns = MissionNamespace(scope);
  ns.operator_id = filter.operator_id;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> all,
                       ListAll(engine, ns, Kind::kCorrection, clearance, /*include_superseded=*/true));
  std::vector<Correction> out;
  for (const Memory& m : all) {
    Result<Correction> c = CorrectionFromMemory(m);
    if (!c.ok()) continue;
    if (!AnyOf(filter.components, c->component) || !AnyOf(filter.classes, c->correction_class) ||
        !AnyOf(filter.outcomes, c->outcome)) {
      continue;
    }
    if (!filter.retrieval_id.empty() && c->retrieval_id != filter.retrieval_id) continue;
    if (filter.from > 0 && c->created_at < filter.from) continue;
    if (filter.to > 0 && c->created_at >= filter.to) continue;
    out.push_back(std::move(c).value());
  }
  if (filter.newest_first) std::reverse(out.begin(), out.end());
  if (filter.limit > 0 && out.size() > static_cast<size_t>(filter.limit)) out.resize(filter.limit);
  return out;
}

Result<Correction> GetCorrection(MemoryLayer& engine, const Namespace& scope, const std::string& id,
                                 const Asker& asker) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  MSP_ASSIGN_OR_RETURN(int clearance, ResolveClearance(engine, scope, asker));
  MSP_ASSIGN_OR_RETURN(Memory m, GetVisible(engine, MissionNamespace(scope), id, Kind::kCorrection, clearance,
                                            "correction"));
  return CorrectionFromMemory(m);
}

}  // namespace msp
