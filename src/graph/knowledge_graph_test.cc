// Knowledge-graph tests over the real engine (SQLite, Xapian, hashing
// embedder) in a temp directory, including concurrent writers.
#include "graph/knowledge_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "graph/js_lower.h"
#include "tests/support/test_util.h"
#include "util/uuid.h"

namespace msp::graph {
namespace {

class KnowledgeGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    engine_ = Open();
    ASSERT_NE(engine_, nullptr);
    graph_ = std::make_unique<KnowledgeGraph>(*engine_);
    ns_.tenant = "acme";
    ns_.user = "ann";
  }

  std::unique_ptr<MemoryLayer> Open() {
    auto r = MemoryLayer::Open(options_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  static Entity E(std::string name, std::string type, std::vector<std::string> obs = {}) {
    return Entity{std::move(name), std::move(type), std::move(obs)};
  }

  // Every item of the graph, page by page.
  Graph ReadAll(int limit, int* pages = nullptr) {
    Graph g;
    std::string cursor;
    int n = 0;
    do {
      Result<GraphPage> page = graph_->ReadGraph(ns_, cursor, limit);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      EXPECT_LE(static_cast<int>(page->entities.size() + page->relations.size()), limit);
      g.entities.insert(g.entities.end(), page->entities.begin(), page->entities.end());
      g.relations.insert(g.relations.end(), page->relations.begin(), page->relations.end());
      cursor = page->next_cursor;
      ++n;
    } while (!cursor.empty() && n < 1000);
    if (pages) *pages = n;
    return g;
  }

  testing::TempDir dir_{"graph"};
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
  std::unique_ptr<KnowledgeGraph> graph_;
  Namespace ns_;
};

TEST(GraphIds, DeterministicUuidsPerNamespaceAndName) {
  Namespace a;
  a.tenant = "a";
  Namespace b;
  b.tenant = "b";
  EXPECT_EQ(EntityId(a, "Alice"), EntityId(a, "Alice"));
  EXPECT_NE(EntityId(a, "Alice"), EntityId(b, "Alice"));
  EXPECT_NE(EntityId(a, "Alice"), EntityId(a, "alice"));
  EXPECT_TRUE(IsUuid(EntityId(a, "Alice")));
  EXPECT_EQ(EntityId(a, "Alice")[14], '8');  // version 8
  const Relation r{"Alice", "Bob", "knows"};
  EXPECT_TRUE(IsUuid(RelationId(a, r)));
  EXPECT_NE(RelationId(a, r), RelationId(a, Relation{"Bob", "Alice", "knows"}));
  // Length-prefixed parts: moving a character between parts changes the id.
  EXPECT_NE(RelationId(a, Relation{"ab", "c", "x"}), RelationId(a, Relation{"a", "bc", "x"}));
}

TEST_F(KnowledgeGraphTest, CreateEntitiesReturnsOnlyNewOnes) {
  ASSERT_OK_AND_ASSIGN(auto created,
                       graph_->CreateEntities(ns_, {E("Alice", "person", {"works at Acme"}), E("Bob", "person"),
                                                    E("Alice", "robot")},
                                              "t"));
  ASSERT_EQ(created.size(), 2u);
  EXPECT_EQ(created[0], E("Alice", "person", {"works at Acme"}));
  EXPECT_EQ(created[1].name, "Bob");
  ASSERT_OK_AND_ASSIGN(auto again, graph_->CreateEntities(ns_, {E("Bob", "cat"), E("Carol", "person")}, "t"));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].name, "Carol");
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->OpenNodes(ns_, {"Bob", "Alice"}));
  ASSERT_EQ(g.entities.size(), 2u);
  EXPECT_EQ(g.entities[0], E("Bob", "person"));  // the first create stands
  EXPECT_EQ(g.entities[1], E("Alice", "person", {"works at Acme"}));
  // Stored as Kind::kEntity with the reference body.
  ASSERT_OK_AND_ASSIGN(Memory m, engine_->Get(ns_, EntityId(ns_, "Alice")));
  EXPECT_EQ(m.kind, Kind::kEntity);
  EXPECT_EQ(m.body_json, R"({"entityType":"person","name":"Alice","observations":["works at Acme"]})");
}

