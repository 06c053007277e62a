// The exact vector index (exact_index.h), its writing side: Apply (upserts
// and deletes), the per-slot arrays kept dense, the id pool and its
// open-addressing table, interned strings, the neighbour graph's upkeep;
// and the factories of index/index.h.
#include "index/vector/exact_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <utility>

namespace msp::exact_index {

Status ExactVectorIndex::Apply(const std::vector<Memory>& upserts, const std::vector<std::string>& deletes,
                               int64_t up_to_seq) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (applied_seq_ >= up_to_seq) return Status::Ok();
  if (!upserts.empty() || !deletes.empty()) CheckTable();
  for (const Memory& m : upserts) {
    if (m.embedding.size() != dim_ || dim_ == 0 ||
        !std::all_of(m.embedding.begin(), m.embedding.end(), [](float x) { return std::isfinite(x); })) {
      Remove(m.id);  // no usable vector: the record leaves the index
      continue;
    }
    Upsert(m);
  }
  for (const std::string& id : deletes) Remove(id);
  CompactPools();
  applied_seq_ = up_to_seq;
  return Status::Ok();
}

void ExactVectorIndex::Clear() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  ClearLocked();
}

Status ExactVectorIndex::ExtendGraph(size_t max_nodes) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  return ExtendGraphLocked(max_nodes);
}

VectorGraphInfo ExactVectorIndex::graph_info() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  VectorGraphInfo info;
  if (!graph_) {
    info.pending = options_.graph_min_records > 0 ? ids_.size() : 0;
    return info;
  }
  info.built = true;
  info.placed = graph_->nodes();
  info.removed = graph_->nodes() - graph_live_;
  info.pending = ids_.size() - graph_live_;
  return info;
}

void ExactVectorIndex::Warm(size_t max_bytes) const {
  // A chunk at a time under the shared lock, so that a writer waits for
  // one chunk at most; the array is looked up again for each (a write may
  // have moved it).
  constexpr size_t kChunkBytes = size_t{4} << 20;
  size_t left = max_bytes;
  auto warm = [this, &left]<typename T>(auto array_of) {
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      const MappedArray<T>* a = array_of();
      const size_t bytes = a == nullptr ? 0 : a->size() * sizeof(T);
      if (bytes > left) return;  // left to the queries
      left -= bytes;
    }
    for (size_t at = 0;;) {
      std::shared_lock<std::shared_mutex> lock(mu_);
      const MappedArray<T>* a = array_of();
      if (a == nullptr || at >= a->size()) return;
      const size_t n = std::min(a->size() - at, std::max<size_t>(1, kChunkBytes / sizeof(T)));
      a->Prefault(at, n);
      at += n;
    }
  };
  // What every query reads first, the graph, then the rows.
  warm.operator()<uint32_t>([this] { return &table_; });
  warm.operator()<IdRef>([this] { return &ids_; });
  warm.operator()<char>([this] { return &id_chars_; });
  warm.operator()<SlotMeta>([this] { return &meta_; });
  warm.operator()<uint32_t>([this] { return &tag_pool_; });
  warm.operator()<uint32_t>([this] { return &tenant_of_; });
  warm.operator()<float>([this] { return &norms_; });
  warm.operator()<uint32_t>([this] { return &node_of_slot_; });
  warm.operator()<uint32_t>([this] { return &slot_of_node_; });
  warm.operator()<uint32_t>([this]() -> const MappedArray<uint32_t>* {
    return graph_ ? &std::as_const(*graph_).level0() : nullptr;
  });
  warm.operator()<uint8_t>([this]() -> const MappedArray<uint8_t>* {
    return graph_ ? &std::as_const(*graph_).levels() : nullptr;
  });
  warm.operator()<uint32_t>([this]() -> const MappedArray<uint32_t>* {
    return graph_ ? &std::as_const(*graph_).upper_at() : nullptr;
  });
  warm.operator()<uint32_t>([this]() -> const MappedArray<uint32_t>* {
    return graph_ ? &std::as_const(*graph_).upper() : nullptr;
  });
  warm.operator()<uint16_t>([this] { return &halves_; });
  warm.operator()<float>([this] { return &vectors_; });
  cold_queries_.store(0, std::memory_order_relaxed);
}

