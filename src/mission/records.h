// Mission record formats: how decisions, principles, operators and
// corrections (include/msp/mission.h) map to msp Memory records and their
// JSON bodies, their validation, and their JSON for the CLI / REST / MCP.
//
// Internal header (nlohmann::json allowed). Nothing here touches the store.
//
// Bodies (Memory::body_json; every body has "type"; documented in
// docs/mission.md):
//   decision   {type:"decision", title, context, decision,
//               alternatives:[{option, reason}], consequences,
//               principles:[id], component, status, decided_by,
//               decided_at (ISO 8601 or null), adr_number (only when > 0)}
//              criticality, access_level, provenance, tags, supersedes,
//              superseded_by live on the Memory (not repeated in the body);
//              Memory::state is superseded exactly when status is.
//   principle  {type:"principle", principle_id, statement, rationale,
//               author, version}
//              Memory::state superseded for versions replaced by an edit,
//              linked by supersedes / superseded_by.
//   operator   {type:"operator", operator_id, clearance, name}
//   correction {type:"correction", class, category, component, outcome,
//               summary, retrieval_id (only when set)}
//              the operator is Memory::ns.operator_id.
// Text (Memory::text, what is indexed): a readable rendering, see the
// *Text functions.
#ifndef MSP_MISSION_RECORDS_H_
#define MSP_MISSION_RECORDS_H_

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "msp/digest.h"
#include "msp/mission.h"
#include "msp/status.h"
#include "msp/types.h"
#include "util/utf8.h"

