// The correction record format: its outcome names, the one-sentence summary
// rule, validation, body, indexed text, Memory mapping and JSON, with the
// refusal of fields that could carry raw prompt or output text (records.h).
#include "mission/records.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "codec/memory_json.h"
#include "mission/records_fields.h"
#include "mission/records_reader.h"
#include "mission/render.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

// Field names that could carry raw prompt or output text in a correction.
const std::set<std::string>& RawTextFields() {
  static const std::set<std::string> names = {
      "prompt", "output", "raw", "text", "content", "response", "completion", "input", "message",
      "messages", "diff", "code", "transcript", "before", "after", "original", "corrected",
      "details", "description", "note", "notes", "body", "answer", "question", "context"};
  return names;
}

}  // namespace

// ----------------------------------------------------------------- outcome

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

// -------------------------------------------------------------- validation

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

// ----------------------------------------------------------- body and text

json CorrectionBody(const Correction& c) {
  json body = {{"type", kCorrectionType},   {"class", c.correction_class},
               {"category", c.category},     {"component", c.component},
               {"outcome", CorrectionOutcomeName(c.outcome)}, {"summary", c.summary}};
  if (!c.retrieval_id.empty()) body["retrieval_id"] = c.retrieval_id;
  return body;
}

std::string CorrectionText(const Correction& c) {
  return "Correction " + c.correction_class + " / " + c.category + " on " + c.component + " (" +
         std::string(CorrectionOutcomeName(c.outcome)) + "): " + c.summary;
}

// -------------------------------------------------------- to / from Memory

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

// -------------------------------------------------------------------- JSON

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

}  // namespace msp
