// The mission-memory routes of the REST API over real sockets (fixture:
// rest_fixture.h): decisions, corrections, workflow_memory_query, usage
// marks, handoff, principles and reports; bad input (400 naming the field,
// nothing changed), tenant isolation, and key clearances (REST and MCP over
// HTTP).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "msp/mission.h"
#include "tests/http/rest_fixture.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using nlohmann::json;

const std::string kMission = "mars";

class RestMissionTest : public RestFixture {
 protected:
  // Sets an operator's clearance in the mission through the library.
  void SetClearance(const std::string& tenant, const std::string& op, int clearance) {
    Namespace ns;
    ns.tenant = tenant;
    ns.mission = kMission;
    OperatorRecord o;
    o.operator_id = op;
    o.clearance = clearance;
    ASSERT_OK(SetOperator(*engine_, ns, o, "test").status());
  }

  static json DecisionBody(const std::string& title, const std::string& component = "relay", int access_level = 0) {
    return {{"namespace", {{"mission", kMission}, {"operator", "ann"}}},
            {"title", title},
            {"context", "The relay channel between orbiter and lander drops packets under load."},
            {"decision", title + ", measured on the test bench."},
            {"alternatives", {{{"option", "TCP"}, {"reason", "head-of-line blocking stalls telemetry"}}}},
            {"component", component},
            {"criticality", "high"},
            {"access_level", access_level},
            {"provenance", {{{"type", "commit"}, {"ref", "abc1234"}}}}};
  }

  // POST /v1/decisions; returns the id ("" on failure).
  std::string AddDecision(const std::string& key, const json& body) {
    Answer a = PostJson("/v1/decisions", key, body);
    EXPECT_EQ(a.status, 201) << a.body;
    return a.status == 201 ? a.j["id"].get<std::string>() : "";
  }

  static json CorrectionBody(const std::string& summary, const std::string& retrieval_id = "", int level = 0) {
    json c = {{"namespace", {{"mission", kMission}, {"operator", "ann"}}},
              {"class", "missing_context"},
              {"category", "api_contract"},
              {"component", "relay"},
              {"outcome", "modified"},
              {"summary", summary},
              {"access_level", level}};
    if (!retrieval_id.empty()) c["retrieval_id"] = retrieval_id;
    return c;
  }

  Answer Query(const std::string& key, const std::string& task, const std::string& op = "ann",
               json extra = json::object()) {
    json body = {{"namespace", {{"mission", kMission}, {"operator", op}, {"session", "s1"}}},
                 {"task_description", task},
                 {"token_budget", 4000}};
    for (const auto& [k, v] : extra.items()) body[k] = v;
    return PostJson("/v1/query", key, body);
  }

  std::set<std::string> Ids(const json& list) {
    std::set<std::string> ids;
    for (const json& x : list) ids.insert(x["id"].get<std::string>());
    return ids;
  }

  // Every entry id a query digest served.
  static std::set<std::string> Served(const json& digest) {
    std::set<std::string> ids;
    for (const json& section : digest["sections"]) {
      for (const json& e : section["entries"]) ids.insert(e["id"].get<std::string>());
    }
    return ids;
  }

  // A JSON-RPC call to /mcp with `key` (and a session id once initialized).
  Answer Mcp(const std::string& key, const std::string& session, const json& message) {
    httplib::Headers h = Auth(key);
    if (!session.empty()) h.emplace("Mcp-Session-Id", session);
    return From(client_->Post("/mcp", h, message.dump(), "application/json"));
  }
  std::string McpInitialize(const std::string& key) {
    Answer a = Mcp(key, "", {{"jsonrpc", "2.0"},
                             {"id", 1},
                             {"method", "initialize"},
                             {"params",
                              {{"protocolVersion", "2025-11-25"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "rest-mission-test"}, {"version", "1"}}}}}});
    EXPECT_EQ(a.status, 200) << a.body;
    const std::string sid = a.Header("Mcp-Session-Id");
    EXPECT_EQ(Mcp(key, sid, {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).status, 202);
    return sid;
  }
  json McpTool(const std::string& key, const std::string& session, const std::string& tool, const json& args) {
    Answer a = Mcp(key, session,
                   {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}});
    EXPECT_EQ(a.status, 200) << a.body;
    return a.j.is_object() ? a.j["result"] : json();
  }
};

TEST_F(RestMissionTest, DecisionsAddListShowAndRefuseBadInput) {
  Answer added = PostJson("/v1/decisions", kKeyA, DecisionBody("Use UDP for the relay channel"));
  ASSERT_EQ(added.status, 201) << added.body;
  const std::string id = added.j["id"];
  EXPECT_EQ(added.j["decided_by"], "ann");  // the operator, when the body names no one
  EXPECT_EQ(added.j["status"], "accepted");
  EXPECT_EQ(added.j["namespace"]["tenant"], "alpha");
  const std::string power = AddDecision(kKeyA, DecisionBody("Share the battery bus with the heater", "power"));
  ASSERT_FALSE(power.empty());

  const std::string list = "/v1/decisions?mission=" + kMission + "&operator=ann";
  EXPECT_EQ(Ids(Get(list, kKeyA).j["decisions"]), (std::set<std::string>{id, power}));
  EXPECT_EQ(Ids(Get(list + "&component=relay", kKeyA).j["decisions"]), std::set<std::string>{id});
  EXPECT_EQ(Get(list + "&status=proposed", kKeyA).j["decisions"].size(), 0u);
  EXPECT_EQ(Get(list + "&criticality=high&limit=1", kKeyA).j["decisions"].size(), 1u);
  Answer shown = Get("/v1/decisions/" + id + "?mission=" + kMission, kKeyA);
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.j["title"], "Use UDP for the relay channel");
  EXPECT_EQ(shown.j["alternatives"][0]["option"], "TCP");
  EXPECT_EQ(shown.j["provenance"][0]["ref"], "abc1234");
  EXPECT_EQ(Get("/v1/decisions/01900000-0000-7000-8000-000000000000?mission=" + kMission, kKeyA).status, 404);

  // Bad input: 400 naming the field; nothing stored.
  struct Bad {
    json body;
    std::string field;
  };
  json no_title = DecisionBody("x");
  no_title.erase("title");
  json unknown = DecisionBody("Use UDP again");
  unknown["colour"] = "red";
  json no_mission = DecisionBody("Use UDP again");
  no_mission["namespace"].erase("mission");
  json bad_status = DecisionBody("Use UDP again");
  bad_status["status"] = "maybe";
  json bad_level = DecisionBody("Use UDP again");
  bad_level["access_level"] = 12;
  for (const Bad& b : std::vector<Bad>{{no_title, "title"},
                                       {unknown, "colour"},
                                       {no_mission, "namespace.mission"},
                                       {bad_status, "status"},
                                       {bad_level, "access_level"}}) {
    Answer a = PostJson("/v1/decisions", kKeyA, b.body);
    EXPECT_EQ(a.status, 400) << b.field << ": " << a.body;
    EXPECT_EQ(a.ErrorCode(), "invalid_argument");
    EXPECT_NE(a.ErrorMessage().find(b.field), std::string::npos) << b.field << ": " << a.ErrorMessage();
  }
  EXPECT_EQ(Post("/v1/decisions", kKeyA, "{\"title\": ").status, 400);
  json other_tenant = DecisionBody("Use UDP for tenant beta");
  other_tenant["namespace"]["tenant"] = "beta";
  EXPECT_EQ(PostJson("/v1/decisions", kKeyA, other_tenant).status, 403);
  Answer no_mission_list = Get("/v1/decisions", kKeyA);
  EXPECT_EQ(no_mission_list.status, 400);
  EXPECT_NE(no_mission_list.ErrorMessage().find("mission"), std::string::npos);
  EXPECT_EQ(Get(list + "&status=maybe", kKeyA).status, 400);
  Answer unknown_param = Get(list + "&colour=red", kKeyA);
  EXPECT_EQ(unknown_param.status, 400);
  EXPECT_NE(unknown_param.ErrorMessage().find("colour"), std::string::npos);
  EXPECT_EQ(Get(list, kKeyA).j["decisions"].size(), 2u);
  // decision_list's names (and the older singular ones); one limit range, 1..1000, on every face.
  EXPECT_EQ(Ids(Get(list + "&components=relay&statuses=accepted", kKeyA).j["decisions"]), std::set<std::string>{id});
  EXPECT_EQ(Get(list + "&decided_from=2000-01-01T00:00:00Z&decided_to=2000-01-02T00:00:00Z", kKeyA)
                .j["decisions"]
                .size(),
            0u);
  Answer backwards = Get(list + "&decided_from=2000-01-02T00:00:00Z&decided_to=2000-01-01T00:00:00Z", kKeyA);
  EXPECT_EQ(backwards.status, 400);
  EXPECT_EQ(backwards.ErrorMessage(), "parameter 'decided_to' must be later than parameter 'decided_from'");
  for (const char* limit : {"0", "1001"}) {
    Answer a = Get(list + "&limit=" + limit, kKeyA);
    EXPECT_EQ(a.status, 400) << a.body;
    EXPECT_NE(a.ErrorMessage().find("between 1 and 1000"), std::string::npos) << a.body;
  }
}

