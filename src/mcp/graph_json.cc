// Graph answers as JSON text (see graph_json.h).
#include "mcp/graph_json.h"

#include "codec/json_text.h"

namespace msp::mcp {
namespace {

using graph::Entity;
using graph::Relation;

// How a graph is written.
enum class Layout {
  kCompact,      // "key":value
  kPrettyQuoted  // "key": value, a line per member or element, indent 2;
                 // that text as a JSON string
};

// Writes one graph as nlohmann's dump lays values out ([] for an empty
// array in every layout).
class GraphWriter {
 public:
  GraphWriter(std::string& out, Layout layout) : out_(out), layout_(layout) {}

  void Graph(const std::vector<Entity>& entities, const std::vector<Relation>& relations,
             std::string_view next_cursor) {
    if (layout_ == Layout::kPrettyQuoted) out_ += '"';
    out_ += '{';
    Key(1, "entities", true);
    Array(1, entities, [&](const Entity& e) { EntityObject(2, e); });
    if (!next_cursor.empty()) {
      Key(1, "nextCursor", false);
      String(next_cursor);
    }
    Key(1, "relations", false);
    Array(1, relations, [&](const Relation& r) { RelationObject(2, r); });
    Close(0, '}');
    if (layout_ == Layout::kPrettyQuoted) out_ += '"';
  }

 private:
  // The separator before a member or element at `depth`, then its key.
  void Key(int depth, std::string_view key, bool first) {
    Next(depth, first);
    Quote();
    out_ += key;  // keys are plain ASCII
    Quote();
    out_ += ':';
    if (layout_ != Layout::kCompact) out_ += ' ';
  }
  void Next(int depth, bool first) {
    if (!first) out_ += ',';
    Indent(depth);
  }
  void Close(int depth, char bracket) {
    Indent(depth);
    out_ += bracket;
  }
  void Indent(int depth) {
    if (layout_ == Layout::kCompact) return;
    out_.append("\\n", 2);  // escaped, as it stands in the JSON string
    out_.append(static_cast<size_t>(depth) * 2, ' ');
  }
  void Quote() {
    if (layout_ == Layout::kPrettyQuoted) out_ += '\\';
    out_ += '"';
  }
  void String(std::string_view s) {
    if (layout_ != Layout::kPrettyQuoted) {
      AppendJsonString(out_, s);
      return;
    }
    // Escaped twice: once as the pretty text holds it, again as the JSON
    // string around that text holds it.
    scratch_.clear();
    AppendJsonStringContent(scratch_, s);
    Quote();
    AppendJsonStringContent(out_, scratch_);
    Quote();
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
    String(e.entity_type);
    Key(depth + 1, "name", false);
    String(e.name);
    Key(depth + 1, "observations", false);
    Array(depth + 1, e.observations, [&](const std::string& o) { String(o); });
    Close(depth, '}');
  }
  void RelationObject(int depth, const Relation& r) {
    out_ += '{';
    Key(depth + 1, "from", true);
    String(r.from);
    Key(depth + 1, "relationType", false);
    String(r.relation_type);
    Key(depth + 1, "to", false);
    String(r.to);
    Close(depth, '}');
  }

  std::string& out_;
  const Layout layout_;
  std::string scratch_;
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
  out.text_json.reserve(2 * bytes);
  GraphWriter(out.structured, Layout::kCompact).Graph(entities, relations, next_cursor);
  GraphWriter(out.text_json, Layout::kPrettyQuoted).Graph(entities, relations, next_cursor);
  return out;
}

}  // namespace msp::mcp
