// Tests for the graph answers written as text (graph_json.h): the same bytes
// DumpJson writes for the nlohmann objects the graph tools built before
// (and for the pretty text of them as a JSON string), alone and in the whole
// tools/call reply of search_nodes, open_nodes and read_graph.
#include "mcp/graph_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codec/memory_json.h"
#include "graph/knowledge_graph.h"
#include "mcp/mcp_test_fixture.h"

namespace msp::mcp {
namespace {

using namespace testing_fixture;  // NOLINT: Request, McpToolsTest
using graph::Entity;
using graph::Relation;
using nlohmann::json;

// Strings a store can hold that JSON writers disagree on if any does.
const std::vector<std::string> kHard = {
    "plain", "quote \" in", "back \\ slash", "ctl \x01 \x1f \b \f \n \r \t end", "del \x7f", "ls \u2028 ps \u2029",
    "emoji \U0001F600 \U0001F9EA", "\u00fcn\u00efc\u00f6d\u00e9 Stra\u00dfe", "", "12345678\"12345678\\"};

// The graph as the tools built it before: nlohmann objects.
json GraphTree(const std::vector<Entity>& entities, const std::vector<Relation>& relations,
               const std::string& next_cursor) {
  json es = json::array();
  for (const Entity& e : entities) {
    es.push_back(json{{"name", e.name}, {"entityType", e.entity_type}, {"observations", e.observations}});
  }
  json rs = json::array();
  for (const Relation& r : relations) {
    rs.push_back(json{{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}});
  }
  json out = {{"entities", es}, {"relations", rs}};
  if (!next_cursor.empty()) out["nextCursor"] = next_cursor;
  return out;
}

void ExpectSameAsTree(const std::vector<Entity>& entities, const std::vector<Relation>& relations,
                      const std::string& next_cursor) {
  const GraphJson written = WriteGraphJson(entities, relations, next_cursor);
  const json tree = GraphTree(entities, relations, next_cursor);
  EXPECT_EQ(written.structured, DumpJson(tree));
  EXPECT_EQ(written.text_json, DumpJson(json(DumpJson(tree, 2))));
}

TEST(GraphJson, SameBytesAsNlohmannCompactAndPretty) {
  std::vector<Entity> entities;
  std::vector<Relation> relations;
  for (size_t i = 0; i < kHard.size(); ++i) {
    std::vector<std::string> observations;
    for (size_t k = 0; k < i % 4; ++k) observations.push_back(kHard[(i + k) % kHard.size()]);
    entities.push_back(Entity{"e" + std::to_string(i) + " " + kHard[i], kHard[(i + 3) % kHard.size()], observations});
    relations.push_back(Relation{kHard[i], kHard[(i + 1) % kHard.size()], kHard[(i + 2) % kHard.size()]});
  }
  ExpectSameAsTree({}, {}, "");
  ExpectSameAsTree({}, {}, "cursor \"x\"");
  ExpectSameAsTree(entities, {}, "");
  ExpectSameAsTree({}, relations, "");
  ExpectSameAsTree(entities, relations, "");
  ExpectSameAsTree(entities, relations, "next");
  ExpectSameAsTree({Entity{"only", "t", {}}}, {relations[0]}, "");
  // Invalid UTF-8 (which the store never hands out) is replaced as DumpJson replaces it.
  ExpectSameAsTree({Entity{"bad \xc3", "t\xff", {"\xed\xa0\x80"}}}, {Relation{"\x80", "b", "c"}}, "");
}

using GraphReplyTest = McpToolsTest;

// The whole reply of a graph tool: the text written without a tree, and the
// reply the server built before (MakeResult of nlohmann objects, dumped).
TEST_F(GraphReplyTest, RepliesAreTheBytesOfTheNlohmannReply) {
  graph::KnowledgeGraph kg(*engine_);
  std::vector<Entity> entities;
  std::vector<Relation> relations;
  for (size_t i = 0; i < kHard.size(); ++i) {
    entities.push_back(Entity{"e" + std::to_string(i) + " " + kHard[i], kHard[i].empty() ? "empty" : kHard[i],
                              {kHard[i], "obs " + kHard[(i + 1) % kHard.size()]}});
  }
  for (size_t i = 0; i < entities.size(); ++i) {
    relations.push_back(Relation{entities[i].name, entities[(i * 3 + 1) % entities.size()].name, kHard[i] + "r"});
    relations.push_back(Relation{"outsider", entities[i].name, "knows"});
  }
  ASSERT_TRUE(kg.CreateEntities(session_.ns, entities, "test").ok());
  ASSERT_TRUE(kg.CreateRelations(session_.ns, relations, "test").ok());

  auto expect_reply = [&](const json& id, const std::string& tool, const json& arguments, const json& graph) {
    SCOPED_TRACE(tool + " " + arguments.dump());
    const json request = Request(id, "tools/call", {{"name", tool}, {"arguments", arguments}});
    const json text_block = json{{"type", "text"}, {"text", DumpJson(graph, 2)}};
    const json before = MakeResult(
        id, json{{"content", json::array({text_block})}, {"structuredContent", graph}, {"isError", false}});
    const std::optional<std::string> reply = server_->Handle(session_, request.dump());
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(*reply, DumpJson(before));
    // HandleMessage (the JSON reply) says the same.
    ParsedMessage parsed = ParseJsonRpc(request.dump());
    ASSERT_TRUE(parsed.message.has_value());
    EXPECT_EQ(server_->HandleMessage(session_, *parsed.message), before);
  };

  for (const std::string& query : {std::string("e"), std::string("QUOTE"), std::string("\U0001F600"),
                                   std::string("\u2028"), std::string("nothing at all")}) {
    Result<graph::Graph> g = kg.SearchNodes(session_.ns, query, 1000);
    ASSERT_TRUE(g.ok());
    expect_reply(7, "search_nodes", {{"query", query}}, GraphTree(g->entities, g->relations, ""));
  }
  std::vector<std::string> names = {entities[4].name, "missing", entities[1].name};
  Result<graph::Graph> opened = kg.OpenNodes(session_.ns, names);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->entities.size(), 2u);
  expect_reply("id \"s\"", "open_nodes", {{"names", names}}, GraphTree(opened->entities, opened->relations, ""));
  std::string cursor;
  int pages = 0;
  do {
    Result<graph::GraphPage> page = kg.ReadGraph(session_.ns, cursor, 7);
    ASSERT_TRUE(page.ok());
    json arguments = {{"limit", 7}};
    if (!cursor.empty()) arguments["cursor"] = cursor;
    expect_reply(pages, "read_graph", arguments, GraphTree(page->entities, page->relations, page->next_cursor));
    cursor = page->next_cursor;
    ++pages;
  } while (!cursor.empty());
  EXPECT_GT(pages, 3);
}

}  // namespace
}  // namespace msp::mcp
