// The declarations of a mission's reports (docs/mission.md): report_load,
// report_corrections, report_correction_pairs and report_redundancy (msp
// report load / corrections / correction-pairs / redundancy, GET
// /v1/reports/..., the MCP tools of those names), over WorkflowMemory
// (msp/digest.h). Every report is read as the same asker on every face
// (CallerAsker: namespace.operator at their clearance capped by the
// caller's, else the caller): it counts only the records that asker may
// read, and says at which clearance it was made. (The push orchestrator's
// plan, GET /v1/reports/plan and msp orchestrate --plan, is not declared
// here: it reads the orchestrate.* settings, which no call context holds.)
#include <sstream>

#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "msp/caller.h"
#include "msp/digest.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

struct LoadReportRequest {
  Namespace scope;
};

// A report over the retrievals logged (and corrections created) in
// [created_from, created_to).
struct PeriodReportRequest {
  Namespace scope;
  TimeMs created_from = 0;
  TimeMs created_to = 0;
};

Status CheckLoadReport(const LoadReportRequest& r) { return NeedMission(r.scope, "reports"); }

Status CheckPeriodReport(const PeriodReportRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "reports"));
  if (r.created_from != 0 && r.created_to != 0 && r.created_to <= r.created_from) {
    return Status::InvalidArgument("field 'created_to' must be later than 'created_from'");
  }
  return Status::Ok();
}

Result<WorkflowMemory*> ReportsWorkflow(const CallContext& context) {
  if (!context.workflow) return Status::Unavailable("mission reports are not set up on this face");
  return context.workflow();
}

// The mission interface as the asker: over a layer at the asker's
// clearance on top of the caller's, so that the engine leaves out what the
// asker may not read.
struct AskerView {
  int clearance = 0;
  Namespace mission;  // tenant and mission only
  std::unique_ptr<MemoryLayer> layer;
  std::unique_ptr<WorkflowMemory> memory;
};

Result<AskerView> ViewAsAsker(const CallContext& context, const Namespace& scope) {
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(*context.engine, scope, context.caller, scope.operator_id));
  MSP_ASSIGN_OR_RETURN(WorkflowMemory * wm, ReportsWorkflow(context));
  AskerView view;
  view.clearance = *asker.clearance;
  view.mission.tenant = scope.tenant;
  view.mission.mission = scope.mission;
  Caller as_asker = context.caller;
  as_asker.clearance = view.clearance;
  view.layer = AsCaller(*context.engine, as_asker);
  view.memory = wm->Over(*view.layer);
  return view;
}

Result<json> HandleLoadReport(const CallContext& context, LoadReportRequest& r) {
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(*context.engine, r.scope, context.caller, r.scope.operator_id));
  Namespace mission;
  mission.tenant = r.scope.tenant;
  mission.mission = r.scope.mission;
  MSP_ASSIGN_OR_RETURN(WorkflowMemory * wm, ReportsWorkflow(context));
  MSP_ASSIGN_OR_RETURN(LoadState load, wm->Load(mission, asker.clearance));
  return json{{"rate_per_min", load.rate_per_min},
              {"events_in_window", load.events_in_window},
              {"window_min", load.window_min},
              {"capacity_per_min", load.capacity_per_min},
              {"alpha", load.alpha},
              {"degraded", load.degraded},
              {"mode", load.mode},
              {"clearance", *asker.clearance}};
}

Result<json> HandleCorrectionsReport(const CallContext& context, PeriodReportRequest& r) {
  MSP_ASSIGN_OR_RETURN(AskerView view, ViewAsAsker(context, r.scope));
  MSP_ASSIGN_OR_RETURN(CorrectionsReport c, view.memory->Corrections(view.mission, r.created_from, r.created_to));
  json weeks = json::array(), components = json::array();
  for (const CorrectionWeek& w : c.weeks) {
    weeks.push_back({{"week", w.week},
                     {"retrievals", w.retrievals},
                     {"corrections", w.corrections},
                     {"corrected_retrievals", w.corrected_retrievals},
                     {"rate", w.rate}});
  }
  for (const CorrectionComponent& k : c.components) {
    components.push_back({{"component", k.component}, {"corrections", k.corrections}, {"rate", k.rate}});
  }
  return json{{"weeks", std::move(weeks)},
              {"components", std::move(components)},
              {"retrievals", c.retrievals},
              {"linked_corrections", c.linked_corrections},
              {"unlinked_corrections", c.unlinked_corrections},
              {"rate", c.rate},
              {"clearance", view.clearance}};
}

