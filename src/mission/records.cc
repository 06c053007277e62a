// Mission record formats: validation, Memory mapping, bodies and JSON.
#include "mission/records.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "codec/memory_json.h"
#include "mission/render.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

// ---- small text helpers

// Decodes the code point at s[*i] (valid UTF-8 assumed) and advances *i.
uint32_t NextCodePoint(std::string_view s, size_t* i) {
  const unsigned char c = static_cast<unsigned char>(s[*i]);
  int extra = 0;
  uint32_t cp = c;
  if (c >= 0xF0) {
    cp = c & 0x07;
    extra = 3;
  } else if (c >= 0xE0) {
    cp = c & 0x0F;
    extra = 2;
  } else if (c >= 0xC0) {
    cp = c & 0x1F;
    extra = 1;
  }
  ++*i;
  for (int k = 0; k < extra && *i < s.size(); ++k, ++*i) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[*i]) & 0x3F);
  }
  return cp;
}

// Unicode white space, separators, general punctuation and other code
// points that never belong in an identifier.
bool IsNonAsciiBreak(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || cp == 0x1680 || cp == 0x180E ||
         (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x3000 && cp <= 0x303F) || cp == 0xFEFF ||
         (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xFFF0 && cp <= 0xFFFF);
}

Status CheckUtf8(std::string_view field, std::string_view s) {
  size_t bad = 0;
  if (!IsValidUtf8(s, &bad)) {
    return Status::InvalidArgument(std::string(field) + ": invalid UTF-8 at byte " + std::to_string(bad));
  }
  return Status::Ok();
}

// True when `s` holds a control character other than \n, \r, \t (or, with
// !multiline, any control character at all).
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

// A one-line text field: valid UTF-8, no control characters, at most
// `max_chars` characters; `required` refuses an empty (or blank) value.
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

// A multi-line text field, at most `max_bytes` bytes.
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

// ---- the 128-bit hash behind deterministic ids

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::pair<uint64_t, uint64_t> Hash128(std::string_view s) {
  uint64_t a = 0xCBF29CE484222325ULL;
  uint64_t b = 0x84222325CBF29CE4ULL ^ s.size();
  for (unsigned char c : s) {
    a = (a ^ c) * 0x100000001B3ULL;
    b = Mix64(b ^ (c + 0x9E3779B97F4A7C15ULL));
  }
  return {Mix64(a ^ Mix64(b)), Mix64(b ^ (a * 0x9E3779B97F4A7C15ULL))};
}

// ---- JSON reading helpers (strict input)

Status TypeError(std::string_view field, std::string_view expected) {
  return Status::InvalidArgument(std::string(field) + ": expected " + std::string(expected));
}

Status ReadString(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return TypeError(key, "a string");
  *out = it->get<std::string>();
  return CheckUtf8(key, *out);
}

Status ReadInt(const json& j, const char* key, int* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer()) return TypeError(key, "an integer");
  const int64_t v = it->get<int64_t>();
  if (v < -1000000 || v > 1000000) return Status::InvalidArgument(std::string(key) + ": out of range");
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status ReadStrings(const json& j, const char* key, std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError(key, "an array of strings");
  out->clear();
  for (const json& v : *it) {
    if (!v.is_string()) return TypeError(key, "an array of strings");
    out->push_back(v.get<std::string>());
    MSP_RETURN_IF_ERROR(CheckUtf8(key, out->back()));
  }
  return Status::Ok();
}

Status ReadTime(const json& j, const char* key, TimeMs* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return TypeError(key, "an ISO 8601 time string");
  Result<TimeMs> t = ParseIso8601(it->get<std::string>());
  if (!t.ok()) return t.status().WithContext(key);
  *out = *t;
  return Status::Ok();
}

template <typename E>
Status ReadEnum(const json& j, const char* key, E* out, std::optional<E> (*parse)(std::string_view),
                std::string_view (*name)(E)) {
  std::string s;
  MSP_RETURN_IF_ERROR(ReadString(j, key, &s));
  if (s.empty()) return Status::Ok();
  std::optional<E> e = parse(s);
  if (!e) {
    return Status::InvalidArgument(std::string(key) + ": unknown value '" + s + "'; allowed: " + EnumNames(name));
  }
  *out = *e;
  return Status::Ok();
}

