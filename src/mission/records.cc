// Mission record formats, the parts every record type shares: scopes and
// deterministic ids, the field rules, the lenient body readers, and the JSON
// of ADR import reports and mission events. Each record type's format is in
// records_<type>.cc, the strict JSON input in records_reader.cc.
#include "mission/records.h"

#include <cstdint>
#include <utility>

#include "codec/memory_json.h"
#include "mission/records_fields.h"
#include "util/hash.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

// Unicode white space, separators, general punctuation and other code
// points that never belong in an identifier.
bool IsNonAsciiBreak(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || cp == 0x1680 || cp == 0x180E ||
         (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x3000 && cp <= 0x303F) || cp == 0xFEFF ||
         (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xFFF0 && cp <= 0xFFFF);
}

}  // namespace

// ------------------------------------------------------------ field helpers

Status CheckUtf8(std::string_view field, std::string_view s) {
  size_t bad = 0;
  if (!IsValidUtf8(s, &bad)) {
    return Status::InvalidArgument(std::string(field) + ": invalid UTF-8 at byte " + std::to_string(bad));
  }
  return Status::Ok();
}

bool HasControl(std::string_view s, bool multiline) {
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == 0x7F) return true;
    if (c < 0x20) {
      if (!multiline) return true;
      if (c != '\n' && c != '\r' && c != '\t') return true;
    }
  }
  return false;
}

