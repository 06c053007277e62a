// The operator record format: validation, body, indexed text, Memory
// mapping and JSON (records.h).
#include "mission/records.h"

#include <algorithm>
#include <set>
#include <utility>

#include "codec/memory_json.h"
#include "mission/records_fields.h"
#include "mission/records_reader.h"
#include "mission/render.h"
#include "util/time.h"

namespace msp {
namespace {

using json = nlohmann::json;

}  // namespace

// -------------------------------------------------------------- validation

Status ValidateOperator(const OperatorRecord& op) {
  MSP_RETURN_IF_ERROR(CheckIdentifier("operator_id", op.operator_id, true));
  MSP_RETURN_IF_ERROR(ValidateAccessLevel(op.clearance, "clearance"));
  return CheckLine("name", op.name, kMaxLineChars, false);
}

// ----------------------------------------------------------- body and text

json OperatorBody(const OperatorRecord& op) {
  return {{"type", kOperatorType}, {"operator_id", op.operator_id}, {"clearance", op.clearance}, {"name", op.name}};
}

std::string OperatorText(const OperatorRecord& op) {
  std::string t = "Operator " + op.operator_id;
  if (!op.name.empty()) t += " (" + op.name + ")";
  return t + ": clearance " + std::to_string(op.clearance);
}

// -------------------------------------------------------- to / from Memory

Memory OperatorToMemory(const Namespace& scope, const OperatorRecord& op) {
  Memory m;
  Namespace ns;
  ns.tenant = scope.tenant;
  ns.mission = scope.mission;
  m.id = OperatorRecordId(ns, op.operator_id);
  m.ns = ns;
  m.layer = Layer::kSemantic;
  m.kind = Kind::kEntity;
  m.text = OperatorText(op);
  m.body_json = OperatorBody(op).dump();
  m.tags = {std::string(kOperatorTag)};
  m.source = std::string(kMissionSource);
  m.access_level = 0;
  return m;
}

Result<OperatorRecord> OperatorFromMemory(const Memory& m) {
  MSP_ASSIGN_OR_RETURN(json b, BodyOf(m, Kind::kEntity, kOperatorType));
  OperatorRecord op;
  op.operator_id = BodyString(b, "operator_id");
  op.clearance = static_cast<int>(std::clamp<int64_t>(BodyInt(b, "clearance"), 0, kMaxAccessLevel));
  op.name = BodyString(b, "name");
  op.id = m.id;
  op.ns = m.ns;
  op.updated_at = m.updated_at;
  op.seq = m.seq;
  return op;
}

// -------------------------------------------------------------------- JSON

json OperatorToJson(const OperatorRecord& op) {
  json j = OperatorBody(op);
  j.erase("type");
  j["id"] = op.id;
  j["scope"] = op.ns.mission.empty() ? "tenant" : "mission";
  j["namespace"] = NamespaceToJson(op.ns);
  j["updated_at"] = TimeJson(op.updated_at);
  j["seq"] = op.seq;
  return j;
}

}  // namespace msp
