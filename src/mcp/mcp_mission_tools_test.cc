// msp's mission tools over MCP on the real engine (fixture:
// mcp_test_fixture.h): decisions, corrections, queries and usage marks, the
// session's clearance, principles and the operator registry, events and
// reports.
#include "mcp/mcp_test_fixture.h"

namespace msp::mcp {
namespace {

using namespace testing_fixture;  // NOLINT: Request, McpToolsTest
using nlohmann::json;

TEST_F(McpToolsTest, MissionTools) {
  const json decision = {{"title", "Use PostgreSQL for the billing ledger"},
                         {"context", "The ledger needs transactions across accounts and audits."},
                         {"decision", "Store the billing ledger in PostgreSQL with serializable transactions."},
                         {"alternatives", {{{"option", "MongoDB"}, {"reason", "no multi-document transactions then"}}}},
                         {"component", "billing"},
                         {"provenance", {{{"type", "issue"}, {"ref", "42"}}}}};
  json out = Call("decision_record", decision);
  EXPECT_EQ(out["isError"], true);  // no mission: the server has none, the call names none
  EXPECT_EQ(out["content"][0]["text"],
            "invalid_argument: field 'namespace.mission' is required: decisions belong to a mission");

  json with_mission = decision;
  with_mission["namespace"] = {{"mission", "m1"}};
  out = Call("decision_record", with_mission);
  ASSERT_EQ(out["isError"], false) << out.dump();
  const std::string decision_id = out["structuredContent"]["id"];
  EXPECT_EQ(out["structuredContent"]["status"], "accepted");

  out = Call("workflow_memory_query",
             {{"task_description", "which database holds the billing ledger"},
              {"namespace", {{"mission", "m1"}}},
              {"token_budget", 500}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  const json& q = out["structuredContent"];
  EXPECT_FALSE(q["retrieval_id"].get<std::string>().empty());
  EXPECT_NE(q["markdown"].get<std::string>().find("PostgreSQL"), std::string::npos);
  EXPECT_LE(q["tokens_used"].get<int64_t>(), 500);
  EXPECT_NE(q["digest"].dump().find(decision_id), std::string::npos);

  json correction = {{"class", "missing_context"},
                     {"category", "api_contract"},
                     {"component", "billing"},
                     {"outcome", "modified"},
                     {"summary", "The digest lacked the rate limit of the billing API."},
                     {"retrieval_id", q["retrieval_id"]},
                     {"namespace", {{"mission", "m1"}}}};
  out = Call("correction_record", correction);
  EXPECT_EQ(out["isError"], true);  // no operator
  // namespace {mission, operator} as on every face: a flat mission is an unknown field.
  json flat = correction;
  flat.erase("namespace");
  flat["mission"] = "m1";
  flat["operator"] = "op-ann";
  out = Call("correction_record", flat);
  EXPECT_EQ(out["isError"], true);
  EXPECT_NE(out["content"][0]["text"].get<std::string>().find("mission"), std::string::npos) << out.dump();
  correction["namespace"]["operator"] = "op-ann";
  out = Call("correction_record", correction);
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["operator"], "op-ann");
  correction["summary"] = "First sentence. Second sentence with the raw output.";
  out = Call("correction_record", correction);
  EXPECT_EQ(out["isError"], true);  // bad input, as on every face
  EXPECT_NE(out["content"][0]["text"].get<std::string>().find("more than one sentence"), std::string::npos)
      << out.dump();

  // The events and reports are MCP tools as on every face (src/api's event_add ... report_redundancy).
  out = Call("event_add", {{"text", "The billing export stalled."},
                           {"type", "incident"},
                           {"component", "billing"},
                           {"namespace", {{"mission", "m1"}, {"operator", "op-ann"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  const std::string event_id = out["structuredContent"]["id"];
  EXPECT_EQ(out["structuredContent"]["operator"], "op-ann");
  out = Call("event_add", {{"text", "x"}, {"type", "gossip"}, {"component", "billing"},
                           {"namespace", {{"mission", "m1"}}}});
  EXPECT_EQ(out["isError"], true);
  EXPECT_NE(out["content"][0]["text"].get<std::string>().find("field 'type': unknown value 'gossip'"),
            std::string::npos)
      << out.dump();
  out = Call("event_list", {{"namespace", {{"mission", "m1"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  ASSERT_EQ(out["structuredContent"]["events"].size(), 1u) << out.dump();
  EXPECT_EQ(out["structuredContent"]["events"][0]["id"], event_id);
  out = Call("report_load", {{"namespace", {{"mission", "m1"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["events_in_window"], 1);
  out = Call("report_corrections", {{"namespace", {{"mission", "m1"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["linked_corrections"], 1) << out.dump();
  out = Call("report_correction_pairs", {{"namespace", {{"mission", "m1"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  ASSERT_EQ(out["structuredContent"]["pairs"].size(), 1u) << out.dump();
  EXPECT_EQ(out["structuredContent"]["pairs"][0]["retrieval_id"], correction["retrieval_id"]);
  out = Call("report_redundancy", {{"namespace", {{"mission", "m1"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_GE(out["structuredContent"]["total"]["retrievals"].get<int64_t>(), 1) << out.dump();

  const json handoff = {{"from_operator", "op-ann"}, {"to_operator", "op-bob"}, {"namespace", {{"mission", "m1"}}}};
  out = Call("handoff_digest", handoff);
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_NE(out["structuredContent"]["markdown"].get<std::string>().find("PostgreSQL"), std::string::npos);
  // handoff_digest's one answer (src/api/handoff.cc): REST's, with the
  // clearance read at and the degraded mode, and the default budget 8000.
  ASSERT_TRUE(out["structuredContent"]["clearance"].is_number_integer()) << out.dump();
  EXPECT_EQ(out["structuredContent"]["clearance"], out["structuredContent"]["digest"]["clearance"]);
  EXPECT_EQ(out["structuredContent"]["degraded"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["token_budget"], 8000) << out.dump();
  // The budget's range is every face's, workflow_memory_query's: 0..100,000,000
  // (this tool stopped at 1,000,000).
  json roomy = handoff;
  roomy["token_budget"] = 2000000;
  out = Call("handoff_digest", roomy);
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["token_budget"], 2000000);
  roomy["token_budget"] = 100000001;
  out = Call("handoff_digest", roomy);
  EXPECT_EQ(out["isError"], true);
  EXPECT_NE(out["content"][0]["text"].get<std::string>().find("token_budget"), std::string::npos) << out.dump();
  json since = handoff;
  since["since"] = "yesterday";
  out = Call("handoff_digest", since);
  EXPECT_EQ(out["isError"], true);
  // namespace {mission} as on every face: a flat mission is an unknown field.
  json flat_mission = handoff;
  flat_mission.erase("namespace");
  flat_mission["mission"] = "m1";
  out = Call("handoff_digest", flat_mission);
  EXPECT_EQ(out["isError"], true);
  EXPECT_NE(out["content"][0]["text"].get<std::string>().find("unknown field 'mission'"), std::string::npos)
      << out.dump();
}

TEST_F(McpToolsTest, MarkUsedAndSessionClearance) {
  session_.ns.user.clear();  // memory_search then sees the mission's records
  json decision = {{"title", "Use UDP for the relay channel"},
                   {"context", "The relay drops packets under load."},
                   {"decision", "Carry relay telemetry over UDP."},
                   {"component", "relay"},
                   {"namespace", {{"mission", "m1"}}}};
  json out = Call("decision_record", decision);
  ASSERT_EQ(out["isError"], false) << out.dump();
  const std::string open_id = out["structuredContent"]["id"];
  decision["title"] = "Aim the relay lasers at the orbiter";
  decision["access_level"] = 3;
  out = Call("decision_record", decision);
  ASSERT_EQ(out["isError"], false) << out.dump();
  const std::string secret_id = out["structuredContent"]["id"];

  out = Call("workflow_memory_query", {{"task_description", "relay channel UDP lasers"},
                                       {"namespace", {{"mission", "m1"}, {"operator", "ann"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  const std::string rid = out["structuredContent"]["retrieval_id"];
  const json m1 = {{"mission", "m1"}};
  out = Call("workflow_mark_used", {{"retrieval_id", rid}, {"entries", {open_id}}, {"namespace", m1}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["used"], json({open_id}));
  EXPECT_GE(out["structuredContent"]["served"].get<int>(), 1);
  out = Call("workflow_mark_used", {{"retrieval_id", rid}, {"entries", {"not-served"}}, {"namespace", m1}});
  EXPECT_EQ(out["isError"], true);
  out = Call("workflow_mark_used", {{"retrieval_id", rid}, {"entries", json::array()}, {"namespace", m1}});
  EXPECT_EQ(out["isError"], true);  // one entry at least
  EXPECT_NE(out["content"][0]["text"].get<std::string>().find("field 'entries' must hold 1..1000"), std::string::npos)
      << out.dump();

  // A session with clearance 1 (its key's): level-3 records are never served.
  Namespace mission;
  mission.tenant = "acme";
  mission.mission = "m1";
  OperatorRecord ann;
  ann.operator_id = "ann";
  ann.clearance = 5;
  ASSERT_OK(SetOperator(*engine_, mission, ann, "test").status());
  out = Call("memory_search", {{"query", "relay lasers orbiter UDP"}, {"top_k", 10}});
  EXPECT_NE(out["structuredContent"].dump().find(secret_id), std::string::npos);
  out = Call("workflow_memory_query", {{"task_description", "relay channel UDP lasers"},
                                       {"namespace", {{"mission", "m1"}, {"operator", "ann"}}}});
  EXPECT_NE(out["structuredContent"]["markdown"].get<std::string>().find("Aim the relay lasers"), std::string::npos);
  session_.clearance = 1;
  out = Call("memory_search", {{"query", "relay lasers orbiter UDP"}, {"top_k", 10}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"].dump().find(secret_id), std::string::npos);
  EXPECT_NE(out["structuredContent"].dump().find(open_id), std::string::npos);
  out = Call("workflow_memory_query", {{"task_description", "relay channel UDP lasers"},
                                       {"namespace", {{"mission", "m1"}, {"operator", "ann"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["markdown"].get<std::string>().find("Aim the relay lasers"), std::string::npos);
  EXPECT_EQ(out["structuredContent"]["digest"]["clearance"], 1);
  out = Call("handoff_digest", {{"from_operator", "bob"}, {"to_operator", "ann"}, {"namespace", {{"mission", "m1"}}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["markdown"].get<std::string>().find("Aim the relay lasers"), std::string::npos);
  out = Call("fact_history", {{"id", secret_id}});
  EXPECT_EQ(out["isError"], true);
  out = Call("decision_record", decision);  // level 3, above the session's clearance
  EXPECT_EQ(out["isError"], true);

  // Graph records above the clearance are hidden too.
  Namespace ns = session_.ns;
  Memory hidden;
  hidden.ns = ns;
  hidden.kind = Kind::kEntity;
  hidden.layer = Layer::kSemantic;
  hidden.id = graph::EntityId(ns, "Laser");
  hidden.text = "Laser: device";
  hidden.body_json = R"({"name":"Laser","entityType":"device","observations":["aimed at the orbiter"]})";
  hidden.access_level = 3;
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {hidden};
  ASSERT_OK(engine_->Commit(batch).status());
  out = Call("open_nodes", {{"names", {"Laser"}}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["entities"].size(), 0u);
  out = Call("read_graph", json::object());
  EXPECT_EQ(out["structuredContent"]["entities"].size(), 0u);
  out = Call("add_observations", {{"observations", {{{"entityName", "Laser"}, {"contents", {"switched on"}}}}}});
  EXPECT_EQ(out["isError"], true);
  session_.clearance.reset();
  out = Call("open_nodes", {{"names", {"Laser"}}});
  EXPECT_EQ(out["structuredContent"]["entities"].size(), 1u);
  EXPECT_EQ(out["structuredContent"]["entities"][0]["observations"], json({"aimed at the orbiter"}));
}

// The principle and operator tools are principle_put ... operator_show, as
// the other faces have them: a stale edit is a conflict; a model may read the
// operator registry but never set a clearance (operator_set is no tool, for
// any session).
TEST_F(McpToolsTest, PrincipleAndOperatorTools) {
  const json m1 = {{"mission", "m1"}};
  json out = Call("principle_put", {{"principle_id", "P-1"}, {"statement", "A human confirms."}, {"namespace", m1}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["version"], 1);
  out = Call("principle_put",
             {{"principle_id", "P-1"}, {"base_version", 1}, {"statement", "Two humans confirm."}, {"namespace", m1}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["version"], 2);
  out = Call("principle_put",
             {{"principle_id", "P-1"}, {"base_version", 1}, {"statement", "Nobody confirms."}, {"namespace", m1}});
  EXPECT_EQ(out["isError"], true);
  EXPECT_EQ(out["content"][0]["text"].get<std::string>().rfind("conflict: ", 0), 0u) << out.dump();
  out = Call("principle_show", {{"principle_id", "P-1"}, {"all", true}, {"namespace", m1}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["versions"].size(), 2u);
  out = Call("principle_list", {{"namespace", m1}});
  ASSERT_EQ(out["structuredContent"]["principles"].size(), 1u);
  EXPECT_EQ(out["structuredContent"]["principles"][0]["statement"], "Two humans confirm.");

  const json set = json::parse(*server_->Handle(
      session_, Request(2, "tools/call",
                        {{"name", "operator_set"},
                         {"arguments", {{"operator_id", "bob"}, {"clearance", 9}, {"namespace", m1}}}})
                    .dump()));
  EXPECT_EQ(set["error"]["code"], kInvalidParams) << set.dump();
  Namespace mission = session_.ns;
  mission.mission = "m1";
  OperatorRecord bob;
  bob.operator_id = "bob";
  bob.clearance = 4;
  ASSERT_TRUE(SetOperator(*engine_, mission, bob, "admin").ok());
  session_.clearance = 4;
  out = Call("operator_show", {{"operator_id", "bob"}, {"namespace", m1}});
  ASSERT_EQ(out["isError"], false) << out.dump();
  EXPECT_EQ(out["structuredContent"]["clearance"], 4);
  session_.clearance.reset();
  out = Call("operator_list", {{"namespace", m1}});
  ASSERT_EQ(out["structuredContent"]["operators"].size(), 1u);
}

}  // namespace
}  // namespace msp::mcp