TEST_F(RestMissionTest, DecisionStatusSupersedeOperatorsAndEvents) {
  const std::string old_id = AddDecision(kKeyA, DecisionBody("Use TCP for the relay channel"));
  const std::string new_id = AddDecision(kKeyA, DecisionBody("Use UDP with forward error correction"));
  ASSERT_FALSE(old_id.empty());
  ASSERT_FALSE(new_id.empty());
  const json ns = {{"mission", kMission}, {"operator", "ann"}};

  // Status: bad input names the field and changes nothing.
  Answer bad = PostJson("/v1/decisions/" + old_id + "/status", kKeyA, {{"namespace", ns}, {"status", "maybe"}});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.ErrorMessage().find("status"), std::string::npos) << bad.body;
  EXPECT_EQ(PostJson("/v1/decisions/" + old_id + "/status", kKeyA, {{"namespace", ns}}).status, 400);
  const std::string m = "?mission=" + kMission + "&operator=ann";
  EXPECT_EQ(Get("/v1/decisions/" + old_id + m, kKeyA).j["status"], "accepted");
  Answer st = PostJson("/v1/decisions/" + old_id + "/status", kKeyA, {{"namespace", ns}, {"status", "deprecated"}});
  ASSERT_EQ(st.status, 200) << st.body;
  EXPECT_EQ(st.j["status"], "deprecated");
  EXPECT_EQ(Get("/v1/decisions/" + old_id + m, kKeyA).j["status"], "deprecated");

  // Supersede: both links in one write; another tenant sees neither decision.
  EXPECT_EQ(PostJson("/v1/decisions/" + old_id + "/supersede", kKeyB, {{"namespace", ns}, {"by", new_id}}).status, 404);
  EXPECT_EQ(PostJson("/v1/decisions/" + old_id + "/supersede", kKeyA, {{"namespace", ns}}).status, 400);
  Answer sup = PostJson("/v1/decisions/" + old_id + "/supersede", kKeyA, {{"namespace", ns}, {"by", new_id}});
  ASSERT_EQ(sup.status, 200) << sup.body;
  EXPECT_EQ(sup.j["old"]["superseded_by"], new_id);
  EXPECT_EQ(sup.j["new"]["supersedes"], old_id);
  // A superseded decision keeps its status (409); the path names the
  // decision, and a body naming another one is refused, changing nothing.
  Answer final_status =
      PostJson("/v1/decisions/" + old_id + "/status", kKeyA, {{"namespace", ns}, {"status", "accepted"}});
  EXPECT_EQ(final_status.status, 409) << final_status.body;
  EXPECT_EQ(final_status.ErrorCode(), "failed_precondition");
  Answer other = PostJson("/v1/decisions/" + new_id + "/status", kKeyA,
                          {{"namespace", ns}, {"decision_id", old_id}, {"status", "rejected"}});
  EXPECT_EQ(other.status, 400) << other.body;
  EXPECT_NE(other.ErrorMessage().find("decision_id"), std::string::npos) << other.body;
  EXPECT_EQ(Get("/v1/decisions/" + new_id + m, kKeyA).j["status"], "accepted");

  // Operators: a key with a clearance of its own may not set one.
  EXPECT_EQ(PutJson("/v1/operators/bob", kKeyA2, {{"namespace", {{"mission", kMission}}}, {"clearance", 9}}).status, 403);
  EXPECT_EQ(PutJson("/v1/operators/bob", kKeyA, {{"namespace", {{"mission", kMission}}}, {"clearance", 12}}).status, 400);
  EXPECT_EQ(Get("/v1/operators/bob?mission=" + kMission, kKeyA).status, 404);
  Answer op = PutJson("/v1/operators/bob", kKeyA, {{"namespace", {{"mission", kMission}}}, {"clearance", 4}, {"name", "Bob"}});
  ASSERT_EQ(op.status, 200) << op.body;
  EXPECT_EQ(op.j["clearance"], 4);
  EXPECT_EQ(Get("/v1/operators/bob?mission=" + kMission, kKeyA).j["clearance"], 4);
  EXPECT_EQ(Get("/v1/operators?mission=" + kMission, kKeyA).j["operators"].size(), 1u);
  EXPECT_EQ(Get("/v1/operators?mission=" + kMission, kKeyB).j["operators"].size(), 0u);
  // The path names the operator (the namespace's operator is who asks).
  EXPECT_EQ(PutJson("/v1/operators/bob", kKeyA, {{"namespace", {{"mission", kMission}}}, {"clearance", 5},
                                                 {"operator_id", "cat"}})
                .status,
            400);
  EXPECT_EQ(PutJson("/v1/operators/bob", kKeyA, {{"namespace", {{"mission", kMission}}}}).status, 400);
  EXPECT_EQ(Get("/v1/operators/bob?mission=" + kMission, kKeyA).j["clearance"], 4);

  // Events: written and listed with the asker's clearance.
  const json ev = {{"namespace", {{"mission", kMission}, {"operator", "bob"}}},
                   {"type", "threat"},
                   {"component", "relay"},
                   {"criticality", "high"},
                   {"text", "Solar flare expected to disrupt the relay channel"}};
  EXPECT_EQ(PostJson("/v1/events", kKeyA, {{"namespace", ns}, {"type", "threat"}, {"text", "x"}}).status, 400);
  Answer open_event = PostJson("/v1/events", kKeyA, ev);
  ASSERT_EQ(open_event.status, 201) << open_event.body;
  json secret = ev;
  secret["access_level"] = 3;
  secret["text"] = "Classified jamming source located near the relay";
  EXPECT_EQ(PostJson("/v1/events", kKeyA2, secret).status, 403);
  Answer secret_event = PostJson("/v1/events", kKeyA, secret);
  ASSERT_EQ(secret_event.status, 201) << secret_event.body;
  const std::string as_bob = "?mission=" + kMission + "&operator=bob";
  EXPECT_EQ(Ids(Get("/v1/events" + as_bob, kKeyA).j["events"]),
            (std::set<std::string>{open_event.j["id"].get<std::string>(), secret_event.j["id"].get<std::string>()}));
  EXPECT_EQ(Ids(Get("/v1/events" + as_bob, kKeyA2).j["events"]),
            (std::set<std::string>{open_event.j["id"].get<std::string>()}));
  EXPECT_EQ(Get("/v1/events?mission=" + kMission, kKeyB).j["events"].size(), 0u);
  EXPECT_EQ(Get("/v1/events" + as_bob + "&from=2026-02-01&to=2026-01-01", kKeyA).status, 400);
  // event_add's type is one of its names on every face, refused naming the field.
  json flare = ev;
  flare["type"] = "flare";
  Answer bad_type = PostJson("/v1/events", kKeyA, flare);
  EXPECT_EQ(bad_type.status, 400);
  EXPECT_NE(bad_type.ErrorMessage().find("field 'type': unknown value 'flare'"), std::string::npos) << bad_type.body;
  // The period's one name, created_from / created_to (from / to still taken).
  Answer backwards = Get("/v1/events" + as_bob + "&created_from=2026-02-01T00:00:00Z&created_to=2026-01-01T00:00:00Z",
                         kKeyA);
  EXPECT_EQ(backwards.status, 400);
  EXPECT_NE(backwards.ErrorMessage().find("created_to"), std::string::npos) << backwards.body;
  EXPECT_EQ(Get("/v1/events" + as_bob + "&created_to=2000-01-01T00:00:00Z", kKeyA).j["events"].size(), 0u);

  // The load now (the console's load chart): the events of the window the
  // asker may see, against the default capacity.
  Answer load = Get("/v1/reports/load" + as_bob, kKeyA);
  ASSERT_EQ(load.status, 200) << load.body;
  EXPECT_EQ(load.j["events_in_window"], 2);
  EXPECT_EQ(load.j["capacity_per_min"], 30.0);
  EXPECT_GT(load.j["rate_per_min"].get<double>(), 0.0);
  EXPECT_EQ(load.j["alpha"], 0.0);
  EXPECT_EQ(load.j["degraded"], false);
  EXPECT_EQ(load.j["mode"], "auto");
  EXPECT_EQ(load.j["clearance"], 4);  // bob's
  EXPECT_EQ(Get("/v1/reports/load" + as_bob, kKeyA2).j["events_in_window"], 1);
  EXPECT_EQ(Get("/v1/reports/load?mission=" + kMission, kKeyB).j["events_in_window"], 0);
  EXPECT_EQ(Get("/v1/reports/load", kKeyA).status, 400);
}

