// The knowledge graph over MemoryLayer::Commit (see knowledge_graph.h).
#include "graph/knowledge_graph.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "util/text.h"

namespace msp::graph {
namespace {

using nlohmann::json;

// How often a change is read again and retried after a concurrent writer won.
constexpr int kMaxAttempts = 200;
// An entity's indexed text is cut here (at a character boundary); its body
// keeps every observation.
constexpr size_t kMaxIndexedTextBytes = 16384;
constexpr std::string_view kSource = "graph";

// ---- Record ids ----

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

// ---- Records <-> graph values ----

std::string CutUtf8(std::string s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  s.resize(end);
  return s;
}

std::string EntityText(const Entity& e) {
  std::string text = e.name + " (" + e.entity_type + ")";
  for (const std::string& o : e.observations) text += "\n- " + o;
  return CutUtf8(std::move(text), kMaxIndexedTextBytes);
}

// `base` is the stored record being replaced (or a blank one for a new entity).
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
  m.text = CutUtf8(r.from + " " + r.relation_type + " " + r.to, kMaxIndexedTextBytes);
  m.body_json = DumpJson(json{{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}});
  m.source = std::string(kSource);
  return m;
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

auto RelationKey(const Relation& r) { return std::tie(r.from, r.relation_type, r.to); }

bool RelationLess(const Relation& a, const Relation& b) { return RelationKey(a) < RelationKey(b); }

// ---- Store access ----

// Every record of `kind` that belongs to exactly `ns`.
Result<std::vector<Memory>> LoadAll(MemoryLayer& engine, const Namespace& ns, Kind kind) {
  ListRequest req;
  req.scope = ns;
  req.filter.kinds = {kind};
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> all, engine.List(req));
  std::erase_if(all, [&](const Memory& m) { return !(m.ns == ns) || m.kind != kind; });
  return all;
}

Result<std::vector<Entity>> AllEntities(MemoryLayer& engine, const Namespace& ns) {
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, LoadAll(engine, ns, Kind::kEntity));
  std::vector<Entity> out;
  for (const Memory& m : records) {
    MSP_ASSIGN_OR_RETURN(Entity e, EntityFromRecord(m));
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Entity& a, const Entity& b) { return a.name < b.name; });
  return out;
}

Result<std::vector<Relation>> AllRelations(MemoryLayer& engine, const Namespace& ns) {
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, LoadAll(engine, ns, Kind::kRelation));
  std::vector<Relation> out;
  for (const Memory& m : records) {
    MSP_ASSIGN_OR_RETURN(Relation r, RelationFromRecord(m));
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), RelationLess);
  return out;
}

// The stored record with `id` in exactly `ns`, or nullopt.
Result<std::optional<Memory>> Find(MemoryLayer& engine, const Namespace& ns, const std::string& id) {
  Result<Memory> m = engine.Get(ns, id);
  if (!m.ok()) {
    if (m.status().IsNotFound()) return std::optional<Memory>();
    return m.status();
  }
  if (!(m->ns == ns)) return std::optional<Memory>();
  return std::optional<Memory>(std::move(m).value());
}

// The stored entity `name`, with its record.
struct StoredEntity {
  Memory record;
  Entity entity;
};

Result<std::optional<StoredEntity>> FindEntity(MemoryLayer& engine, const Namespace& ns, const std::string& name) {
  MSP_ASSIGN_OR_RETURN(std::optional<Memory> m, Find(engine, ns, EntityId(ns, name)));
  if (!m || m->kind != Kind::kEntity) return std::optional<StoredEntity>();
  MSP_ASSIGN_OR_RETURN(Entity e, EntityFromRecord(*m));
  if (e.name != name) return Status::Corruption("entity record " + m->id + " holds '" + e.name + "', not '" + name + "'");
  return std::optional<StoredEntity>(StoredEntity{std::move(*m), std::move(e)});
}

// ---- Retrying after a concurrent writer ----

void Backoff(int attempt) {
  thread_local std::mt19937 rng{std::random_device{}()};
  const int cap = std::min(50, 1 << std::min(attempt, 6));
  std::uniform_int_distribution<int> ms(0, cap);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms(rng)));
}

bool IsRace(const Status& s) { return s.code() == StatusCode::kConflict || s.code() == StatusCode::kUnavailable; }

const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}

// Runs `attempt` (read, compute, Commit with the seqs read) until it does
// not lose a race, at most kMaxAttempts times.
template <typename F>
auto Retrying(F attempt) -> decltype(attempt()) {
  for (int i = 0;; ++i) {
    auto r = attempt();
    if (!IsRace(StatusOf(r)) || i + 1 >= kMaxAttempts) return r;
    Backoff(i);
  }
}

