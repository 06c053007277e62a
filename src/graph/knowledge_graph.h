// The knowledge graph of the MCP memory tools (the model of
// @modelcontextprotocol/server-memory: entities with observations, and
// directed relations between entity names), kept in msp's store (the record
// format: graph_records.h).
//
// Writes: record ids are derived from the namespace and the entity name (or
// the relation's three parts), so one name is one record and a second create
// of it is seen by the store's compare-and-swap (expected seq 0). Every
// change goes through MemoryLayer::Commit with the seq it read; when a
// concurrent writer (another thread or process) got there first, the change
// is read again and retried, so concurrent writers lose nothing. Within one
// process, writers of the same entity take turns (striped locks), so they do
// not spend their time losing races to each other.
//
// Reads go through a GraphView per namespace (graph_view.h): the graph held
// in memory, caught up from the store's change sequence before every read,
// so they see every process's writes and cost what their answer costs.
//
// A graph belongs to exactly one namespace: records of narrower or wider
// namespaces are not part of it. Thread-safe.
#ifndef MSP_GRAPH_KNOWLEDGE_GRAPH_H_
#define MSP_GRAPH_KNOWLEDGE_GRAPH_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph_records.h"
#include "graph/graph_view.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp::graph {

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

  // Reads take `clearance`: set, only entities and relations whose records
  // lie at or below it are seen, and a relation only when neither of its
  // ends is hidden (an end that does not exist hides nothing).

  // Up to `limit` items (entities by name, then relations by (from,
  // relationType, to)) after `cursor` ("" for the first page). The cursor
  // names the last item served (opaque to callers; a malformed one is
  // InvalidArgument), so items added or deleted between pages never make a
  // page repeat or skip an item that existed throughout. Cost: the page.
  // REQUIRES: limit >= 1.
  Result<GraphPage> ReadGraph(const Namespace& ns, std::string_view cursor, int limit,
                              std::optional<int> clearance = std::nullopt);
  // The entities whose name, entityType or an observation contains `query`
  // after both are lowered as JavaScript lowers them (exactly what the
  // reference server's search_nodes finds; "" finds every entity): the first
  // `limit` by name, and every relation from or to them.
  // REQUIRES: limit >= 1.
  Result<Graph> SearchNodes(const Namespace& ns, const std::string& query, int limit,
                            std::optional<int> clearance = std::nullopt);
  // The named entities that exist, in the order asked, and every relation
  // from or to them.
  Result<Graph> OpenNodes(const Namespace& ns, const std::vector<std::string>& names,
                          std::optional<int> clearance = std::nullopt);

 private:
  // Locks, for one read-modify-write, the stripes of `ids`' records, so that
  // writers in this process take turns instead of losing compare-and-swaps
  // to each other (other processes are still caught by the store).
  std::vector<std::unique_lock<std::mutex>> LockRecords(const std::vector<std::string>& ids);

  // One namespace's view with its lock.
  struct ViewSlot {
    std::mutex mu;
    std::unique_ptr<GraphView> view;
    uint64_t last_used = 0;
  };
  // A view locked for one call.
  struct LockedView {
    std::shared_ptr<ViewSlot> slot;
    std::unique_lock<std::mutex> lock;
    GraphView* operator->() const { return slot->view.get(); }
    GraphView& operator*() const { return *slot->view; }
  };
  // The view of `ns`, locked and caught up with the store.
  Result<LockedView> View(const Namespace& ns);

  MemoryLayer& engine_;
  std::array<std::mutex, 64> stripes_;
  std::mutex views_mu_;  // guards views_ and use_clock_
  std::map<std::string, std::shared_ptr<ViewSlot>> views_;  // by namespace key
  uint64_t use_clock_ = 0;
};

}  // namespace msp::graph

#endif  // MSP_GRAPH_KNOWLEDGE_GRAPH_H_
