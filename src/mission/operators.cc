// The operator registry: clearances per mission or tenant-wide.
#include <algorithm>
#include <map>

#include "mission/access.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp {
namespace {

Namespace TenantNamespace(const Namespace& scope) {
  Namespace ns;
  ns.tenant = scope.tenant;
  return ns;
}

Status CheckOperatorId(const std::string& operator_id) {
  if (!IsMissionIdentifier(operator_id)) {
    return Status::InvalidArgument("operator id '" + operator_id +
                                   "' is not an identifier: 1..64 characters, letters, digits and _-.:/");
  }
  return Status::Ok();
}

}  // namespace

Result<OperatorRecord> SetOperator(MemoryLayer& engine, const Namespace& scope, const OperatorRecord& op,
                                   const std::string& actor) {
  if (scope.tenant.empty()) return Status::InvalidArgument("tenant is empty");
  MSP_RETURN_IF_ERROR(ValidateOperator(op));
  const Namespace ns = MissionNamespace(scope);
  Memory m = OperatorToMemory(ns, op);
  MSP_ASSIGN_OR_RETURN(std::optional<Memory> old, FindRecord(engine, ns, m.id));
  if (old) m.created_at = old->created_at;
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {m};
  batch.actor = actor;
  batch.reason = "operator set " + op.operator_id + " clearance " + std::to_string(op.clearance);
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine.Commit(batch));
  return OperatorFromMemory(stored.at(0));
}

Result<OperatorRecord> GetOperator(MemoryLayer& engine, const Namespace& scope, const std::string& operator_id) {
  MSP_RETURN_IF_ERROR(CheckOperatorId(operator_id));
  const Namespace mission = MissionNamespace(scope);
  if (!mission.mission.empty()) {
    MSP_ASSIGN_OR_RETURN(std::optional<Memory> m, FindRecord(engine, mission, OperatorRecordId(mission, operator_id)));
    if (m) return OperatorFromMemory(*m);
  }
  const Namespace tenant = TenantNamespace(scope);
  MSP_ASSIGN_OR_RETURN(std::optional<Memory> m, FindRecord(engine, tenant, OperatorRecordId(tenant, operator_id)));
  if (m) return OperatorFromMemory(*m);
  return Status::NotFound("operator '" + operator_id + "' is not in the registry (clearance 0); set it with "
                          "`msp operator set " + operator_id + " --clearance N`");
}

Result<std::vector<OperatorRecord>> ListOperators(MemoryLayer& engine, const Namespace& scope) {
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> all, ListAll(engine, TenantNamespace(scope), Kind::kEntity, std::nullopt,
                                                        /*include_superseded=*/false, std::string(kOperatorTag)));
  std::map<std::string, OperatorRecord> by_id;
  for (const Memory& m : all) {
    if (!m.ns.mission.empty() && m.ns.mission != scope.mission) continue;
    Result<OperatorRecord> op = OperatorFromMemory(m);
    if (!op.ok()) continue;  // an entity that merely carries the tag
    auto it = by_id.find(op->operator_id);
    // A mission setting shadows the tenant-wide one.
    if (it == by_id.end() || !m.ns.mission.empty()) by_id[op->operator_id] = *op;
  }
  std::vector<OperatorRecord> out;
  for (auto& [id, op] : by_id) out.push_back(std::move(op));
  return out;
}

Result<int> ClearanceOf(MemoryLayer& engine, const Namespace& scope, const std::string& operator_id) {
  if (operator_id.empty()) return 0;
  Result<OperatorRecord> op = GetOperator(engine, scope, operator_id);
  if (op.ok()) return op->clearance;
  if (op.status().IsNotFound()) return 0;
  return op.status();
}

Result<int> ResolveClearance(MemoryLayer& engine, const Namespace& scope, const Asker& asker) {
  if (asker.clearance) {
    MSP_RETURN_IF_ERROR(ValidateAccessLevel(*asker.clearance, "clearance"));
    return *asker.clearance;
  }
  return ClearanceOf(engine, scope, asker.operator_id);
}

Result<Asker> CallerAsker(MemoryLayer& engine, const Namespace& scope, const Caller& caller,
                          const std::string& operator_id) {
  Asker asker;
  asker.operator_id = operator_id;
  int clearance = caller.clearance.value_or(kMaxAccessLevel);
  if (!operator_id.empty()) {
    MSP_ASSIGN_OR_RETURN(int registered, ClearanceOf(engine, scope, operator_id));
    clearance = std::min(clearance, registered);
  }
  asker.clearance = clearance;
  return asker;
}

}  // namespace msp