Status CommitBatch(MemoryLayer& engine, RecordBatch batch) {
  if (batch.puts.empty() && batch.deletes.empty()) return Status::Ok();
  Result<std::vector<Memory>> stored = engine.Commit(batch);
  if (stored.ok()) return Status::Ok();
  // A record deleted by someone else between our read and the commit: read again.
  if (stored.status().IsNotFound() && !batch.deletes.empty()) return Status::Conflict(stored.status().message());
  return stored.status();
}

RecordBatch NewBatch(const Namespace& ns, const std::string& actor, std::string reason) {
  RecordBatch b;
  b.scope = ns;
  b.actor = actor;
  b.reason = std::move(reason);
  return b;
}

// ---- Cursors: base64url of a JSON array naming the last item served ----

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64Url(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kB64[(acc >> bits) & 0x3F];
    }
  }
  if (bits > 0) out += kB64[(acc << (6 - bits)) & 0x3F];
  return out;
}

std::optional<std::string> FromBase64Url(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::find(kB64, kB64 + 64, c);
    if (p == kB64 + 64) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string EntityCursor(const Entity& e) { return Base64Url(DumpJson(json::array({"e", e.name}))); }
std::string RelationCursor(const Relation& r) {
  return Base64Url(DumpJson(json::array({"r", r.from, r.relation_type, r.to})));
}

struct Cursor {
  bool in_relations = false;
  Entity after_entity;      // when !in_relations
  Relation after_relation;  // when in_relations
};

Result<std::optional<Cursor>> ParseCursor(std::string_view text) {
  if (text.empty()) return std::optional<Cursor>();
  const Status bad = Status::InvalidArgument("cursor is not one read_graph returned (pass its nextCursor as is)");
  std::optional<std::string> raw = FromBase64Url(text);
  if (!raw) return bad;
  json j = json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array() || j.empty() || !j[0].is_string()) return bad;
  for (const json& v : j) {
    if (!v.is_string()) return bad;
  }
  Cursor c;
  if (j[0] == "e" && j.size() == 2) {
    c.after_entity.name = j[1].get<std::string>();
  } else if (j[0] == "r" && j.size() == 4) {
    c.in_relations = true;
    c.after_relation = Relation{j[1].get<std::string>(), j[3].get<std::string>(), j[2].get<std::string>()};
  } else {
    return bad;
  }
  return std::optional<Cursor>(std::move(c));
}

bool Contains(const Entity& e, const std::string& lowered_query) {
  auto has = [&](const std::string& s) { return AsciiLower(s).find(lowered_query) != std::string::npos; };
  return has(e.name) || has(e.entity_type) || std::any_of(e.observations.begin(), e.observations.end(), has);
}

