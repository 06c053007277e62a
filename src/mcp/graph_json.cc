// Graph answers as JSON text (see graph_json.h).
#include "mcp/graph_json.h"

#include "codec/json_text.h"

namespace msp::mcp {
namespace {

using graph::Entity;
using graph::Relation;

// Writes one graph, compact or pretty (indent 2), as nlohmann's dump lays
// values out: "key": value in pretty form, "key":value in compact form,
// and [] for an empty array in both.
class GraphWriter {
 public:
  GraphWriter(std::string& out, bool pretty) : out_(out), pretty_(pretty) {}

  void Graph(const std::vector<Entity>& entities, const std::vector<Relation>& relations,
             std::string_view next_cursor) {
    out_ += '{';
    Key(1, "entities", true);
    Array(1, entities, [&](const Entity& e) { EntityObject(2, e); });
    if (!next_cursor.empty()) {
      Key(1, "nextCursor", false);
      AppendJsonString(out_, next_cursor);
    }
    Key(1, "relations", false);
    Array(1, relations, [&](const Relation& r) { RelationObject(2, r); });
    Close(0, '}');
  }

 private:
  // The separator before a member or element at `depth`, then its key.
  void Key(int depth, std::string_view key, bool first) {
    Next(depth, first);
    out_ += '"';
    out_ += key;  // keys are plain ASCII
    out_ += pretty_ ? "\": " : "\":";
  }
  void Next(int depth, bool first) {
    if (!first) out_ += ',';
    if (pretty_) AppendJsonIndent(out_, depth);
  }
  void Close(int depth, char bracket) {
    if (pretty_) AppendJsonIndent(out_, depth);
    out_ += bracket;
  }
  // An array at `depth` whose elements are written by `element`.
  template <typename T, typename F>
  void Array(int depth, const std::vector<T>& items, F element) {
    if (items.empty()) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      Next(depth + 1, i == 0);
      element(items[i]);
    }
    Close(depth, ']');
  }
  void EntityObject(int depth, const Entity& e) {
    out_ += '{';
    Key(depth + 1, "entityType", true);
    AppendJsonString(out_, e.entity_type);
    Key(depth + 1, "name", false);
    AppendJsonString(out_, e.name);
    Key(depth + 1, "observations", false);
    Array(depth + 1, e.observations, [&](const std::string& o) { AppendJsonString(out_, o); });
    Close(depth, '}');
  }
  void RelationObject(int depth, const Relation& r) {
    out_ += '{';
    Key(depth + 1, "from", true);
    AppendJsonString(out_, r.from);
    Key(depth + 1, "relationType", false);
    AppendJsonString(out_, r.relation_type);
    Key(depth + 1, "to", false);
    AppendJsonString(out_, r.to);
    Close(depth, '}');
  }

  std::string& out_;
  const bool pretty_;
};

}  // namespace

GraphJson WriteGraphJson(const std::vector<Entity>& entities, const std::vector<Relation>& relations,
                         std::string_view next_cursor) {
  size_t bytes = 64;
  for (const Entity& e : entities) {
    bytes += e.name.size() + e.entity_type.size() + 64;
    for (const std::string& o : e.observations) bytes += o.size() + 16;
  }
  for (const Relation& r : relations) bytes += r.from.size() + r.relation_type.size() + r.to.size() + 64;
  GraphJson out;
  out.structured.reserve(bytes);
  out.text.reserve(bytes + bytes / 2);
  GraphWriter(out.structured, /*pretty=*/false).Graph(entities, relations, next_cursor);
  GraphWriter(out.text, /*pretty=*/true).Graph(entities, relations, next_cursor);
  return out;
}

}  // namespace msp::mcp