std::string Trimmed(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

Status CheckLine(std::string_view field, std::string_view s, size_t max_chars, bool required) {
  MSP_RETURN_IF_ERROR(CheckUtf8(field, s));
  if (required && Trimmed(s).empty()) return Status::InvalidArgument(std::string(field) + " is required");
  if (HasControl(s, /*multiline=*/false)) {
    return Status::InvalidArgument(std::string(field) + " must be one line (no newlines or control characters)");
  }
  if (Utf8Chars(s) > max_chars) {
    return Status::InvalidArgument(std::string(field) + " is " + std::to_string(Utf8Chars(s)) +
                                   " characters; the limit is " + std::to_string(max_chars));
  }
  return Status::Ok();
}

Status CheckBlock(std::string_view field, std::string_view s, size_t max_bytes, bool required) {
  MSP_RETURN_IF_ERROR(CheckUtf8(field, s));
  if (required && Trimmed(s).empty()) return Status::InvalidArgument(std::string(field) + " is required");
  if (HasControl(s, /*multiline=*/true)) {
    return Status::InvalidArgument(std::string(field) + " holds a control character");
  }
  if (s.size() > max_bytes) {
    return Status::InvalidArgument(std::string(field) + " is " + std::to_string(s.size()) +
                                   " bytes; the limit is " + std::to_string(max_bytes));
  }
  return Status::Ok();
}

Status CheckIdentifier(std::string_view field, std::string_view s, bool required) {
  if (s.empty()) {
    if (required) return Status::InvalidArgument(std::string(field) + " is required");
    return Status::Ok();
  }
  MSP_RETURN_IF_ERROR(CheckUtf8(field, s));
  if (!IsMissionIdentifier(s)) {
    return Status::InvalidArgument(std::string(field) + " '" + std::string(s) +
                                   "' is not an identifier: 1..64 characters, letters, digits and _-.:/ "
                                   "(no spaces)");
  }
  return Status::Ok();
}

Status CheckProvenance(const std::vector<ProvenanceRef>& refs) {
  for (size_t i = 0; i < refs.size(); ++i) {
    const std::string at = "provenance[" + std::to_string(i) + "]";
    MSP_RETURN_IF_ERROR(CheckIdentifier(at + ".type", refs[i].type, /*required=*/true));
    MSP_RETURN_IF_ERROR(CheckLine(at + ".ref", refs[i].ref, 2000, /*required=*/true));
    MSP_RETURN_IF_ERROR(CheckLine(at + ".detail", refs[i].detail, 500, /*required=*/false));
  }
  return Status::Ok();
}

Status CheckTags(const std::vector<std::string>& tags) {
  if (tags.size() > kMaxTags) {
    return Status::InvalidArgument("tags: " + std::to_string(tags.size()) + " tags; the limit is " +
                                   std::to_string(kMaxTags));
  }
  for (size_t i = 0; i < tags.size(); ++i) {
    MSP_RETURN_IF_ERROR(CheckLine("tags[" + std::to_string(i) + "]", tags[i], 100, /*required=*/true));
  }
  return Status::Ok();
}

json TimeJson(TimeMs t) { return t == 0 ? json(nullptr) : json(FormatIso8601(t)); }


std::string BodyString(const json& b, const char* key) {
  auto it = b.find(key);
  return it != b.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t BodyInt(const json& b, const char* key) {
  auto it = b.find(key);
  return it != b.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

Result<json> BodyOf(const Memory& m, Kind kind, std::string_view type) {
  if (m.kind != kind) {
    return Status::InvalidArgument("record " + m.id + " is a " + std::string(KindName(m.kind)) + ", not a " +
                                   std::string(type));
  }
  MSP_ASSIGN_OR_RETURN(json body, ParseJsonObject(m.body_json.empty() ? "{}" : m.body_json, "body"));
  if (BodyString(body, "type") != type) {
    return Status::InvalidArgument("record " + m.id + " has no " + std::string(type) + " body (body type '" +
                                   BodyString(body, "type") + "')");
  }
  return body;
}

// ------------------------------------------------------------ scopes, ids

Namespace MissionNamespace(const Namespace& scope) {
  Namespace ns;
  ns.tenant = scope.tenant;
  ns.mission = scope.mission;
  return ns;
}

Namespace OperatorNamespace(const Namespace& scope) {
  Namespace ns = MissionNamespace(scope);
  ns.operator_id = scope.operator_id;
  return ns;
}

Status RequireMission(const Namespace& scope) {
  if (scope.tenant.empty()) return Status::InvalidArgument("tenant is empty");
  if (scope.mission.empty()) return Status::InvalidArgument("mission records need a mission (--mission)");
  MSP_RETURN_IF_ERROR(CheckLine("mission", scope.mission, 200, true));
  return CheckLine("tenant", scope.tenant, 200, true);
}

std::string MissionRecordId(const Namespace& scope, std::initializer_list<std::string_view> parts) {
  std::string key = "msp-mission";
  key += '\x1f';
  key += scope.tenant;
  key += '\x1f';
  key += scope.mission;
  for (std::string_view p : parts) {
    key += '\x1f';
    key += p;
  }
  const auto [hi, lo] = Hash128(key);
  return HashUuid(hi, lo);
}

std::string PrincipleRecordId(const Namespace& scope, std::string_view principle_id, int version) {
  return MissionRecordId(scope, {"principle", principle_id, std::to_string(version)});
}

std::string OperatorRecordId(const Namespace& scope, std::string_view operator_id) {
  return MissionRecordId(scope, {"operator", operator_id});
}

std::string AdrRecordId(const Namespace& scope, std::string_view path) {
  return MissionRecordId(scope, {"adr", path});
}

// ------------------------------------------------------------ field rules

bool IsMissionIdentifier(std::string_view s) {
  if (s.empty() || !IsValidUtf8(s)) return false;
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = NextCodePoint(s, &i);
    ++chars;
    if (cp < 0x80) {
      const bool ok = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') ||
                      cp == '_' || cp == '-' || cp == '.' || cp == ':' || cp == '/';
      if (!ok) return false;
    } else if (IsNonAsciiBreak(cp)) {
      return false;
    }
  }
  return chars <= kMaxIdentifierChars;
}

bool IsPrincipleId(std::string_view s) {
  if (s.empty() || s.size() > kMaxPrincipleIdChars) return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Status ValidateAccessLevel(int level, std::string_view field) {
  if (level < 0 || level > kMaxAccessLevel) {
    return Status::InvalidArgument(std::string(field) + " " + std::to_string(level) + " is outside 0.." +
                                   std::to_string(kMaxAccessLevel));
  }
  return Status::Ok();
}

// ------------------------------------------------------------ JSON output

json AdrImportReportToJson(const AdrImportReport& r) {
  json entries = json::array();
  for (const AdrImportEntry& e : r.entries) {
    json one = {{"file", e.file}, {"id", e.id}, {"title", e.title}, {"action", e.action}};
    if (!e.error.empty()) one["error"] = e.error;
    entries.push_back(std::move(one));
  }
  return {{"entries", entries},       {"added", r.added},   {"updated", r.updated},
          {"unchanged", r.unchanged}, {"failed", r.failed}, {"warnings", r.warnings}};
}

nlohmann::json EventToJson(const MissionEvent& e) {
  return nlohmann::json{{"id", e.id},
                        {"type", e.type},
                        {"component", e.component},
                        {"criticality", CriticalityName(e.criticality)},
                        {"text", e.text},
                        {"cause", e.cause_id},
                        {"resolves", e.resolves_id},
                        {"operator", e.operator_id},
                        {"access_level", e.access_level},
                        {"created_at", FormatIso8601(e.created_at)}};
}

}  // namespace msp