TEST_F(RestMissionTest, TasksCommentsAndStatus) {
  SetClearance("alpha", "ann", 5);
  const json ns = {{"mission", kMission}, {"operator", "ann"}};
  const json task = {{"namespace", ns},
                     {"task_id", "T-12"},
                     {"title", "Keep the relay link budget current"},
                     {"labels", {"LONG-TERM"}},
                     {"paths", {"src/relay"}},
                     {"components", {"relay"}}};
  // Bad input names the field and stores nothing.
  json no_title = task;
  no_title.erase("title");
  EXPECT_EQ(PostJson("/v1/tasks", kKeyA, no_title).status, 400);
  json bad_status = task;
  bad_status["status"] = "later";
  Answer bs = PostJson("/v1/tasks", kKeyA, bad_status);
  EXPECT_EQ(bs.status, 400);
  EXPECT_NE(bs.ErrorMessage().find("status"), std::string::npos) << bs.body;
  const std::string m = "?mission=" + kMission + "&operator=ann";
  EXPECT_EQ(Get("/v1/tasks" + m, kKeyA).j["tasks"].size(), 0u);

  Answer added = PostJson("/v1/tasks", kKeyA, task);
  ASSERT_EQ(added.status, 201) << added.body;
  EXPECT_EQ(added.j["task_id"], "T-12");
  EXPECT_EQ(PostJson("/v1/tasks", kKeyA, task).status, 409);  // the id is taken
  json secret = task;
  secret["task_id"] = "T-13";
  secret["title"] = "Classified relay countermeasures";
  secret["access_level"] = 3;
  EXPECT_EQ(PostJson("/v1/tasks", kKeyA2, secret).status, 403);
  ASSERT_EQ(PostJson("/v1/tasks", kKeyA, secret).status, 201);

  Answer c = PostJson("/v1/tasks/T-12/comments", kKeyA, {{"namespace", ns}, {"text", "Link margin fell to 3 dB."}});
  ASSERT_EQ(c.status, 201) << c.body;
  ASSERT_EQ(c.j["comments"].size(), 1u);
  EXPECT_EQ(c.j["comments"][0]["author"], "ann");
  EXPECT_EQ(PostJson("/v1/tasks/T-12/comments", kKeyA, {{"namespace", ns}}).status, 400);
  // The path names the task; a body naming another one is refused and changes nothing.
  Answer other = PostJson("/v1/tasks/T-12/comments", kKeyA,
                          {{"namespace", ns}, {"task_id", "T-13"}, {"text", "Meant for T-13."}});
  EXPECT_EQ(other.status, 400) << other.body;
  EXPECT_NE(other.ErrorMessage().find("task_id"), std::string::npos) << other.body;
  EXPECT_EQ(Get("/v1/tasks/T-12" + m, kKeyA).j["comments"].size(), 1u);
  EXPECT_EQ(Get("/v1/tasks/T-13" + m, kKeyA).j["comments"].size(), 0u);
  Answer st = PostJson("/v1/tasks/T-12/status", kKeyA, {{"namespace", ns}, {"status", "in_progress"}});
  ASSERT_EQ(st.status, 200) << st.body;
  EXPECT_EQ(Get("/v1/tasks/T-12" + m, kKeyA).j["status"], "in_progress");

  // Clearance: the limited key neither sees nor changes the secret task.
  EXPECT_EQ(Get("/v1/tasks" + m, kKeyA).j["tasks"].size(), 2u);
  EXPECT_EQ(Get("/v1/tasks" + m, kKeyA2).j["tasks"].size(), 1u);
  EXPECT_EQ(Get("/v1/tasks/T-13" + m, kKeyA2).status, 404);
  EXPECT_EQ(PostJson("/v1/tasks/T-13/comments", kKeyA2, {{"namespace", ns}, {"text", "probe"}}).status, 404);
  EXPECT_EQ(Get("/v1/tasks/T-13" + m, kKeyA).j["comments"].size(), 0u);
  // Another tenant sees none of them.
  EXPECT_EQ(Get("/v1/tasks?mission=" + kMission, kKeyB).j["tasks"].size(), 0u);
  EXPECT_EQ(Get("/v1/tasks/T-12?mission=" + kMission, kKeyB).status, 404);
  EXPECT_EQ(Get("/v1/tasks?mission=" + kMission + "&long_term=true&status=in_progress", kKeyA).j["tasks"].size(), 1u);

  // The orchestrator's plan (the console's plan chart): the LONG-TERM tasks
  // the asker may see, with their signals; nothing is refreshed.
  Answer plan = Get("/v1/reports/plan?mission=" + kMission, kKeyA);
  ASSERT_EQ(plan.status, 200) << plan.body;
  std::set<std::string> planned;
  for (const json& t : plan.j["tasks"]) planned.insert(t["task_id"].get<std::string>());
  EXPECT_EQ(planned, (std::set<std::string>{"T-12", "T-13"}));
  for (const json& t : plan.j["tasks"]) {
    if (t["task_id"] != "T-12") continue;
    EXPECT_EQ(t["comments"], 1);
    EXPECT_EQ(t["never_refreshed"], true);
    EXPECT_EQ(t["due"], false);
    EXPECT_EQ(t["reason"], "below_threshold");
    EXPECT_TRUE(t["last_refresh_at"].is_null());
  }
  Answer limited = Get("/v1/reports/plan?mission=" + kMission, kKeyA2);
  ASSERT_EQ(limited.status, 200) << limited.body;
  ASSERT_EQ(limited.j["tasks"].size(), 1u);
  EXPECT_EQ(limited.j["tasks"][0]["task_id"], "T-12");
  EXPECT_EQ(Get("/v1/reports/plan?mission=" + kMission, kKeyB).j["tasks"].size(), 0u);
  EXPECT_EQ(Get("/v1/reports/plan", kKeyA).status, 400);
}

