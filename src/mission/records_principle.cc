// The principle record format: validation, body, indexed text, Memory
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

Status ValidatePrinciple(const Principle& p) {
  if (!IsPrincipleId(p.principle_id)) {
    return Status::InvalidArgument("principle_id '" + p.principle_id +
                                   "' is not a principle id: a letter, then letters, digits, '.', '_', '-' "
                                   "(at most 32), e.g. P-7");
  }
  MSP_RETURN_IF_ERROR(CheckBlock("statement", p.statement, kMaxStatementBytes, true));
  MSP_RETURN_IF_ERROR(CheckBlock("rationale", p.rationale, kMaxRationaleBytes, false));
  MSP_RETURN_IF_ERROR(CheckLine("author", p.author, kMaxLineChars, false));
  if (p.version < 1) return Status::InvalidArgument("version must be 1 or more");
  return ValidateAccessLevel(p.access_level);
}

// ----------------------------------------------------------- body and text

json PrincipleBody(const Principle& p) {
  return {{"type", kPrincipleType}, {"principle_id", p.principle_id}, {"statement", p.statement},
          {"rationale", p.rationale}, {"author", p.author},         {"version", p.version}};
}

std::string PrincipleText(const Principle& p) {
  std::string t = "Principle " + p.principle_id + " (v" + std::to_string(p.version) + "): " + p.statement;
  if (!p.rationale.empty()) t += "\nRationale: " + p.rationale;
  return t;
}

// -------------------------------------------------------- to / from Memory

Memory PrincipleToMemory(const Namespace& scope, const Principle& p) {
  Memory m;
  m.id = p.id.empty() ? PrincipleRecordId(scope, p.principle_id, p.version) : p.id;
  m.ns = MissionNamespace(scope);
  m.layer = Layer::kWorkflow;
  m.kind = Kind::kPrinciple;
  m.text = PrincipleText(p);
  m.body_json = PrincipleBody(p).dump();
  m.tags = {"principle:" + p.principle_id};
  m.source = std::string(kMissionSource);
  m.created_at = p.created_at;
  m.access_level = p.access_level;
  m.state = p.current ? RecordState::kActive : RecordState::kSuperseded;
  return m;
}

Result<Principle> PrincipleFromMemory(const Memory& m) {
  MSP_ASSIGN_OR_RETURN(json b, BodyOf(m, Kind::kPrinciple, kPrincipleType));
  Principle p;
  p.principle_id = BodyString(b, "principle_id");
  p.statement = BodyString(b, "statement");
  p.rationale = BodyString(b, "rationale");
  p.author = BodyString(b, "author");
  p.version = static_cast<int>(BodyInt(b, "version"));
  p.access_level = m.access_level;
  p.id = m.id;
  p.current = m.state == RecordState::kActive;
  p.ns = m.ns;
  p.created_at = m.created_at;
  p.updated_at = m.updated_at;
  p.seq = m.seq;
  return p;
}

// -------------------------------------------------------------------- JSON

json PrincipleToJson(const Principle& p) {
  json j = PrincipleBody(p);
  j.erase("type");
  j["id"] = p.id;
  j["current"] = p.current;
  j["namespace"] = NamespaceToJson(p.ns);
  j["access_level"] = p.access_level;
  j["created_at"] = TimeJson(p.created_at);
  j["updated_at"] = TimeJson(p.updated_at);
  j["seq"] = p.seq;
  return j;
}

Result<Principle> PrincipleFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("principle: expected a JSON object");
  MSP_RETURN_IF_ERROR(
      CheckKeys(j, "principle", {"principle_id", "statement", "rationale", "author", "access_level"}));
  Principle p;
  MSP_RETURN_IF_ERROR(ReadString(j, "principle_id", &p.principle_id));
  MSP_RETURN_IF_ERROR(ReadString(j, "statement", &p.statement));
  MSP_RETURN_IF_ERROR(ReadString(j, "rationale", &p.rationale));
  MSP_RETURN_IF_ERROR(ReadString(j, "author", &p.author));
  MSP_RETURN_IF_ERROR(ReadInt(j, "access_level", &p.access_level));
  return p;
}

}  // namespace msp
