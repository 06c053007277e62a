// Knowledge-graph tests over the real engine (SQLite, Xapian, hashing
// embedder) in a temp directory, including concurrent writers.
#include "graph/knowledge_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

TEST_F(KnowledgeGraphTest, SearchNodesRanksThenFallsBackToSubstrings) {
  ASSERT_OK(graph_->CreateEntities(ns_,
                                   {E("Alice", "person", {"maintains the billing service", "likes tea"}),
                                    E("Bob", "person", {"writes the billing reports for billing audits"}),
                                    E("Carol", "person", {"plays chess"}),
                                    E("Dave", "person", {"gardening"})},
                                   "t")
                .status());
  ASSERT_OK(graph_->CreateRelations(ns_, {{"Carol", "Dave", "mentors"}}, "t").status());
  ASSERT_OK_AND_ASSIGN(Graph g, graph_->SearchNodes(ns_, "billing", 10, 0.1));
  ASSERT_EQ(g.entities.size(), 2u);
  std::set<std::string> names{g.entities[0].name, g.entities[1].name};
  EXPECT_EQ(names, (std::set<std::string>{"Alice", "Bob"}));
  EXPECT_TRUE(g.relations.empty());
  // A relation's words bring its endpoints, with the relations touching them.
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "mentors", 10, 0.1));
  ASSERT_EQ(g.entities.size(), 2u);
  ASSERT_EQ(g.relations.size(), 1u);
  EXPECT_EQ(g.relations[0], (Relation{"Carol", "Dave", "mentors"}));
  // A part of a word is found as the reference server finds it.
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "ALI", 10, 0.1));
  ASSERT_EQ(g.entities.size(), 1u);
  EXPECT_EQ(g.entities[0].name, "Alice");
  // The limit holds.
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "person", 3));
  EXPECT_EQ(g.entities.size(), 3u);
  ASSERT_OK_AND_ASSIGN(g, graph_->SearchNodes(ns_, "nothing-like-this", 10, 0.1));
  EXPECT_TRUE(g.entities.empty());
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