TEST_F(RestMissionTest, CorrectionsAreAbstractionsOnly) {
  Answer added = PostJson("/v1/corrections", kKeyA, CorrectionBody("The digest missed the relay timeout decision."));
  ASSERT_EQ(added.status, 201) << added.body;
  EXPECT_EQ(added.j["operator"], "ann");
  const std::string id = added.j["id"];

  json raw = CorrectionBody("The agent wrote the wrong relay timeout.");
  raw["prompt"] = "You are a helpful assistant. Set the relay timeout to 30 s.";
  Answer refused = PostJson("/v1/corrections", kKeyA, raw);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.ErrorCode(), "invalid_argument");
  EXPECT_NE(refused.ErrorMessage().find("prompt"), std::string::npos) << refused.ErrorMessage();
  Answer pasted = PostJson("/v1/corrections", kKeyA,
                           CorrectionBody("First sentence. Then the raw output:\n```\nrelay_timeout = 30\n```"));
  EXPECT_EQ(pasted.status, 400) << pasted.body;
  json no_operator = CorrectionBody("The digest missed the relay budget.");
  no_operator["namespace"].erase("operator");
  Answer anonymous = PostJson("/v1/corrections", kKeyA, no_operator);
  EXPECT_EQ(anonymous.status, 400);
  EXPECT_NE(anonymous.ErrorMessage().find("namespace.operator"), std::string::npos);
  json bad_outcome = CorrectionBody("The digest missed the relay budget.");
  bad_outcome["outcome"] = "meh";
  Answer outcome = PostJson("/v1/corrections", kKeyA, bad_outcome);
  EXPECT_EQ(outcome.status, 400);
  EXPECT_NE(outcome.ErrorMessage().find("outcome"), std::string::npos);

  Answer list = Get("/v1/corrections?mission=" + kMission + "&operator=ann", kKeyA);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(Ids(list.j["corrections"]), std::set<std::string>{id});
  EXPECT_EQ(Get("/v1/corrections?mission=" + kMission + "&of=bob", kKeyA).j["corrections"].size(), 0u);
  Answer shown = Get("/v1/corrections/" + id + "?mission=" + kMission, kKeyA);
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.j["class"], "missing_context");
  // A decision id is not a correction.
  const std::string decision = AddDecision(kKeyA, DecisionBody("Use UDP for the relay channel"));
  EXPECT_EQ(Get("/v1/corrections/" + decision + "?mission=" + kMission, kKeyA).status, 404);
}

TEST_F(RestMissionTest, QueryMarkUsedAndReports) {
  const std::string relay = AddDecision(kKeyA, DecisionBody("Use UDP for the relay channel"));
  const std::string power = AddDecision(kKeyA, DecisionBody("Share the battery bus with the heater", "power"));

  Answer q = Query(kKeyA, "which protocol carries the relay channel");
  ASSERT_EQ(q.status, 200) << q.body;
  const std::string rid = q.j["retrieval_id"];
  EXPECT_FALSE(rid.empty());
  EXPECT_NE(q.j["markdown"].get<std::string>().find("Use UDP for the relay channel"), std::string::npos);
  EXPECT_LE(q.j["tokens_used"].get<int64_t>(), 4000);
  EXPECT_EQ(q.j["token_budget"], 4000);
  EXPECT_EQ(q.j["counter"], "estimate");
  EXPECT_TRUE(Served(q.j["digest"]).contains(relay));

  Answer filtered = Query(kKeyA, "which protocol carries the relay channel", "ann",
                          {{"filters", {{"component", "power"}}}, {"scope", "workflow"}});
  ASSERT_EQ(filtered.status, 200) << filtered.body;
  EXPECT_FALSE(Served(filtered.j["digest"]).contains(relay));
  EXPECT_TRUE(Served(filtered.j["digest"]).contains(power));

  // Bad queries: 400 naming the field.
  for (const auto& [extra, field] : std::vector<std::pair<json, std::string>>{
           {{{"token_budget", -1}}, "token_budget"},
           {{{"scope", "everything"}}, "scope"},
           {{{"filters", {{"colour", "red"}}}}, "colour"},
           {{{"filters", {{"created_from", "soon"}}}}, "created_from"},
           {{{"task_description", ""}}, "task_description"}}) {
    Answer a = Query(kKeyA, "relay", "ann", extra);
    EXPECT_EQ(a.status, 400) << field << ": " << a.body;
    EXPECT_NE(a.ErrorMessage().find(field), std::string::npos) << a.ErrorMessage();
  }

  // Usage marks.
  const std::string used = "/v1/retrievals/" + rid + "/used";
  Answer marked = PostJson(used, kKeyA, {{"namespace", {{"mission", kMission}}}, {"entries", {relay}}});
  ASSERT_EQ(marked.status, 200) << marked.body;
  EXPECT_EQ(marked.j["used"], json({relay}));
  EXPECT_GE(marked.j["served"].get<int>(), 1);
  Answer not_served = PostJson(used, kKeyA, {{"namespace", {{"mission", kMission}}}, {"entries", {"nope"}}});
  EXPECT_EQ(not_served.status, 400) << not_served.body;
  Answer empty = PostJson(used, kKeyA, {{"namespace", {{"mission", kMission}}}, {"entries", json::array()}});
  EXPECT_EQ(empty.status, 400);
  EXPECT_NE(empty.ErrorMessage().find("entries"), std::string::npos);
  EXPECT_EQ(PostJson("/v1/retrievals/01900000-0000-7000-8000-000000000000/used", kKeyA,
                     {{"namespace", {{"mission", kMission}}}, {"entries", {relay}}})
                .status,
            404);

  // A correction naming the retrieval counts against it.
  ASSERT_EQ(PostJson("/v1/corrections", kKeyA, CorrectionBody("The digest missed the relay timeout.", rid)).status, 201);
  Answer corrections = Get("/v1/reports/corrections?mission=" + kMission, kKeyA);
  ASSERT_EQ(corrections.status, 200) << corrections.body;
  EXPECT_EQ(corrections.j["retrievals"], 2);
  EXPECT_EQ(corrections.j["linked_corrections"], 1);
  EXPECT_DOUBLE_EQ(corrections.j["rate"].get<double>(), 0.5);
  // Its pair "served X, corrected to Y" (report_correction_pairs: JSON, as
  // on every face; it was JSON lines here).
  Answer pairs = Get("/v1/reports/corrections/pairs?mission=" + kMission, kKeyA);
  ASSERT_EQ(pairs.status, 200) << pairs.body;
  ASSERT_EQ(pairs.j["pairs"].size(), 1u) << pairs.body;
  EXPECT_EQ(pairs.j["clearance"], kMaxAccessLevel);
  const json pair = pairs.j["pairs"][0];
  EXPECT_EQ(pair["retrieval_id"], rid);
  EXPECT_EQ(pair["corrected_to"]["summary"], "The digest missed the relay timeout.");
  std::set<std::string> served_ids;
  for (const json& s : pair["served"]) served_ids.insert(s["id"].get<std::string>());
  EXPECT_TRUE(served_ids.contains(relay)) << pairs.body;
  Answer no_pairs = Get("/v1/reports/corrections/pairs?mission=" + kMission + "&to=2000-01-01T00:00:00Z", kKeyA);
  ASSERT_EQ(no_pairs.status, 200);
  EXPECT_EQ(no_pairs.j["pairs"], json::array()) << no_pairs.body;
  // The period's one name (created_from / created_to), from / to still taken.
  EXPECT_EQ(Get("/v1/reports/corrections/pairs?mission=" + kMission + "&created_to=2000-01-01T00:00:00Z", kKeyA)
                .j["pairs"],
            json::array());
  EXPECT_EQ(Get("/v1/reports/corrections/pairs", kKeyA).status, 400);
  Answer redundancy = Get("/v1/reports/redundancy?mission=" + kMission, kKeyA);
  ASSERT_EQ(redundancy.status, 200) << redundancy.body;
  EXPECT_EQ(redundancy.j["total"]["retrievals"], 2);
  EXPECT_EQ(redundancy.j["total"]["used_entries"], 1);
  ASSERT_EQ(redundancy.j["sessions"].size(), 1u);
  EXPECT_EQ(redundancy.j["sessions"][0]["session"], "s1");
  EXPECT_EQ(Get("/v1/reports/redundancy", kKeyA).status, 400);
  EXPECT_EQ(Get("/v1/reports/corrections?mission=" + kMission + "&from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z",
                kKeyA)
                .status,
            400);
}