Status ExactVectorIndex::ExtendGraphLocked(size_t max_nodes) {
  if (options_.graph_min_records == 0 || max_nodes == 0) return Status::Ok();
  const size_t removed = graph_ ? graph_->nodes() - graph_live_ : 0;
  if (graph_ && removed > graph_live_) DropGraph();  // mostly holes: built again
  if (!graph_) {
    if (ids_.size() < options_.graph_min_records) return Status::Ok();
    graph_ =
        std::make_unique<NeighborGraph>(static_cast<uint32_t>(std::max(options_.graph_m, 2)),
                                        static_cast<uint32_t>(std::max(options_.graph_ef_construction, 1)),
                                        /*seed=*/100);
    graph_live_ = 0;
    node_of_slot_.resize(ids_.size());
    slot_of_node_.resize(ids_.size());
    for (uint32_t slot = 0; slot < ids_.size(); ++slot) node_of_slot_[slot] = slot_of_node_[slot] = slot;
  }
  const uint32_t from = graph_->nodes();
  const uint32_t upto =
      static_cast<uint32_t>(from + std::min<size_t>(slot_of_node_.size() - from, max_nodes));
  if (upto <= from) return Status::Ok();
  const int threads = upto - from < 4096 ? 1
                      : options_.build_threads > 0
                          ? options_.build_threads
                          : static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u));
  try {
    graph_->Insert(upto, Nodes(), threads);
  } catch (const std::exception& e) {
    DropGraph();  // built again on a later call
    return Status::Internal(std::string("vector graph update failed: ") + e.what());
  }
  for (uint32_t node = from; node < upto; ++node) graph_live_ += slot_of_node_[node] != kNoSlot;
  return Status::Ok();
}

void ExactVectorIndex::DropGraph() {
  graph_.reset();
  graph_live_ = 0;
  node_of_slot_.clear();
  slot_of_node_.clear();
}

uint32_t ExactVectorIndex::Intern(const std::string& s) {
  auto [it, inserted] = strings_.try_emplace(s, static_cast<uint32_t>(string_of_.size()));
  if (inserted) {
    string_of_.push_back(s);
    tenant_rows_.push_back(0);
  }
  return it->second;
}

uint32_t ExactVectorIndex::Lookup(const std::string& s) const {
  auto it = strings_.find(s);
  return it == strings_.end() ? kNoId : it->second;
}

uint32_t ExactVectorIndex::FindSlot(std::string_view id, bool from_file) const {
  if (table_.empty()) return kNoSlot;
  const uint32_t h = IdHash(id);
  const size_t mask = table_.size() - 1;
  std::string buf;
  for (size_t i = h & mask, probes = 0; probes < table_.size(); i = (i + 1) & mask, ++probes) {
    const uint32_t e = table_.At(i, from_file);
    if (e == 0) return kNoSlot;
    if (e > ids_.size()) continue;  // a damaged file's entry
    const IdRef r = ids_.At(e - 1, from_file);
    if (r.hash == h && r.size == id.size() && IdBytes(r, from_file, &buf) == id) return e - 1;
  }
  return kNoSlot;
}

size_t ExactVectorIndex::TablePos(uint32_t slot) {
  for (int attempt = 0;; ++attempt) {
    const size_t mask = table_.size() - 1;
    size_t i = ids_[slot].hash & mask;
    for (size_t probes = 0; probes < table_.size(); ++probes, i = (i + 1) & mask) {
      if (table_[i] == slot + 1) return i;
    }
    if (attempt > 0) std::abort();  // cannot happen: the table was just built from the slots
    RebuildTable();
  }
}

void ExactVectorIndex::RebuildTable() {
  std::fill(table_.begin(), table_.end(), 0u);
  for (size_t slot = 0; slot < ids_.size(); ++slot) TablePut(static_cast<uint32_t>(slot));
}

bool ExactVectorIndex::TableConsistent() const {
  const size_t n = ids_.size(), size = table_.size();
  // Read from the file in chunks where it still holds them: faulting the
  // table's pages in costs more than the check.
  size_t used = 0;
  std::vector<uint32_t> chunk(std::min<size_t>(size, 16384));
  for (size_t at = 0; at < size; at += chunk.size()) {
    const size_t len = std::min(chunk.size(), size - at);
    const uint32_t* entries = table_.Read(at, len, chunk.data(), /*from_file=*/true);
    for (size_t i = 0; i < len; ++i) {
      if (entries[i] > n) return false;
      used += entries[i] != 0;
    }
  }
  return used == n;
}

void ExactVectorIndex::CheckTable() {
  if (table_checked_) return;
  if (!TableConsistent()) RebuildTable();
  table_checked_ = true;
}

void ExactVectorIndex::TablePut(uint32_t slot) {
  const size_t mask = table_.size() - 1;
  size_t i = ids_[slot].hash & mask;
  while (table_[i] != 0) i = (i + 1) & mask;
  table_[i] = slot + 1;
}

void ExactVectorIndex::ReserveTable(size_t slots) {
  if (table_.size() >= 2 * slots && !table_.empty()) return;
  size_t size = std::max<size_t>(table_.size(), 16);
  while (size < 2 * slots) size *= 2;
  table_.clear();
  table_.resize(size);
  RebuildTable();
}

