// GraphView (see graph_view.h).
#include "graph/graph_view.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "graph/js_lower.h"

namespace msp::graph {
namespace {

// Changes read per ChangesSince call while catching up.
constexpr int kChangesPage = 1000;
// A search checks every candidate and sorts the matches by name while the
// candidates are at most this many (or 4 x limit); above it, it walks the
// entities in name order and stops at `limit` matches.
constexpr size_t kCheckAllCandidates = 512;
// The gap RelationEntry::order leaves between relations after a renumbering
// and for an append or prepend: 2^31 more of them fit before the next one.
constexpr uint64_t kOrderStep = uint64_t{1} << 32;

// A gram of 1, 2 or 3 bytes: its length in bits 24-25, its bytes below.
uint32_t Gram(std::string_view s, size_t at, size_t len) {
  uint32_t g = static_cast<uint32_t>(len) << 24;
  for (size_t k = 0; k < len; ++k) g |= static_cast<uint32_t>(static_cast<unsigned char>(s[at + k])) << (8 * (len - 1 - k));
  return g;
}

// Every distinct 1-, 2- and 3-byte gram of each field, ascending.
std::vector<uint32_t> GramsOf(const std::vector<std::string>& fields) {
  std::vector<uint32_t> out;
  for (const std::string& f : fields) {
    for (size_t i = 0; i < f.size(); ++i) {
      for (size_t len = 1; len <= 3 && i + len <= f.size(); ++len) out.push_back(Gram(f, i, len));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The grams every field containing `q` holds: `q` itself when it is at most
// 3 bytes (then holding the gram is containing q), else its 3-byte grams.
std::vector<uint32_t> QueryGrams(const std::string& q) {
  std::vector<uint32_t> out;
  if (q.size() <= 3) {
    out.push_back(Gram(q, 0, q.size()));
    return out;
  }
  for (size_t i = 0; i + 3 <= q.size(); ++i) out.push_back(Gram(q, i, 3));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool Contains(const EntityEntry& e, const std::string& lowered_query) {
  return std::any_of(e.lowered.begin(), e.lowered.end(),
                     [&](const std::string& f) { return f.find(lowered_query) != std::string::npos; });
}

std::vector<std::string> LoweredFields(const Entity& e) {
  std::vector<std::string> out;
  out.reserve(e.observations.size() + 2);
  out.push_back(JsLower(e.name));
  out.push_back(JsLower(e.entity_type));
  for (const std::string& o : e.observations) out.push_back(JsLower(o));
  return out;
}

}  // namespace

Status GraphView::CatchUp() {
  if (!loaded_) return Load();
  while (true) {
    MSP_ASSIGN_OR_RETURN(RecordChanges page, engine_.ChangesSince(ns_, applied_seq_, kChangesPage));
    for (const Memory& m : page.records) MSP_RETURN_IF_ERROR(Put(m));
    for (const std::string& id : page.gone) Forget(id);
    applied_seq_ = page.up_to;
    if (!page.more) return Status::Ok();
  }
}

Status GraphView::Load() {
  // The seq first: what commits during the List is replayed again after it.
  MSP_ASSIGN_OR_RETURN(int64_t seq, engine_.LastChangeSeq());
  ListRequest req;
  req.scope = ns_;
  req.filter.kinds = {Kind::kEntity, Kind::kRelation};
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, engine_.List(req));
  for (const Memory& m : records) {
    Status s = Put(m);
    if (!s.ok()) {
      Clear();
      return s;
    }
  }
  applied_seq_ = seq;
  loaded_ = true;
  return Status::Ok();
}

void GraphView::Clear() {
  entities_.clear();
  entity_names_.clear();
  relations_.clear();
  relation_keys_.clear();
  touching_.clear();
  postings_.clear();
  slots_.clear();
  free_slots_.clear();
}

Status GraphView::Put(const Memory& m) {
  const bool ours = m.ns == ns_ && m.state == RecordState::kActive &&
                    (m.kind == Kind::kEntity || m.kind == Kind::kRelation);
  if (!ours) {
    Forget(m.id);
    return Status::Ok();
  }
  if (m.kind == Kind::kRelation) {
    MSP_ASSIGN_OR_RETURN(Relation r, RelationFromRecord(m));
    Forget(m.id);
    RelationKey key = KeyOf(r);
    if (auto old = relations_.find(key); old != relations_.end()) RemoveRelation(old);
    auto it = relations_.emplace(key, RelationEntry{std::move(r), m.id, m.access_level}).first;
    SetOrder(it);
    relation_keys_[m.id] = key;
    const Relation& added = it->second.relation;
    touching_[added.from].push_back(&it->second);
    if (added.to != added.from) touching_[added.to].push_back(&it->second);
    return Status::Ok();
  }
  MSP_ASSIGN_OR_RETURN(Entity e, EntityFromRecord(m));
  std::vector<std::string> lowered = LoweredFields(e);
  std::vector<uint32_t> grams = GramsOf(lowered);
  // An update in place keeps the slot and changes only the grams that differ.
  auto existing = entities_.find(e.name);
  if (existing != entities_.end() && existing->second.id == m.id) {
    EntityEntry& entry = existing->second;
    const std::vector<uint32_t> old_grams = GramsOf(entry.lowered);
    std::vector<uint32_t> gone;
    std::vector<uint32_t> added;
    std::set_difference(old_grams.begin(), old_grams.end(), grams.begin(), grams.end(), std::back_inserter(gone));
    std::set_difference(grams.begin(), grams.end(), old_grams.begin(), old_grams.end(), std::back_inserter(added));
    IndexGrams(entry.slot, gone, /*add=*/false);
    IndexGrams(entry.slot, added, /*add=*/true);
    entry.entity = std::move(e);
    entry.lowered = std::move(lowered);
    entry.access_level = m.access_level;
    return Status::Ok();
  }
  Forget(m.id);
  if (existing != entities_.end()) RemoveEntity(existing);
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(nullptr);
  }
  const std::string name = e.name;
  auto it = entities_.emplace(name, EntityEntry{std::move(e), m.id, m.access_level, std::move(lowered), slot}).first;
  slots_[slot] = &it->second;
  entity_names_[m.id] = name;
  IndexGrams(slot, grams, /*add=*/true);
  return Status::Ok();
}

void GraphView::Forget(const std::string& id) {
  if (auto e = entity_names_.find(id); e != entity_names_.end()) {
    auto it = entities_.find(e->second);
    if (it != entities_.end() && it->second.id == id) {
      RemoveEntity(it);
    } else {
      entity_names_.erase(e);
    }
  }
  if (auto r = relation_keys_.find(id); r != relation_keys_.end()) {
    auto it = relations_.find(r->second);
    if (it != relations_.end() && it->second.id == id) {
      RemoveRelation(it);
    } else {
      relation_keys_.erase(r);
    }
  }
}

void GraphView::RemoveEntity(std::map<std::string, EntityEntry>::iterator it) {
  EntityEntry& entry = it->second;
  IndexGrams(entry.slot, GramsOf(entry.lowered), /*add=*/false);
  slots_[entry.slot] = nullptr;
  free_slots_.push_back(entry.slot);
  entity_names_.erase(entry.id);
  entities_.erase(it);
}

void GraphView::RemoveRelation(std::map<RelationKey, RelationEntry>::iterator it) {
  const RelationEntry* entry = &it->second;
  for (const std::string* end : {&entry->relation.from, &entry->relation.to}) {
    auto t = touching_.find(*end);
    if (t == touching_.end()) continue;
    std::erase(t->second, entry);
    if (t->second.empty()) touching_.erase(t);
  }
  relation_keys_.erase(it->second.id);
  relations_.erase(it);
}

void GraphView::SetOrder(std::map<RelationKey, RelationEntry>::iterator it) {
  const bool first = it == relations_.begin();
  const auto next = std::next(it);
  const bool last = next == relations_.end();
  uint64_t& order = it->second.order;
  if (first && last) {
    RenumberOrders();
  } else if (last) {  // appended: one step on when there is room
    const uint64_t lo = std::prev(it)->second.order;
    if (std::numeric_limits<uint64_t>::max() - lo <= kOrderStep) return RenumberOrders();
    order = lo + kOrderStep;
  } else if (first) {  // prepended: one step back
    const uint64_t hi = next->second.order;
    if (hi <= kOrderStep) return RenumberOrders();
    order = hi - kOrderStep;
  } else {  // between two: halfway
    const uint64_t lo = std::prev(it)->second.order;
    const uint64_t hi = next->second.order;
    if (hi - lo < 2) return RenumberOrders();
    order = lo + (hi - lo) / 2;
  }
}

void GraphView::RenumberOrders() {
  // Evenly spaced around the middle of the range, so that appends and
  // prepends alike find room.
  const uint64_t n = relations_.size();
  const uint64_t step = std::min(kOrderStep, std::numeric_limits<uint64_t>::max() / (n + 2));
  uint64_t order = std::numeric_limits<uint64_t>::max() / 2 - (n / 2) * step;
  for (auto& [key, entry] : relations_) {
    entry.order = order;
    order += step;
  }
}

void GraphView::IndexGrams(uint32_t slot, const std::vector<uint32_t>& grams, bool add) {
  for (uint32_t g : grams) {
    std::vector<uint32_t>& list = postings_[g];
    auto at = std::lower_bound(list.begin(), list.end(), slot);
    if (add) {
      if (at == list.end() || *at != slot) list.insert(at, slot);
    } else {
      if (at != list.end() && *at == slot) list.erase(at);
      if (list.empty()) postings_.erase(g);
    }
  }
}

const EntityEntry* GraphView::FindEntity(const std::string& name) const {
  auto it = entities_.find(name);
  return it == entities_.end() ? nullptr : &it->second;
}

std::vector<const EntityEntry*> GraphView::Search(const std::string& lowered_query, size_t limit,
                                                  const std::function<bool(const EntityEntry&)>& keep) const {
  std::vector<const EntityEntry*> out;
  if (limit == 0) return out;
  if (lowered_query.empty()) {
    for (const auto& [name, entry] : entities_) {
      if (!keep(entry)) continue;
      out.push_back(&entry);
      if (out.size() == limit) break;
    }
    return out;
  }
  // The posting lists of the query's grams, shortest first; one missing
  // means no entity matches.
  std::vector<const std::vector<uint32_t>*> lists;
  for (uint32_t g : QueryGrams(lowered_query)) {
    auto it = postings_.find(g);
    if (it == postings_.end()) return out;
    lists.push_back(&it->second);
  }
  std::sort(lists.begin(), lists.end(), [](const auto* a, const auto* b) { return a->size() < b->size(); });
  std::vector<uint32_t> candidates = *lists.front();
  for (size_t i = 1; i < lists.size() && candidates.size() > 64; ++i) {
    std::vector<uint32_t> both;
    std::set_intersection(candidates.begin(), candidates.end(), lists[i]->begin(), lists[i]->end(),
                          std::back_inserter(both));
    candidates = std::move(both);
  }
  // A query of at most 3 bytes is its own gram: its candidates all match.
  const bool exact = lowered_query.size() <= 3;
  auto matches = [&](const EntityEntry& e) { return (exact || Contains(e, lowered_query)) && keep(e); };
  if (candidates.size() <= std::max(kCheckAllCandidates, 4 * limit)) {
    for (uint32_t slot : candidates) {
      if (matches(*slots_[slot])) out.push_back(slots_[slot]);
    }
    auto by_name = [](const EntityEntry* a, const EntityEntry* b) { return a->entity.name < b->entity.name; };
    if (out.size() > limit) {
      std::partial_sort(out.begin(), out.begin() + static_cast<ptrdiff_t>(limit), out.end(), by_name);
      out.resize(limit);
    } else {
      std::sort(out.begin(), out.end(), by_name);
    }
    return out;
  }
  // Many candidates: walk the names in order and stop at `limit` matches.
  std::vector<bool> candidate(slots_.size(), false);
  for (uint32_t slot : candidates) candidate[slot] = true;
  for (const auto& [name, entry] : entities_) {
    if (!candidate[entry.slot] || !matches(entry)) continue;
    out.push_back(&entry);
    if (out.size() == limit) break;
  }
  return out;
}

std::vector<const RelationEntry*> GraphView::RelationsTouching(const std::vector<const std::string*>& names) const {
  std::vector<const RelationEntry*> out;
  for (const std::string* name : names) {
    auto it = touching_.find(*name);
    if (it != touching_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  // Orders are distinct: equal ones are the same relation (from and to both
  // among `names`, or a name given twice).
  std::sort(out.begin(), out.end(), [](const RelationEntry* a, const RelationEntry* b) { return a->order < b->order; });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace msp::graph