namespace msp {

// Body "type" values.
inline constexpr std::string_view kDecisionType = "decision";
inline constexpr std::string_view kPrincipleType = "principle";
inline constexpr std::string_view kOperatorType = "operator";
inline constexpr std::string_view kCorrectionType = "correction";
// The tag every operator record carries (operator records are Kind::kEntity).
inline constexpr std::string_view kOperatorTag = "msp:operator";

// Sources written on the records.
inline constexpr std::string_view kMissionSource = "operator";   // API / CLI writes
inline constexpr std::string_view kAdrSource = "import";          // ADR import

// Limits (bytes unless said otherwise).
inline constexpr size_t kMaxTitleChars = 200;
inline constexpr size_t kMaxContextBytes = 12000;
inline constexpr size_t kMaxDecisionBytes = 8000;
inline constexpr size_t kMaxConsequencesBytes = 12000;
inline constexpr size_t kMaxAlternatives = 32;
inline constexpr size_t kMaxSectionsBytes = 1 << 20;    // all further sections together
inline constexpr size_t kMaxSectionHeadingChars = 300;
inline constexpr size_t kMaxOptionChars = 200;
inline constexpr size_t kMaxReasonBytes = 2000;
inline constexpr size_t kMaxPrinciplesCited = 16;
inline constexpr size_t kMaxLineChars = 200;   // decided_by, author, operator name
inline constexpr size_t kMaxStatementBytes = 2000;
inline constexpr size_t kMaxRationaleBytes = 8000;
inline constexpr size_t kMaxIdentifierChars = 64;
inline constexpr size_t kMaxPrincipleIdChars = 32;
inline constexpr size_t kMaxSummaryChars = 200;
inline constexpr size_t kMaxTags = 32;

// ---- scopes and ids

// {tenant, mission} of `scope` (other parts cleared).
Namespace MissionNamespace(const Namespace& scope);
// {tenant, mission, operator_id} of `scope`.
Namespace OperatorNamespace(const Namespace& scope);
// InvalidArgument "mission records need a mission (--mission)" when empty;
// also checks tenant and mission are valid UTF-8 without control characters.
Status RequireMission(const Namespace& scope);

// A deterministic record id (UUID-shaped, version nibble 8) for `parts`
// under the tenant and mission of `scope`: the same inputs always give the
// same id, different inputs different ids (a 128-bit hash).
std::string MissionRecordId(const Namespace& scope, std::initializer_list<std::string_view> parts);
// The id of version `version` of principle `principle_id`.
std::string PrincipleRecordId(const Namespace& scope, std::string_view principle_id, int version);
// The id of the operator record (mission-wide when scope.mission is set,
// tenant-wide otherwise).
std::string OperatorRecordId(const Namespace& scope, std::string_view operator_id);
// The id of the decision imported from the ADR file at absolute path `path`.
std::string AdrRecordId(const Namespace& scope, std::string_view path);

// ---- field rules

// Characters in valid UTF-8: Utf8Chars (util/utf8.h).
// True for a principle id: an ASCII letter, then ASCII letters, digits,
// '.', '_', '-'; 1..32 characters.
bool IsPrincipleId(std::string_view s);
// OK when `s` is one sentence for a correction summary (see mission.h);
// otherwise Refused naming the rule.
Status CheckSummary(std::string_view s);

// Structural validation of what a caller hands in; messages name the field.
Status ValidateDecision(const Decision& d);
Status ValidatePrinciple(const Principle& p);
Status ValidateOperator(const OperatorRecord& op);
Status ValidateCorrection(const Correction& c);
Status ValidateAccessLevel(int level, std::string_view field = "access_level");

// ---- records <-> memories (From*Memory are declared in mission.h)

// The Memory to store for `d` under `scope` (ns {tenant, mission}; id,
// created_at, supersede links and state copied from `d`).
Memory DecisionToMemory(const Namespace& scope, const Decision& d, std::string_view source);
Memory PrincipleToMemory(const Namespace& scope, const Principle& p);
Memory OperatorToMemory(const Namespace& scope, const OperatorRecord& op);
Memory CorrectionToMemory(const Namespace& scope, const Correction& c);

// The bodies alone.
nlohmann::json DecisionBody(const Decision& d);
nlohmann::json PrincipleBody(const Principle& p);
nlohmann::json OperatorBody(const OperatorRecord& op);
nlohmann::json CorrectionBody(const Correction& c);

// Indexed text:
//   "Decision: <title>\nContext: <context>\nDecision: <decision>\n
//    Rejected alternatives:\n- <option>: <reason>\n..."
//   "Principle <id> (v<version>): <statement>\nRationale: <rationale>"
//   "Operator <id> (<name>): clearance <n>"
//   "Correction <class> / <category> on <component> (<outcome>): <summary>"
std::string DecisionText(const Decision& d);
std::string PrincipleText(const Principle& p);
std::string OperatorText(const OperatorRecord& op);
std::string CorrectionText(const Correction& c);

// ---- JSON for the faces (CLI --json, REST, MCP)

// Output: the body fields plus id, namespace, criticality, access_level,
// provenance [{type,ref,detail}], tags, supersedes, superseded_by,
// created_at, updated_at (decisions); id, current, namespace, access_level,
// created_at, updated_at (principles); id, operator, namespace,
// criticality, access_level, created_at (corrections).
nlohmann::json DecisionToJson(const Decision& d);
nlohmann::json PrincipleToJson(const Principle& p);
nlohmann::json OperatorToJson(const OperatorRecord& op);
nlohmann::json CorrectionToJson(const Correction& c);
nlohmann::json AdrImportReportToJson(const AdrImportReport& r);
// id, type, component, criticality, text, cause, resolves, operator,
// access_level, created_at (ISO 8601).
nlohmann::json EventToJson(const MissionEvent& e);

// Input (e.g. `msp decision add` with a JSON body on stdin). Strict: unknown
// fields and wrong types are InvalidArgument naming the field. Accepted keys:
//   decision:   title, context, decision, alternatives [{option, reason}],
//               consequences, principles [id] (or principle: id), component,
//               criticality, status, decided_by, decided_at (ISO 8601),
//               provenance [{type, ref, detail}], access_level, tags
//   principle:  principle_id, statement, rationale, author, access_level
//   correction: class, category, component, outcome, summary, retrieval_id,
//               criticality, access_level. A field that could carry raw
//               text ("prompt", "output", "raw", "text", "content", ...) is
//               Refused, any other unknown field InvalidArgument.
Result<Decision> DecisionFromJson(const nlohmann::json& j);
Result<Principle> PrincipleFromJson(const nlohmann::json& j);
Result<Correction> CorrectionFromJson(const nlohmann::json& j);

}  // namespace msp

#endif  // MSP_MISSION_RECORDS_H_
