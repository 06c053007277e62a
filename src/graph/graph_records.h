// The knowledge graph's values (entities and relations, the model of
// @modelcontextprotocol/server-memory) and their records in msp's store.
//
// Entities are Kind::kEntity records with body {name, entityType,
// observations}; relations are Kind::kRelation records with body {from, to,
// relationType}. Record ids are derived from the namespace and the entity
// name (or the relation's three parts), so one name is one record.
#ifndef MSP_GRAPH_GRAPH_RECORDS_H_
#define MSP_GRAPH_GRAPH_RECORDS_H_

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

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

// The order of relations everywhere in the graph: (from, relationType, to).
using RelationKey = std::tuple<std::string, std::string, std::string>;
inline RelationKey KeyOf(const Relation& r) { return {r.from, r.relation_type, r.to}; }

// The record id of entity `name` in `ns` (a name-derived UUID, version 8).
std::string EntityId(const Namespace& ns, std::string_view name);
// The record id of relation `r` in `ns`.
std::string RelationId(const Namespace& ns, const Relation& r);

// The record of entity `e` in `ns`; `base` is the stored record it replaces
// (or a blank one for a new entity).
Memory EntityRecord(const Namespace& ns, const Entity& e, Memory base);
Memory RelationRecord(const Namespace& ns, const Relation& r);

// The values of records; a body that lacks a field is Corruption.
Result<Entity> EntityFromRecord(const Memory& m);
Result<Relation> RelationFromRecord(const Memory& m);

}  // namespace msp::graph

#endif  // MSP_GRAPH_GRAPH_RECORDS_H_