TEST_F(KnowledgeGraphTest, NamespacesKeepSeparateGraphs) {
  ASSERT_OK(graph_->CreateEntities(ns_, {E("Alice", "person")}, "t").status());
  Namespace other = ns_;
  other.user = "bob";
  ASSERT_OK_AND_ASSIGN(auto created, graph_->CreateEntities(other, {E("Alice", "cat")}, "t"));
  EXPECT_EQ(created.size(), 1u);
  // A wider scope (the tenant) is a graph of its own: it does not show ann's entities.
  Namespace tenant;
  tenant.tenant = "acme";
  ASSERT_OK_AND_ASSIGN(GraphPage page, graph_->ReadGraph(tenant, "", 100));
  EXPECT_TRUE(page.entities.empty());
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->OpenNodes(other, {"Alice"}));
  ASSERT_EQ(g.entities.size(), 1u);
  EXPECT_EQ(g.entities[0].entity_type, "cat");
}

TEST_F(KnowledgeGraphTest, AddObservationsAddsOnlyNewAndFailsWholeOnUnknownEntity) {
  ASSERT_OK(graph_->CreateEntities(ns_, {E("Alice", "person", {"likes tea"})}, "t").status());
  ASSERT_OK_AND_ASSIGN(auto added, graph_->AddObservations(
                                       ns_, {{"Alice", {"likes tea", "plays chess"}}, {"Alice", {"plays go", "plays chess"}}}, "t"));
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].entity_name, "Alice");
  EXPECT_EQ(added[0].added, (std::vector<std::string>{"plays chess"}));
  EXPECT_EQ(added[1].added, (std::vector<std::string>{"plays go"}));

  Result<std::vector<ObservationsAdded>> bad =
      graph_->AddObservations(ns_, {{"Alice", {"sings"}}, {"Nobody", {"x"}}}, "t");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsNotFound());
  EXPECT_EQ(bad.status().message(), "Entity with name Nobody not found");
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->OpenNodes(ns_, {"Alice"}));
  ASSERT_EQ(g.entities.size(), 1u);
  EXPECT_EQ(g.entities[0].observations, (std::vector<std::string>{"likes tea", "plays chess", "plays go"}));
}

TEST_F(KnowledgeGraphTest, DeleteObservationsRelationsAndEntities) {
  ASSERT_OK(graph_->CreateEntities(ns_, {E("Alice", "person", {"a", "b", "c"}), E("Bob", "person"), E("Carol", "person")},
                                   "t")
                .status());
  ASSERT_OK_AND_ASSIGN(auto rels, graph_->CreateRelations(ns_,
                                                          {{"Alice", "Bob", "knows"},
                                                           {"Bob", "Carol", "knows"},
                                                           {"Carol", "Alice", "admires"},
                                                           {"Alice", "Bob", "knows"}},
                                                          "t"));
  EXPECT_EQ(rels.size(), 3u);
  ASSERT_OK_AND_ASSIGN(auto again, graph_->CreateRelations(ns_, {{"Alice", "Bob", "knows"}}, "t"));
  EXPECT_TRUE(again.empty());

  ASSERT_OK(graph_->DeleteObservations(ns_, {{"Alice", {"b", "zzz"}}, {"Nobody", {"a"}}}, "t"));
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->OpenNodes(ns_, {"Alice"}));
  EXPECT_EQ(g.entities[0].observations, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(g.relations.size(), 2u);  // from or to Alice

  ASSERT_OK(graph_->DeleteRelations(ns_, {{"Carol", "Alice", "admires"}, {"No", "One", "x"}}, "t"));
  ASSERT_OK_AND_ASSIGN(g, graph_->OpenNodes(ns_, {"Alice"}));
  ASSERT_EQ(g.relations.size(), 1u);
  EXPECT_EQ(g.relations[0], (Relation{"Alice", "Bob", "knows"}));

  ASSERT_OK(graph_->DeleteEntities(ns_, {"Bob", "Nobody"}, "t"));
  Graph all = ReadAll(100);
  ASSERT_EQ(all.entities.size(), 2u);
  EXPECT_EQ(all.entities[0].name, "Alice");
  EXPECT_EQ(all.entities[1].name, "Carol");
  EXPECT_TRUE(all.relations.empty());  // both relations touched Bob
  // A deleted entity can be created again.
  ASSERT_OK_AND_ASSIGN(auto recreated, graph_->CreateEntities(ns_, {E("Bob", "dog")}, "t"));
  EXPECT_EQ(recreated.size(), 1u);
}

