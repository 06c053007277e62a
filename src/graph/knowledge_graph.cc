// The knowledge graph over MemoryLayer::Commit (see knowledge_graph.h).
#include "graph/knowledge_graph.h"

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
#include "graph/js_lower.h"

namespace msp::graph {
namespace {

using nlohmann::json;

// How often a change is read again and retried after a concurrent writer won.
constexpr int kMaxAttempts = 200;
// Namespaces whose views one KnowledgeGraph keeps; the least recently used
// one beyond this is dropped (and loaded again when next read).
constexpr size_t kMaxViews = 32;

// ---- Store access ----

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

}  // namespace

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
    {
      MSP_ASSIGN_OR_RETURN(LockedView view, View(ns));
      std::vector<const std::string*> doomed_names;
      for (const std::string& name : doomed) doomed_names.push_back(&name);
      for (const RelationEntry* r : view->RelationsTouching(doomed_names)) batch.deletes.push_back(r->id);
    }
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

namespace {

// What a reader with `clearance` may see (see KnowledgeGraph).
struct Visibility {
  const GraphView& view;
  std::optional<int> clearance;

  bool ShowsEntity(const EntityEntry& e) const { return !clearance || e.access_level <= *clearance; }
  bool ShowsEnd(const std::string& name) const {
    if (!clearance) return true;
    const EntityEntry* e = view.FindEntity(name);
    return e == nullptr || ShowsEntity(*e);
  }
  bool ShowsRelation(const RelationEntry& r) const {
    return !clearance || (r.access_level <= *clearance && ShowsEnd(r.relation.from) && ShowsEnd(r.relation.to));
  }
};

// The relations from or to `names` that `visible` lets through, by key.
std::vector<Relation> VisibleRelationsTouching(const GraphView& view, const std::vector<const std::string*>& names,
                                               const Visibility& visible) {
  std::vector<Relation> out;
  for (const RelationEntry* r : view.RelationsTouching(names)) {
    if (visible.ShowsRelation(*r)) out.push_back(r->relation);
  }
  return out;
}

// A key for the views map: the namespace's parts, length-prefixed.
std::string NamespaceKey(const Namespace& ns) {
  std::string key;
  for (const std::string* p : {&ns.tenant, &ns.user, &ns.agent, &ns.session, &ns.mission, &ns.operator_id}) {
    key += std::to_string(p->size());
    key += ':';
    key += *p;
  }
  return key;
}

}  // namespace

Result<KnowledgeGraph::LockedView> KnowledgeGraph::View(const Namespace& ns) {
  std::shared_ptr<ViewSlot> slot;
  {
    std::lock_guard<std::mutex> lock(views_mu_);
    std::shared_ptr<ViewSlot>& s = views_[NamespaceKey(ns)];
    if (!s) {
      s = std::make_shared<ViewSlot>();
      s->view = std::make_unique<GraphView>(engine_, ns);
    }
    s->last_used = ++use_clock_;
    slot = s;
    if (views_.size() > kMaxViews) {
      auto oldest = views_.end();
      for (auto it = views_.begin(); it != views_.end(); ++it) {
        if (it->second != slot && (oldest == views_.end() || it->second->last_used < oldest->second->last_used)) {
          oldest = it;
        }
      }
      if (oldest != views_.end()) views_.erase(oldest);  // a caller holding it keeps its copy alive
    }
  }
  LockedView locked{slot, std::unique_lock<std::mutex>(slot->mu)};
  MSP_RETURN_IF_ERROR(slot->view->CatchUp());
  return locked;
}

Result<GraphPage> KnowledgeGraph::ReadGraph(const Namespace& ns, std::string_view cursor_text, int limit,
                                            std::optional<int> clearance) {
  if (limit < 1) return Status::InvalidArgument("limit must be at least 1");
  MSP_ASSIGN_OR_RETURN(std::optional<Cursor> cursor, ParseCursor(cursor_text));
  MSP_ASSIGN_OR_RETURN(LockedView view, View(ns));
  const Visibility visible{*view, clearance};
  GraphPage page;
  const size_t want = static_cast<size_t>(limit);
  auto full = [&] { return page.entities.size() + page.relations.size() == want; };
  bool more = false;
  if (!cursor || !cursor->in_relations) {
    const auto& entities = view->entities();
    auto it = cursor ? entities.upper_bound(cursor->after_entity.name) : entities.begin();
    for (; it != entities.end(); ++it) {
      if (!visible.ShowsEntity(it->second)) continue;
      if (full()) {
        more = true;
        break;
      }
      page.entities.push_back(it->second.entity);
    }
  }
  if (!more) {
    const auto& relations = view->relations();
    auto it = cursor && cursor->in_relations ? relations.upper_bound(KeyOf(cursor->after_relation)) : relations.begin();
    for (; it != relations.end(); ++it) {
      if (!visible.ShowsRelation(it->second)) continue;
      if (full()) {
        more = true;
        break;
      }
      page.relations.push_back(it->second.relation);
    }
  }
  if (more) {
    page.next_cursor = page.relations.empty() ? EntityCursor(page.entities.back()) : RelationCursor(page.relations.back());
  }
  return page;
}

Result<Graph> KnowledgeGraph::SearchNodes(const Namespace& ns, const std::string& query, int limit,
                                          std::optional<int> clearance) {
  if (limit < 1) return Status::InvalidArgument("limit must be at least 1");
  const std::string lowered = JsLower(query);
  MSP_ASSIGN_OR_RETURN(LockedView view, View(ns));
  const Visibility visible{*view, clearance};
  Graph out;
  std::vector<const std::string*> names;  // the view's, under its lock
  for (const EntityEntry* e : view->Search(lowered, static_cast<size_t>(limit),
                                           [&](const EntityEntry& entry) { return visible.ShowsEntity(entry); })) {
    out.entities.push_back(e->entity);
    names.push_back(&e->entity.name);
  }
  out.relations = VisibleRelationsTouching(*view, names, visible);
  return out;
}

Result<Graph> KnowledgeGraph::OpenNodes(const Namespace& ns, const std::vector<std::string>& names,
                                        std::optional<int> clearance) {
  MSP_ASSIGN_OR_RETURN(LockedView view, View(ns));
  const Visibility visible{*view, clearance};
  Graph out;
  std::set<std::string> found;
  std::vector<const std::string*> found_names;
  for (const std::string& name : names) {
    if (found.contains(name)) continue;
    const EntityEntry* e = view->FindEntity(name);
    if (e == nullptr || !visible.ShowsEntity(*e)) continue;
    found.insert(name);
    found_names.push_back(&e->entity.name);
    out.entities.push_back(e->entity);
  }
  out.relations = VisibleRelationsTouching(*view, found_names, visible);
  return out;
}

}  // namespace msp::graph
