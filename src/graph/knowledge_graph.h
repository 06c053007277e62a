// The knowledge graph of the MCP memory tools (the model of
// @modelcontextprotocol/server-memory: entities with observations, and
// directed relations between entity names), kept in msp's store.
//
// Entities are Kind::kEntity records with body {name, entityType,
// observations}; relations are Kind::kRelation records with body {from, to,
// relationType}. Record ids are derived from the namespace and the entity
// name (or the relation's three parts), so one name is one record and a
// second create of it is seen by the store's compare-and-swap (expected seq
// 0). Every change goes through MemoryLayer::Commit with the seq it read;
// when a concurrent writer (another thread or process) got there first, the
// change is read again and retried, so concurrent writers lose nothing.
//
// Within one process, writers of the same entity take turns (striped
// locks), so they do not spend their time losing races to each other.
//
// A graph belongs to exactly one namespace: records of narrower or wider
// namespaces are not part of it. Thread-safe (the graph's state is in the store).
#ifndef MSP_GRAPH_KNOWLEDGE_GRAPH_H_
#define MSP_GRAPH_KNOWLEDGE_GRAPH_H_

#include <array>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp::graph {

struct Entity {
  std::string name;
  std::string entity_type;
  std::vector<std::string> observations;
  bool operator==(const Entity&) const = default;
};

struct Relation {
  std::string from;
  std::string to;
  std::string relation_type;
  bool operator==(const Relation&) const = default;
};

struct Graph {
  std::vector<Entity> entities;
  std::vector<Relation> relations;
};

// One page of read_graph: entities by name, then relations by (from,
// relationType, to). next_cursor is empty on the last page.
struct GraphPage {
  std::vector<Entity> entities;
  std::vector<Relation> relations;
  std::string next_cursor;
};

struct ObservationAdd {
  std::string entity_name;
  std::vector<std::string> contents;
};

struct ObservationsAdded {
  std::string entity_name;
  std::vector<std::string> added;  // the contents that were new, in order
};

struct ObservationDelete {
  std::string entity_name;
  std::vector<std::string> observations;
};

// The record id of entity `name` in `ns` (a name-derived UUID, version 8).
std::string EntityId(const Namespace& ns, std::string_view name);
// The record id of relation `r` in `ns`.
std::string RelationId(const Namespace& ns, const Relation& r);

class KnowledgeGraph {
 public:
  // `engine` must outlive the graph. `actor` names the caller in the audit log.
  explicit KnowledgeGraph(MemoryLayer& engine) : engine_(engine) {}

  // Creates the entities whose names are not taken yet (the first of equal
  // names in `entities` wins) and returns them; existing ones are left as
  // they are. All are created together or none.
  Result<std::vector<Entity>> CreateEntities(const Namespace& ns, const std::vector<Entity>& entities,
                                             const std::string& actor);
  // Creates the relations that do not exist yet and returns them. Endpoints
  // need not exist (as in the reference server).
  Result<std::vector<Relation>> CreateRelations(const Namespace& ns, const std::vector<Relation>& relations,
                                                const std::string& actor);
  // Appends each entry's contents that the entity does not have yet. An
  // unknown entity is NotFound ("Entity with name X not found") and nothing
  // is written.
  Result<std::vector<ObservationsAdded>> AddObservations(const Namespace& ns,
                                                         const std::vector<ObservationAdd>& additions,
                                                         const std::string& actor);
  // Deletes the entities and every relation from or to them. Unknown names
  // are ignored.
  Status DeleteEntities(const Namespace& ns, const std::vector<std::string>& names, const std::string& actor);
  // Removes the given observations; unknown entities and observations are ignored.
  Status DeleteObservations(const Namespace& ns, const std::vector<ObservationDelete>& deletions,
                            const std::string& actor);
  // Deletes the relations; unknown ones are ignored.
  Status DeleteRelations(const Namespace& ns, const std::vector<Relation>& relations, const std::string& actor);

  // Up to `limit` items (entities, then relations) after `cursor` ("" for
  // the first page). A cursor is opaque; a malformed one is InvalidArgument.
  // REQUIRES: limit >= 1.
  Result<GraphPage> ReadGraph(const Namespace& ns, std::string_view cursor, int limit);
  // Up to `limit` entities ranked by msp's retrieval (BM25 and vectors over
  // names, types and observations; a matching relation brings its
  // endpoints), then, while room is left, those containing `query` as a
  // case-insensitive substring of their name, type or an observation (what
  // the reference server finds). Relations: every relation from or to a
  // returned entity.
  // Ranked hits below `min_score` are dropped.
  Result<Graph> SearchNodes(const Namespace& ns, const std::string& query, int limit, double min_score = 0.0);
  // The named entities that exist, in the order asked, and every relation
  // from or to them.
  Result<Graph> OpenNodes(const Namespace& ns, const std::vector<std::string>& names);

 private:
  // Locks, for one read-modify-write, the stripes of `ids`' records, so that
  // writers in this process take turns instead of losing compare-and-swaps
  // to each other (other processes are still caught by the store).
  std::vector<std::unique_lock<std::mutex>> LockRecords(const std::vector<std::string>& ids);

  MemoryLayer& engine_;
  std::array<std::mutex, 64> stripes_;
};

}  // namespace msp::graph

#endif  // MSP_GRAPH_KNOWLEDGE_GRAPH_H_
