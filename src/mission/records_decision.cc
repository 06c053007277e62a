// The decision record format: its status names, validation, body, indexed
// text, Memory mapping and JSON (records.h).
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

// ------------------------------------------------------------------ status

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

// -------------------------------------------------------------- validation

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

// ----------------------------------------------------------- body and text

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
  d.source = m.source;
  d.updated_at = m.updated_at;
  d.seq = m.seq;
  return d;
}

// -------------------------------------------------------------------- JSON

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

}  // namespace msp