Result<json> HandleCorrectionPairs(const CallContext& context, PeriodReportRequest& r) {
  MSP_ASSIGN_OR_RETURN(AskerView view, ViewAsAsker(context, r.scope));
  std::ostringstream lines;
  MSP_RETURN_IF_ERROR(
      view.memory->ExportCorrectionPairs(view.mission, r.created_from, r.created_to, lines).status());
  json pairs = json::array();
  std::istringstream in(lines.str());
  for (std::string line; std::getline(in, line);) {
    json pair = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!pair.is_object()) return Status::Internal("a correction pair's JSON does not parse");
    pairs.push_back(std::move(pair));
  }
  return json{{"pairs", std::move(pairs)}, {"clearance", view.clearance}};
}

json RedundancySessionJson(const RedundancySession& s) {
  return {{"session", s.session},
          {"retrievals", s.retrievals},
          {"marked_retrievals", s.marked_retrievals},
          {"served_entries", s.served_entries},
          {"used_entries", s.used_entries},
          {"served_tokens", s.served_tokens},
          {"used_tokens", s.used_tokens},
          {"unused_share_tokens", s.unused_share_tokens},
          {"unused_share_count", s.unused_share_count}};
}

Result<json> HandleRedundancyReport(const CallContext& context, PeriodReportRequest& r) {
  MSP_ASSIGN_OR_RETURN(AskerView view, ViewAsAsker(context, r.scope));
  MSP_ASSIGN_OR_RETURN(RedundancyReport red, view.memory->Redundancy(view.mission, r.created_from, r.created_to));
  json sessions = json::array();
  for (const RedundancySession& s : red.sessions) sessions.push_back(RedundancySessionJson(s));
  return json{{"sessions", std::move(sessions)},
              {"total", RedundancySessionJson(red.total)},
              {"counter", red.counter},
              {"clearance", view.clearance}};
}

json ClearanceSchema() { return TypedSchema("integer", "The clearance the report was made at (9: every record)."); }

json ReportObject(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

json RedundancySessionSchema(const char* what) {
  json s = ReportObject({{"session", TypedSchema("string", "The queries' session (\"\": none given; total: \"\").")},
                 {"retrievals", TypedSchema("integer", "Retrievals logged.")},
                 {"marked_retrievals", TypedSchema("integer", "Retrievals with at least one entry marked used.")},
                 {"served_entries", TypedSchema("integer", "Entries served.")},
                 {"used_entries", TypedSchema("integer", "Entries marked used.")},
                 {"served_tokens", TypedSchema("integer", "Tokens served.")},
                 {"used_tokens", TypedSchema("integer", "Tokens of the entries marked used.")},
                 {"unused_share_tokens", TypedSchema("number", "(served - used) / served tokens; 0 when none.")},
                 {"unused_share_count", TypedSchema("number", "(served - used) / served entries; 0 when none.")}},
                {"session", "retrievals", "served_entries", "used_entries", "served_tokens", "used_tokens"});
  s["description"] = what;
  return s;
}

// The period's two rows, shared by the three period reports.
std::vector<Field<PeriodReportRequest>> PeriodFields(const char* what) {
  using F = Fields<PeriodReportRequest>;
  return {
      MissionScopeField<PeriodReportRequest>(),
      F::Time({.name = "created_from",
               .doc = std::string(what) + " at or after (ISO 8601).",
               .flag = "--since",
               .param_alias = "from"},
              [](PeriodReportRequest& r) -> auto& { return r.created_from; }),
      F::Time({.name = "created_to", .doc = std::string(what) + " before (ISO 8601).", .flag = "--until", .param_alias = "to"},
              [](PeriodReportRequest& r) -> auto& { return r.created_to; }),
  };
}

// The example period: November 2026 (the faces test seeds a retrieval and
// a correction of it then).
json PeriodExample() {
  return {{"namespace", {{"mission", "m1"}}},
          {"created_from", "2026-11-01T00:00:00Z"},
          {"created_to", "2026-12-01T00:00:00Z"}};
}

}  // namespace

