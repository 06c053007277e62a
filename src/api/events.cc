// The declarations of a mission's event operations (docs/mission.md):
// event_add and event_list (msp event add / list, POST / GET /v1/events,
// the MCP tools of those names), over WorkflowMemory (msp/digest.h). Every
// face reads events as the same asker (CallerAsker, as decisions.cc): an
// event above that clearance is not listed; writing one above the caller's
// clearance is refused by the engine (msp/caller.h).
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "mission/records.h"
#include "msp/digest.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

// The event types a caller may store (IsEventType), as an enum so that
// every face lists them and refuses another naming the field.
enum class EventKind { kIncident, kAlert, kQuestion, kThreat, kChange, kResolution };

constexpr std::string_view kEventKindNames[] = {"incident", "alert", "question", "threat", "change", "resolution"};

std::string_view EventKindName(EventKind k) {
  const auto i = static_cast<size_t>(k);
  return i < std::size(kEventKindNames) ? kEventKindNames[i] : "unknown";
}

std::optional<EventKind> ParseEventKind(std::string_view name) {
  for (size_t i = 0; i < std::size(kEventKindNames); ++i) {
    if (kEventKindNames[i] == name) return static_cast<EventKind>(i);
  }
  return std::nullopt;
}

struct EventAddRequest {
  Namespace scope;
  EventKind type = EventKind::kIncident;
  std::string component;
  Criticality criticality = Criticality::kNormal;
  std::string text;
  std::string cause;
  std::string resolves;
  int access_level = 0;
  std::vector<std::string> tags;
};

struct EventListRequest {
  Namespace scope;
  TimeMs created_from = 0;
  TimeMs created_to = 0;
};

Status CheckEventAdd(const EventAddRequest& r) { return NeedMission(r.scope, "events"); }

Status CheckEventList(const EventListRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "events"));
  if (r.created_from != 0 && r.created_to != 0 && r.created_to <= r.created_from) {
    return Status::InvalidArgument("field 'created_to' must be later than 'created_from'");
  }
  return Status::Ok();
}

Result<WorkflowMemory*> EventsWorkflow(const CallContext& context) {
  if (!context.workflow) return Status::Unavailable("mission events are not set up on this face");
  return context.workflow();
}

Result<json> HandleEventAdd(const CallContext& context, EventAddRequest& r) {
  EventRequest e;
  e.mission = r.scope;
  e.operator_id = r.scope.operator_id;
  e.type = std::string(EventKindName(r.type));
  e.component = r.component;
  e.criticality = r.criticality;
  e.text = r.text;
  e.cause_id = r.cause;
  e.resolves_id = r.resolves;
  e.access_level = r.access_level;
  e.tags = r.tags;
  e.actor = context.caller.actor;
  MSP_ASSIGN_OR_RETURN(WorkflowMemory * wm, EventsWorkflow(context));
  MSP_ASSIGN_OR_RETURN(MissionEvent stored, wm->AddEvent(e));
  return EventToJson(stored);
}

Result<json> HandleEventList(const CallContext& context, EventListRequest& r) {
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(*context.engine, r.scope, context.caller, r.scope.operator_id));
  Namespace mission = r.scope;
  mission.operator_id.clear();
  MSP_ASSIGN_OR_RETURN(WorkflowMemory * wm, EventsWorkflow(context));
  MSP_ASSIGN_OR_RETURN(std::vector<MissionEvent> events,
                       wm->Events(mission, r.created_from, r.created_to, asker.clearance));
  json out = json::array();
  for (const MissionEvent& e : events) out.push_back(EventToJson(e));
  return json{{"events", std::move(out)}};
}

// An event as both operations answer it (EventToJson).
json MissionEventSchema() {
  return {{"type", "object"},
          {"properties",
           {{"id", TypedSchema("string", "The event's id.")},
            {"type", {{"type", "string"}, {"enum", EnumValues(&EventKindName)}, {"description", "What happened."}}},
            {"component", TypedSchema("string", "The component it concerns.")},
            {"criticality", TypedSchema("string", "low, normal, high or critical.")},
            {"text", TypedSchema("string", "What happened, in words.")},
            {"cause", TypedSchema("string", "The event that caused it (\"\": none).")},
            {"resolves", TypedSchema("string", "The question or threat it resolves (\"\": none).")},
            {"operator", TypedSchema("string", "Who reported it (\"\": nobody named).")},
            {"access_level", TypedSchema("integer", "Readable by clearance this or above.")},
            {"created_at", TimeOrNullSchema("When it was stored (ISO 8601).")}}},
          {"required", {"id", "type", "component", "criticality", "text", "created_at"}}};
}

}  // namespace

