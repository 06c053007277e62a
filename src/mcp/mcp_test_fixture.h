// The fixture of the tests of msp's MCP tools over the real engine
// (mcp_server_test.cc, mcp_mission_tools_test.cc): a store in a temporary
// directory, an McpServer over it with every tool, a session of tenant acme,
// and Call, which checks a successful result against the tool's outputSchema.
#ifndef MSP_MCP_MCP_TEST_FIXTURE_H_
#define MSP_MCP_MCP_TEST_FIXTURE_H_

#include "mcp/mcp_server.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "api/operations.h"
#include "codec/memory_json.h"
#include "graph/knowledge_graph.h"
#include "codec/json_schema.h"
#include "msp/mission.h"
#include "tests/support/test_util.h"

namespace msp::mcp::testing_fixture {

using nlohmann::json;

inline json Request(const json& id, const std::string& method, json params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

inline json InitParams(const std::string& version) {
  return json{{"protocolVersion", version},
              {"capabilities", json::object()},
              {"clientInfo", {{"name", "test"}, {"version", "1"}}}};
}

// msp's own tools over the real engine.
class McpToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Options options;
    options.store.data_dir = dir_.path() + "/data";
    options.store.synchronous = "normal";
    auto engine = MemoryLayer::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    McpServerOptions server_options;
    server_options.options.mcp.read_graph_page_size = 2;
    server_ = std::make_unique<McpServer>(*engine_, server_options);
    session_.ns.tenant = "acme";
    session_.ns.user = "ann";
    json r = json::parse(*server_->Handle(session_, Request(1, "initialize", InitParams("2025-06-18")).dump()));
    ASSERT_TRUE(r.contains("result"));
  }

  // Calls `tool`; a successful result is checked against the tool's outputSchema.
  json Call(const std::string& tool, json arguments) {
    json r = json::parse(
        *server_->Handle(session_, Request(2, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}}).dump()));
    EXPECT_TRUE(r.contains("result")) << r.dump();
    json out = r["result"];
    if (out.value("isError", false)) return out;
    for (const Tool& t : server_->tools()) {
      if (t.name == tool) {
        Status s = ValidateJsonSchema(t.output_schema, out["structuredContent"], tool);
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    }
    return out;
  }

  testing::TempDir dir_{"mcp-tools"};
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<McpServer> server_;
  McpSession session_;
};

}  // namespace msp::mcp::testing_fixture

#endif  // MSP_MCP_MCP_TEST_FIXTURE_H_
