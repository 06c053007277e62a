// The mission routes of the REST API over real sockets, as a tenant and a
// clearance see them (fixture: rest_mission_fixture.h): tenant isolation,
// the ADR import sent as text, and a key's clearance on every route (REST
// and MCP over HTTP).
#include "tests/http/rest_mission_fixture.h"

namespace msp {
namespace {

using namespace rest_mission;  // NOLINT: the fixture
using nlohmann::json;

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
