// The faces tests of one caller (the fixture is faces_fixture.h): a caller
// (tenant, clearance) gets the same records from every face, because the
// engine enforces its clearance (msp/caller.h), not the faces; a decision
// above the asker is not found on any face; a write's time to live and
// request id have one range and one meaning everywhere.
#include "tests/http/faces_fixture.h"

namespace msp {
namespace {

using namespace faces;  // NOLINT: the fixture and its helpers
using nlohmann::json;

// One caller, three faces: the limited one (REST and MCP with a key of
// clearance 4, the command line with `--operator low`, low's clearance
// being 4) and the unlimited one (a key without a clearance, the command
// line without --operator: the data directory's owner) each get the same
// records everywhere; a level-5 record exists only for the second.
TEST_F(FacesTest, OneCallerGetsTheSameRecordsOnEveryFace) {
  const std::string open_id = "0190e5c2-0000-7000-8000-0000000000b1";
  const std::string secret_id = "0190e5c2-0000-7000-8000-0000000000b2";
  ASSERT_EQ(Msp({"init", "--data-dir", data_}).code, 0);
  {
    std::ofstream lines(dir_.path() + "/records.jsonl");
    lines << R"({"id": ")" << open_id << R"(", "namespace": {"tenant": "acme", "operator": "low"}, "kind": "fact", )"
          << R"("text": "The billing ledger is reconciled every night", "access_level": 0})" << "\n"
          << R"({"id": ")" << secret_id
          << R"(", "namespace": {"tenant": "acme", "operator": "low"}, "kind": "fact", )"
          << R"("text": "The billing ledger signing key rotates every week", "access_level": 5})" << "\n";
  }
  Outcome imported = Msp({"import", dir_.path() + "/records.jsonl", "--data-dir", data_});
  ASSERT_EQ(imported.code, 0) << imported.err;
  ASSERT_EQ(MspIn({"operator", "set", "low", "--clearance", "4"}).code, 0);
  Outcome open_decision = MspIn({"decision", "add", "--mission", "m1", "--title", "Keep the billing ledger in PostgreSQL",
                                 "--context", "The ledger needs transactions.", "--decision", "PostgreSQL."});
  ASSERT_EQ(open_decision.code, 0) << open_decision.err;
  Outcome secret_decision =
      MspIn({"decision", "add", "--mission", "m1", "--title", "Sign the billing ledger with the vault key", "--context",
             "Exports leave the building.", "--decision", "The vault key signs them.", "--access-level", "5"});
  ASSERT_EQ(secret_decision.code, 0) << secret_decision.err;

  struct FaceCaller {
    std::string name;
    std::vector<std::string> cli;  // the command line's caller flags
    std::string key;               // REST's and MCP's
    json ns;                       // the namespace of REST and MCP requests
    bool sees_secret = false;
    int clearance = 0;
  };
  const std::vector<FaceCaller> callers = {
      {"limited", {"--operator", "low"}, kKey4, {{"operator", "low"}}, false, 4},
      {"owner", {}, kKey, json::object(), true, kMaxAccessLevel},
  };
  auto cli_in = [&](std::vector<std::string> args, const FaceCaller& c) {
    args.insert(args.end(), c.cli.begin(), c.cli.end());
    return MspIn(std::move(args));
  };
  auto ids_of = [](const json& hits) {
    std::set<std::string> ids;
    for (const json& h : hits) ids.insert(h["memory"]["id"].get<std::string>());
    return ids;
  };
  const json search = {{"query", "billing ledger"}, {"top_k", 20}, {"record_access", false}};
  auto query_of = [](const FaceCaller& c) {
    json ns = c.ns;
    ns["mission"] = "m1";
    return json{{"task_description", "how is the billing ledger kept"}, {"namespace", ns}};
  };

  // The command line first (msp serve then holds the data directory).
  struct CliAnswers {
    Outcome search, history_secret, history_open, get_secret, get_open, delete_secret, exported, query, write_above,
        list;
  };
  std::vector<CliAnswers> cli;
  for (const FaceCaller& c : callers) {
    CliAnswers a;
    // Without access bookkeeping, as REST and MCP below: the records' access
    // counts stay those every face's get answers.
    a.search = cli_in({"search", "billing ledger", "--top-k", "20", "--record-access", "false", "--json"}, c);
    a.history_secret = cli_in({"history", secret_id, "--json"}, c);
    a.history_open = cli_in({"history", open_id, "--json"}, c);
    a.get_secret = cli_in({"get", secret_id, "--json"}, c);
    a.get_open = cli_in({"get", open_id, "--json"}, c);
    // Only the limited caller deletes: the secret is not there for it.
    if (!c.sees_secret) a.delete_secret = cli_in({"delete", secret_id, "--reason", "limited", "--json"}, c);
    a.exported = cli_in({"export"}, c);
    a.list = cli_in({"list", "--kinds", "fact", "--json"}, c);
    a.query = cli_in({"query", "how is the billing ledger kept", "--mission", "m1", "--json"}, c);
    cli.push_back(std::move(a));
  }
  // A write above the limited caller's clearance: refused, nothing stored.
  Outcome above = cli_in({"decision", "add", "--mission", "m1", "--title", "Above", "--context", "C", "--decision",
                          "D", "--access-level", "5"},
                         callers[0]);
  EXPECT_EQ(above.code, 1) << above.err;
  EXPECT_NE(above.err.find("clearance 4"), std::string::npos) << above.err;

