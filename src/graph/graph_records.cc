// The knowledge graph's record format (see graph_records.h).
#include "graph/graph_records.h"

#include <openssl/evp.h>

#include <array>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "util/utf8.h"

namespace msp::graph {
namespace {

using nlohmann::json;

// An entity's indexed text is cut here (at a character boundary); its body
// keeps every observation.
constexpr size_t kMaxIndexedTextBytes = 16384;
constexpr std::string_view kSource = "graph";

std::string NameUuid(const std::vector<std::string_view>& parts) {
  std::string key;
  for (std::string_view p : parts) {
    key += std::to_string(p.size());
    key += ':';
    key += p;
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  EVP_Digest(key.data(), key.size(), digest.data(), &len, EVP_sha256(), nullptr);
  digest[6] = static_cast<unsigned char>((digest[6] & 0x0F) | 0x80);  // version 8 (custom)
  digest[8] = static_cast<unsigned char>((digest[8] & 0x3F) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0x0F];
  }
  return out;
}

std::vector<std::string_view> NamespaceParts(const Namespace& ns, std::string_view kind) {
  return {"msp-graph-v1", kind, ns.tenant, ns.user, ns.agent, ns.session, ns.mission, ns.operator_id};
}

std::string EntityText(const Entity& e) {
  std::string text = e.name + " (" + e.entity_type + ")";
  for (const std::string& o : e.observations) text += "\n- " + o;
  return std::string(Utf8PrefixBytes(text, kMaxIndexedTextBytes));
}

Result<json> Body(const Memory& m) {
  json body = json::parse(m.body_json, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return Status::Corruption("graph record " + m.id + " has a body that is not a JSON object");
  return body;
}

bool StringField(const json& body, const char* key, std::string* out) {
  auto it = body.find(key);
  if (it == body.end() || !it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

}  // namespace

std::string EntityId(const Namespace& ns, std::string_view name) {
  std::vector<std::string_view> parts = NamespaceParts(ns, "entity");
  parts.push_back(name);
  return NameUuid(parts);
}

std::string RelationId(const Namespace& ns, const Relation& r) {
  std::vector<std::string_view> parts = NamespaceParts(ns, "relation");
  parts.push_back(r.from);
  parts.push_back(r.relation_type);
  parts.push_back(r.to);
  return NameUuid(parts);
}

Memory EntityRecord(const Namespace& ns, const Entity& e, Memory base) {
  base.id = EntityId(ns, e.name);
  base.ns = ns;
  base.kind = Kind::kEntity;
  base.layer = DefaultLayer(Kind::kEntity);
  base.text = EntityText(e);
  base.body_json = DumpJson(json{{"name", e.name}, {"entityType", e.entity_type}, {"observations", e.observations}});
  if (base.source.empty()) base.source = std::string(kSource);
  base.embedding.clear();
  base.embedder_id.clear();
  return base;
}

Memory RelationRecord(const Namespace& ns, const Relation& r) {
  Memory m;
  m.id = RelationId(ns, r);
  m.ns = ns;
  m.kind = Kind::kRelation;
  m.layer = DefaultLayer(Kind::kRelation);
  m.text = std::string(Utf8PrefixBytes(r.from + " " + r.relation_type + " " + r.to, kMaxIndexedTextBytes));
  m.body_json = DumpJson(json{{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}});
  m.source = std::string(kSource);
  return m;
}

Result<Entity> EntityFromRecord(const Memory& m) {
  MSP_ASSIGN_OR_RETURN(json body, Body(m));
  Entity e;
  auto obs = body.find("observations");
  if (!StringField(body, "name", &e.name) || !StringField(body, "entityType", &e.entity_type) ||
      obs == body.end() || !obs->is_array()) {
    return Status::Corruption("entity record " + m.id + " lacks name, entityType or observations");
  }
  for (const json& o : *obs) {
    if (!o.is_string()) return Status::Corruption("entity record " + m.id + " has a non-string observation");
    e.observations.push_back(o.get<std::string>());
  }
  return e;
}

Result<Relation> RelationFromRecord(const Memory& m) {
  MSP_ASSIGN_OR_RETURN(json body, Body(m));
  Relation r;
  if (!StringField(body, "from", &r.from) || !StringField(body, "to", &r.to) ||
      !StringField(body, "relationType", &r.relation_type)) {
    return Status::Corruption("relation record " + m.id + " lacks from, to or relationType");
  }
  return r;
}

}  // namespace msp::graph