TEST_F(RestMissionTest, HandoffDigest) {
  AddDecision(kKeyA, DecisionBody("Use UDP for the relay channel"));
  const json body = {{"namespace", {{"mission", kMission}}}, {"from_operator", "ann"}, {"to_operator", "cat"},
                     {"token_budget", 3000}};
  Answer h = PostJson("/v1/handoff", kKeyA, body);
  ASSERT_EQ(h.status, 200) << h.body;
  EXPECT_NE(h.j["markdown"].get<std::string>().find("Use UDP for the relay channel"), std::string::npos);
  EXPECT_LE(h.j["tokens_used"].get<int64_t>(), 3000);
  EXPECT_EQ(h.j["digest"]["to_operator"], "cat");

  json no_to = body;
  no_to.erase("to_operator");
  Answer a = PostJson("/v1/handoff", kKeyA, no_to);
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.ErrorMessage().find("to_operator"), std::string::npos);
  json bad_since = body;
  bad_since["since"] = "yesterday";
  a = PostJson("/v1/handoff", kKeyA, bad_since);
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.ErrorMessage().find("since"), std::string::npos);
  json later = body;
  later["since"] = "2099-01-01T00:00:00Z";
  a = PostJson("/v1/handoff", kKeyA, later);
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.j["markdown"].get<std::string>().find("Use UDP for the relay channel"), std::string::npos);
}

TEST_F(RestMissionTest, PrincipleEditsNameTheirVersion) {
  const std::string path = "/v1/principles/P-1";
  const json ns = {{"mission", kMission}, {"operator", "ann"}};
  Answer created = PutJson(path, kKeyA, {{"namespace", ns}, {"statement", "Prefer simple protocols."}});
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.j["version"], 1);
  EXPECT_EQ(created.j["author"], "ann");

  // The error is principle_put's on every face: its message names the
  // current version (the body carried error.current_version and
  // error.current, REST's alone).
  Answer again = PutJson(path, kKeyA, {{"namespace", ns}, {"statement", "Prefer clever protocols."}});
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(again.ErrorCode(), "already_exists");
  EXPECT_NE(again.ErrorMessage().find("current version 1"), std::string::npos) << again.body;

  Answer edited = PutJson(path, kKeyA,
                          {{"namespace", ns}, {"base_version", 1}, {"statement", "Prefer simple, observable protocols."}});
  ASSERT_EQ(edited.status, 200) << edited.body;
  EXPECT_EQ(edited.j["version"], 2);

  // An edit of version 1, made without seeing version 2, is refused with the current version.
  Answer stale = PutJson(path, kKeyA, {{"namespace", ns}, {"base_version", 1}, {"statement", "Prefer fast protocols."}});
  EXPECT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(stale.ErrorCode(), "conflict");
  EXPECT_NE(stale.ErrorMessage().find("the current version is 2"), std::string::npos) << stale.body;

  Answer list = Get("/v1/principles?mission=" + kMission, kKeyA);
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.j["principles"].size(), 1u);
  EXPECT_EQ(list.j["principles"][0]["version"], 2);
  EXPECT_EQ(list.j["principles"][0]["statement"], "Prefer simple, observable protocols.");
  Answer v1 = Get(path + "?mission=" + kMission + "&version=1", kKeyA);
  ASSERT_EQ(v1.status, 200) << v1.body;
  EXPECT_EQ(v1.j["statement"], "Prefer simple protocols.");
  EXPECT_EQ(v1.j["current"], false);
  // ?all: every version, as the command line's --all.
  Answer all = Get(path + "?mission=" + kMission + "&all=true", kKeyA);
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(all.j["version"], 2);
  ASSERT_EQ(all.j["versions"].size(), 2u);
  EXPECT_EQ(all.j["versions"][0]["statement"], "Prefer simple protocols.");
  EXPECT_EQ(Get(path + "?mission=" + kMission + "&all=true&version=1", kKeyA).status, 400);
  // The path names the principle: a body naming another is refused, as is an unknown field.
  Answer other = PutJson(path, kKeyA, {{"namespace", ns}, {"principle_id", "P-2"}, {"statement", "x y z"}});
  EXPECT_EQ(other.status, 400) << other.body;
  EXPECT_NE(other.ErrorMessage().find("principle_id"), std::string::npos) << other.body;
  Answer unknown = PutJson(path, kKeyA, {{"namespace", ns}, {"base_version", 2}, {"prompt", "x"}});
  EXPECT_EQ(unknown.status, 400) << unknown.body;
  EXPECT_NE(unknown.ErrorMessage().find("unknown field 'prompt'"), std::string::npos) << unknown.body;

  Answer nothing = PutJson(path, kKeyA, {{"namespace", ns}, {"base_version", 2}});
  EXPECT_EQ(nothing.status, 400);
  Answer bad_version = PutJson(path, kKeyA, {{"namespace", ns}, {"base_version", "2"}, {"statement", "x y z"}});
  EXPECT_EQ(bad_version.status, 400);
  EXPECT_NE(bad_version.ErrorMessage().find("base_version"), std::string::npos);
  EXPECT_EQ(PutJson("/v1/principles/7up", kKeyA, {{"namespace", ns}, {"statement", "Numbers first."}}).status, 400);
  EXPECT_EQ(Get("/v1/principles?mission=" + kMission, kKeyA).j["principles"][0]["version"], 2);

  // Decisions cite principles that exist.
  json cites = DecisionBody("Use UDP for the relay channel");
  cites["principles"] = {"P-1"};
  EXPECT_EQ(PostJson("/v1/decisions", kKeyA, cites).status, 201);
  cites["principles"] = {"P-9"};
  EXPECT_EQ(PostJson("/v1/decisions", kKeyA, cites).status, 400);
}

