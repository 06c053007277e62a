// Names, parsers and namespace rules for the public value types.
#include <array>
#include <utility>

#include "msp/types.h"

namespace msp {
namespace {

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, name] : table) {
    if (v == e) return name;
  }
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> Parse(const std::array<std::pair<E, std::string_view>, N>& table,
                       std::string_view s) {
  for (const auto& [v, name] : table) {
    if (name == s) return v;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<Kind, std::string_view>, 11> kKinds{{
    {Kind::kEpisode, "episode"},
    {Kind::kFact, "fact"},
    {Kind::kProcedure, "procedure"},
    {Kind::kDecision, "decision"},
    {Kind::kCorrection, "correction"},
    {Kind::kDocumentChunk, "document_chunk"},
    {Kind::kArtifact, "artifact"},
    {Kind::kPrinciple, "principle"},
    {Kind::kEntity, "entity"},
    {Kind::kRelation, "relation"},
    {Kind::kEvent, "event"},
}};
constexpr std::array<std::pair<Layer, std::string_view>, 6> kLayers{{
    {Layer::kEpisodic, "episodic"},
    {Layer::kSemantic, "semantic"},
    {Layer::kProcedural, "procedural"},
    {Layer::kDomain, "domain"},
    {Layer::kWorkflow, "workflow"},
    {Layer::kPractitioner, "practitioner"},
}};
constexpr std::array<std::pair<Sensitivity, std::string_view>, 3> kSensitivities{{
    {Sensitivity::kLow, "low"},
    {Sensitivity::kMedium, "medium"},
    {Sensitivity::kHigh, "high"},
}};
constexpr std::array<std::pair<Criticality, std::string_view>, 4> kCriticalities{{
    {Criticality::kLow, "low"},
    {Criticality::kNormal, "normal"},
    {Criticality::kHigh, "high"},
    {Criticality::kCritical, "critical"},
}};
constexpr std::array<std::pair<RecordState, std::string_view>, 2> kStates{{
    {RecordState::kActive, "active"},
    {RecordState::kSuperseded, "superseded"},
}};
constexpr std::array<std::pair<EpisodeType, std::string_view>, 5> kEpisodeTypes{{
    {EpisodeType::kUserMessage, "user_message"},
    {EpisodeType::kAgentResponse, "agent_response"},
    {EpisodeType::kToolCall, "tool_call"},
    {EpisodeType::kToolResult, "tool_result"},
    {EpisodeType::kObservation, "observation"},
}};
constexpr std::array<std::pair<AuditAction, std::string_view>, 8> kAuditActions{{
    {AuditAction::kWrite, "write"},
    {AuditAction::kRefuse, "refuse"},
    {AuditAction::kUpdate, "update"},
    {AuditAction::kMerge, "merge"},
    {AuditAction::kSupersede, "supersede"},
    {AuditAction::kDelete, "delete"},
    {AuditAction::kEvict, "evict"},
    {AuditAction::kImport, "import"},
}};

}  // namespace

std::string_view KindName(Kind k) { return NameOf(kKinds, k); }
std::string_view LayerName(Layer l) { return NameOf(kLayers, l); }
std::string_view SensitivityName(Sensitivity s) { return NameOf(kSensitivities, s); }
std::string_view CriticalityName(Criticality c) { return NameOf(kCriticalities, c); }
std::string_view RecordStateName(RecordState s) { return NameOf(kStates, s); }
std::string_view EpisodeTypeName(EpisodeType t) { return NameOf(kEpisodeTypes, t); }
std::string_view AuditActionName(AuditAction a) { return NameOf(kAuditActions, a); }
std::optional<Kind> ParseKind(std::string_view s) { return Parse(kKinds, s); }
std::vector<Kind> AllKinds() {
  std::vector<Kind> out;
  for (const auto& [k, name] : kKinds) out.push_back(k);
  return out;
}
std::optional<Layer> ParseLayer(std::string_view s) { return Parse(kLayers, s); }
std::optional<Sensitivity> ParseSensitivity(std::string_view s) { return Parse(kSensitivities, s); }
std::optional<Criticality> ParseCriticality(std::string_view s) { return Parse(kCriticalities, s); }
std::optional<RecordState> ParseRecordState(std::string_view s) { return Parse(kStates, s); }
std::optional<EpisodeType> ParseEpisodeType(std::string_view s) { return Parse(kEpisodeTypes, s); }
std::optional<AuditAction> ParseAuditAction(std::string_view s) { return Parse(kAuditActions, s); }

Layer DefaultLayer(Kind k) {
  switch (k) {
    case Kind::kEpisode: return Layer::kEpisodic;
    case Kind::kFact: return Layer::kSemantic;
    case Kind::kProcedure: return Layer::kProcedural;
    case Kind::kDocumentChunk: return Layer::kDomain;
    case Kind::kDecision:
    case Kind::kArtifact:
    case Kind::kPrinciple:
    case Kind::kEvent: return Layer::kWorkflow;
    case Kind::kEntity:
    case Kind::kRelation: return Layer::kSemantic;
    case Kind::kCorrection: return Layer::kPractitioner;
  }
  return Layer::kSemantic;
}

bool Namespace::Contains(const Namespace& r) const {
  auto part = [](const std::string& scope, const std::string& rec) {
    return scope.empty() || scope == rec;
  };
  return tenant == r.tenant && part(user, r.user) && part(agent, r.agent) &&
         part(session, r.session) && part(mission, r.mission) && part(operator_id, r.operator_id);
}

std::string Namespace::ToString() const {
  std::string out = "tenant=" + tenant;
  auto add = [&](const char* name, const std::string& v) {
    if (!v.empty()) out += std::string("/") + name + "=" + v;
  };
  add("user", user);
  add("agent", agent);
  add("session", session);
  add("mission", mission);
  add("operator", operator_id);
  return out;
}

}  // namespace msp