void ExactVectorIndex::TableErase(size_t pos) {
  const size_t mask = table_.size() - 1;
  for (size_t j = (pos + 1) & mask; table_[j] != 0; j = (j + 1) & mask) {
    const size_t home = ids_[table_[j] - 1].hash & mask;
    // Entry j may move to pos unless its home lies cyclically in (pos, j].
    const bool stays = pos <= j ? (pos < home && home <= j) : (pos < home || home <= j);
    if (!stays) {
      table_[pos] = table_[j];
      pos = j;
    }
  }
  table_[pos] = 0;
}

void ExactVectorIndex::CompactPools() {
  if (id_chars_.size() > 2 * live_id_chars_ + 65536) {
    MappedArray<char> chars;
    chars.resize(live_id_chars_);
    uint64_t at = 0;
    for (size_t slot = 0; slot < ids_.size(); ++slot) {
      const std::string_view id = IdAt(slot);
      IdRef& r = ids_[slot];
      if (at + id.size() > chars.size()) chars.resize(at + id.size());  // counts from a damaged file
      std::memcpy(chars.data() + at, id.data(), id.size());
      r.at = at;
      r.size = static_cast<uint32_t>(id.size());
      at += id.size();
    }
    live_id_chars_ = at;
    id_chars_ = std::move(chars);
  }
  if (tag_pool_.size() > 2 * live_tags_ + 16384) {
    MappedArray<uint32_t> tags;
    tags.resize(live_tags_);
    uint32_t at = 0;
    for (size_t slot = 0; slot < meta_.size(); ++slot) {
      SlotMeta& m = meta_[slot];
      const auto [from, count] = TagsOf(m);
      if (at + count > tags.size()) tags.resize(at + count);  // counts from a damaged file
      std::copy(from, from + count, tags.data() + at);
      m.tags_at = at;
      m.tags_count = static_cast<uint32_t>(count);
      at += static_cast<uint32_t>(count);
    }
    live_tags_ = at;
    tag_pool_ = std::move(tags);
  }
}

void ExactVectorIndex::Upsert(const Memory& m) {
  SlotMeta meta;
  meta.tenant = Intern(m.ns.tenant);
  meta.user = Intern(m.ns.user);
  meta.agent = Intern(m.ns.agent);
  meta.session = Intern(m.ns.session);
  meta.mission = Intern(m.ns.mission);
  meta.operator_id = Intern(m.ns.operator_id);
  meta.source = Intern(m.source);
  meta.kind = static_cast<uint8_t>(m.kind);
  meta.layer = static_cast<uint8_t>(m.layer);
  meta.criticality = static_cast<uint8_t>(m.criticality);
  meta.state = static_cast<uint8_t>(m.state);
  meta.access_level = static_cast<uint8_t>(m.access_level);
  meta.created_at = m.created_at;
  meta.expires_at = m.expires_at;
  std::vector<uint32_t> tags;
  tags.reserve(m.tags.size());
  for (const std::string& t : m.tags) tags.push_back(Intern(t));

  uint32_t slot = FindSlot(m.id);
  const bool existed = slot != kNoSlot;
  if (!existed) {
    slot = static_cast<uint32_t>(ids_.size());
    IdRef ref;
    ref.at = id_chars_.size();
    ref.size = static_cast<uint32_t>(m.id.size());
    ref.hash = IdHash(m.id);
    id_chars_.resize(id_chars_.size() + m.id.size());
    std::memcpy(id_chars_.Mutable(ref.at, m.id.size()), m.id.data(), m.id.size());
    live_id_chars_ += m.id.size();
    ReserveTable(ids_.size() + 1);  // re-places the slots there are, not this one
    ids_.push_back(ref);
    TablePut(slot);
    meta_.push_back(SlotMeta{});
    tenant_of_.push_back(0);
    vectors_.resize(vectors_.size() + dim_);
    if (graph_) {
      node_of_slot_.push_back(static_cast<uint32_t>(slot_of_node_.size()));
      slot_of_node_.push_back(slot);
    }
    if (half_) {
      halves_.resize(halves_.size() + dim_);
      norms_.push_back(0.0f);
    }
  }
  size_t old_tags = 0;  // the old tags' room, reused when the new ones fit
  if (existed) {
    const SlotMeta& old = meta_[slot];
    CountRow(old.tenant, -1);  // the record may change tenant
    old_tags = TagsOf(old).second;
    live_tags_ -= std::min(live_tags_, old_tags);
  }
  if (tags.empty()) {
    meta.tags_at = 0;
  } else if (tags.size() <= old_tags) {
    meta.tags_at = meta_[slot].tags_at;
  } else {
    meta.tags_at = static_cast<uint32_t>(tag_pool_.size());
    tag_pool_.resize(tag_pool_.size() + tags.size());
  }
  meta.tags_count = static_cast<uint32_t>(tags.size());
  std::copy(tags.begin(), tags.end(), tag_pool_.data() + meta.tags_at);
  live_tags_ += tags.size();
  CountRow(meta.tenant, +1);
  tenant_of_[slot] = meta.tenant;
  meta_[slot] = meta;
  float* row = vectors_.Mutable(size_t{slot} * dim_, dim_);  // only this row's pages leave the file's view
  if (graph_ && existed && !std::equal(m.embedding.begin(), m.embedding.end(), row)) {
    // A moved vector is a new node; its old one is removed.
    const uint32_t old = node_of_slot_[slot];
    if (old < slot_of_node_.size()) slot_of_node_[old] = kNoSlot;
    node_of_slot_[slot] = static_cast<uint32_t>(slot_of_node_.size());
    slot_of_node_.push_back(slot);
    ForgetNode(old);
  }
  std::copy(m.embedding.begin(), m.embedding.end(), row);
  if (half_) {
    double sq = 0.0;
    bool in_range = true;
    uint16_t* half_row = halves_.Mutable(size_t{slot} * dim_, dim_);
    for (size_t i = 0; i < dim_; ++i) {
      const float x = m.embedding[i];
      sq += static_cast<double>(x) * x;
      in_range = in_range && std::fabs(x) <= kHalfMax;
      half_row[i] = FloatToHalf(x);
    }
    // Rounded up, so the error bound built from it stays a bound.
    norms_[slot] =
        in_range ? static_cast<float>(std::sqrt(sq) * (1.0 + 1e-6)) : std::numeric_limits<float>::infinity();
  }
}