TEST_F(RestMissionTest, TenantIsolation) {
  const std::string title = "Use UDP for the relay channel";
  const std::string decision = AddDecision(kKeyA, DecisionBody(title));
  Answer q = Query(kKeyA, "which protocol carries the relay channel");
  ASSERT_EQ(q.status, 200);
  const std::string rid = q.j["retrieval_id"];
  Answer c = PostJson("/v1/corrections", kKeyA, CorrectionBody("The digest missed the relay timeout.", rid));
  ASSERT_EQ(c.status, 201);
  const std::string correction = c.j["id"];
  const json ns = {{"mission", kMission}, {"operator", "ann"}};
  ASSERT_EQ(PutJson("/v1/principles/P-1", kKeyA, {{"namespace", ns}, {"statement", "Alpha's principle."}}).status, 201);

  // By id, by list.
  const std::string m = "?mission=" + kMission + "&operator=ann";
  EXPECT_EQ(Get("/v1/decisions/" + decision + m, kKeyB).status, 404);
  EXPECT_EQ(Get("/v1/decisions" + m, kKeyB).j["decisions"].size(), 0u);
  EXPECT_EQ(Get("/v1/corrections/" + correction + m, kKeyB).status, 404);
  EXPECT_EQ(Get("/v1/corrections" + m, kKeyB).j["corrections"].size(), 0u);
  EXPECT_EQ(Get("/v1/principles" + m, kKeyB).j["principles"].size(), 0u);
  EXPECT_EQ(Get("/v1/memories/" + decision, kKeyB).status, 404);
  // Through a digest, a handoff, a usage mark, a report.
  Answer qb = Query(kKeyB, "which protocol carries the relay channel");
  ASSERT_EQ(qb.status, 200) << qb.body;
  EXPECT_EQ(qb.j["markdown"].get<std::string>().find(title), std::string::npos);
  EXPECT_EQ(qb.j["digest"].dump().find(decision), std::string::npos);
  EXPECT_EQ(qb.j["digest"].dump().find(correction), std::string::npos);
  Answer hb = PostJson("/v1/handoff", kKeyB,
                       {{"namespace", {{"mission", kMission}}}, {"from_operator", "ann"}, {"to_operator", "cat"}});
  ASSERT_EQ(hb.status, 200) << hb.body;
  EXPECT_EQ(hb.j["markdown"].get<std::string>().find(title), std::string::npos);
  EXPECT_EQ(hb.j["digest"]["correction_profile"]["corrections"], 0) << hb.j["digest"].dump();
  EXPECT_EQ(PostJson("/v1/retrievals/" + rid + "/used", kKeyB,
                     {{"namespace", {{"mission", kMission}}}, {"entries", {decision}}})
                .status,
            404);
  Answer rb = Get("/v1/reports/corrections?mission=" + kMission, kKeyB);
  ASSERT_EQ(rb.status, 200);
  EXPECT_EQ(rb.j["retrievals"], 1);  // its own query only
  EXPECT_EQ(rb.j["linked_corrections"], 0);
  // A body naming the other tenant is refused; B's registry is its own.
  json into_a = DecisionBody("Beta writes into alpha");
  into_a["namespace"]["tenant"] = "alpha";
  EXPECT_EQ(PostJson("/v1/decisions", kKeyB, into_a).status, 403);
  EXPECT_EQ(Get("/v1/decisions?mission=" + kMission + "&tenant=alpha", kKeyB).status, 403);
  EXPECT_EQ(PutJson("/v1/principles/P-1", kKeyB, {{"namespace", ns}, {"statement", "Beta's principle."}}).status, 201);
  Answer a_p = Get("/v1/principles/P-1" + m, kKeyA);
  EXPECT_EQ(a_p.j["statement"], "Alpha's principle.");
  EXPECT_EQ(a_p.j["version"], 1);
}

TEST_F(RestMissionTest, ImportAdrFromText) {
  const std::string old_adr =
      "# 1. Use TCP for the relay\n\n## Status\n\nSuperseded by [2. Use UDP](0002-use-udp.md)\n\n"
      "## Context\n\nThe relay needs a transport.\n\n## Decision\n\nTCP.\n\n## Consequences\n\nHead-of-line blocking.\n";
  const std::string new_adr =
      "# 2. Use UDP for the relay\n\n## Status\n\nAccepted\n\n## Context\n\nTCP stalled on loss.\n\n"
      "## Decision\n\nUDP with our own retries.\n\n## Consequences\n\nWe own the retries.\n";
  const json files = {{{"name", "0001-use-tcp.md"}, {"text", old_adr}}, {{"name", "0002-use-udp.md"}, {"text", new_adr}}};
  const json ns = {{"mission", kMission}};
  const std::string path = "/v1/decisions/import-adr";

  Answer first = PostJson(path, kKeyA, {{"namespace", ns}, {"folder", "relay/docs/adr"}, {"files", files},
                                        {"component", "relay"}});
  // 200 whatever the import did (it answered 201 when it added one).
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.j["added"], 2);
  EXPECT_EQ(first.j["dry_run"], false);
  ASSERT_EQ(first.j["entries"].size(), 2u);
  EXPECT_EQ(first.j["entries"][0]["file"], "relay/docs/adr/0001-use-tcp.md");
  const std::string tcp = first.j["entries"][0]["id"], udp = first.j["entries"][1]["id"];
  Answer tcp_d = Get("/v1/decisions/" + tcp + "?mission=" + kMission, kKeyA);
  ASSERT_EQ(tcp_d.status, 200) << tcp_d.body;
  EXPECT_EQ(tcp_d.j["status"], "superseded");
  EXPECT_EQ(tcp_d.j["superseded_by"], udp);
  EXPECT_EQ(tcp_d.j["component"], "relay");
  EXPECT_EQ(tcp_d.j["adr_number"], 1);

  // Again: nothing new; a dry run of a changed file reports it and writes nothing.
  Answer again = PostJson(path, kKeyA, {{"namespace", ns}, {"folder", "relay/docs/adr"}, {"files", files},
                                        {"component", "relay"}});
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.j["unchanged"], 2);
  json changed = files;
  changed[1]["text"] = new_adr + "\nMeasured in March.\n";
  Answer dry = PostJson(path, kKeyA, {{"namespace", ns}, {"folder", "relay/docs/adr"}, {"files", changed},
                                      {"component", "relay"}, {"dry_run", true}});
  ASSERT_EQ(dry.status, 200) << dry.body;
  EXPECT_EQ(dry.j["updated"], 1);
  EXPECT_EQ(dry.j["dry_run"], true);
  EXPECT_EQ(Get("/v1/decisions/" + udp + "?mission=" + kMission, kKeyA).j["consequences"], "We own the retries.");

  // A file that cannot be imported fails alone, named with its reason
  // (issue 19: one bad file failed the folder).
  json broken = files;
  broken.push_back({{"name", "0003-broken.md"}, {"text", "# 3. Only a title\n"}});
  Answer bad_file = PostJson(path, kKeyA, {{"namespace", ns}, {"folder", "relay/docs/adr"}, {"files", broken},
                                           {"component", "relay"}});
  EXPECT_EQ(bad_file.status, 200) << bad_file.body;
  EXPECT_EQ(bad_file.j["failed"], 1);
  EXPECT_EQ(bad_file.j["unchanged"], 2);
  ASSERT_EQ(bad_file.j["entries"].size(), 3u);
  EXPECT_EQ(bad_file.j["entries"][2]["action"], "failed");
  EXPECT_NE(bad_file.j["entries"][2]["error"].get<std::string>().find("no text to take a decision from"),
            std::string::npos)
      << bad_file.body;
  // Bad input: 400 naming what was wrong, nothing written.
  Answer no_files = PostJson(path, kKeyA, {{"namespace", ns}, {"files", json::array()}});
  EXPECT_EQ(no_files.status, 400);
  EXPECT_NE(no_files.ErrorMessage().find("field 'files' must hold 1..1000"), std::string::npos) << no_files.body;
  // A file's git dates may be given: an ADR without a date of its own is
  // dated by its first commit (the command line sends them from git).
  Answer bad_date = PostJson(path, kKeyA,
                             {{"namespace", ns}, {"files", {{{"name", "0009-x.md"}, {"text", new_adr},
                                                            {"first_commit_at", "last spring"}}}}});
  EXPECT_EQ(bad_date.status, 400);
  EXPECT_NE(bad_date.ErrorMessage().find("files[0].first_commit_at"), std::string::npos) << bad_date.body;
  EXPECT_EQ(PostJson(path, kKeyA, {{"namespace", ns}, {"files", {{{"name", "../x.md"}, {"text", new_adr}}}}}).status, 400);
  Answer unknown = PostJson(path, kKeyA, {{"namespace", ns}, {"files", files}, {"recursive", true}});
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(unknown.ErrorMessage().find("recursive"), std::string::npos);
  EXPECT_EQ(PostJson(path, kKeyA, {{"namespace", json::object()}, {"files", files}}).status, 400);
  EXPECT_EQ(Get("/v1/decisions?mission=" + kMission, kKeyA).j["decisions"].size(), 2u);

  // A key with a clearance may not import (it could update any imported decision).
  Answer limited = PostJson(path, kKeyA2, {{"namespace", ns}, {"files", files}});
  EXPECT_EQ(limited.status, 403);
  EXPECT_EQ(limited.ErrorCode(), "forbidden");
}