TEST_F(KnowledgeGraphTest, ReadGraphPagesCoverEverythingOnce) {
  std::vector<Entity> entities;
  for (int i = 0; i < 7; ++i) entities.push_back(E("e" + std::to_string(i), "thing", {"obs " + std::to_string(i)}));
  ASSERT_OK(graph_->CreateEntities(ns_, entities, "t").status());
  ASSERT_OK(graph_->CreateRelations(ns_, {{"e0", "e1", "r"}, {"e1", "e2", "r"}, {"e2", "e3", "r"}, {"e3", "e4", "s"}}, "t")
                .status());
  int pages = 0;
  Graph g = ReadAll(3, &pages);
  EXPECT_EQ(pages, 4);  // 11 items, 3 a page
  ASSERT_EQ(g.entities.size(), 7u);
  ASSERT_EQ(g.relations.size(), 4u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(g.entities[i].name, "e" + std::to_string(i));
  EXPECT_EQ(g.relations[0], (Relation{"e0", "e1", "r"}));
  EXPECT_EQ(g.relations[3], (Relation{"e3", "e4", "s"}));
  // One page holds all when the limit allows.
  ASSERT_OK_AND_ASSIGN(GraphPage one, graph_->ReadGraph(ns_, "", 11));
  EXPECT_EQ(one.entities.size() + one.relations.size(), 11u);
  EXPECT_TRUE(one.next_cursor.empty());
  // Items added behind the cursor do not shift the next page.
  ASSERT_OK_AND_ASSIGN(GraphPage first, graph_->ReadGraph(ns_, "", 2));
  ASSERT_EQ(first.entities.size(), 2u);
  ASSERT_OK(graph_->CreateEntities(ns_, {E("a-first", "thing")}, "t").status());
  ASSERT_OK_AND_ASSIGN(GraphPage second, graph_->ReadGraph(ns_, first.next_cursor, 2));
  ASSERT_EQ(second.entities.size(), 2u);
  EXPECT_EQ(second.entities[0].name, "e2");
  // Cursors are checked.
  for (const std::string bad : {"not a cursor!", "e30", "W10"}) {
    Result<GraphPage> r = graph_->ReadGraph(ns_, bad, 2);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsInvalidArgument());
  }
}

