// The stdio MCP client against a tiny server (mcp_test_server.cc).
#include "agent/mcp_client.h"

#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp {
namespace {

TEST(McpServerSpecTest, Parses) {
  ASSERT_OK_AND_ASSIGN(McpServerSpec s, ParseMcpServerSpec("files=node 'my server.js' --root \"/a b\" x\\ y"));
  EXPECT_EQ(s.name, "files");
  EXPECT_EQ(s.argv, (std::vector<std::string>{"node", "my server.js", "--root", "/a b", "x y"}));
  EXPECT_TRUE(ParseMcpServerSpec("no-equals").status().IsInvalidArgument());
  EXPECT_TRUE(ParseMcpServerSpec("bad name=x").status().IsInvalidArgument());
  EXPECT_TRUE(ParseMcpServerSpec("x=").status().IsInvalidArgument());
  EXPECT_TRUE(ParseMcpServerSpec("x=node 'open").status().IsInvalidArgument());
}

TEST(McpClientTest, InitializesListsAndCalls) {
  McpServerSpec spec{"echo", {MSP_MCP_TEST_SERVER}};
  ASSERT_OK_AND_ASSIGN(auto client, McpClient::Start(spec, 10000));
  EXPECT_EQ(client->server_name(), "echo-test");
  ASSERT_OK_AND_ASSIGN(auto tools, client->ListTools());
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0].name, "shout");
  EXPECT_EQ(tools[0].input_schema["required"][0], "text");
  ASSERT_OK_AND_ASSIGN(McpCallResult r, client->CallTool("shout", {{"text", "hello"}}));
  EXPECT_EQ(r.text, "HELLO");
  EXPECT_FALSE(r.is_error);
  ASSERT_OK_AND_ASSIGN(r, client->CallTool("fail", nlohmann::json::object()));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "it failed on purpose");
  auto unknown = client->CallTool("nope", nlohmann::json::object());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown tool nope"), std::string::npos) << unknown.status().ToString();
}

TEST(McpClientTest, AServerThatCannotStartOrDiesIsAnError) {
  auto missing = McpClient::Start({"ghost", {"/nonexistent/mcp-server"}}, 2000);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(missing.status().message().find("ghost"), std::string::npos) << missing.status().ToString();
  // A program that exits at once: the handshake sees the output close.
  auto quits = McpClient::Start({"quits", {"true"}}, 5000);
  ASSERT_FALSE(quits.ok());
  EXPECT_NE(quits.status().message().find("quits"), std::string::npos) << quits.status().ToString();
}

}  // namespace
}  // namespace msp
