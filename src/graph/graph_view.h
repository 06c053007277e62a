// GraphView: the knowledge graph of one namespace held in memory, derived
// from the store's entity and relation records, for the reads of the graph
// tools (search_nodes, open_nodes, read_graph) at a cost that follows the
// answer, not the store.
//
// The store stays the truth: a view is built by loading the namespace's
// records and kept current by replaying the store's change sequence
// (MemoryLayer::ChangesSince) before every read, so it sees the writes of
// every process, and a process killed at any moment loses nothing (the next
// one loads the store again).
//
// What it indexes: entities by name (open_nodes, keyset pages), relations by
// (from, relationType, to) and by endpoint, and the 1-, 2- and 3-byte grams
// of every field of every entity, lowered as JavaScript lowers (JsLower). A
// substring search reads the posting lists of the query's grams and checks
// only the entities that hold all of them, so its answer is exactly
// server-memory's: `field.toLowerCase().includes(query.toLowerCase())` over
// name, entityType and observations.
//
// Not thread-safe: KnowledgeGraph gives each view its own lock.
#ifndef MSP_GRAPH_GRAPH_VIEW_H_
#define MSP_GRAPH_GRAPH_VIEW_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph_records.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp::graph {

struct EntityEntry {
  Entity entity;
  std::string id;
  int access_level = 0;
  std::vector<std::string> lowered;  // JsLower of name, entityType, then each observation
  uint32_t slot = 0;                 // its place in the gram index
};

struct RelationEntry {
  Relation relation;
  std::string id;
  int access_level = 0;
  // Ascends with the key along GraphView::relations() (kept by the view):
  // relations sort by it as by their (from, relationType, to).
  uint64_t order = 0;
};

class GraphView {
 public:
  // `engine` must outlive the view.
  GraphView(MemoryLayer& engine, Namespace ns) : engine_(engine), ns_(std::move(ns)) {}
  GraphView(const GraphView&) = delete;
  GraphView& operator=(const GraphView&) = delete;

  // Loads the namespace's graph the first time, then replays the changes
  // committed since the last call. On an error the view stays as it was
  // (replaying again is harmless) and the next call tries again.
  Status CatchUp();

  // nullptr when there is no entity `name`.
  const EntityEntry* FindEntity(const std::string& name) const;
  // Up to `limit` entities, by name, that `keep` accepts and that have a
  // field containing `lowered_query` (JsLower of the query; "" matches every
  // entity).
  std::vector<const EntityEntry*> Search(const std::string& lowered_query, size_t limit,
                                         const std::function<bool(const EntityEntry&)>& keep) const;
  // Every relation from or to one of `names` (which may repeat), by key.
  std::vector<const RelationEntry*> RelationsTouching(const std::vector<const std::string*>& names) const;

  const std::map<std::string, EntityEntry>& entities() const { return entities_; }
  const std::map<RelationKey, RelationEntry>& relations() const { return relations_; }
  int64_t applied_seq() const { return applied_seq_; }

 private:
  Status Load();
  void Clear();
  // Takes the current state of a changed record (ignored unless it is an
  // active entity or relation of exactly this namespace).
  Status Put(const Memory& m);
  // Drops the entity or relation with record id `id`, if the view has it.
  void Forget(const std::string& id);
  void RemoveEntity(std::map<std::string, EntityEntry>::iterator it);
  void RemoveRelation(std::map<RelationKey, RelationEntry>::iterator it);
  // Gives the relation at `it`, just added, an order between its
  // neighbours' (renumbering every relation when there is no room).
  void SetOrder(std::map<RelationKey, RelationEntry>::iterator it);
  void RenumberOrders();
  void IndexGrams(uint32_t slot, const std::vector<uint32_t>& grams, bool add);

  MemoryLayer& engine_;
  const Namespace ns_;
  bool loaded_ = false;
  int64_t applied_seq_ = 0;

  std::map<std::string, EntityEntry> entities_;  // by name
  std::unordered_map<std::string, std::string> entity_names_;  // record id -> name
  std::map<RelationKey, RelationEntry> relations_;
  std::unordered_map<std::string, RelationKey> relation_keys_;  // record id -> key
  // Entity name -> the relations from or to it (entries of relations_).
  std::unordered_map<std::string, std::vector<const RelationEntry*>> touching_;

  // Gram -> the slots of the entities holding it, ascending.
  std::unordered_map<uint32_t, std::vector<uint32_t>> postings_;
  std::vector<EntityEntry*> slots_;  // slot -> entity (nullptr: free)
  std::vector<uint32_t> free_slots_;
};

}  // namespace msp::graph

#endif  // MSP_GRAPH_GRAPH_VIEW_H_