// Relations come out by (from, relationType, to) however they were added:
// ascending, descending, and again and again into one gap (which makes the
// view renumber RelationEntry::order), loaded at once or replayed one by one.
TEST_F(KnowledgeGraphTest, RelationsTouchingKeepKeyOrderUnderAnyInsertOrder) {
  ASSERT_OK(graph_->CreateEntities(ns_, {E("hub", "thing")}, "t").status());
  ASSERT_OK_AND_ASSIGN(Graph empty, graph_->OpenNodes(ns_, {"hub"}));  // the view is loaded now
  EXPECT_TRUE(empty.relations.empty());
  std::vector<Relation> added;
  auto add = [&](Relation r) {
    added.push_back(r);
    ASSERT_OK(graph_->CreateRelations(ns_, {std::move(r)}, "t").status());
  };
  for (int i = 0; i < 20; ++i) add({"hub", "n" + std::to_string(100 + i), "up"});    // appended
  for (int i = 0; i < 20; ++i) add({"hub", "n" + std::to_string(99 - i), "down"});   // prepended in turn
  std::string between = "n100";
  for (int i = 0; i < 80; ++i) {  // each between the last one and "n101" of "down"
    between += "a";
    add({"hub", between, "down"});
  }
  for (int i = 0; i < 10; ++i) add({"m" + std::to_string(i), "hub", "in"});  // to the hub, from others
  add({"hub", "hub", "self"});
  std::vector<Relation> want = added;
  std::sort(want.begin(), want.end(), [](const Relation& a, const Relation& b) { return KeyOf(a) < KeyOf(b); });
  auto check = [&](KnowledgeGraph& g) {
    ASSERT_OK_AND_ASSIGN(Graph opened, g.OpenNodes(ns_, {"hub"}));
    EXPECT_EQ(opened.relations, want);
    ASSERT_OK_AND_ASSIGN(Graph found, g.SearchNodes(ns_, "hub", 10));
    EXPECT_EQ(found.relations, want);
  };
  check(*graph_);  // replayed change by change
  KnowledgeGraph fresh(*engine_);
  check(fresh);  // loaded at once
  // And the view's orders ascend along its relations.
  GraphView view(*engine_, ns_);
  ASSERT_OK(view.CatchUp());
  uint64_t last = 0;
  for (const auto& [key, entry] : view.relations()) {
    EXPECT_GT(entry.order, last);
    last = entry.order;
  }
}

// The names SearchNodes returns, in order.
std::vector<std::string> Names(const Graph& g) {
  std::vector<std::string> out;
  for (const Entity& e : g.entities) out.push_back(e.name);
  return out;
}

using Names_ = std::vector<std::string>;

TEST_F(KnowledgeGraphTest, SearchNodesFindsSubstringsAsTheReferenceServer) {
  ASSERT_OK(graph_->CreateEntities(ns_,
                                   {E("Alice", "person", {"maintains the billing service", "likes tea"}),
                                    E("Bob", "person", {"writes the billing reports for billing audits"}),
                                    E("Carol", "person", {"plays chess"}),
                                    E("Dave", "person", {"gardening"})},
                                   "t")
                .status());
  ASSERT_OK(graph_->CreateRelations(ns_, {{"Carol", "Dave", "mentors"}, {"Alice", "Bob", "pays"}}, "t").status());
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->SearchNodes(ns_, "billing", 10));
  EXPECT_EQ(Names(g), (Names_{"Alice", "Bob"}));
  ASSERT_EQ(g.relations.size(), 1u);  // every relation from or to a found entity
  EXPECT_EQ(g.relations[0], (Relation{"Alice", "Bob", "pays"}));
  // Relations are not searched (the reference searches entities only).
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "mentors", 10));
  EXPECT_TRUE(g.entities.empty());
  EXPECT_TRUE(g.relations.empty());
  // A part of a word, in any case; one end of a relation brings it.
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "ARO", 10));
  EXPECT_EQ(Names(g), (Names_{"Carol"}));
  ASSERT_EQ(g.relations.size(), 1u);
  EXPECT_EQ(g.relations[0], (Relation{"Carol", "Dave", "mentors"}));
  // The limit holds, by name.
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "person", 3));
  EXPECT_EQ(Names(g), (Names_{"Alice", "Bob", "Carol"}));
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "e", 1));
  EXPECT_EQ(Names(g), (Names_{"Alice"}));
  // Short queries (1-3 bytes) and long ones; nothing, and across fields.
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "ch", 10));
  EXPECT_EQ(Names(g), (Names_{"Carol"}));
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "ga", 10));
  EXPECT_EQ(Names(g), (Names_{"Dave"}));
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "nothing-like-this", 10));
  EXPECT_TRUE(g.entities.empty());
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "zq", 10));
  EXPECT_TRUE(g.entities.empty());
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "aliceperson", 10));  // name + type is no field
  EXPECT_TRUE(g.entities.empty());
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "the billing service, and more", 10));
  EXPECT_TRUE(g.entities.empty());
  // The empty query finds every entity ("x".includes("") is true).
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "", 10));
  EXPECT_EQ(Names(g), (Names_{"Alice", "Bob", "Carol", "Dave"}));
  EXPECT_EQ(g.relations.size(), 2u);
  // Changes are seen: a new observation, a deleted one, a deleted entity.
  ASSERT_OK(graph_->AddObservations(ns_, {{"Dave", {"fixes billing bugs"}}}, "t").status());
  ASSERT_OK(graph_->DeleteObservations(ns_, {{"Alice", {"maintains the billing service"}}}, "t"));
  ASSERT_OK(graph_->DeleteEntities(ns_, {"Bob"}, "t"));
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "billing", 10));
  EXPECT_EQ(Names(g), (Names_{"Dave"}));
  ASSERT_EQ(g.relations.size(), 1u);  // Alice pays Bob went with Bob
  EXPECT_EQ(g.relations[0], (Relation{"Carol", "Dave", "mentors"}));
}