std::unique_ptr<Operation> ReportLoadOperation() {
  Declaration<LoadReportRequest> d;
  d.info = {
      .name = "report_load",
      .title = "The mission's event load",
      .summary = "The mission's event rate now, over mission.rate_window_min, against "
                 "mission.capacity_events_per_min, and alpha (0 at or below capacity, 1 at twice it): whether "
                 "workflow_memory_query ranks in degraded mode (by criticality). Counts the events the asker may "
                 "read; a resolved question or threat stops counting.",
      .cli_verb = "report load",
      .rest_method = "GET",
      .rest_path = "/v1/reports/load",
      .mcp_tool = "report_load",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}}},
      .answer = "{rate_per_min, events_in_window, window_min, capacity_per_min, alpha, degraded, mode, clearance}",
      .answer_schema =
          ReportObject({{"rate_per_min", TypedSchema("number", "Mission events per minute over the window.")},
                  {"events_in_window", TypedSchema("integer", "Events in the window.")},
                  {"window_min", TypedSchema("integer", "The window, minutes (mission.rate_window_min).")},
                  {"capacity_per_min", TypedSchema("number", "mission.capacity_events_per_min.")},
                  {"alpha", TypedSchema("number", "The weight of criticality in the ranking, 0..1.")},
                  {"degraded", TypedSchema("boolean", "alpha > 0: queries rank by criticality too.")},
                  {"mode", TypedSchema("string", "mission.degraded_mode: auto, degraded or normal.")},
                  {"clearance", ClearanceSchema()}},
                 {"rate_per_min", "events_in_window", "window_min", "capacity_per_min", "alpha", "degraded", "mode",
                  "clearance"}),
  };
  d.fields = {MissionScopeField<LoadReportRequest>()};
  d.check = &CheckLoadReport;
  d.handle = &HandleLoadReport;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> ReportCorrectionsOperation() {
  const json week = ReportObject({{"week", TypedSchema("string", "ISO week of the retrievals, 2026-W03.")},
                            {"retrievals", TypedSchema("integer", "Retrievals logged that week.")},
                            {"corrections", TypedSchema("integer", "Corrections naming them.")},
                            {"corrected_retrievals", TypedSchema("integer", "Retrievals with at least one.")},
                            {"rate", TypedSchema("number", "corrections / retrievals.")}},
                           {"week", "retrievals", "corrections", "corrected_retrievals", "rate"});
  const json component = ReportObject({{"component", TypedSchema("string", "The corrections' component.")},
                                 {"corrections", TypedSchema("integer", "Linked corrections on it.")},
                                 {"rate", TypedSchema("number", "/ all retrievals of the period.")}},
                                {"component", "corrections", "rate"});
  Declaration<PeriodReportRequest> d;
  d.info = {
      .name = "report_corrections",
      .title = "The retrieval-correction signal",
      .summary = "How often an operator corrected the agent after a workflow_memory_query: corrections naming a "
                 "retrieval logged in the period, per ISO week of the retrieval and per component, over the "
                 "retrievals; and the corrections created in the period that name none. Counts the records the "
                 "asker may read.",
      .cli_verb = "report corrections",
      .rest_method = "GET",
      .rest_path = "/v1/reports/corrections",
      .mcp_tool = "report_corrections",
      .read_only = true,
      .idempotent = true,
      .example = PeriodExample(),
      .answer = "{weeks: [{week, retrievals, corrections, corrected_retrievals, rate}], components: [{component, "
                "corrections, rate}], retrievals, linked_corrections, unlinked_corrections, rate, clearance}",
      .answer_schema =
          ReportObject({{"weeks", {{"type", "array"}, {"items", week}, {"description", "Oldest first."}}},
                  {"components", {{"type", "array"}, {"items", component}, {"description", "Most corrections first."}}},
                  {"retrievals", TypedSchema("integer", "Retrievals logged in the period.")},
                  {"linked_corrections", TypedSchema("integer", "Corrections naming one of them.")},
                  {"unlinked_corrections", TypedSchema("integer", "Corrections of the period naming none.")},
                  {"rate", TypedSchema("number", "linked_corrections / retrievals.")},
                  {"clearance", ClearanceSchema()}},
                 {"weeks", "components", "retrievals", "linked_corrections", "unlinked_corrections", "rate",
                  "clearance"}),
  };
  d.fields = PeriodFields("Retrievals logged (corrections naming none: created)");
  d.check = &CheckPeriodReport;
  d.handle = &HandleCorrectionsReport;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> ReportCorrectionPairsOperation() {
  const json pair = ReportObject(
      {{"retrieval_id", TypedSchema("string", "The retrieval.")},
       {"query", TypedSchema("string", "Its task description.")},
       {"retrieved_at", TypedSchema("string", "When it was logged (ISO 8601).")},
       {"week", TypedSchema("string", "Its ISO week.")},
       {"served",
        {{"type", "array"},
         {"items", TypedSchema("object", "{id, layer, score, kind, text}; text null and missing true when deleted.")},
         {"description", "What it served, in digest order."}}},
       {"corrected_to",
        TypedSchema("object", "The correction: {id, class, category, component, outcome, summary, operator, "
                              "created_at}.")}},
      {"retrieval_id", "query", "week", "served", "corrected_to"});
  Declaration<PeriodReportRequest> d;
  d.info = {
      .name = "report_correction_pairs",
      .title = "Served X, corrected to Y",
      .summary = "Each correction naming a retrieval logged in the period, with what that retrieval served: the "
                 "pairs (served X, corrected to Y) to learn a better ranking from, oldest correction first. "
                 "Only the records the asker may read.",
      .cli_verb = "report correction-pairs",
      .rest_method = "GET",
      .rest_path = "/v1/reports/corrections/pairs",
      .mcp_tool = "report_correction_pairs",
      .read_only = true,
      .idempotent = true,
      .example = PeriodExample(),
      .answer = "{pairs: [{retrieval_id, query, retrieved_at, week, served: [{id, layer, score, kind, text}], "
                "corrected_to: {id, class, category, component, outcome, summary, operator, created_at}}], clearance}",
      .answer_schema = ReportObject({{"pairs", {{"type", "array"}, {"items", pair}, {"description", "By correction time."}}},
                               {"clearance", ClearanceSchema()}},
                              {"pairs", "clearance"}),
  };
  d.fields = PeriodFields("Retrievals logged");
  d.check = &CheckPeriodReport;
  d.handle = &HandleCorrectionPairs;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> ReportRedundancyOperation() {
  Declaration<PeriodReportRequest> d;
  d.info = {
      .name = "report_redundancy",
      .title = "Served but unused context",
      .summary = "Per session of the retrievals logged in the period, and in total: the entries and tokens "
                 "workflow_memory_query served and those marked used (workflow_mark_used), and the unused share "
                 "of each (target at most 0.2). A retrieval with no entry marked used counts as wholly unused.",
      .cli_verb = "report redundancy",
      .rest_method = "GET",
      .rest_path = "/v1/reports/redundancy",
      .mcp_tool = "report_redundancy",
      .read_only = true,
      .idempotent = true,
      .example = PeriodExample(),
      .answer = "{sessions: [session], total: session, counter, clearance}; session: {session, retrievals, "
                "marked_retrievals, served_entries, used_entries, served_tokens, used_tokens, unused_share_tokens, "
                "unused_share_count}",
      .answer_schema =
          ReportObject({{"sessions",
                   {{"type", "array"}, {"items", RedundancySessionSchema("One session.")}, {"description", "By session."}}},
                  {"total", RedundancySessionSchema("Every session summed (session \"\").")},
                  {"counter", TypedSchema("string", "The token counter the tokens were counted with.")},
                  {"clearance", ClearanceSchema()}},
                 {"sessions", "total", "counter", "clearance"}),
  };
  d.fields = PeriodFields("Retrievals logged");
  d.check = &CheckPeriodReport;
  d.handle = &HandleRedundancyReport;
  return Declare(std::move(d));
}

}  // namespace msp::api
