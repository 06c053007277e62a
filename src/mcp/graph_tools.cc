// The knowledge-graph tools (see graph_tools.h).
#include "mcp/graph_tools.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codec/memory_json.h"
#include "graph/knowledge_graph.h"
#include "mcp/graph_json.h"
#include "mcp/schema_builder.h"

namespace msp::mcp {
namespace {

using nlohmann::json;
namespace s = schema;
using graph::Entity;
using graph::KnowledgeGraph;
using graph::Relation;

// Reference-compatible schemas: objects stay open (extra fields are ignored
// as the reference server ignores them).
json EntitySchema() {
  return s::Object({{"name", s::String("The name of the entity")},
                    {"entityType", s::String("The type of the entity")},
                    {"observations", s::ArrayOf(s::String("an observation"),
                                                "An array of observation contents associated with the entity")}},
                   {"name", "entityType", "observations"}, /*closed=*/false);
}

json RelationSchema() {
  return s::Object({{"from", s::String("The name of the entity where the relation starts")},
                    {"to", s::String("The name of the entity where the relation ends")},
                    {"relationType", s::String("The type of the relation")}},
                   {"from", "to", "relationType"}, /*closed=*/false);
}

json GraphSchema(bool paged) {
  json o = s::Object({{"entities", s::ArrayOf(EntitySchema())}, {"relations", s::ArrayOf(RelationSchema())}},
                     {"entities", "relations"}, /*closed=*/false);
  if (paged) {
    o["properties"]["nextCursor"] =
        s::String("Present when more follows: pass it as cursor to read the next page.");
  }
  return o;
}

json SuccessSchema() {
  return s::Object({{"success", s::Boolean("Always true")}, {"message", s::String("What was done")}},
                   {"success", "message"}, /*closed=*/false);
}

json EntityJson(const Entity& e) {
  return json{{"name", e.name}, {"entityType", e.entity_type}, {"observations", e.observations}};
}
json RelationJson(const Relation& r) { return json{{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}}; }

json EntitiesJson(const std::vector<Entity>& v) {
  json a = json::array();
  for (const Entity& e : v) a.push_back(EntityJson(e));
  return a;
}
json RelationsJson(const std::vector<Relation>& v) {
  json a = json::array();
  for (const Relation& r : v) a.push_back(RelationJson(r));
  return a;
}

std::vector<std::string> Strings(const json& a) {
  std::vector<std::string> out;
  for (const json& v : a) out.push_back(v.get<std::string>());
  return out;
}

std::vector<Relation> RelationsArg(const json& a) {
  std::vector<Relation> out;
  for (const json& r : a) {
    out.push_back(Relation{r.at("from").get<std::string>(), r.at("to").get<std::string>(),
                           r.at("relationType").get<std::string>()});
  }
  return out;
}

// The reference server's text blocks are JSON.stringify(x, null, 2).
std::string Pretty(const json& j) { return DumpJson(j, 2); }

// A graph answer, serialized straight to text (graph_json.h).
ToolOutput GraphOutput(const std::vector<Entity>& entities, const std::vector<Relation>& relations,
                       std::string_view next_cursor = "") {
  GraphJson written = WriteGraphJson(entities, relations, next_cursor);
  ToolOutput out;
  out.serialized = ToolOutput::Serialized{std::move(written.structured), std::move(written.text_json)};
  return out;
}

ToolOutput Success(const std::string& message) {
  return ToolOutput{json{{"success", true}, {"message", message}}, message};
}

// Whether a record may be shown to the session: always without a clearance;
// else when it does not exist or lies at or below it.
bool Visible(MemoryLayer& engine, const McpSession& session, const std::string& id) {
  if (!session.clearance) return true;
  Result<Memory> m = engine.Get(session.ns, id);
  return !m.ok() || m->access_level <= *session.clearance;
}

// The names of `names` a session with a clearance may touch (the others
// read as unknown entities).
std::vector<std::string> VisibleNames(MemoryLayer& engine, const McpSession& session, std::vector<std::string> names) {
  std::erase_if(names, [&](const std::string& n) { return !Visible(engine, session, graph::EntityId(session.ns, n)); });
  return names;
}

Tool Make(std::string name, std::string title, std::string description, json input, json output, json annotations) {
  Tool t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.description = std::move(description);
  t.input_schema = std::move(input);
  t.output_schema = std::move(output);
  t.annotations = std::move(annotations);
  t.profile = "graph";
  return t;
}

}  // namespace

void AddGraphTools(MemoryLayer& engine, const McpOptions& options, ToolSet& tools) {
  auto kg = std::make_shared<KnowledgeGraph>(engine);
  const int page_size = options.read_graph_page_size;
  const int search_limit = options.search_nodes_limit;

  Tool t = Make("create_entities", "Create Entities", "Create multiple new entities in the knowledge graph",
                s::Object({{"entities", s::ArrayOf(EntitySchema())}}, {"entities"}, false),
                s::Object({{"entities", s::ArrayOf(EntitySchema())}}, {"entities"}, false),
                ToolAnnotations(false, false, false));
  t.handler = [kg](const McpSession& session, const json& args) -> Result<ToolOutput> {
    std::vector<Entity> entities;
    for (const json& e : args.at("entities")) {
      entities.push_back(Entity{e.at("name").get<std::string>(), e.at("entityType").get<std::string>(),
                                Strings(e.at("observations"))});
    }
    MSP_ASSIGN_OR_RETURN(std::vector<Entity> created, kg->CreateEntities(session.ns, entities, session.actor));
    json list = EntitiesJson(created);
    std::string text = Pretty(list);
    return ToolOutput{json{{"entities", std::move(list)}}, std::move(text)};
  };
  tools.push_back(std::move(t));

  t = Make("create_relations", "Create Relations",
           "Create multiple new relations between entities in the knowledge graph. Relations should be in active "
           "voice",
           s::Object({{"relations", s::ArrayOf(RelationSchema())}}, {"relations"}, false),
           s::Object({{"relations", s::ArrayOf(RelationSchema())}}, {"relations"}, false),
           ToolAnnotations(false, false, false));
  t.handler = [kg](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MSP_ASSIGN_OR_RETURN(std::vector<Relation> created,
                         kg->CreateRelations(session.ns, RelationsArg(args.at("relations")), session.actor));
    json list = RelationsJson(created);
    std::string text = Pretty(list);
    return ToolOutput{json{{"relations", std::move(list)}}, std::move(text)};
  };
  tools.push_back(std::move(t));

  const json observation_add =
      s::Object({{"entityName", s::String("The name of the entity to add the observations to")},
                 {"contents", s::ArrayOf(s::String("an observation"), "An array of observation contents to add")}},
                {"entityName", "contents"}, false);
  const json observation_added = s::Object(
      {{"entityName", s::String("The entity")}, {"addedObservations", s::ArrayOf(s::String("an observation"))}},
      {"entityName", "addedObservations"}, false);
  t = Make("add_observations", "Add Observations", "Add new observations to existing entities in the knowledge graph",
           s::Object({{"observations", s::ArrayOf(observation_add)}}, {"observations"}, false),
           s::Object({{"results", s::ArrayOf(observation_added)}}, {"results"}, false),
           ToolAnnotations(false, false, false));
  t.handler = [kg, &engine](const McpSession& session, const json& args) -> Result<ToolOutput> {
    std::vector<graph::ObservationAdd> additions;
    for (const json& o : args.at("observations")) {
      additions.push_back(graph::ObservationAdd{o.at("entityName").get<std::string>(), Strings(o.at("contents"))});
      if (!Visible(engine, session, graph::EntityId(session.ns, additions.back().entity_name))) {
        return Status::NotFound("Entity with name " + additions.back().entity_name + " not found");
      }
    }
    MSP_ASSIGN_OR_RETURN(std::vector<graph::ObservationsAdded> added,
                         kg->AddObservations(session.ns, additions, session.actor));
    json results = json::array();
    for (const auto& a : added) results.push_back(json{{"entityName", a.entity_name}, {"addedObservations", a.added}});
    std::string text = Pretty(results);
    return ToolOutput{json{{"results", std::move(results)}}, std::move(text)};
  };
  tools.push_back(std::move(t));

  t = Make("delete_entities", "Delete Entities",
           "Delete multiple entities and their associated relations from the knowledge graph",
           s::Object({{"entityNames", s::ArrayOf(s::String("a name"), "An array of entity names to delete")}},
                     {"entityNames"}, false),
           SuccessSchema(), ToolAnnotations(false, true, true));
  t.handler = [kg, &engine](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MSP_RETURN_IF_ERROR(
        kg->DeleteEntities(session.ns, VisibleNames(engine, session, Strings(args.at("entityNames"))), session.actor));
    return Success("Entities deleted successfully");
  };
  tools.push_back(std::move(t));

  const json observation_delete =
      s::Object({{"entityName", s::String("The name of the entity containing the observations")},
                 {"observations", s::ArrayOf(s::String("an observation"), "An array of observations to delete")}},
                {"entityName", "observations"}, false);
  t = Make("delete_observations", "Delete Observations",
           "Delete specific observations from entities in the knowledge graph",
           s::Object({{"deletions", s::ArrayOf(observation_delete)}}, {"deletions"}, false), SuccessSchema(),
           ToolAnnotations(false, true, true));
  t.handler = [kg, &engine](const McpSession& session, const json& args) -> Result<ToolOutput> {
    std::vector<graph::ObservationDelete> deletions;
    for (const json& d : args.at("deletions")) {
      const std::string name = d.at("entityName").get<std::string>();
      if (!Visible(engine, session, graph::EntityId(session.ns, name))) continue;  // as unknown
      deletions.push_back(graph::ObservationDelete{name, Strings(d.at("observations"))});
    }
    MSP_RETURN_IF_ERROR(kg->DeleteObservations(session.ns, deletions, session.actor));
    return Success("Observations deleted successfully");
  };
  tools.push_back(std::move(t));

  t = Make("delete_relations", "Delete Relations", "Delete multiple relations from the knowledge graph",
           s::Object({{"relations", s::ArrayOf(RelationSchema(), "An array of relations to delete")}}, {"relations"},
                     false),
           SuccessSchema(), ToolAnnotations(false, true, true));
  t.handler = [kg, &engine](const McpSession& session, const json& args) -> Result<ToolOutput> {
    std::vector<Relation> relations = RelationsArg(args.at("relations"));
    std::erase_if(relations, [&](const Relation& r) { return !Visible(engine, session, graph::RelationId(session.ns, r)); });
    MSP_RETURN_IF_ERROR(kg->DeleteRelations(session.ns, relations, session.actor));
    return Success("Relations deleted successfully");
  };
  tools.push_back(std::move(t));

  t = Make("read_graph", "Read Graph",
           "Read the knowledge graph, a page at a time: entities by name, then relations. Without arguments it "
           "returns the first " +
               std::to_string(page_size) +
               " items; when nextCursor is present, call again with it as cursor for the next page.",
           s::Object({{"cursor", s::String("nextCursor of the previous page (omit for the first page)")},
                      {"limit", s::Integer("Items (entities and relations) per page (default " +
                                               std::to_string(page_size) + ")",
                                           1, 1000)}},
                     {}, false),
           GraphSchema(/*paged=*/true), ToolAnnotations(true, false, true));
  t.handler = [kg, page_size](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MSP_ASSIGN_OR_RETURN(graph::GraphPage page, kg->ReadGraph(session.ns, args.value("cursor", ""),
                                                              args.value("limit", page_size), session.clearance));
    return GraphOutput(page.entities, page.relations, page.next_cursor);
  };
  tools.push_back(std::move(t));

  t = Make("search_nodes", "Search Nodes",
           "Search for nodes in the knowledge graph based on a query: the entities whose name, type or an "
           "observation contains it (case-insensitive), by name, with the relations from or to them",
           s::Object({{"query", s::String("The search query to match against entity names, types, and observation "
                                          "content")},
                      {"limit", s::Integer("Entities to return at most (default " + std::to_string(search_limit) +
                                               ")",
                                           1, 1000)}},
                     {"query"}, false),
           GraphSchema(false), ToolAnnotations(true, false, true));
  t.handler = [kg, search_limit](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MSP_ASSIGN_OR_RETURN(graph::Graph g, kg->SearchNodes(session.ns, args.at("query").get<std::string>(),
                                                         args.value("limit", search_limit), session.clearance));
    return GraphOutput(g.entities, g.relations);
  };
  tools.push_back(std::move(t));

  t = Make("open_nodes", "Open Nodes", "Open specific nodes in the knowledge graph by their names",
           s::Object({{"names", s::ArrayOf(s::String("a name"), "An array of entity names to retrieve")}}, {"names"},
                     false),
           GraphSchema(false), ToolAnnotations(true, false, true));
  t.handler = [kg](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MSP_ASSIGN_OR_RETURN(graph::Graph g, kg->OpenNodes(session.ns, Strings(args.at("names")), session.clearance));
    return GraphOutput(g.entities, g.relations);
  };
  tools.push_back(std::move(t));
}

}  // namespace msp::mcp