// Queries and what @modelcontextprotocol/server-memory finds for them
// (computed with Node 20: field.toLowerCase().includes(query.toLowerCase())).
TEST_F(KnowledgeGraphTest, SearchNodesLowersAsJavaScript) {
  ASSERT_OK(graph_->CreateEntities(ns_,
                                   {E("Straße", "Ort", {"İstanbul trip"}), E("ΟΔΟΣ", "δρόμος"),
                                    E("ΣΟΦΙΑ", "name", {"ὈΔΥΣΣΕΎΣ."}), E("École", "place", {"🙂 smile"}),
                                    E("alice", "person")},
                                   "t")
                .status());
  const std::vector<std::pair<std::string, Names_>> cases = {
      {"STRASSE", {}},           {"straß", {"Straße"}},     {"İST", {"Straße"}},
      {"ist", {}},               {"İ", {"Straße"}},         {"Σ", {"ΣΟΦΙΑ"}},
      {"ΟΣ", {"ΟΔΟΣ"}},          {"σ", {"ΣΟΦΙΑ"}},          {"ς", {"ΟΔΟΣ", "ΣΟΦΙΑ"}},
      {"ΣΟ", {"ΣΟΦΙΑ"}},         {"ÉCO", {"École"}},        {"🙂 S", {"École"}},
      {"alicepers", {}},         {"ΣΣ", {}},                {"ΣΕΎΣ.", {"ΣΟΦΙΑ"}},
      {"ύς.", {"ΣΟΦΙΑ"}},        {"ύσ", {}},
      {"", {"Straße", "alice", "École", "ΟΔΟΣ", "ΣΟΦΙΑ"}},  // by name: bytes, as std::string compares
  };
  for (const auto& [query, want] : cases) {
    ASSERT_OK_AND_ASSIGN(Graph g, graph_->SearchNodes(ns_, query, 100));
    Names_ got = Names(g);
    EXPECT_EQ(got, want) << "query '" << query << "'";
  }
  EXPECT_EQ(JsLower("ὈΔΥΣΣΕΎΣ."), "ὀδυσσεύς.");
  EXPECT_EQ(JsLower("ΣΣ"), "σς");
  EXPECT_EQ(JsLower("İ"), "i\xCC\x87");
  EXPECT_EQ(JsLower("ABC xyz ÀÉÎ Ω"), "abc xyz àéî ω");
  EXPECT_EQ(JsLower("bad \xFF byte \xC3"), "bad \xFF byte \xC3");
}

