// The operation table: strict decoding (unknown fields, ranges, groups,
// required fields, the namespace's tenant), defaults taken from the request
// structs, the request schema, the command line's names in messages, and
// that docs/operations.md is the page the table writes.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "api/operations.h"
#include "api/reference.h"
#include "api/schema.h"
#include "codec/memory_json.h"
#include "msp/memory.h"
#include "tests/support/test_util.h"

namespace msp::api {
namespace {

using nlohmann::json;

const Operation& Op(std::string_view name) {
  const Operation* op = FindOperation(name);
  EXPECT_NE(op, nullptr) << name;
  return *op;
}

std::string ErrorOf(const Operation& op, const json& request) {
  CallContext context;
  context.ns.tenant = "acme";
  Status s = op.Check(context, request);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << request.dump();
  return s.message();
}

TEST(ApiTest, EveryOperationHasItsFacesAndUniqueNames) {
  std::set<std::string> names, verbs, tools, routes;
  for (const Operation* op : Operations()) {
    const OperationInfo& info = op->info();
    EXPECT_TRUE(names.insert(info.name).second);
    EXPECT_TRUE(verbs.insert(info.cli_verb).second);
    // An operation is an MCP tool, or says why it is withheld from a model.
    EXPECT_NE(info.mcp_tool.empty(), info.mcp_withheld.empty()) << info.name;
    if (!info.mcp_tool.empty()) {
      EXPECT_TRUE(tools.insert(info.mcp_tool).second);
    }
    EXPECT_TRUE(routes.insert(info.rest_method + " " + info.rest_path).second);
    EXPECT_FALSE(info.summary.empty());
    EXPECT_EQ(info.answer_schema.get()["type"], "object") << info.name;
    EXPECT_EQ(FindOperation(info.name), op) << info.name;  // the table's row names it
    EXPECT_EQ(FindByCliVerb(info.cli_verb), op);
    if (!info.mcp_tool.empty()) {
      EXPECT_EQ(FindByMcpTool(info.mcp_tool), op);
    }
    for (const FieldInfo& f : info.fields) {
      EXPECT_FALSE(f.doc.empty()) << f.Path();
      // The command line's positionals are its verb's arguments: all given.
      if (f.cli == CliForm::kPositional) {
        EXPECT_TRUE(f.required) << info.name << " " << f.Path();
      }
    }
    CallContext context;
    context.ns.tenant = "acme";
    ASSERT_OK(op->Check(context, info.example));
  }
  EXPECT_EQ(FindOperation("no such operation"), nullptr);
}

TEST(ApiTest, TaskOperationsNeedAMissionAndTheirRequiredFields) {
  for (const char* name : {"task_add", "task_list", "task_show", "task_comment", "task_status"}) {
    json request = Op(name).info().example;
    request["namespace"].erase("mission");
    EXPECT_EQ(ErrorOf(Op(name), request), "field 'namespace.mission' is required: tasks belong to a mission") << name;
  }
  json no_status = Op("task_status").info().example;
  no_status.erase("status");
  EXPECT_EQ(ErrorOf(Op("task_status"), no_status), "field 'status' is required");
  json blank = Op("task_comment").info().example;
  blank["text"] = " \n";
  EXPECT_EQ(ErrorOf(Op("task_comment"), blank), "field 'text' must not be empty");
  json level = Op("task_add").info().example;
  level["access_level"] = 10;
  EXPECT_NE(ErrorOf(Op("task_add"), level).find("field 'access_level'"), std::string::npos);
  // The old flat spelling of the mission is no field.
  json flat = Op("task_list").info().example;
  flat.erase("namespace");
  flat["mission"] = "m1";
  EXPECT_EQ(ErrorOf(Op("task_list"), flat).rfind("unknown field 'mission'", 0), 0u);
  // Every status and criticality name, and no other.
  EXPECT_EQ(Op("task_status").info().Find("status")->values,
            (std::vector<std::string>{"open", "in_progress", "done", "cancelled"}));
}

// handoff_digest, workflow_mark_used and decision_import_adr: the limits the
// faces used to hold each their own way.
TEST(ApiTest, HandoffMarkUsedAndAdrImportTakeOneRange) {
  for (const char* name : {"handoff_digest", "workflow_mark_used", "decision_import_adr"}) {
    json request = Op(name).info().example;
    request["namespace"].erase("mission");
    EXPECT_EQ(ErrorOf(Op(name), request).rfind("field 'namespace.mission' is required", 0), 0u) << name;
  }
  // The budget of a handoff is workflow_memory_query's: 0..100000000, default 8000.
  const FieldInfo* budget = Op("handoff_digest").info().Find("token_budget");
  ASSERT_NE(budget, nullptr);
  EXPECT_EQ(budget->max_int, Op("workflow_memory_query").info().Find("token_budget")->max_int);
  EXPECT_EQ(budget->default_value, 8000);
  EXPECT_EQ(budget->Flag(), "--budget");
  json no_to = Op("handoff_digest").info().example;
  no_to.erase("to_operator");
  EXPECT_EQ(ErrorOf(Op("handoff_digest"), no_to), "field 'to_operator' is required");
  // 1..1000 entries, none empty.
  json marks = Op("workflow_mark_used").info().example;
  marks["entries"] = json::array();
  EXPECT_EQ(ErrorOf(Op("workflow_mark_used"), marks).rfind("field 'entries' must hold 1..1000", 0), 0u);
  marks["entries"] = std::vector<std::string>(1001, "x");
  EXPECT_EQ(ErrorOf(Op("workflow_mark_used"), marks).rfind("field 'entries' must hold 1..1000", 0), 0u);
  marks["entries"] = {"x", ""};
  EXPECT_EQ(ErrorOf(Op("workflow_mark_used"), marks), "field 'entries[1]' must not be empty");
  // 1..1000 files, each {name, text}, its git date a time.
  json adr = Op("decision_import_adr").info().example;
  adr["files"] = json::array();
  EXPECT_EQ(ErrorOf(Op("decision_import_adr"), adr).rfind("field 'files' must hold 1..1000", 0), 0u);
  adr["files"] = {{{"name", "0001-x.md"}}};
  EXPECT_EQ(ErrorOf(Op("decision_import_adr"), adr), "field 'files[0]' needs a non-empty name and text");
  adr["files"] = {{{"name", "0001-x.md"}, {"text", "# X"}, {"first_commit_at", "last spring"}}};
  EXPECT_NE(ErrorOf(Op("decision_import_adr"), adr).find("files[0].first_commit_at"), std::string::npos);
  adr["files"] = {{{"name", "0001-x.md"}, {"text", "# X"}, {"path", "/etc/passwd"}}};
  EXPECT_EQ(ErrorOf(Op("decision_import_adr"), adr).rfind("unknown field 'files[0].path'", 0), 0u)
      << ErrorOf(Op("decision_import_adr"), adr);
}

TEST(ApiTest, DecisionOperationsNeedAMissionAndTheirRequiredFields) {
  for (const char* name :
       {"decision_record", "decision_list", "decision_show", "decision_status", "decision_supersede"}) {
    json request = Op(name).info().example;
    request["namespace"].erase("mission");
    EXPECT_EQ(ErrorOf(Op(name), request), "field 'namespace.mission' is required: decisions belong to a mission")
        << name;
  }
  for (const char* field : {"title", "context", "decision"}) {
    json missing = Op("decision_record").info().example;
    missing.erase(field);
    EXPECT_EQ(ErrorOf(Op("decision_record"), missing), "field '" + std::string(field) + "' is required");
    json blank = Op("decision_record").info().example;
    blank[field] = " \n";
    EXPECT_EQ(ErrorOf(Op("decision_record"), blank), "field '" + std::string(field) + "' must not be empty");
  }
  json no_status = Op("decision_status").info().example;
  no_status.erase("status");
  EXPECT_EQ(ErrorOf(Op("decision_status"), no_status), "field 'status' is required");
  json no_by = Op("decision_supersede").info().example;
  no_by.erase("by");
  EXPECT_EQ(ErrorOf(Op("decision_supersede"), no_by), "field 'by' is required");
  // Superseded comes only from decision_supersede, on every face.
  for (const char* name : {"decision_record", "decision_status"}) {
    json superseded = Op(name).info().example;
    superseded["status"] = "superseded";
    EXPECT_EQ(ErrorOf(Op(name), superseded),
              "field 'status': unknown value 'superseded'; allowed: proposed, accepted, rejected, deprecated")
        << name;
  }
  // A rejected alternative says why; nothing else goes in one.
  json reasonless = Op("decision_record").info().example;
  reasonless["alternatives"] = json::array({{{"option", "Daily exports"}}});
  EXPECT_EQ(ErrorOf(Op("decision_record"), reasonless),
            "field 'alternatives[0]' needs a non-empty option and reason (why it was rejected)");
  json extra = Op("decision_record").info().example;
  extra["alternatives"][0]["cost"] = 3;
  EXPECT_EQ(ErrorOf(Op("decision_record"), extra).rfind("unknown field 'alternatives[0].cost'", 0), 0u);
  json flat = Op("decision_record").info().example;
  flat["alternatives"] = "Daily exports";
  EXPECT_EQ(ErrorOf(Op("decision_record"), flat),
            "field 'alternatives' must be an array of {option, reason} objects, got string");
  // One limit everywhere: 1..1000, default 100.
  const FieldInfo* limit = Op("decision_list").info().Find("limit");
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(limit->min_int, 1);
  EXPECT_EQ(limit->max_int, 1000);
  EXPECT_EQ(limit->default_value, 100);
  json too_many = Op("decision_list").info().example;
  too_many["limit"] = 1001;
  EXPECT_EQ(ErrorOf(Op("decision_list"), too_many), "field 'limit' must be between 1 and 1000, got 1001");
  json backwards = Op("decision_list").info().example;
  backwards["decided_from"] = "2026-11-02T00:00:00Z";
  backwards["decided_to"] = "2026-11-01T00:00:00Z";
  EXPECT_EQ(ErrorOf(Op("decision_list"), backwards), "field 'decided_to' must be later than 'decided_from'");
  // The command line keeps its flags: --since, --until, --alternative, --principle, --tag.
  EXPECT_EQ(CliMessage(Op("decision_list").info(), "field 'decided_to' must be later than 'decided_from'"),
            "--until must be later than --since");
  // REST names each parameter once (a field at the top level is its parameter's name).
  EXPECT_EQ(RestMessage(Op("decision_list").info(), "field 'decided_to' must be later than 'decided_from'"),
            "parameter 'decided_to' must be later than parameter 'decided_from'");
  EXPECT_EQ(Op("decision_record").info().Find("alternatives")->Flag(), "--alternative");
  EXPECT_EQ(Op("decision_record").info().Find("principles")->Flag(), "--principle");
  // The MCP and REST schema of an alternative: both parts required, nothing else.
  const json schema = InputSchema(Op("decision_record").info())["properties"]["alternatives"]["items"];
  EXPECT_EQ(schema["required"], json({"option", "reason"}));
  EXPECT_EQ(schema["additionalProperties"], false);
}

TEST(ApiTest, PrincipleAndOperatorOperationsCheckTheirFields) {
  const json m = {{"mission", "m"}};
  // principle_put adds without base_version (a statement needed) and edits with it (something to change).
  EXPECT_NE(ErrorOf(Op("principle_put"), {{"principle_id", "P-1"}, {"namespace", m}}).find("'statement' is required"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Op("principle_put"), {{"principle_id", "P-1"}, {"base_version", 2}, {"namespace", m}})
                .find("nothing to change"),
            std::string::npos);
  CallContext context;
  context.ns.tenant = "acme";
  ASSERT_OK(Op("principle_put").Check(context, {{"principle_id", "P-1"}, {"base_version", 2}, {"access_level", 0},
                                                {"namespace", m}}));
  EXPECT_NE(ErrorOf(Op("principle_put"), {{"principle_id", "P-1"}, {"statement", "S."}}).find("namespace.mission"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Op("principle_show"), {{"principle_id", "P-1"}, {"all", true}, {"version", 1}, {"namespace", m}})
                .find("exclude each other"),
            std::string::npos);
  // PUT answers 201 for a new principle, 200 for a later version.
  const OperationInfo& put = Op("principle_put").info();
  ASSERT_NE(put.rest_status_of, nullptr);
  EXPECT_EQ(put.rest_status_of({{"version", 1}}), 201);
  EXPECT_EQ(put.rest_status_of({{"version", 3}}), 200);
  EXPECT_TRUE(put.HasBody());
  EXPECT_FALSE(Op("principle_show").info().HasBody());
  // operator_set needs a clearance in 0..9; the namespace may name no mission (tenant-wide).
  EXPECT_EQ(ErrorOf(Op("operator_set"), {{"operator_id", "bob"}}), "field 'clearance' is required");
  EXPECT_NE(ErrorOf(Op("operator_set"), {{"operator_id", "bob"}, {"clearance", 10}}).find("clearance"),
            std::string::npos);
  ASSERT_OK(Op("operator_set").Check(context, {{"operator_id", "bob"}, {"clearance", 9}}));
}

TEST(ApiTest, EventAndReportOperationsNeedAMissionAndAnOrderedPeriod) {
  for (const char* name : {"event_add", "event_list"}) {
    json request = Op(name).info().example;
    request["namespace"].erase("mission");
    EXPECT_EQ(ErrorOf(Op(name), request), "field 'namespace.mission' is required: events belong to a mission") << name;
  }
  for (const char* name : {"report_load", "report_corrections", "report_correction_pairs", "report_redundancy"}) {
    json request = Op(name).info().example;
    request["namespace"].erase("mission");
    EXPECT_EQ(ErrorOf(Op(name), request), "field 'namespace.mission' is required: reports belong to a mission")
        << name;
  }
  // An event's type is one of the engine's, refused naming the field on every face.
  EXPECT_EQ(Op("event_add").info().Find("type")->values,
            (std::vector<std::string>{"incident", "alert", "question", "threat", "change", "resolution"}));
  json gossip = Op("event_add").info().example;
  gossip["type"] = "gossip";
  EXPECT_EQ(ErrorOf(Op("event_add"), gossip).rfind("field 'type': unknown value 'gossip'", 0), 0u);
  // One name for the period everywhere: created_from / created_to; the
  // command line keeps --since / --until, REST takes from / to too.
  for (const char* name : {"event_list", "report_corrections", "report_correction_pairs", "report_redundancy"}) {
    json backwards = Op(name).info().example;
    backwards["created_from"] = "2026-11-02T00:00:00Z";
    backwards["created_to"] = "2026-11-01T00:00:00Z";
    const std::string message = ErrorOf(Op(name), backwards);
    EXPECT_EQ(message, "field 'created_to' must be later than 'created_from'") << name;
    EXPECT_EQ(CliMessage(Op(name).info(), message), "--until must be later than --since") << name;
    EXPECT_EQ(Op(name).info().Find("created_from")->param_alias, "from") << name;
    EXPECT_EQ(Op(name).info().Find("created_to")->param_alias, "to") << name;
  }
}

TEST(ApiTest, EpisodeNeedsASessionAndOneOfTextOrContent) {
  const Operation& op = Op("episode_add");
  CallContext context;
  context.ns.tenant = "acme";
  ASSERT_OK(op.Check(context, json::parse(R"({"namespace": {"session": "s1"}, "type": "tool_call",
      "content": {"cmd": "ls"}, "tool_name": "sh", "duration_ms": 5})")));
  EXPECT_EQ(ErrorOf(op, json::parse(R"({"text": "hi there"})")),
            "field 'namespace.session' is required: an episode is a step of a session");
  const std::string one_of =
      "give exactly one of field 'text' (the step as text) and field 'content' (as a JSON object)";
  EXPECT_EQ(ErrorOf(op, json::parse(R"({"namespace": {"session": "s"}})")), one_of);
  EXPECT_EQ(ErrorOf(op, json::parse(R"({"namespace": {"session": "s"}, "text": "a", "content": {}})")), one_of);
  EXPECT_EQ(ErrorOf(op, json::parse(R"({"namespace": {"session": "s"}, "content": [1]})")).rfind("field 'content'", 0),
            0u);
  EXPECT_NE(ErrorOf(op, json::parse(R"({"namespace": {"session": "s"}, "text": "a", "request_id": ""})"))
                .find("field 'request_id'"),
            std::string::npos);
  // The session given by the face (MCP: `msp mcp --session`) is enough.
  context.ns.session = "s9";
  ASSERT_OK(op.Check(context, json::parse(R"({"text": "hi there"})")));
}

CallContext Acme() {
  CallContext context;
  context.ns.tenant = "acme";
  return context;
}

TEST(ApiTest, WriteDecodesEveryField) {
  const json j = json::parse(R"({
    "namespace": {"tenant": "acme", "user": "ann", "agent": "a1", "session": "s1", "mission": "m", "operator": "op"},
    "kind": "decision", "layer": "workflow", "text": "Use SQLite for the store",
    "body": {"b": 1, "a": [true]}, "tags": ["goal", "db"], "source": "tool", "sensitivity": "medium",
    "criticality": "high", "confidence": 0.5, "ttl_days": 30, "valid_at": "2026-01-02",
    "provenance": [{"type": "commit", "ref": "abc", "detail": "x"}]})");
  ASSERT_OK_AND_ASSIGN(WriteRequest w, DecodeWrite(Acme(), j, ""));
  EXPECT_EQ(w.ns.tenant, "acme");  // the caller's
  EXPECT_EQ(w.ns.user, "ann");
  EXPECT_EQ(w.ns.operator_id, "op");
  EXPECT_EQ(w.kind, Kind::kDecision);
  ASSERT_TRUE(w.layer.has_value());
  EXPECT_EQ(*w.layer, Layer::kWorkflow);
  EXPECT_EQ(w.body_json, R"({"a":[true],"b":1})");
  EXPECT_EQ(w.tags, (std::vector<std::string>{"goal", "db"}));
  EXPECT_EQ(w.source, "tool");
  EXPECT_EQ(w.sensitivity, Sensitivity::kMedium);
  EXPECT_EQ(w.criticality, Criticality::kHigh);
  EXPECT_DOUBLE_EQ(w.confidence, 0.5);
  EXPECT_EQ(w.ttl_days, 30);
  EXPECT_GT(w.valid_at, 0);
  ASSERT_EQ(w.provenance.size(), 1u);
  EXPECT_EQ(w.provenance[0].ref, "abc");
}

TEST(ApiTest, WriteErrorsNameTheField) {
  struct Case {
    const char* body;
    const char* names;
  };
  const Case cases[] = {
      {R"({"text": "x", "colour": 1})", "unknown field 'colour'"},
      {R"({})", "'text' is required"},
      {R"({"text": 5})", "field 'text' must be a string, got integer"},
      {R"({"text": "x", "kind": "thought"})", "field 'kind': unknown value 'thought'"},
      {R"({"text": "x", "tags": "goal"})", "field 'tags' must be an array of strings"},
      {R"({"text": "x", "tags": [1]})", "field 'tags[0]'"},
      {R"({"text": "x", "confidence": 2})", "field 'confidence' must be between 0 and 1"},
      {R"({"text": "x", "ttl_days": -1})", "field 'ttl_days'"},
      {R"({"text": "x", "ttl_days": 1.5})", "field 'ttl_days' must be an integer"},
      {R"({"text": "x", "ttl_days": 0})", "field 'ttl_days' 0 is not a time to live: give 1..36500 days"},
      {R"({"text": "x", "ttl_days": 36501})", "field 'ttl_days' must be between 1 and 36500"},
      {R"({"text": "x", "request_id": ""})", "field 'request_id'"},
      {R"({"text": "x", "request_id": 7})", "field 'request_id' must be a string"},
      {R"({"text": "x", "body": [1]})", "field 'body' must be an object"},
      {R"({"text": "x", "valid_at": "yesterday"})", "field 'valid_at'"},
      {R"({"text": "x", "namespace": {"team": "x"}})", "unknown field 'namespace.team'"},
      {R"({"text": "x", "namespace": "ann"})", "'namespace' must be a JSON object"},
      {R"({"text": "x", "provenance": [{"type": "commit"}]})", "provenance[0]"},
      {R"({"text": "x", "kind": "episode"})", "field 'kind': unknown value 'episode'"},
      {R"({"text": "x", "kind": "entity"})", "field 'kind': unknown value 'entity'"},
      {R"({"text": "x", "layer": "attic"})", "field 'layer': unknown value 'attic'"},
      {R"({"text": "  "})", "field 'text' must not be empty"},
      {R"({"text": "x", "namespace": {"tenant": "other"}})", "names tenant 'other'"},
  };
  for (const Case& c : cases) {
    auto w = DecodeWrite(Acme(), json::parse(c.body), "");
    ASSERT_FALSE(w.ok()) << c.body;
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().message().find(c.names), std::string::npos) << c.body << " -> " << w.status().message();
  }
  auto keyed = DecodeWrite(Acme(), json::parse(R"({"text": "x", "ttl_days": 36500, "request_id": "k-1"})"), "");
  ASSERT_TRUE(keyed.ok()) << keyed.status().message();
  EXPECT_EQ(keyed->ttl_days, 36500);
  EXPECT_EQ(keyed->request_id, "k-1");
  auto batch_item = DecodeWrite(Acme(), json::parse(R"({"text": 1})"), "memories[3].");
  ASSERT_FALSE(batch_item.ok());
  EXPECT_NE(batch_item.status().message().find("memories[3].text"), std::string::npos);
}

// memory_write's defaults come from WriteRequest, and MCP's agent writes
// preset the source (the caller names another, or leaves it).
TEST(ApiTest, WriteDefaultsAndTheAgentSource) {
  const OperationInfo& info = Op("memory_write").info();
  EXPECT_EQ(info.Find("kind")->default_value, "fact");
  EXPECT_EQ(info.Find("source")->default_value, "user");
  EXPECT_EQ(info.Find("confidence")->default_value, 1.0);
  EXPECT_TRUE(info.Find("ttl_days")->default_value.is_null());
  EXPECT_TRUE(info.Find("layer")->default_value.is_null());
  EXPECT_EQ(info.Find("ttl_days")->min_int, 1);
  EXPECT_EQ(info.Find("ttl_days")->max_int, 36500);
  EXPECT_EQ(info.Find("tags")->Flag(), "--tag");
  EXPECT_EQ(CliMessage(info, "field 'ttl_days' 0 is not a time to live"), "--ttl-days 0 is not a time to live");
  CallContext agent = Acme();
  agent.agent_writes = CallContext::AgentWrites{"agent", "note", {"note"}};
  ASSERT_OK_AND_ASSIGN(WriteRequest w, DecodeWrite(agent, json{{"text", "x"}}, ""));
  EXPECT_EQ(w.source, "agent");
  ASSERT_OK_AND_ASSIGN(w, DecodeWrite(agent, json{{"text", "x"}, {"source", "tool"}}, ""));
  EXPECT_EQ(w.source, "tool");
  ASSERT_OK_AND_ASSIGN(w, DecodeWrite(Acme(), json{{"text", "x"}}, ""));
  EXPECT_EQ(w.source, "user");
  EXPECT_EQ(w.kind, Kind::kFact);
  EXPECT_FALSE(w.layer.has_value());
  EXPECT_EQ(w.ttl_days, 0);
}

TEST(ApiTest, SearchDecodesStrictly) {
  const Operation& search = Op("search");
  CallContext context;
  context.ns.tenant = "acme";
  ASSERT_OK(search.Check(context, {{"query", "tea"},
                                   {"top_k", 1000},
                                   {"filters", {{"kinds", {"fact"}}, {"created_from", "2024-01-01T00:00:00Z"}}},
                                   {"namespace", {{"tenant", "acme"}, {"user", "ann"}}}}));
  EXPECT_EQ(ErrorOf(search, {{"query", "tea"}, {"k", 3}}).substr(0, 24), "unknown field 'k'; known");
  EXPECT_EQ(ErrorOf(search, {{"query", "tea"}, {"top_k", 1001}}),
            "field 'top_k' must be between 1 and 1000, got 1001");
  EXPECT_EQ(ErrorOf(search, {{"query", "tea"}, {"min_score", 2}}),
            "field 'min_score' must be between 0 and 1, got 2");
  EXPECT_EQ(ErrorOf(search, {{"query", "tea"}, {"top_sessions", -1}}),
            "field 'top_sessions' must be between 0 and 1000, got -1");
  EXPECT_EQ(ErrorOf(search, {{"top_k", 3}}), "field 'query' is required");
  EXPECT_EQ(ErrorOf(search, {{"query", "  "}}), "field 'query' must not be empty");
  EXPECT_NE(ErrorOf(search, {{"query", "tea"}, {"filters", {{"kind", {"fact"}}}}}).find("unknown field 'filters.kind'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(search, {{"query", "tea"}, {"filters", {{"kinds", {"nonsense"}}}}})
                .find("field 'filters.kinds[0]': unknown value 'nonsense'"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(search, {{"query", "tea"},
                             {"filters", {{"created_from", "2024-02-01"}, {"created_to", "2024-01-01"}}}}),
            "field 'filters.created_to' must be later than 'filters.created_from'");
  EXPECT_NE(ErrorOf(search, {{"query", "tea"}, {"namespace", {{"tenant", "other"}}}}).find("tenant 'other'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(search, json::array()).find("must be a JSON object"), std::string::npos);
}

// Search's answer as REST and MCP send it (CallText, written without a
// tree) is byte for byte its tree (Call) dumped, on a real store: hits that
// show a passage of a long record, context steps, ranked sessions, explain,
// trusted and untrusted sources; and a bad request is the same error.
TEST(ApiTest, SearchTextIsItsAnswerDumped) {
  msp::testing::TempDir dir("api-search-text");
  Options o;
  o.store.data_dir = dir.path();
  o.consolidation.every_n_episodes = 0;
  Result<std::unique_ptr<MemoryLayer>> mem = MemoryLayer::Open(o);
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  const std::vector<std::string> lines = {
      "We moved the deploy window to Sunday night because traffic is lowest then.",
      "The database runs SQLite in WAL mode; backups go to the bucket at 02:00 UTC.",
      "Ann said the \"deploy\" checklist lives in the wiki — ask Bob for access.",
      "Traffic on Sunday night peaked at 40 requests a second during the deploy.",
  };
  for (const std::string session : {"s1", "s2"}) {
    for (size_t i = 0; i < lines.size(); ++i) {
      EpisodeStep step;
      step.ns.tenant = "acme";
      step.ns.session = session;
      step.text = lines[i] + " (" + session + ")";
      step.source = i % 2 == 0 ? "user" : "agent";
      ASSERT_TRUE((*mem)->AddEpisode(step).ok());
    }
  }
  // A long record: indexed as passages, a hit shows the one that matched.
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "Filler sentence number " + std::to_string(i) + " about nothing much. ";
  long_text += "The deploy rollback plan is to restore the last snapshot and replay the WAL.";
  EpisodeStep long_step;
  long_step.ns.tenant = "acme";
  long_step.ns.session = "s3";
  long_step.text = long_text;
  ASSERT_TRUE((*mem)->AddEpisode(long_step).ok());

  const Operation& search = Op("search");
  CallContext context;
  context.engine = mem->get();
  context.ns.tenant = "acme";
  context.trusted_sources = {"user"};
  const std::vector<json> requests = {
      {{"query", "deploy Sunday traffic"}, {"record_access", false}},
      {{"query", "deploy rollback WAL"}, {"explain", true}, {"top_sessions", 3}, {"record_access", false}},
      {{"query", "deploy"}, {"context_steps", 2}, {"top_k", 3}, {"record_access", false}},
      {{"query", "nothing matches zyxwv"}, {"record_access", false}},
  };
  for (const json& request : requests) {
    Result<json> tree = search.Call(context, request);
    ASSERT_TRUE(tree.ok()) << tree.status().ToString();
    Result<std::string> text = search.CallText(context, request);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(*text, DumpJson(*tree)) << request.dump();
    EXPECT_EQ(json::parse(*text), *tree);
  }
  // The requests above reached passages, context steps, sessions and both trust labels.
  const json all = *search.Call(context, requests[1]);
  EXPECT_FALSE(all["sessions"].empty());
  EXPECT_TRUE(msp::testing::Contains(DumpJson(*search.Call(context, requests[1])), "\"passage\":{"));
  EXPECT_TRUE(msp::testing::Contains(DumpJson(*search.Call(context, requests[2])), "\"context\":["));
  const std::string first = DumpJson(*search.Call(context, requests[0]));
  EXPECT_TRUE(msp::testing::Contains(first, "\"trust\":\"trusted\""));
  EXPECT_TRUE(msp::testing::Contains(first, "\"trust\":\"untrusted\""));

  const json bad = {{"query", "deploy"}, {"top_k", 0}};
  const Status text_error = search.CallText(context, bad).status();
  EXPECT_EQ(text_error.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(text_error.ToString(), search.Call(context, bad).status().ToString());
}

TEST(ApiTest, WorkflowQueryNeedsAMissionAndAText) {
  const Operation& query = Op("workflow_memory_query");
  EXPECT_EQ(ErrorOf(query, {{"task_description", "x"}}),
            "field 'namespace.mission' is required: mission records belong to a mission");
  EXPECT_EQ(ErrorOf(query, {{"task_description", "x"}, {"namespace", {{"mission", "m1"}}}, {"token_budget", -1}}),
            "field 'token_budget' must be between 0 and 100000000, got -1");
  EXPECT_EQ(ErrorOf(query, {{"namespace", {{"mission", "m1"}}}}), "field 'task_description' is required");
  CallContext context;
  context.ns.mission = "m1";  // the face's default mission
  ASSERT_OK(query.Check(context, {{"task_description", "x"}, {"filters", {{"component", "relay"}}}}));
}

TEST(ApiTest, DefaultsComeFromTheRequestStructs) {
  const OperationInfo& search = Op("search").info();
  EXPECT_EQ(search.Find("top_k")->default_value, RetrieveRequest{}.top_k);
  EXPECT_EQ(search.Find("record_access")->default_value, true);
  EXPECT_EQ(search.Find("top_sessions")->default_value, RetrieveRequest{}.top_sessions);
  EXPECT_TRUE(search.Find("filters.kinds")->default_value.is_null());
  EXPECT_EQ(Op("workflow_memory_query").info().Find("token_budget")->default_value, MissionQuery{}.token_budget);
  EXPECT_EQ(Op("workflow_memory_query").info().Find("scope")->default_value, "all");
}

TEST(ApiTest, InputSchemaFollowsTheTable) {
  const json s = InputSchema(Op("search").info());
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], json::array({"query"}));
  EXPECT_EQ(s["properties"]["top_k"]["minimum"], 1);
  EXPECT_EQ(s["properties"]["top_k"]["maximum"], 1000);
  EXPECT_EQ(s["properties"]["top_k"]["default"], 10);
  EXPECT_EQ(s["properties"]["filters"]["additionalProperties"], false);
  EXPECT_EQ(s["properties"]["filters"]["properties"]["criticalities"]["items"]["enum"][0], "low");
  EXPECT_EQ(s["properties"]["namespace"]["properties"].size(), 6u);
}

TEST(ApiTest, CliMessagesNameFlags) {
  const OperationInfo& search = Op("search").info();
  EXPECT_EQ(CliMessage(search, "field 'top_k' must be between 1 and 1000, got 0"),
            "--top-k must be between 1 and 1000, got 0");
  EXPECT_EQ(CliMessage(search, "field 'filters.kinds[2]': unknown value 'x'; allowed: fact"),
            "--kinds: unknown value 'x'; allowed: fact");
  EXPECT_EQ(CliMessage(search, "field 'filters.created_to' must be later than 'filters.created_from'"),
            "--created-to must be later than --created-from");
  EXPECT_EQ(CliMessage(Op("workflow_memory_query").info(), "field 'namespace.mission' is required: x"),
            "--mission is required: x");
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ApiTest, ReferencePageIsUpToDate) {
  EXPECT_EQ(Read(std::string(MSP_DOCS_DIR) + "/operations.md"), ReferenceMarkdown())
      << "docs/operations.md is out of date: run `BUILD/src/api/api_doc > docs/operations.md`";
}

TEST(ApiTest, OpenApiRequestSchemasAreTheTables) {
  const std::string doc = Read(std::string(MSP_DOCS_DIR) + "/openapi.json");
  ASSERT_OK_AND_ASSIGN(std::string updated, OpenApiWithOperations(doc));
  EXPECT_EQ(doc, updated) << "docs/openapi.json is out of date: run `BUILD/src/api/api_doc --openapi "
                             "docs/openapi.json > /tmp/o && mv /tmp/o docs/openapi.json`";
  const json parsed = json::parse(doc);
  EXPECT_EQ(parsed["components"]["schemas"]["SearchRequest"], InputSchema(Op("search").info()));
}

}  // namespace
}  // namespace msp::api