void ExactVectorIndex::Remove(const std::string& id) {
  const uint32_t slot = FindSlot(id);
  if (slot == kNoSlot) return;
  const uint32_t last = static_cast<uint32_t>(ids_.size() - 1);
  TableErase(TablePos(slot));
  CountRow(meta_[slot].tenant, -1);
  live_tags_ -= std::min(live_tags_, TagsOf(meta_[slot]).second);
  live_id_chars_ -= std::min(live_id_chars_, IdAt(slot).size());
  uint32_t node = graph_ ? node_of_slot_[slot] : kNoNode;
  if (node >= slot_of_node_.size()) node = kNoNode;  // none, or a damaged file's
  if (node != kNoNode) slot_of_node_[node] = kNoSlot;
  if (slot != last) {
    table_[TablePos(last)] = slot + 1;
    const float* last_row = std::as_const(vectors_).data() + size_t{last} * dim_;
    std::copy(last_row, last_row + dim_, vectors_.Mutable(size_t{slot} * dim_, dim_));
    meta_[slot] = meta_[last];
    tenant_of_[slot] = tenant_of_[last];
    if (graph_) {
      node_of_slot_[slot] = node_of_slot_[last];
      if (node_of_slot_[slot] < slot_of_node_.size()) slot_of_node_[node_of_slot_[slot]] = slot;
    }
    if (half_) {
      const uint16_t* last_half = std::as_const(halves_).data() + size_t{last} * dim_;
      std::copy(last_half, last_half + dim_, halves_.Mutable(size_t{slot} * dim_, dim_));
      norms_[slot] = norms_[last];
    }
    ids_[slot] = ids_[last];
  }
  vectors_.resize(size_t{last} * dim_);
  if (half_) {
    halves_.resize(size_t{last} * dim_);
    norms_.pop_back();
  }
  meta_.pop_back();
  tenant_of_.pop_back();
  if (graph_) node_of_slot_.pop_back();
  ids_.pop_back();
  if (node != kNoNode) ForgetNode(node);
}

void ExactVectorIndex::ForgetNode(uint32_t node) {
  if (node >= graph_->nodes()) return;  // never placed
  --graph_live_;
  graph_->Removed(node, Nodes());
}

void ExactVectorIndex::ClearLocked() {
  vectors_.clear();
  halves_.clear();
  norms_.clear();
  meta_.clear();
  tag_pool_.clear();
  tenant_of_.clear();
  ids_.clear();
  id_chars_.clear();
  table_.clear();
  table_checked_ = true;
  tenant_rows_.clear();
  DropGraph();
  string_of_.clear();
  strings_.clear();
  live_tags_ = 0;
  live_id_chars_ = 0;
  applied_seq_ = 0;
  file_fd_ = OwnedFd();
  cold_queries_.store(0, std::memory_order_relaxed);
}

}  // namespace msp::exact_index

namespace msp {

std::unique_ptr<VectorIndex> MakeExactVectorIndex(int dimension) {
  VectorIndexOptions no_graph;
  no_graph.graph_min_records = 0;
  return std::make_unique<exact_index::ExactVectorIndex>(dimension, no_graph);
}

std::unique_ptr<VectorIndex> MakeVectorIndex(int dimension, const VectorIndexOptions& options) {
  return std::make_unique<exact_index::ExactVectorIndex>(dimension, options);
}

}  // namespace msp