// Every relation from or to one of `names`, sorted.
Result<std::vector<Relation>> RelationsTouching(MemoryLayer& engine, const Namespace& ns,
                                                const std::set<std::string>& names) {
  MSP_ASSIGN_OR_RETURN(std::vector<Relation> all, AllRelations(engine, ns));
  std::erase_if(all, [&](const Relation& r) { return !names.contains(r.from) && !names.contains(r.to); });
  return all;
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

Result<std::vector<Entity>> KnowledgeGraph::CreateEntities(const Namespace& ns, const std::vector<Entity>& entities,
                                                           const std::string& actor) {
  return Retrying([&]() -> Result<std::vector<Entity>> {
    RecordBatch batch = NewBatch(ns, actor, "create_entities");
    std::vector<Entity> created;
    std::set<std::string> seen;
    for (const Entity& e : entities) {
      if (!seen.insert(e.name).second) continue;
      MSP_ASSIGN_OR_RETURN(std::optional<StoredEntity> existing, FindEntity(engine_, ns, e.name));
      if (existing) continue;
      batch.puts.push_back(EntityRecord(ns, e, Memory{}));
      batch.expected_seq.push_back(0);  // a concurrent create of the same name is a conflict
      created.push_back(e);
    }
    MSP_RETURN_IF_ERROR(CommitBatch(engine_, std::move(batch)));
    return created;
  });
}

Result<std::vector<Relation>> KnowledgeGraph::CreateRelations(const Namespace& ns,
                                                              const std::vector<Relation>& relations,
                                                              const std::string& actor) {
  return Retrying([&]() -> Result<std::vector<Relation>> {
    RecordBatch batch = NewBatch(ns, actor, "create_relations");
    std::vector<Relation> created;
    std::set<std::string> seen;
    for (const Relation& r : relations) {
      Memory record = RelationRecord(ns, r);
      if (!seen.insert(record.id).second) continue;
      MSP_ASSIGN_OR_RETURN(std::optional<Memory> existing, Find(engine_, ns, record.id));
      if (existing) continue;
      batch.puts.push_back(std::move(record));
      batch.expected_seq.push_back(0);
      created.push_back(r);
    }
    MSP_RETURN_IF_ERROR(CommitBatch(engine_, std::move(batch)));
    return created;
  });
}

std::vector<std::unique_lock<std::mutex>> KnowledgeGraph::LockRecords(const std::vector<std::string>& ids) {
  std::set<size_t> stripes;  // ascending: every caller locks in the same order
  for (const std::string& id : ids) stripes.insert(std::hash<std::string>{}(id) % stripes_.size());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (size_t s : stripes) locks.emplace_back(stripes_[s]);
  return locks;
}

Result<std::vector<ObservationsAdded>> KnowledgeGraph::AddObservations(const Namespace& ns,
                                                                       const std::vector<ObservationAdd>& additions,
                                                                       const std::string& actor) {
  std::vector<std::string> ids;
  for (const ObservationAdd& a : additions) ids.push_back(EntityId(ns, a.entity_name));
  const auto locks = LockRecords(ids);
  return Retrying([&]() -> Result<std::vector<ObservationsAdded>> {
    // Entries naming the same entity change one copy of it.
    std::map<std::string, StoredEntity> touched;
    std::vector<std::string> order;
    std::vector<ObservationsAdded> results;
    for (const ObservationAdd& a : additions) {
      auto it = touched.find(a.entity_name);
      if (it == touched.end()) {
        MSP_ASSIGN_OR_RETURN(std::optional<StoredEntity> stored, FindEntity(engine_, ns, a.entity_name));
        if (!stored) return Status::NotFound("Entity with name " + a.entity_name + " not found");
        it = touched.emplace(a.entity_name, std::move(*stored)).first;
        order.push_back(a.entity_name);
      }
      std::vector<std::string>& obs = it->second.entity.observations;
      ObservationsAdded result{a.entity_name, {}};
      for (const std::string& c : a.contents) {
        if (std::find(obs.begin(), obs.end(), c) != obs.end()) continue;
        obs.push_back(c);
        result.added.push_back(c);
      }
      results.push_back(std::move(result));
    }
    RecordBatch batch = NewBatch(ns, actor, "add_observations");
    for (const std::string& name : order) {
      StoredEntity& s = touched.at(name);
      const int64_t seq = s.record.seq;
      batch.puts.push_back(EntityRecord(ns, s.entity, std::move(s.record)));
      batch.expected_seq.push_back(seq);
    }
    MSP_RETURN_IF_ERROR(CommitBatch(engine_, std::move(batch)));
    return results;
  });
}

Status KnowledgeGraph::DeleteEntities(const Namespace& ns, const std::vector<std::string>& names,
                                      const std::string& actor) {
  return Retrying([&]() -> Status {
    RecordBatch batch = NewBatch(ns, actor, "delete_entities");
    std::set<std::string> doomed(names.begin(), names.end());
    for (const std::string& name : doomed) {
      MSP_ASSIGN_OR_RETURN(std::optional<Memory> m, Find(engine_, ns, EntityId(ns, name)));
      if (m) batch.deletes.push_back(m->id);
    }
    MSP_ASSIGN_OR_RETURN(std::vector<Relation> relations, RelationsTouching(engine_, ns, doomed));
    for (const Relation& r : relations) batch.deletes.push_back(RelationId(ns, r));
    return CommitBatch(engine_, std::move(batch));
  });
}

Status KnowledgeGraph::DeleteObservations(const Namespace& ns, const std::vector<ObservationDelete>& deletions,
                                          const std::string& actor) {
  std::vector<std::string> ids;
  for (const ObservationDelete& d : deletions) ids.push_back(EntityId(ns, d.entity_name));
  const auto locks = LockRecords(ids);
  return Retrying([&]() -> Status {
    std::map<std::string, StoredEntity> touched;
    std::vector<std::string> order;
    for (const ObservationDelete& d : deletions) {
      auto it = touched.find(d.entity_name);
      if (it == touched.end()) {
        MSP_ASSIGN_OR_RETURN(std::optional<StoredEntity> stored, FindEntity(engine_, ns, d.entity_name));
        if (!stored) continue;
        it = touched.emplace(d.entity_name, std::move(*stored)).first;
        order.push_back(d.entity_name);
      }
      std::erase_if(it->second.entity.observations, [&](const std::string& o) {
        return std::find(d.observations.begin(), d.observations.end(), o) != d.observations.end();
      });
    }
    RecordBatch batch = NewBatch(ns, actor, "delete_observations");
    for (const std::string& name : order) {
      StoredEntity& s = touched.at(name);
      const int64_t seq = s.record.seq;
      batch.puts.push_back(EntityRecord(ns, s.entity, std::move(s.record)));
      batch.expected_seq.push_back(seq);
    }
    return CommitBatch(engine_, std::move(batch));
  });
}

Status KnowledgeGraph::DeleteRelations(const Namespace& ns, const std::vector<Relation>& relations,
                                       const std::string& actor) {
  return Retrying([&]() -> Status {
    RecordBatch batch = NewBatch(ns, actor, "delete_relations");
    std::set<std::string> seen;
    for (const Relation& r : relations) {
      const std::string id = RelationId(ns, r);
      if (!seen.insert(id).second) continue;
      MSP_ASSIGN_OR_RETURN(std::optional<Memory> m, Find(engine_, ns, id));
      if (m) batch.deletes.push_back(id);
    }
    return CommitBatch(engine_, std::move(batch));
  });
}

Result<GraphPage> KnowledgeGraph::ReadGraph(const Namespace& ns, std::string_view cursor_text, int limit) {
  if (limit < 1) return Status::InvalidArgument("limit must be at least 1");
  MSP_ASSIGN_OR_RETURN(std::optional<Cursor> cursor, ParseCursor(cursor_text));
  GraphPage page;
  const size_t want = static_cast<size_t>(limit);
  bool more = false;
  if (!cursor || !cursor->in_relations) {
    MSP_ASSIGN_OR_RETURN(std::vector<Entity> entities, AllEntities(engine_, ns));
    for (Entity& e : entities) {
      if (cursor && e.name <= cursor->after_entity.name) continue;
      if (page.entities.size() == want) {
        more = true;
        break;
      }
      page.entities.push_back(std::move(e));
    }
  }
  if (!more) {
    MSP_ASSIGN_OR_RETURN(std::vector<Relation> relations, AllRelations(engine_, ns));
    for (Relation& r : relations) {
      if (cursor && cursor->in_relations && !RelationLess(cursor->after_relation, r)) continue;
      if (page.entities.size() + page.relations.size() == want) {
        more = true;
        break;
      }
      page.relations.push_back(std::move(r));
    }
  }
  if (more) {
    page.next_cursor = page.relations.empty() ? EntityCursor(page.entities.back()) : RelationCursor(page.relations.back());
  }
  return page;
}

Result<Graph> KnowledgeGraph::SearchNodes(const Namespace& ns, const std::string& query, int limit,
                                          double min_score) {
  if (limit < 1) return Status::InvalidArgument("limit must be at least 1");
  Graph out;
  std::set<std::string> names;
  const size_t want = static_cast<size_t>(limit);
  auto add = [&](Entity e) {
    if (out.entities.size() < want && names.insert(e.name).second) out.entities.push_back(std::move(e));
  };
  if (query.find_first_not_of(" \t\r\n") != std::string::npos) {
    RetrieveRequest req;
    req.scope = ns;
    req.query = query;
    req.top_k = std::min(1000, limit * 3);
    req.min_score = min_score;
    req.filter.kinds = {Kind::kEntity, Kind::kRelation};
    req.record_access = false;  // reading must not change the records writers compare against
    MSP_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, engine_.Retrieve(req));
    for (const SearchHit& h : hits) {
      if (out.entities.size() == want) break;
      if (!(h.memory.ns == ns)) continue;
      if (h.memory.kind == Kind::kEntity) {
        MSP_ASSIGN_OR_RETURN(Entity e, EntityFromRecord(h.memory));
        add(std::move(e));
      } else if (h.memory.kind == Kind::kRelation) {
        MSP_ASSIGN_OR_RETURN(Relation r, RelationFromRecord(h.memory));
        for (const std::string* end : {&r.from, &r.to}) {
          if (names.contains(*end)) continue;
          MSP_ASSIGN_OR_RETURN(std::optional<StoredEntity> s, FindEntity(engine_, ns, *end));
          if (s) add(std::move(s->entity));
        }
      }
    }
  }
  if (out.entities.size() < want) {
    const std::string lowered = AsciiLower(query);
    MSP_ASSIGN_OR_RETURN(std::vector<Entity> all, AllEntities(engine_, ns));
    for (Entity& e : all) {
      if (out.entities.size() == want) break;
      if (!names.contains(e.name) && Contains(e, lowered)) add(std::move(e));
    }
  }
  MSP_ASSIGN_OR_RETURN(out.relations, RelationsTouching(engine_, ns, names));
  return out;
}

Result<Graph> KnowledgeGraph::OpenNodes(const Namespace& ns, const std::vector<std::string>& names) {
  Graph out;
  std::set<std::string> found;
  for (const std::string& name : names) {
    if (found.contains(name)) continue;
    MSP_ASSIGN_OR_RETURN(std::optional<StoredEntity> s, FindEntity(engine_, ns, name));
    if (!s) continue;
    found.insert(name);
    out.entities.push_back(std::move(s->entity));
  }
  MSP_ASSIGN_OR_RETURN(out.relations, RelationsTouching(engine_, ns, found));
  return out;
}

}  // namespace msp::graph
