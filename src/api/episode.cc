// The declarations of a session's episodes: episode_add, one step appended
// to a session's episodic memory (msp episode add, POST /v1/episodes, MCP
// episode_add; answers the stored record, as memory_get does), and
// session_steps, a session's steps in order (msp episode list, GET
// /v1/sessions/{session}/steps, MCP session_steps), and session_end, what is
// left of a session consolidated into facts (msp session end, POST
// /v1/sessions/{session}/end, MCP session_end).
#include "api/declare.h"
#include "api/operations.h"
#include "api/record_json.h"
#include "codec/memory_json.h"

namespace msp::api {
namespace {

using nlohmann::json;
using EpisodeField = Fields<EpisodeStep>;

// Counts and step numbers stay exact in every JSON reader (2^53).
constexpr int64_t kMaxCount = int64_t{1} << 53;

// The operations on one session name it in their namespace.
Status RequireSession(const Namespace& ns, const std::string& why) {
  if (ns.session.empty()) return Status::InvalidArgument("field 'namespace.session' is required: " + why);
  return Status::Ok();
}

// session_steps' and session_end's namespace field.
constexpr const char* kSessionScopeDoc =
    "The session (required; REST: the path's) and who it belongs to: user, agent, mission, operator; parts left "
    "out are the face's (MCP: the session's).";

Status CheckEpisode(const EpisodeStep& e) {
  MSP_RETURN_IF_ERROR(RequireSession(e.ns, "an episode is a step of a session"));
  if (e.content_json.empty() == e.text.empty()) {
    return Status::InvalidArgument("give exactly one of field 'text' (the step as text) and field 'content' (as "
                                   "a JSON object)");
  }
  return Status::Ok();
}

Result<json> HandleEpisode(const CallContext& context, EpisodeStep& e) {
  e.actor = context.caller.actor;
  MSP_RETURN_IF_ERROR(CheckClaimedSource(context, e.source, "episode_add"));
  MSP_ASSIGN_OR_RETURN(Memory m, context.engine->AddEpisode(e));
  return RecordJson(context, m);
}

// The request of session_steps: the session is the namespace's.
struct StepsRequest {
  Namespace ns;
  int64_t last = 0;
};
using StepsField = Fields<StepsRequest>;

Status CheckSteps(const StepsRequest& r) { return RequireSession(r.ns, "the session whose steps to list"); }

Result<json> HandleSteps(const CallContext& context, StepsRequest& r) {
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> steps,
                       context.engine->LastSteps(r.ns, r.ns.session, static_cast<int>(r.last)));
  json out = json::array();
  for (const Memory& m : steps) out.push_back(RecordJson(context, m));
  return json{{"steps", std::move(out)}};
}

// The request of session_end: the session is the namespace's.
struct EndRequest {
  Namespace ns;
};

Status CheckEnd(const EndRequest& r) { return RequireSession(r.ns, "the session to end"); }

Result<json> HandleEnd(const CallContext& context, EndRequest& r) {
  MSP_ASSIGN_OR_RETURN(ConsolidationReport report, context.engine->EndSession(r.ns, r.ns.session));
  return ConsolidationReportToJson(report);
}

}  // namespace

json ConsolidationReportSchema() {
  return {{"type", "object"},
          {"properties",
           {{"episodes_read", {{"type", "integer"}, {"description", "Steps read."}}},
            {"candidates", {{"type", "integer"}, {"description", "Facts proposed from them."}}},
            {"facts_added", {{"type", "integer"}, {"description", "New facts stored."}}},
            {"facts_merged", {{"type", "integer"}, {"description", "Merged into a near-duplicate."}}},
            {"facts_superseded", {{"type", "integer"}, {"description", "New facts that replaced one they contradict."}}},
            {"fact_ids",
             {{"type", "array"},
              {"items", {{"type", "string"}}},
              {"description", "The facts added, merged or superseding, in order."}}}}},
          {"required", {"episodes_read", "candidates", "facts_added", "facts_merged", "facts_superseded", "fact_ids"}}};
}