Status ReadProvenance(const json& j, const char* key, std::vector<ProvenanceRef>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError(key, "an array of {type, ref, detail}");
  out->clear();
  for (const json& v : *it) {
    if (!v.is_object()) return TypeError(key, "an array of {type, ref, detail}");
    ProvenanceRef r;
    for (auto f = v.begin(); f != v.end(); ++f) {
      if (f.key() != "type" && f.key() != "ref" && f.key() != "detail") {
        return Status::InvalidArgument(std::string(key) + ": unknown field '" + f.key() +
                                       "'; allowed: type, ref, detail");
      }
    }
    MSP_RETURN_IF_ERROR(ReadString(v, "type", &r.type));
    MSP_RETURN_IF_ERROR(ReadString(v, "ref", &r.ref));
    MSP_RETURN_IF_ERROR(ReadString(v, "detail", &r.detail));
    out->push_back(std::move(r));
  }
  return Status::Ok();
}

Status CheckKeys(const json& j, std::string_view what, const std::set<std::string>& allowed) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (allowed.count(it.key()) == 0) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Status::InvalidArgument(std::string(what) + ": unknown field '" + it.key() + "'; allowed: " + list);
    }
  }
  return Status::Ok();
}

json TimeJson(TimeMs t) { return t == 0 ? json(nullptr) : json(FormatIso8601(t)); }

// ---- lenient reading of stored bodies (fields may be missing; unknown
// fields are ignored, so that later additive fields do not break readers)

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

// Field names that could carry raw prompt or output text in a correction.
const std::set<std::string>& RawTextFields() {
  static const std::set<std::string> names = {
      "prompt", "output", "raw", "text", "content", "response", "completion", "input", "message",
      "messages", "diff", "code", "transcript", "before", "after", "original", "corrected",
      "details", "description", "note", "notes", "body", "answer", "question", "context"};
  return names;
}

}  // namespace

// ------------------------------------------------------------------ enums

std::string_view DecisionStatusName(DecisionStatus s) {
  switch (s) {
    case DecisionStatus::kProposed: return "proposed";
    case DecisionStatus::kAccepted: return "accepted";
    case DecisionStatus::kRejected: return "rejected";
    case DecisionStatus::kDeprecated: return "deprecated";
    case DecisionStatus::kSuperseded: return "superseded";
  }
  return "unknown";
}

std::optional<DecisionStatus> ParseDecisionStatus(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(DecisionStatus::kSuperseded); ++i) {
    if (DecisionStatusName(static_cast<DecisionStatus>(i)) == s) return static_cast<DecisionStatus>(i);
  }
  return std::nullopt;
}

std::string_view CorrectionOutcomeName(CorrectionOutcome o) {
  switch (o) {
    case CorrectionOutcome::kAccepted: return "accepted";
    case CorrectionOutcome::kRejected: return "rejected";
    case CorrectionOutcome::kModified: return "modified";
  }
  return "unknown";
}

std::optional<CorrectionOutcome> ParseCorrectionOutcome(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(CorrectionOutcome::kModified); ++i) {
    if (CorrectionOutcomeName(static_cast<CorrectionOutcome>(i)) == s) return static_cast<CorrectionOutcome>(i);
  }
  return std::nullopt;
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
  unsigned char b[16];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(hi >> (56 - 8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = static_cast<unsigned char>(lo >> (56 - 8 * i));
  b[6] = static_cast<unsigned char>(0x80 | (b[6] & 0x0F));  // version 8: custom
  b[8] = static_cast<unsigned char>(0x80 | (b[8] & 0x3F));  // RFC 4122 variant
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[b[i] >> 4]);
    out.push_back(kHex[b[i] & 0xF]);
  }
  return out;
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