TEST_F(RestMissionTest, KeyClearanceLimitsEveryRoute) {
  SetClearance("alpha", "ann", 5);
  const std::string open = AddDecision(kKeyA, DecisionBody("Open relay decision about UDP"));
  const std::string secret = AddDecision(kKeyA, DecisionBody("Secret relay decision about lasers", "relay", 3));
  ASSERT_FALSE(secret.empty());

  // kKeyA has no limit, kKeyA2 clearance 1; both ask as ann (clearance 5).
  const std::string m = "?mission=" + kMission + "&operator=ann";
  EXPECT_EQ(Ids(Get("/v1/decisions" + m, kKeyA).j["decisions"]), (std::set<std::string>{open, secret}));
  EXPECT_EQ(Ids(Get("/v1/decisions" + m, kKeyA2).j["decisions"]), std::set<std::string>{open});
  EXPECT_EQ(Get("/v1/decisions/" + secret + m, kKeyA).status, 200);
  EXPECT_EQ(Get("/v1/decisions/" + secret + m, kKeyA2).status, 404);
  Answer qa = Query(kKeyA, "relay decision lasers UDP");
  Answer qa2 = Query(kKeyA2, "relay decision lasers UDP");
  ASSERT_EQ(qa.status, 200);
  ASSERT_EQ(qa2.status, 200);
  EXPECT_TRUE(Served(qa.j["digest"]).contains(secret));
  EXPECT_FALSE(Served(qa2.j["digest"]).contains(secret));
  EXPECT_TRUE(Served(qa2.j["digest"]).contains(open));
  EXPECT_EQ(qa2.j["markdown"].get<std::string>().find("Secret relay decision"), std::string::npos);
  EXPECT_NE(qa.j["markdown"].get<std::string>().find("Secret relay decision"), std::string::npos);
  EXPECT_EQ(qa2.j["clearance"], 1);
  const json handoff = {{"namespace", {{"mission", kMission}}}, {"from_operator", "bob"}, {"to_operator", "ann"}};
  EXPECT_NE(PostJson("/v1/handoff", kKeyA, handoff).j["markdown"].get<std::string>().find("Secret relay decision"), std::string::npos);
  Answer ha2 = PostJson("/v1/handoff", kKeyA2, handoff);
  ASSERT_EQ(ha2.status, 200);
  EXPECT_EQ(ha2.j["markdown"].get<std::string>().find("Secret relay decision"), std::string::npos);
  EXPECT_NE(ha2.j["markdown"].get<std::string>().find("Open relay decision"), std::string::npos);

  // Writes above the key's clearance are refused; nothing is stored.
  Answer up = PostJson("/v1/decisions", kKeyA2, DecisionBody("Another secret about lasers", "relay", 3));
  EXPECT_EQ(up.status, 403) << up.body;
  EXPECT_NE(up.ErrorMessage().find("access_level"), std::string::npos);
  EXPECT_EQ(PostJson("/v1/corrections", kKeyA2, CorrectionBody("The digest missed the laser budget.", "", 2)).status,
            403);
  EXPECT_EQ(Get("/v1/decisions" + m, kKeyA).j["decisions"].size(), 2u);
  Answer low = PostJson("/v1/corrections", kKeyA, CorrectionBody("The digest missed the laser budget.", "", 3));
  ASSERT_EQ(low.status, 201);
  EXPECT_EQ(Get("/v1/corrections/" + low.j["id"].get<std::string>() + m, kKeyA2).status, 404);
  EXPECT_EQ(Get("/v1/corrections" + m, kKeyA2).j["corrections"].size(), 0u);

  // The record routes.
  EXPECT_EQ(Get("/v1/memories/" + secret, kKeyA).status, 200);
  EXPECT_EQ(Get("/v1/memories/" + secret, kKeyA2).status, 404);
  EXPECT_EQ(Get("/v1/memories/" + secret + "/history", kKeyA2).status, 404);
  Answer listed = Get("/v1/memories?kind=decision", kKeyA2);
  EXPECT_EQ(Ids(listed.j["memories"]), std::set<std::string>{open});
  Answer hits = PostJson("/v1/search", kKeyA2, {{"query", "secret relay decision lasers"}, {"top_k", 20}});
  ASSERT_EQ(hits.status, 200);
  for (const json& h : hits.j["hits"]) EXPECT_NE(h["memory"]["id"], secret);
  Answer export_a2 = Get("/v1/export", kKeyA2);
  ASSERT_EQ(export_a2.status, 200);
  EXPECT_EQ(export_a2.body.find(secret), std::string::npos);
  EXPECT_NE(export_a2.body.find(open), std::string::npos);
  EXPECT_NE(Get("/v1/export", kKeyA).body.find(secret), std::string::npos);
  EXPECT_EQ(Delete("/v1/memories/" + secret, kKeyA2).status, 404);
  EXPECT_EQ(Get("/v1/memories/" + secret, kKeyA).status, 200);  // still there

  // Stats and metrics count only what the key may see (as many records as
  // its export holds), and not the audit log, which it may not read.
  auto lines = [](const std::string& jsonl) { return static_cast<int64_t>(std::count(jsonl.begin(), jsonl.end(), '\n')); };
  Answer stats_a = Get("/v1/stats", kKeyA);
  Answer stats_a2 = Get("/v1/stats", kKeyA2);
  ASSERT_EQ(stats_a.status, 200) << stats_a.body;
  ASSERT_EQ(stats_a2.status, 200) << stats_a2.body;
  EXPECT_EQ(stats_a.j["records"].get<int64_t>(), lines(Get("/v1/export", kKeyA).body));
  EXPECT_EQ(stats_a2.j["records"].get<int64_t>(), lines(export_a2.body));
  EXPECT_LT(stats_a2.j["records"].get<int64_t>(), stats_a.j["records"].get<int64_t>());
  EXPECT_TRUE(stats_a.j.contains("audit_events"));
  EXPECT_FALSE(stats_a2.j.contains("audit_events"));
  EXPECT_EQ(stats_a2.j["clearance"], 1);
  const std::string active_a2 =
      "msp_records_active{tenant=\"alpha\"} " + std::to_string(stats_a2.j["active"].get<int64_t>()) + "\n";
  Answer metrics_a2 = Get("/metrics", kKeyA2);
  ASSERT_EQ(metrics_a2.status, 200);
  EXPECT_NE(metrics_a2.body.find(active_a2), std::string::npos) << metrics_a2.body;
  EXPECT_EQ(metrics_a2.body.find("msp_audit_events"), std::string::npos);
  Answer metrics_a = Get("/metrics", kKeyA);
  EXPECT_NE(metrics_a.body.find("msp_audit_events{tenant=\"alpha\"}"), std::string::npos);
  EXPECT_EQ(metrics_a.body.find(active_a2), std::string::npos);
  Answer audit_a2 = Get("/v1/audit", kKeyA2);
  EXPECT_EQ(audit_a2.status, 403);
  EXPECT_EQ(audit_a2.ErrorCode(), "forbidden");
  EXPECT_EQ(Get("/v1/audit", kKeyA).status, 200);
  // The reports count what the key may read (they were refused to a key
  // with a clearance here, and not on the command line): the retrieval that
  // served the secret decision and the level-3 correction are left out.
  Answer corrections_a = Get("/v1/reports/corrections?mission=" + kMission, kKeyA);
  Answer corrections_a2 = Get("/v1/reports/corrections?mission=" + kMission, kKeyA2);
  ASSERT_EQ(corrections_a2.status, 200) << corrections_a2.body;
  EXPECT_EQ(corrections_a2.j["clearance"], 1);
  EXPECT_EQ(corrections_a.j["clearance"], kMaxAccessLevel);
  EXPECT_LT(corrections_a2.j["retrievals"].get<int64_t>(), corrections_a.j["retrievals"].get<int64_t>());
  EXPECT_LT(corrections_a2.j["unlinked_corrections"].get<int64_t>(),
            corrections_a.j["unlinked_corrections"].get<int64_t>());
  Answer redundancy_a2 = Get("/v1/reports/redundancy?mission=" + kMission, kKeyA2);
  ASSERT_EQ(redundancy_a2.status, 200) << redundancy_a2.body;
  EXPECT_LT(redundancy_a2.j["total"]["retrievals"].get<int64_t>(),
            Get("/v1/reports/redundancy?mission=" + kMission, kKeyA).j["total"]["retrievals"].get<int64_t>());
  Answer pairs_a2 = Get("/v1/reports/corrections/pairs?mission=" + kMission, kKeyA2);
  ASSERT_EQ(pairs_a2.status, 200) << pairs_a2.body;
  EXPECT_EQ(pairs_a2.j["clearance"], 1);
  EXPECT_EQ(Post("/v1/import", kKeyA2, "{\"text\": \"An imported line that is long enough\"}\n",
                 "application/x-ndjson")
                .status,
            403);

  // Principles above the key's clearance: not listed, not editable.
  const json ns = {{"mission", kMission}, {"operator", "ann"}};
  ASSERT_EQ(PutJson("/v1/principles/P-2", kKeyA, {{"namespace", ns}, {"statement", "Lasers stay dark."}, {"access_level", 3}})
                .status,
            201);
  EXPECT_EQ(Get("/v1/principles" + m, kKeyA).j["principles"].size(), 1u);
  EXPECT_EQ(Get("/v1/principles" + m, kKeyA2).j["principles"].size(), 0u);
  EXPECT_EQ(PutJson("/v1/principles/P-2", kKeyA2, {{"namespace", ns}, {"base_version", 1}, {"statement", "Lasers on."}})
                .status,
            404);
  EXPECT_EQ(Get("/v1/principles/P-2" + m, kKeyA).j["version"], 1);

  // MCP over HTTP serves the key's clearance too.
  const std::string sa = McpInitialize(kKeyA);
  const std::string sa2 = McpInitialize(kKeyA2);
  auto found = [](const json& result) {
    std::set<std::string> ids;
    for (const json& h : result["structuredContent"]["hits"]) ids.insert(h["memory"]["id"].get<std::string>());
    return ids;
  };
  const json search = {{"query", "secret relay decision lasers"}, {"top_k", 20}};
  EXPECT_TRUE(found(McpTool(kKeyA, sa, "memory_search", search)).contains(secret));
  json limited = McpTool(kKeyA2, sa2, "memory_search", search);
  EXPECT_EQ(limited["isError"], false) << limited.dump();
  EXPECT_FALSE(found(limited).contains(secret));
  EXPECT_TRUE(found(limited).contains(open));
  json fact_history = McpTool(kKeyA2, sa2, "fact_history", {{"id", secret}});
  EXPECT_EQ(fact_history["isError"], true);
  json wq = McpTool(kKeyA2, sa2, "workflow_memory_query",
                    {{"task_description", "relay decision lasers UDP"},
                     {"namespace", {{"mission", kMission}, {"operator", "ann"}}}});
  ASSERT_EQ(wq["isError"], false) << wq.dump();
  EXPECT_EQ(wq["structuredContent"]["markdown"].get<std::string>().find("Secret relay decision"), std::string::npos);
  json wq_a = McpTool(kKeyA, sa, "workflow_memory_query",
                      {{"task_description", "relay decision lasers UDP"},
                     {"namespace", {{"mission", kMission}, {"operator", "ann"}}}});
  EXPECT_NE(wq_a["structuredContent"]["markdown"].get<std::string>().find("Secret relay decision"), std::string::npos);
  json written = McpTool(kKeyA2, sa2, "decision_record",
                         {{"title", "A third secret"}, {"context", "c"}, {"decision", "d"}, {"access_level", 4},
                          {"mission", kMission}});
  EXPECT_EQ(written["isError"], true);
  // A session belongs to the key that opened it: another clearance cannot ride it.
  EXPECT_EQ(Mcp(kKeyA2, sa, {{"jsonrpc", "2.0"}, {"id", 9}, {"method", "ping"}}).status, 404);
}

}  // namespace
}  // namespace msp