// Pages read while another thread creates and deletes entities: each
// entity that exists throughout is served exactly once, in name order.
TEST_F(KnowledgeGraphTest, ReadGraphPagesStableUnderConcurrentWrites) {
  std::vector<Entity> stable;
  for (int i = 0; i < 120; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "s%03d", i);
    stable.push_back(E(name, "thing", {"stable"}));
  }
  ASSERT_OK(graph_->CreateEntities(ns_, stable, "t").status());
  std::vector<Entity> doomed;
  for (int i = 0; i < 60; ++i) doomed.push_back(E("s" + std::to_string(i * 2) + "x", "thing"));
  ASSERT_OK(graph_->CreateEntities(ns_, doomed, "t").status());
  // The writer goes through a second engine (another process).
  std::unique_ptr<MemoryLayer> second = Open();
  ASSERT_NE(second, nullptr);
  KnowledgeGraph other(*second);
  std::atomic<bool> done{false};
  Status writer_status;
  std::thread writer([&] {
    for (int i = 0; !done && i < 400; ++i) {
      Status s = i % 2 == 0 ? other.CreateEntities(ns_, {E("s" + std::to_string(i) + "n", "new")}, "w").status()
                            : other.DeleteEntities(ns_, {doomed[static_cast<size_t>(i / 2) % doomed.size()].name}, "w");
      if (!s.ok()) {
        writer_status = s;
        return;
      }
    }
  });
  std::vector<std::string> served;
  std::string cursor;
  int pages = 0;
  do {
    Result<GraphPage> page = graph_->ReadGraph(ns_, cursor, 7);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const Entity& e : page->entities) served.push_back(e.name);
    cursor = page->next_cursor;
    ++pages;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  } while (!cursor.empty() && pages < 1000);
  done = true;
  writer.join();
  ASSERT_OK(writer_status);
  EXPECT_TRUE(std::is_sorted(served.begin(), served.end()));
  EXPECT_EQ(std::adjacent_find(served.begin(), served.end()), served.end()) << "an entity was served twice";
  for (const Entity& e : stable) {
    EXPECT_EQ(std::count(served.begin(), served.end(), e.name), 1) << e.name;
  }
}

// Each process sees the others' writes at its next read; a fresh process
// (a restart after kill -9) loads the same graph from the store.
TEST_F(KnowledgeGraphTest, ReadsSeeOtherProcessesWrites) {
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->SearchNodes(ns_, "", 10));  // loads the view
  EXPECT_TRUE(g.entities.empty());
  std::unique_ptr<MemoryLayer> second = Open();
  ASSERT_NE(second, nullptr);
  KnowledgeGraph other(*second);
  ASSERT_OK(other.CreateEntities(ns_, {E("Zed", "person", {"rides a zebra"}), E("Ann", "person")}, "o").status());
  ASSERT_OK(other.CreateRelations(ns_, {{"Ann", "Zed", "knows"}}, "o").status());
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "zebra", 10));
  EXPECT_EQ(Names(g), (Names_{"Zed"}));
  EXPECT_EQ(g.relations.size(), 1u);
  ASSERT_OK(other.AddObservations(ns_, {{"Ann", {"also rides a zebra"}}}, "o").status());
  ASSERT_OK(other.DeleteRelations(ns_, {{"Ann", "Zed", "knows"}}, "o"));
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "zebra", 10));
  EXPECT_EQ(Names(g), (Names_{"Ann", "Zed"}));
  EXPECT_TRUE(g.relations.empty());
  ASSERT_OK(other.DeleteEntities(ns_, {"Zed"}, "o"));
  ASSERT_OK_AND_ASSIGN(g, graph_->OpenNodes(ns_, {"Zed", "Ann"}));
  EXPECT_EQ(Names(g), (Names_{"Ann"}));
  KnowledgeGraph fresh(*second);
  ASSERT_OK_AND_ASSIGN(Graph again, fresh.OpenNodes(ns_, {"Zed", "Ann"}));
  EXPECT_EQ(Names(again), (Names_{"Ann"}));
  EXPECT_EQ(again.entities[0].observations, g.entities[0].observations);
}

