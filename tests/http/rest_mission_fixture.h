// The fixture of the REST mission tests (rest_mission_test.cc,
// rest_mission_access_test.cc): a RestFixture server with the helpers that
// set an operator's clearance and speak MCP over HTTP with a key.
#ifndef MSP_TESTS_HTTP_REST_MISSION_FIXTURE_H_
#define MSP_TESTS_HTTP_REST_MISSION_FIXTURE_H_

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

namespace msp::rest_mission {

using nlohmann::json;

inline const std::string kMission = "mars";

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

}  // namespace msp::rest_mission

#endif  // MSP_TESTS_HTTP_REST_MISSION_FIXTURE_H_