size_t Utf8Chars(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

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

Status CheckSummary(std::string_view s) {
  MSP_RETURN_IF_ERROR(CheckUtf8("summary", s));
  if (Trimmed(s).empty()) return Status::InvalidArgument("summary is required (one sentence)");
  const std::string kWhy = "; corrections keep one-sentence summaries, never raw prompt or output text";
  if (s.find('\n') != std::string_view::npos || s.find('\r') != std::string_view::npos) {
    return Status::Refused("summary holds a line break" + kWhy);
  }
  if (HasControl(s, /*multiline=*/false)) return Status::Refused("summary holds a tab or control character" + kWhy);
  if (s.find("```") != std::string_view::npos || s.find("~~~") != std::string_view::npos) {
    return Status::Refused("summary holds a code fence" + kWhy);
  }
  if (Utf8Chars(s) > kMaxSummaryChars) {
    return Status::Refused("summary is " + std::to_string(Utf8Chars(s)) + " characters; the limit is " +
                           std::to_string(kMaxSummaryChars) + kWhy);
  }
  // A sentence end ('.', '!', '?', '…', '。') followed by white space and
  // more text means a second sentence.
  const std::string t = Trimmed(s);
  for (size_t i = 0; i < t.size();) {
    const size_t at = i;
    const uint32_t cp = NextCodePoint(t, &i);
    const bool end = cp == '.' || cp == '!' || cp == '?' || cp == 0x2026 || cp == 0x3002;
    if (!end) continue;
    size_t j = i;
    // Runs such as "?!" or "..." count as one end.
    while (j < t.size() && (t[j] == '.' || t[j] == '!' || t[j] == '?')) ++j;
    if (j < t.size() && t[j] == ' ') {
      return Status::Refused("summary has more than one sentence (a sentence ends at byte " + std::to_string(at) +
                             ")" + kWhy);
    }
  }
  return Status::Ok();
}

Status ValidateAccessLevel(int level, std::string_view field) {
  if (level < 0 || level > kMaxAccessLevel) {
    return Status::InvalidArgument(std::string(field) + " " + std::to_string(level) + " is outside 0.." +
                                   std::to_string(kMaxAccessLevel));
  }
  return Status::Ok();
}

Status ValidateDecision(const Decision& d) {
  MSP_RETURN_IF_ERROR(CheckLine("title", d.title, kMaxTitleChars, true));
  MSP_RETURN_IF_ERROR(CheckBlock("context", d.context, kMaxContextBytes, true));
  MSP_RETURN_IF_ERROR(CheckBlock("decision", d.decision, kMaxDecisionBytes, true));
  MSP_RETURN_IF_ERROR(CheckBlock("consequences", d.consequences, kMaxConsequencesBytes, false));
  size_t section_bytes = 0;
  for (size_t i = 0; i < d.sections.size(); ++i) {
    const std::string at = "sections[" + std::to_string(i) + "]";
    MSP_RETURN_IF_ERROR(CheckLine(at + ".heading", d.sections[i].heading, kMaxSectionHeadingChars, false));
    MSP_RETURN_IF_ERROR(CheckBlock(at + ".text", d.sections[i].text, kMaxSectionsBytes, false));
    section_bytes += d.sections[i].text.size();
  }
  if (section_bytes > kMaxSectionsBytes) {
    return Status::InvalidArgument("sections: " + std::to_string(section_bytes) + " bytes; the limit is " +
                                   std::to_string(kMaxSectionsBytes));
  }
  if (d.alternatives.size() > kMaxAlternatives) {
    return Status::InvalidArgument("alternatives: " + std::to_string(d.alternatives.size()) +
                                   " given; the limit is " + std::to_string(kMaxAlternatives));
  }
  for (size_t i = 0; i < d.alternatives.size(); ++i) {
    const std::string at = "alternatives[" + std::to_string(i) + "]";
    MSP_RETURN_IF_ERROR(CheckLine(at + ".option", d.alternatives[i].option, kMaxOptionChars, true));
    MSP_RETURN_IF_ERROR(CheckBlock(at + ".reason", d.alternatives[i].reason, kMaxReasonBytes, true));
  }
  if (d.principles.size() > kMaxPrinciplesCited) {
    return Status::InvalidArgument("principles: " + std::to_string(d.principles.size()) +
                                   " cited; the limit is " + std::to_string(kMaxPrinciplesCited));
  }
  std::set<std::string> seen;
  for (const std::string& p : d.principles) {
    if (!IsPrincipleId(p)) {
      return Status::InvalidArgument("principles: '" + p +
                                     "' is not a principle id (a letter, then letters, digits, '.', '_', '-'; "
                                     "at most 32)");
    }
    if (!seen.insert(p).second) return Status::InvalidArgument("principles: '" + p + "' is cited twice");
  }
  MSP_RETURN_IF_ERROR(CheckIdentifier("component", d.component, false));
  MSP_RETURN_IF_ERROR(CheckLine("decided_by", d.decided_by, kMaxLineChars, false));
  if (d.decided_at < 0) return Status::InvalidArgument("decided_at is negative");
  if (d.adr_number < 0) return Status::InvalidArgument("adr_number is negative");
  MSP_RETURN_IF_ERROR(ValidateAccessLevel(d.access_level));
  MSP_RETURN_IF_ERROR(CheckProvenance(d.provenance));
  return CheckTags(d.tags);
}

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

Status ValidateOperator(const OperatorRecord& op) {
  MSP_RETURN_IF_ERROR(CheckIdentifier("operator_id", op.operator_id, true));
  MSP_RETURN_IF_ERROR(ValidateAccessLevel(op.clearance, "clearance"));
  return CheckLine("name", op.name, kMaxLineChars, false);
}

Status ValidateCorrection(const Correction& c) {
  MSP_RETURN_IF_ERROR(CheckIdentifier("class", c.correction_class, true));
  MSP_RETURN_IF_ERROR(CheckIdentifier("category", c.category, true));
  MSP_RETURN_IF_ERROR(CheckIdentifier("component", c.component, true));
  MSP_RETURN_IF_ERROR(CheckSummary(c.summary));
  if (!c.retrieval_id.empty() && !IsUuid(c.retrieval_id)) {
    return Status::InvalidArgument("retrieval_id '" + c.retrieval_id +
                                   "' is not a retrieval id (a record id: 8-4-4-4-12 hex UUID)");
  }
  return ValidateAccessLevel(c.access_level);
}

// ------------------------------------------------------------------ bodies

json DecisionBody(const Decision& d) {
  json alts = json::array();
  for (const Alternative& a : d.alternatives) alts.push_back({{"option", a.option}, {"reason", a.reason}});
  json body = {{"type", kDecisionType},
               {"title", d.title},
               {"context", d.context},
               {"decision", d.decision},
               {"alternatives", alts},
               {"consequences", d.consequences},
               {"principles", d.principles},
               {"component", d.component},
               {"status", DecisionStatusName(d.status)},
               {"decided_by", d.decided_by},
               {"decided_at", TimeJson(d.decided_at)}};
  if (d.adr_number > 0) body["adr_number"] = d.adr_number;
  if (!d.sections.empty()) {
    json sections = json::array();
    for (const DecisionSection& s : d.sections) sections.push_back({{"heading", s.heading}, {"text", s.text}});
    body["sections"] = std::move(sections);
  }
  if (!d.revisions.empty()) {
    json revisions = json::array();
    for (const DecisionRevision& r : d.revisions) {
      json one = {{"revision", r.revision}, {"at", TimeJson(r.at)}, {"by", r.by}};
      if (!r.author.empty()) one["author"] = r.author;
      revisions.push_back(std::move(one));
    }
    body["revisions"] = std::move(revisions);
  }
  return body;
}

json PrincipleBody(const Principle& p) {
  return {{"type", kPrincipleType}, {"principle_id", p.principle_id}, {"statement", p.statement},
          {"rationale", p.rationale}, {"author", p.author},         {"version", p.version}};
}

json OperatorBody(const OperatorRecord& op) {
  return {{"type", kOperatorType}, {"operator_id", op.operator_id}, {"clearance", op.clearance}, {"name", op.name}};
}

json CorrectionBody(const Correction& c) {
  json body = {{"type", kCorrectionType},   {"class", c.correction_class},
               {"category", c.category},     {"component", c.component},
               {"outcome", CorrectionOutcomeName(c.outcome)}, {"summary", c.summary}};
  if (!c.retrieval_id.empty()) body["retrieval_id"] = c.retrieval_id;
  return body;
}

// ------------------------------------------------------------------- texts

std::string DecisionText(const Decision& d) {
  std::string t = "Decision: " + d.title + "\nContext: " + d.context + "\nDecision: " + d.decision;
  if (!d.alternatives.empty()) {
    t += "\nRejected alternatives:";
    for (const Alternative& a : d.alternatives) t += "\n- " + a.option + ": " + a.reason;
  }
  if (!d.consequences.empty() && !d.sections.empty()) t += "\nConsequences: " + d.consequences;
  for (const DecisionSection& s : d.sections) {
    t += s.heading.empty() ? "\n" + s.text : "\n" + s.heading + ": " + s.text;
  }
  return t;
}

std::string PrincipleText(const Principle& p) {
  std::string t = "Principle " + p.principle_id + " (v" + std::to_string(p.version) + "): " + p.statement;
  if (!p.rationale.empty()) t += "\nRationale: " + p.rationale;
  return t;
}

std::string OperatorText(const OperatorRecord& op) {
  std::string t = "Operator " + op.operator_id;
  if (!op.name.empty()) t += " (" + op.name + ")";
  return t + ": clearance " + std::to_string(op.clearance);
}

std::string CorrectionText(const Correction& c) {
  return "Correction " + c.correction_class + " / " + c.category + " on " + c.component + " (" +
         std::string(CorrectionOutcomeName(c.outcome)) + "): " + c.summary;
}

// -------------------------------------------------------- to / from Memory

Memory DecisionToMemory(const Namespace& scope, const Decision& d, std::string_view source) {
  Memory m;
  m.id = d.id;
  m.ns = MissionNamespace(scope);
  m.layer = Layer::kWorkflow;
  m.kind = Kind::kDecision;
  m.text = DecisionText(d);
  m.body_json = DecisionBody(d).dump();
  m.tags = d.tags;
  m.source = std::string(source);
  m.criticality = d.criticality;
  m.created_at = d.created_at;
  m.valid_at = d.decided_at;
  m.provenance = d.provenance;
  m.access_level = d.access_level;
  m.state = d.status == DecisionStatus::kSuperseded ? RecordState::kSuperseded : RecordState::kActive;
  m.supersedes = d.supersedes;
  m.superseded_by = d.superseded_by;
  return m;
}

Result<Decision> DecisionFromMemory(const Memory& m) {
  MSP_ASSIGN_OR_RETURN(json b, BodyOf(m, Kind::kDecision, kDecisionType));
  Decision d;
  d.id = m.id;
  d.title = BodyString(b, "title");
  d.context = BodyString(b, "context");
  d.decision = BodyString(b, "decision");
  if (auto it = b.find("alternatives"); it != b.end() && it->is_array()) {
    for (const json& a : *it) {
      if (!a.is_object()) continue;
      d.alternatives.push_back({BodyString(a, "option"), BodyString(a, "reason")});
    }
  }
  d.consequences = BodyString(b, "consequences");
  if (auto it = b.find("principles"); it != b.end() && it->is_array()) {
    for (const json& p : *it) {
      if (p.is_string()) d.principles.push_back(p.get<std::string>());
    }
  }
  d.component = BodyString(b, "component");
  d.criticality = m.criticality;
  if (std::optional<DecisionStatus> s = ParseDecisionStatus(BodyString(b, "status"))) d.status = *s;
  if (m.state == RecordState::kSuperseded) d.status = DecisionStatus::kSuperseded;
  d.decided_by = BodyString(b, "decided_by");
  if (const std::string at = BodyString(b, "decided_at"); !at.empty()) {
    Result<TimeMs> t = ParseIso8601(at);
    if (t.ok()) d.decided_at = *t;
  }
  if (d.decided_at == 0) d.decided_at = m.created_at;
  d.provenance = m.provenance;
  d.access_level = m.access_level;
  d.tags = m.tags;
  d.adr_number = static_cast<int>(BodyInt(b, "adr_number"));
  if (auto it = b.find("sections"); it != b.end() && it->is_array()) {
    for (const json& s : *it) {
      if (s.is_object()) d.sections.push_back({BodyString(s, "heading"), BodyString(s, "text")});
    }
  }
  if (auto it = b.find("revisions"); it != b.end() && it->is_array()) {
    for (const json& r : *it) {
      if (!r.is_object()) continue;
      DecisionRevision rev;
      rev.revision = static_cast<int>(BodyInt(r, "revision"));
      if (const std::string at = BodyString(r, "at"); !at.empty()) {
        Result<TimeMs> t = ParseIso8601(at);
        if (t.ok()) rev.at = *t;
      }
      rev.by = BodyString(r, "by");
      rev.author = BodyString(r, "author");
      d.revisions.push_back(std::move(rev));
    }
  }
  d.supersedes = m.supersedes;
  d.superseded_by = m.superseded_by;
  d.ns = m.ns;
  d.created_at = m.created_at;
  d.updated_at = m.updated_at;
  d.seq = m.seq;
  return d;
}

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

Memory CorrectionToMemory(const Namespace& scope, const Correction& c) {
  Memory m;
  m.ns = OperatorNamespace(scope);
  m.layer = Layer::kPractitioner;
  m.kind = Kind::kCorrection;
  m.text = CorrectionText(c);
  m.body_json = CorrectionBody(c).dump();
  m.source = std::string(kMissionSource);
  m.criticality = c.criticality;
  m.access_level = c.access_level;
  if (!c.retrieval_id.empty()) m.provenance.push_back({"retrieval", c.retrieval_id, ""});
  return m;
}

Result<Correction> CorrectionFromMemory(const Memory& m) {
  MSP_ASSIGN_OR_RETURN(json b, BodyOf(m, Kind::kCorrection, kCorrectionType));
  Correction c;
  c.correction_class = BodyString(b, "class");
  c.category = BodyString(b, "category");
  c.component = BodyString(b, "component");
  if (std::optional<CorrectionOutcome> o = ParseCorrectionOutcome(BodyString(b, "outcome"))) c.outcome = *o;
  c.summary = BodyString(b, "summary");
  c.retrieval_id = BodyString(b, "retrieval_id");
  c.criticality = m.criticality;
  c.access_level = m.access_level;
  c.id = m.id;
  c.operator_id = m.ns.operator_id;
  c.ns = m.ns;
  c.created_at = m.created_at;
  c.seq = m.seq;
  return c;
}

// ------------------------------------------------------------ JSON output

json DecisionToJson(const Decision& d) {
  json j = DecisionBody(d);
  j.erase("type");
  j["id"] = d.id;
  j["namespace"] = NamespaceToJson(d.ns);
  j["criticality"] = CriticalityName(d.criticality);
  j["access_level"] = d.access_level;
  j["provenance"] = ProvenanceJson(d.provenance);
  j["tags"] = d.tags;
  j["adr_number"] = d.adr_number;
  j["supersedes"] = d.supersedes;
  j["superseded_by"] = d.superseded_by;
  j["created_at"] = TimeJson(d.created_at);
  j["updated_at"] = TimeJson(d.updated_at);
  j["seq"] = d.seq;
  return j;
}

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

json CorrectionToJson(const Correction& c) {
  json j = CorrectionBody(c);
  j.erase("type");
  j["retrieval_id"] = c.retrieval_id;
  j["id"] = c.id;
  j["operator"] = c.operator_id;
  j["namespace"] = NamespaceToJson(c.ns);
  j["criticality"] = CriticalityName(c.criticality);
  j["access_level"] = c.access_level;
  j["created_at"] = TimeJson(c.created_at);
  j["seq"] = c.seq;
  return j;
}

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

// ------------------------------------------------------------- JSON input

Result<Decision> DecisionFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("decision: expected a JSON object");
  MSP_RETURN_IF_ERROR(CheckKeys(j, "decision",
                                {"title", "context", "decision", "alternatives", "consequences", "principles",
                                 "principle", "component", "criticality", "status", "decided_by", "decided_at",
                                 "provenance", "access_level", "tags"}));
  Decision d;
  MSP_RETURN_IF_ERROR(ReadString(j, "title", &d.title));
  MSP_RETURN_IF_ERROR(ReadString(j, "context", &d.context));
  MSP_RETURN_IF_ERROR(ReadString(j, "decision", &d.decision));
  MSP_RETURN_IF_ERROR(ReadString(j, "consequences", &d.consequences));
  if (auto it = j.find("alternatives"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return TypeError("alternatives", "an array of {option, reason}");
    for (const json& a : *it) {
      if (!a.is_object()) return TypeError("alternatives", "an array of {option, reason}");
      MSP_RETURN_IF_ERROR(CheckKeys(a, "alternatives", {"option", "reason"}));
      Alternative alt;
      MSP_RETURN_IF_ERROR(ReadString(a, "option", &alt.option));
      MSP_RETURN_IF_ERROR(ReadString(a, "reason", &alt.reason));
      d.alternatives.push_back(std::move(alt));
    }
  }
  MSP_RETURN_IF_ERROR(ReadStrings(j, "principles", &d.principles));
  std::string one;
  MSP_RETURN_IF_ERROR(ReadString(j, "principle", &one));
  if (!one.empty() && std::find(d.principles.begin(), d.principles.end(), one) == d.principles.end()) {
    d.principles.push_back(one);
  }
  MSP_RETURN_IF_ERROR(ReadString(j, "component", &d.component));
  MSP_RETURN_IF_ERROR(ReadEnum(j, "criticality", &d.criticality, &ParseCriticality, &CriticalityName));
  MSP_RETURN_IF_ERROR(ReadEnum(j, "status", &d.status, &ParseDecisionStatus, &DecisionStatusName));
  MSP_RETURN_IF_ERROR(ReadString(j, "decided_by", &d.decided_by));
  MSP_RETURN_IF_ERROR(ReadTime(j, "decided_at", &d.decided_at));
  MSP_RETURN_IF_ERROR(ReadProvenance(j, "provenance", &d.provenance));
  MSP_RETURN_IF_ERROR(ReadInt(j, "access_level", &d.access_level));
  MSP_RETURN_IF_ERROR(ReadStrings(j, "tags", &d.tags));
  return d;
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

Result<Correction> CorrectionFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("correction: expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = it.key();
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    if (RawTextFields().count(key) > 0) {
      return Status::Refused("correction field '" + it.key() +
                             "' refused: corrections store only a structured abstraction (class, category, "
                             "component, outcome, summary, retrieval_id), never raw prompt or output text");
    }
  }
  MSP_RETURN_IF_ERROR(CheckKeys(j, "correction",
                                {"class", "category", "component", "outcome", "summary", "retrieval_id",
                                 "criticality", "access_level"}));
  Correction c;
  MSP_RETURN_IF_ERROR(ReadString(j, "class", &c.correction_class));
  MSP_RETURN_IF_ERROR(ReadString(j, "category", &c.category));
  MSP_RETURN_IF_ERROR(ReadString(j, "component", &c.component));
  std::string outcome;
  MSP_RETURN_IF_ERROR(ReadString(j, "outcome", &outcome));
  if (outcome.empty()) return Status::InvalidArgument("outcome is required: accepted, rejected or modified");
  std::optional<CorrectionOutcome> o = ParseCorrectionOutcome(outcome);
  if (!o) return Status::InvalidArgument("outcome: unknown value '" + outcome + "'; allowed: accepted, rejected, modified");
  c.outcome = *o;
  MSP_RETURN_IF_ERROR(ReadString(j, "summary", &c.summary));
  MSP_RETURN_IF_ERROR(ReadString(j, "retrieval_id", &c.retrieval_id));
  MSP_RETURN_IF_ERROR(ReadEnum(j, "criticality", &c.criticality, &ParseCriticality, &CriticalityName));
  MSP_RETURN_IF_ERROR(ReadInt(j, "access_level", &c.access_level));
  return c;
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