std::unique_ptr<Operation> EventAddOperation() {
  using F = Fields<EventAddRequest>;
  Declaration<EventAddRequest> d;
  d.info = {
      .name = "event_add",
      .title = "Record a mission event",
      .summary = "Record what happened in the mission: an incident, alert, question, threat, change or resolution "
                 "of a component, reported by namespace.operator (optional). cause names the event that caused "
                 "it and resolves the question or threat it closes (both events of the mission). Events drive the "
                 "mission's load (report_load), the handoff digest and the workflow layer of "
                 "workflow_memory_query.",
      .cli_verb = "event add",
      .rest_method = "POST",
      .rest_path = "/v1/events",
      .mcp_tool = "event_add",
      .rest_status = 201,
      .example = {{"text", "The nightly ledger export failed: the archive bucket refused the upload."},
                  {"type", "incident"},
                  {"component", "billing"},
                  {"criticality", "high"},
                  {"namespace", {{"mission", "m1"}, {"operator", "ann"}}}},
      .answer = "event: {id, type, component, criticality, text, cause, resolves, operator, access_level, created_at}",
      .answer_schema = MissionEventSchema,
  };
  Field<EventAddRequest> type =
      F::Enum({.name = "type", .doc = "What happened.", .required = true}, &ParseEventKind, &EventKindName,
              [](EventAddRequest& r) -> auto& { return r.type; });
  type.show = [](EventAddRequest&) { return json(); };  // required: no default
  d.fields = {
      F::Text({.name = "text",
               .doc = "What happened, in words (at most 8,000 bytes).",
               .required = true,
               .cli = CliForm::kPositional},
              [](EventAddRequest& r) -> auto& { return r.text; }),
      MissionScopeField<EventAddRequest>(),
      std::move(type),
      F::Text({.name = "component", .doc = "The component it concerns, an identifier.", .required = true},
              [](EventAddRequest& r) -> auto& { return r.component; }),
      F::Enum({.name = "criticality", .doc = "How much it matters."}, &ParseCriticality, &CriticalityName,
              [](EventAddRequest& r) -> auto& { return r.criticality; }),
      F::String({.name = "cause", .doc = "The id of the mission event that caused this one."},
                [](EventAddRequest& r) -> auto& { return r.cause; }),
      F::String({.name = "resolves", .doc = "The id of the question or threat event this one resolves."},
                [](EventAddRequest& r) -> auto& { return r.resolves; }),
      F::Int({.name = "access_level", .doc = "Readable by clearance this or above."}, 0, kMaxAccessLevel,
             [](EventAddRequest& r) -> auto& { return r.access_level; }),
      F::Strings({.name = "tags", .doc = "Tags of the event.", .flag = "--tag"},
                 [](EventAddRequest& r) -> auto& { return r.tags; }),
  };
  d.check = &CheckEventAdd;
  d.handle = &HandleEventAdd;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> EventListOperation() {
  using F = Fields<EventListRequest>;
  Declaration<EventListRequest> d;
  d.info = {
      .name = "event_list",
      .title = "List mission events",
      .summary = "The mission's events the asker may read (namespace.operator at their clearance, else the "
                 "caller), oldest first, created in [created_from, created_to) when given.",
      .cli_verb = "event list",
      .rest_method = "GET",
      .rest_path = "/v1/events",
      .mcp_tool = "event_list",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}},
                  {"created_from", "2026-11-01T00:00:00Z"},
                  {"created_to", "2026-12-01T00:00:00Z"}},
      .answer = "{events: [event]}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"events", {{"type", "array"}, {"items", MissionEventSchema()}, {"description", "Oldest first."}}}}},
                        {"required", {"events"}}},
  };
  d.fields = {
      MissionScopeField<EventListRequest>(),
      F::Time({.name = "created_from", .doc = "Created at or after (ISO 8601).", .flag = "--since", .param_alias = "from"},
              [](EventListRequest& r) -> auto& { return r.created_from; }),
      F::Time({.name = "created_to", .doc = "Created before (ISO 8601).", .flag = "--until", .param_alias = "to"},
              [](EventListRequest& r) -> auto& { return r.created_to; }),
  };
  d.check = &CheckEventList;
  d.handle = &HandleEventList;
  return Declare(std::move(d));
}

}  // namespace msp::api