std::unique_ptr<Operation> SessionEndOperation() {
  Declaration<EndRequest> d;
  d.info = {
      .name = "session_end",
      .title = "End a session",
      .summary = "End a session: the steps not consolidated yet are distilled into facts (merged into "
                 "near-duplicates, superseding what they contradict), each citing the episodes it came from. "
                 "Ending it again finds nothing left. With consolidate.background the session is queued instead "
                 "and the report counts nothing yet.",
      .cli_verb = "session end",
      .rest_method = "POST",
      .rest_path = "/v1/sessions/{session}/end",
      .mcp_tool = "session_end",
      .mcp_profile = "core",
      .idempotent = true,
      .example = {{"namespace", {{"session", "s2"}}}},
      .answer = "{episodes_read, candidates, facts_added, facts_merged, facts_superseded, fact_ids: [id]}",
      .answer_schema = ConsolidationReportSchema,
  };
  d.fields = {
      Fields<EndRequest>::Scope({.name = "namespace", .doc = kSessionScopeDoc},
                                [](EndRequest& r) -> auto& { return r.ns; }),
  };
  d.check = &CheckEnd;
  d.handle = &HandleEnd;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> SessionStepsOperation() {
  Declaration<StepsRequest> d;
  d.info = {
      .name = "session_steps",
      .title = "The steps of a session",
      .summary = "A session's steps (messages, tool calls and results, observations), oldest first, or only the "
                 "last ones: open a session that a search hit or the session index names. Steps above the "
                 "caller's clearance are left out; a session with no visible step answers an empty list.",
      .cli_verb = "episode list",
      .rest_method = "GET",
      .rest_path = "/v1/sessions/{session}/steps",
      .mcp_tool = "session_steps",
      .mcp_profile = "core",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"session", "s2"}}}, {"last", 2}},
      .answer = "{steps: [record with trust]}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"steps",
                           {{"type", "array"}, {"items", RecordSchema()}, {"description", "Oldest first."}}}}},
                        {"required", {"steps"}}},
  };
  d.fields = {
      StepsField::Scope({.name = "namespace", .doc = kSessionScopeDoc}, [](StepsRequest& r) -> auto& { return r.ns; }),
      StepsField::Int({.name = "last", .doc = "Only the last N steps (0: all)."}, 0, 1000000,
                      [](StepsRequest& r) -> auto& { return r.last; }),
  };
  d.check = &CheckSteps;
  d.handle = &HandleSteps;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> EpisodeAddOperation() {
  Declaration<EpisodeStep> d;
  d.info = {
      .name = "episode_add",
      .title = "Add an episode step",
      .summary = "Append one step (a user message, an agent response, a tool call or result, an observation) to a "
                 "session's episodic memory. Give exactly one of text and content. Steps are numbered in order; "
                 "facts are distilled from them when the session ends (or in the background). Answers the stored "
                 "record.",
      .cli_verb = "episode add",
      .rest_method = "POST",
      .rest_path = "/v1/episodes",
      .mcp_tool = "episode_add",
      .mcp_profile = "core",
      .rest_status = 201,
      .example = {{"namespace", {{"session", "s1"}}},
                  {"text", "The user asked which database holds the billing ledger"},
                  {"type", "user_message"},
                  {"timestamp", "2026-11-30T09:00:00Z"},
                  {"tags", {"billing"}}},
      .answer = "record with trust (kind episode: namespace.session, step_number, episode_type, ...)",
      .answer_schema = RecordSchema,
  };
  Field<EpisodeStep> request_id = RequestIdField<EpisodeStep>(
      "Idempotency key (1..200 printable ASCII, e.g. a UUID): a repeat with the same key (same tenant, within "
      "store.idempotency_ttl_hours) answers the first step's record and adds nothing; the same key with another "
      "step is a conflict.",
      [](EpisodeStep& e) -> auto& { return e.request_id; });
  Field<EpisodeStep> source = SourceField<EpisodeStep>(
      "Where the step came from. MCP: default mcp.write_source (\"agent\"), and a trusted source "
      "(policy.context_trusted_sources) is refused.",
      [](EpisodeStep& e) -> auto& { return e.source; });
  d.fields = {
      EpisodeField::Scope({.name = "namespace",
                           .doc = "The session (required) and who it belongs to: user, agent, mission, operator; "
                                  "parts left out are the face's (MCP: the session's)."},
                          [](EpisodeStep& e) -> auto& { return e.ns; }),
      EpisodeField::Text({.name = "text", .doc = "The step as plain text (or give content)."},
                         [](EpisodeStep& e) -> auto& { return e.text; }),
      EpisodeField::Object({.name = "content", .doc = "The step as a JSON object (or give text)."},
                           [](EpisodeStep& e) -> auto& { return e.content_json; }),
      EpisodeField::Enum({.name = "type", .doc = "What kind of step it is."}, &ParseEpisodeType, &EpisodeTypeName,
                         [](EpisodeStep& e) -> auto& { return e.type; }),
      EpisodeField::String({.name = "tool_name", .doc = "The tool called in this step."},
                           [](EpisodeStep& e) -> auto& { return e.tool_name; }),
      EpisodeField::Int({.name = "duration_ms", .doc = "How long the step took."}, 0, kMaxCount,
                        [](EpisodeStep& e) -> auto& { return e.duration_ms; }),
      EpisodeField::Int({.name = "token_count", .doc = "Tokens in the step."}, 0, kMaxCount,
                        [](EpisodeStep& e) -> auto& { return e.token_count; }),
      EpisodeField::Int({.name = "step_number", .doc = "Its place in the session (0: after the last step).",
                         .flag = "--step"},
                        0, kMaxCount, [](EpisodeStep& e) -> auto& { return e.step_number; }),
      EpisodeField::Time({.name = "timestamp", .doc = "When it happened (ISO 8601; default now).", .flag = "--at"},
                         [](EpisodeStep& e) -> auto& { return e.timestamp; }),
      EpisodeField::Strings({.name = "tags", .doc = "Tags.", .flag = "--tag"},
                            [](EpisodeStep& e) -> auto& { return e.tags; }),
      EpisodeField::Enum({.name = "sensitivity", .doc = "How sensitive it is."},
                         &ParseSensitivity, &SensitivityName, [](EpisodeStep& e) -> auto& { return e.sensitivity; }),
      std::move(source),
      std::move(request_id),
  };
  d.check = &CheckEpisode;
  d.handle = &HandleEpisode;
  return Declare(std::move(d));
}

}  // namespace msp::api