  StartServe();
  for (size_t i = 0; i < callers.size(); ++i) {
    const FaceCaller& c = callers[i];
    SCOPED_TRACE(c.name);
    key_ = c.key;
    ASSERT_NO_FATAL_FAILURE(InitMcp());

    // Search: the same hits on every face.
    json request = search;
    request["namespace"] = c.ns;
    auto rest = Post("/v1/search", request);
    ASSERT_TRUE(rest && rest->status == 200) << (rest ? rest->body : "no answer");
    const std::set<std::string> rest_ids = ids_of(json::parse(rest->body)["hits"]);
    const json mcp = Mcp("tools/call", {{"name", "memory_search"}, {"arguments", request}});
    ASSERT_EQ(mcp["isError"], false) << mcp.dump();
    ASSERT_EQ(cli[i].search.code, 0) << cli[i].search.err;
    EXPECT_EQ(ids_of(mcp["structuredContent"]["hits"]), rest_ids);
    EXPECT_EQ(ids_of(json::parse(cli[i].search.out)["hits"]), rest_ids);
    EXPECT_EQ(rest_ids.count(open_id), 1u);
    EXPECT_EQ(rest_ids.count(secret_id), c.sees_secret ? 1u : 0u);

    // History by id: the secret one is missing, alike, unless the caller may see it.
    const std::string ns_param = c.ns.contains("operator") ? "?operator=low" : "";
    auto history = Get("/v1/memories/" + secret_id + "/history" + ns_param);
    ASSERT_TRUE(history);
    const json tool = Mcp("tools/call", {{"name", "fact_history"}, {"arguments", {{"id", secret_id}}}});
    if (c.sees_secret) {
      EXPECT_EQ(history->status, 200) << history->body;
      EXPECT_EQ(tool["isError"], false) << tool.dump();
      EXPECT_EQ(cli[i].history_secret.code, 0) << cli[i].history_secret.err;
    } else {
      EXPECT_EQ(history->status, 404) << history->body;
      EXPECT_EQ(tool["isError"], true) << tool.dump();
      EXPECT_EQ(tool["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u) << tool.dump();
      EXPECT_EQ(cli[i].history_secret.code, 4) << cli[i].history_secret.err;
    }
    // memory_history and memory_get by id: the same.
    const json args_secret = {{"id", secret_id}, {"namespace", c.ns}};
    const json mcp_history = Mcp("tools/call", {{"name", "memory_history"}, {"arguments", args_secret}});
    auto get_secret = Get("/v1/memories/" + secret_id + ns_param);
    ASSERT_TRUE(get_secret);
    const json mcp_get = Mcp("tools/call", {{"name", "memory_get"}, {"arguments", args_secret}});
    if (c.sees_secret) {
      EXPECT_EQ(mcp_history["isError"], false) << mcp_history.dump();
      EXPECT_EQ(mcp_history["structuredContent"], json::parse(history->body));
      EXPECT_EQ(json::parse(cli[i].history_secret.out), json::parse(history->body));
      EXPECT_EQ(get_secret->status, 200) << get_secret->body;
      EXPECT_EQ(mcp_get["isError"], false) << mcp_get.dump();
      EXPECT_EQ(mcp_get["structuredContent"], json::parse(get_secret->body));
      ASSERT_EQ(cli[i].get_secret.code, 0) << cli[i].get_secret.err;
      EXPECT_EQ(json::parse(cli[i].get_secret.out), json::parse(get_secret->body));
    } else {
      EXPECT_EQ(mcp_history["isError"], true) << mcp_history.dump();
      EXPECT_EQ(get_secret->status, 404) << get_secret->body;
      EXPECT_EQ(mcp_get["isError"], true) << mcp_get.dump();
      EXPECT_EQ(mcp_get["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u) << mcp_get.dump();
      EXPECT_EQ(cli[i].get_secret.code, 4) << cli[i].get_secret.err;
      // memory_delete of what the caller may not see: not found on every
      // face, and nothing deleted (the owner gets it below).
      auto deleted = Delete("/v1/memories/" + secret_id + ns_param);
      ASSERT_TRUE(deleted);
      EXPECT_EQ(deleted->status, 404) << deleted->body;
      const json mcp_delete = Mcp("tools/call", {{"name", "memory_delete"}, {"arguments", args_secret}});
      EXPECT_EQ(mcp_delete["isError"], true) << mcp_delete.dump();
      EXPECT_EQ(mcp_delete["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u)
          << mcp_delete.dump();
      EXPECT_EQ(cli[i].delete_secret.code, 4) << cli[i].delete_secret.err;
    }
    auto get_open = Get("/v1/memories/" + open_id + ns_param);
    ASSERT_TRUE(get_open && get_open->status == 200) << (get_open ? get_open->body : "no answer");
    ASSERT_EQ(cli[i].get_open.code, 0) << cli[i].get_open.err;
    EXPECT_EQ(json::parse(cli[i].get_open.out), json::parse(get_open->body));
    const json mcp_open = Mcp("tools/call", {{"name", "memory_get"}, {"arguments", {{"id", open_id}, {"namespace", c.ns}}}});
    EXPECT_EQ(mcp_open["structuredContent"], json::parse(get_open->body)) << mcp_open.dump();
    auto open_history = Get("/v1/memories/" + open_id + "/history" + ns_param);
    ASSERT_TRUE(open_history);
    EXPECT_EQ(open_history->status, 200) << open_history->body;
    EXPECT_EQ(cli[i].history_open.code, 0) << cli[i].history_open.err;

    // memory_list: the same records (REST by the older parameter name).
    auto listed = Get("/v1/memories?kind=fact" + (ns_param.empty() ? "" : "&" + ns_param.substr(1)));
    ASSERT_TRUE(listed && listed->status == 200) << (listed ? listed->body : "no answer");
    const json mcp_list = Mcp("tools/call", {{"name", "memory_list"},
                                             {"arguments", {{"filters", {{"kinds", {"fact"}}}}, {"namespace", c.ns}}}});
    ASSERT_EQ(cli[i].list.code, 0) << cli[i].list.err;
    const json rest_list = json::parse(listed->body);
    EXPECT_EQ(mcp_list["structuredContent"], rest_list) << mcp_list.dump();
    EXPECT_EQ(json::parse(cli[i].list.out), rest_list);
    std::set<std::string> listed_ids;
    for (const json& m : rest_list["memories"]) listed_ids.insert(m["id"].get<std::string>());
    EXPECT_EQ(listed_ids.count(open_id), 1u);
    EXPECT_EQ(listed_ids.count(secret_id), c.sees_secret ? 1u : 0u);

    // Export: the same lines.
    auto exported = Get("/v1/export" + ns_param);
    ASSERT_TRUE(exported && exported->status == 200);
    ASSERT_EQ(cli[i].exported.code, 0) << cli[i].exported.err;
    for (const std::string* text : {&exported->body, &cli[i].exported.out}) {
      EXPECT_NE(text->find(open_id), std::string::npos);
      EXPECT_EQ(text->find(secret_id) != std::string::npos, c.sees_secret);
    }

    // workflow_memory_query: the same clearance, the secret decision only for the owner.
    auto query = Post("/v1/query", query_of(c));
    ASSERT_TRUE(query && query->status == 200) << (query ? query->body : "no answer");
    const json rest_query = json::parse(query->body);
    const json mcp_query = Mcp("tools/call", {{"name", "workflow_memory_query"}, {"arguments", query_of(c)}});
    ASSERT_EQ(mcp_query["isError"], false) << mcp_query.dump();
    ASSERT_EQ(cli[i].query.code, 0) << cli[i].query.err;
    const json cli_query = json::parse(cli[i].query.out);
    for (const json* q : {&rest_query, &mcp_query["structuredContent"], &cli_query}) {
      EXPECT_EQ((*q)["clearance"], c.clearance) << q->dump();
      const std::string markdown = (*q)["markdown"];
      EXPECT_NE(markdown.find("Keep the billing ledger in PostgreSQL"), std::string::npos) << markdown;
      EXPECT_EQ(markdown.find("vault key") != std::string::npos, c.sees_secret) << markdown;
    }
  }

  // The limited caller's write above its clearance, on REST and MCP.
  key_ = kKey4;
  ASSERT_NO_FATAL_FAILURE(InitMcp());
  const json above_decision = {{"namespace", {{"mission", "m1"}, {"operator", "low"}}},
                               {"title", "Above"},
                               {"context", "C"},
                               {"decision", "D"},
                               {"access_level", 5}};
  auto refused = Post("/v1/decisions", above_decision);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  const json tool = Mcp("tools/call", {{"name", "decision_record"},
                                       {"arguments",
                                        {{"namespace", {{"mission", "m1"}}}, {"title", "Above"}, {"context", "C"},
                                         {"decision", "D"}, {"access_level", 5}}}});
  EXPECT_EQ(tool["isError"], true) << tool.dump();
  EXPECT_EQ(tool["content"][0]["text"].get<std::string>().rfind("forbidden: ", 0), 0u) << tool.dump();
  key_ = kKey;
  auto decisions = Get("/v1/decisions?mission=m1");
  ASSERT_TRUE(decisions && decisions->status == 200);
  EXPECT_EQ(json::parse(decisions->body)["decisions"].size(), 2u) << decisions->body;
}

// A decision above the asker's clearance (the namespace's operator, low at
// clearance 4, asking with a key that has none) is not found by
// decision_status and decision_supersede on any face, named as the old one
// or as the successor, and nothing changes; the owner, asking as itself,
// may move it.
TEST_F(FacesTest, ADecisionAboveTheAskerIsNotFoundOnEveryFace) {
  ASSERT_EQ(Msp({"init", "--data-dir", data_}).code, 0);
  ASSERT_EQ(MspIn({"operator", "set", "low", "--clearance", "4"}).code, 0);
  auto add = [&](const std::string& title, const std::string& level) {
    Outcome added = MspIn({"decision", "add", "--mission", "m1", "--title", title, "--context", "The ledger grows.",
                           "--decision", "As titled.", "--access-level", level, "--json"});
    EXPECT_EQ(added.code, 0) << added.err;
    return json::parse(added.out, nullptr, false).value("id", std::string());
  };
  const std::string open = add("Keep the billing ledger in PostgreSQL", "0");
  const std::string secret = add("Sign the billing ledger with the vault key", "5");
  ASSERT_FALSE(open.empty());
  ASSERT_FALSE(secret.empty());
  const json ns = {{"mission", "m1"}, {"operator", "low"}};
  const std::vector<std::pair<std::string, json>> calls = {
      {"decision_status", {{"decision_id", secret}, {"status", "deprecated"}, {"namespace", ns}}},
      {"decision_supersede", {{"decision_id", secret}, {"by", open}, {"namespace", ns}}},
      {"decision_supersede", {{"decision_id", open}, {"by", secret}, {"namespace", ns}}},
      {"decision_show", {{"decision_id", secret}, {"namespace", ns}}},
  };
  for (const auto& [name, request] : calls) {
    SCOPED_TRACE(name + " " + request.dump());
    const api::OperationInfo& info = api::FindOperation(name)->info();
    Outcome cli = MspIn(CliArgs(info, request));
    EXPECT_EQ(cli.code, 4) << cli.out << cli.err;
  }
  StartServe();
  for (const auto& [name, request] : calls) {
    SCOPED_TRACE(name + " " + request.dump());
    const api::OperationInfo& info = api::FindOperation(name)->info();
    auto rest = Rest(info, request);
    ASSERT_TRUE(rest);
    EXPECT_EQ(rest->status, 404) << rest->body;
    const json mcp = Mcp("tools/call", {{"name", info.mcp_tool}, {"arguments", request}});
    EXPECT_EQ(mcp["isError"], true) << mcp.dump();
    EXPECT_EQ(mcp["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u) << mcp.dump();
  }
  // Nothing changed; the owner (the key, no operator) sees both and may move the secret one.
  auto shown = Get("/v1/decisions/" + secret + "?mission=m1");
  ASSERT_TRUE(shown && shown->status == 200) << (shown ? shown->body : "no answer");
  EXPECT_EQ(json::parse(shown->body)["status"], "accepted");
  EXPECT_EQ(json::parse(shown->body)["superseded_by"], "");
  auto listed = Get("/v1/decisions?mission=m1");
  ASSERT_TRUE(listed && listed->status == 200);
  const json decisions = json::parse(listed->body)["decisions"];
  EXPECT_EQ(decisions.size(), 2u);
  for (const json& d : decisions) {
    EXPECT_EQ(d["status"], "accepted") << d.dump();
    EXPECT_EQ(d["supersedes"], "") << d.dump();
  }
  const json mine = Mcp("tools/call", {{"name", "decision_status"},
                                       {"arguments", {{"decision_id", secret}, {"status", "deprecated"},
                                                      {"namespace", {{"mission", "m1"}}}}}});
  ASSERT_EQ(mine["isError"], false) << mine.dump();
  EXPECT_EQ(mine["structuredContent"]["status"], "deprecated");
}

// A write's time to live has one range on every face, 1..36500 days, and an
// explicit 0 (which reads as "expire at once" but would have meant "the
// configured default") is refused everywhere with an error saying to leave
// the field out; a write keyed by request_id is answered once on every face
// (REST takes the body field as the CLI and MCP do, beside its header).
TEST_F(FacesTest, WriteTimeToLiveAndRequestIdAreTheSameOnEveryFace) {
  ASSERT_EQ(Msp({"init", "--data-dir", data_}).code, 0);
  const std::string text = "The staging cluster is rebuilt every Monday morning";
  for (const int ttl : {0, 36501, -1}) {
    SCOPED_TRACE(ttl);
    Outcome cli = MspIn({"write", text, "--tag", "preference", "--ttl-days", std::to_string(ttl)});
    EXPECT_EQ(cli.code, 2) << cli.err;
    if (ttl == 0) {
      EXPECT_NE(cli.err.find("--ttl-days 0 is not a time to live"), std::string::npos) << cli.err;
    } else {
      EXPECT_NE(cli.err.find("--ttl-days must be between 1 and 36500"), std::string::npos) << cli.err;
    }
  }
  Outcome kept = MspIn({"write", text, "--tag", "preference", "--ttl-days", "30", "--request-id", "cli-key-1"});
  ASSERT_EQ(kept.code, 0) << kept.err;
  Outcome repeat = MspIn({"write", text, "--tag", "preference", "--ttl-days", "30", "--request-id", "cli-key-1"});
  ASSERT_EQ(repeat.code, 0) << repeat.err;
  EXPECT_EQ(repeat.out, kept.out);

  ASSERT_NO_FATAL_FAILURE(StartServe());
  auto before = Get("/v1/memories");
  ASSERT_TRUE(before && before->status == 200) << (before ? before->body : "");
  const size_t stored = json::parse(before->body)["memories"].size();
  for (const int ttl : {0, 36501, -1}) {
    SCOPED_TRACE(ttl);
    auto rest = Post("/v1/memories", {{"text", text}, {"tags", {"preference"}}, {"ttl_days", ttl}});
    ASSERT_TRUE(rest);
    EXPECT_EQ(rest->status, 400) << rest->body;
    const std::string message = json::parse(rest->body)["error"]["message"];
    EXPECT_NE(message.find("ttl_days"), std::string::npos) << message;
    if (ttl == 0) {
      EXPECT_NE(message.find("0 is not a time to live"), std::string::npos) << message;
    }
    const json tool = Mcp("tools/call", {{"name", "memory_write"}, {"arguments", {{"text", text}, {"ttl_days", ttl}}}});
    EXPECT_EQ(tool["isError"], true) << tool.dump();
    const std::string said = tool["content"][0]["text"];
    EXPECT_NE(said.find("ttl_days"), std::string::npos) << said;
  }
  auto all = Get("/v1/memories");
  ASSERT_TRUE(all && all->status == 200) << (all ? all->body : "");
  EXPECT_EQ(json::parse(all->body)["memories"].size(), stored) << all->body;

  // request_id in the REST body: the second call answers the first result.
  const json keyed = {{"text", "The release train leaves every second Thursday"},
                      {"tags", {"preference"}},
                      {"ttl_days", 365},
                      {"request_id", "rest-key-1"}};
  auto first = Post("/v1/memories", keyed);
  auto again = Post("/v1/memories", keyed);
  ASSERT_TRUE(first && again);
  ASSERT_EQ(first->status, 201) << first->body;
  EXPECT_EQ(again->status, 201) << again->body;
  EXPECT_EQ(json::parse(again->body)["id"], json::parse(first->body)["id"]);
  auto other = Post("/v1/memories", With(keyed, "text", "Another sentence under the same key of a write"));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 409) << other->body;
  auto bad_key = Post("/v1/memories", With(keyed, "request_id", ""));
  ASSERT_TRUE(bad_key);
  EXPECT_EQ(bad_key->status, 400) << bad_key->body;
  auto batch = Post("/v1/memories", {{"memories", json::array({keyed})}});
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->status, 400) << batch->body;
  auto after = Get("/v1/memories");
  ASSERT_TRUE(after && after->status == 200);
  EXPECT_EQ(json::parse(after->body)["memories"].size(), stored + 1) << after->body;
}

}  // namespace
}  // namespace msp