// With a clearance, entities above it and relations touching them are not
// seen by any read.
TEST_F(KnowledgeGraphTest, ReadsHonourClearance) {
  ASSERT_OK(graph_->CreateEntities(ns_, {E("Open", "doc", {"public plan"})}, "t").status());
  RecordBatch batch;
  batch.scope = ns_;
  Memory secret = EntityRecord(ns_, E("Secret", "doc", {"secret plan"}), Memory{});
  secret.access_level = 3;
  batch.puts.push_back(secret);
  batch.puts.push_back(RelationRecord(ns_, Relation{"Open", "Secret", "cites"}));
  ASSERT_OK(engine_->Commit(batch).status());
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->SearchNodes(ns_, "plan", 10));
  EXPECT_EQ(Names(g), (Names_{"Open", "Secret"}));
  EXPECT_EQ(g.relations.size(), 1u);
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "plan", 10, /*clearance=*/2));
  EXPECT_EQ(Names(g), (Names_{"Open"}));
  EXPECT_TRUE(g.relations.empty());
  ASSERT_OK_AND_ASSIGN(g, graph_->OpenNodes(ns_, {"Secret", "Open"}, 2));
  EXPECT_EQ(Names(g), (Names_{"Open"}));
  EXPECT_TRUE(g.relations.empty());
  // The hidden entity and relation are skipped: one item, the last page.
  ASSERT_OK_AND_ASSIGN(GraphPage page, graph_->ReadGraph(ns_, "", 1, 2));
  ASSERT_EQ(page.entities.size(), 1u);
  EXPECT_EQ(page.entities[0].name, "Open");
  EXPECT_TRUE(page.relations.empty());
  EXPECT_TRUE(page.next_cursor.empty());
  ASSERT_OK_AND_ASSIGN(page, graph_->ReadGraph(ns_, "", 1, 3));
  EXPECT_FALSE(page.next_cursor.empty());
  ASSERT_OK_AND_ASSIGN(g, graph_->OpenNodes(ns_, {"Secret"}, 3));
  EXPECT_EQ(Names(g), (Names_{"Secret"}));
}

TEST_F(KnowledgeGraphTest, ConcurrentObservationWritersLoseNothing) {
  ASSERT_OK(graph_->CreateEntities(ns_, {E("Shared", "thing")}, "t").status());
  // Two engines on one data directory stand for two processes; two threads
  // on each make four concurrent writers.
  std::unique_ptr<MemoryLayer> second = Open();
  ASSERT_NE(second, nullptr);
  KnowledgeGraph other(*second);
  constexpr int kWriters = 4;
  constexpr int kEach = 15;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      KnowledgeGraph& g = w % 2 == 0 ? *graph_ : other;
      for (int i = 0; i < kEach; ++i) {
        auto r = g.AddObservations(ns_, {{"Shared", {"writer " + std::to_string(w) + " note " + std::to_string(i)}}}, "t");
        if (!r.ok()) {
          failures[w] = r.status();
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : failures) ASSERT_OK(s);
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->OpenNodes(ns_, {"Shared"}));
  ASSERT_EQ(g.entities.size(), 1u);
  EXPECT_EQ(g.entities[0].observations.size(), static_cast<size_t>(kWriters * kEach));
}

TEST_F(KnowledgeGraphTest, ConcurrentCreatesOfOneNameMakeOneEntity) {
  std::unique_ptr<MemoryLayer> second = Open();
  ASSERT_NE(second, nullptr);
  KnowledgeGraph other(*second);
  std::vector<size_t> created(2);
  std::vector<Status> failures(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      KnowledgeGraph& g = w == 0 ? *graph_ : other;
      for (int i = 0; i < 20; ++i) {
        auto r = g.CreateEntities(ns_, {E("n" + std::to_string(i), "w" + std::to_string(w))}, "t");
        if (!r.ok()) {
          failures[w] = r.status();
          return;
        }
        created[w] += r->size();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : failures) ASSERT_OK(s);
  EXPECT_EQ(created[0] + created[1], 20u);  // each name was created exactly once
  EXPECT_EQ(ReadAll(100).entities.size(), 20u);
}

}  // namespace
}  // namespace msp::graph
