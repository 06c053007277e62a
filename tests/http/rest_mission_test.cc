// The mission-memory routes of the REST API over real sockets (fixture:
// rest_mission_fixture.h): decisions, corrections, workflow_memory_query,
// usage marks, handoff, principles and reports; bad input (400 naming the
// field, nothing changed). (rest_mission_access_test.cc: tenant isolation,
// the ADR import, key clearances.)
#include "tests/http/rest_mission_fixture.h"

namespace msp {
namespace {

using namespace rest_mission;  // NOLINT: the fixture
using nlohmann::json;

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

}  // namespace
}  // namespace msp
