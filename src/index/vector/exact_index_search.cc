// The exact vector index (exact_index.h), its query side: a query compiled
// into ids and masks, the filter, the block-wise exact scan with its top-k
// heap, the float16 first pass that shortlists the slots that can be in the
// top k, the neighbour graph's candidates, and Score for given ids.
#include "index/vector/exact_index.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

namespace msp::exact_index {
namespace {

// The k best (score, slot) pairs offered: a min-heap on "better" (the
// higher score; ties: the smaller id, whatever the slots), whose root is
// the worst kept. `id_of(slot)` names a slot's id.
template <typename IdOf>
class BestK {
 public:
  BestK(size_t k, size_t slots, IdOf id_of) : k_(k), id_of_(std::move(id_of)) { heap_.reserve(std::min(k, slots) + 1); }

  // Offers slots[0 .. m) with their scores: a NaN score (a damaged vector)
  // ranks nothing, and `pass(i)`, the filter, is asked only of those that
  // would be kept.
  template <typename Pass>
  void Offer(const float* scores, const uint32_t* slots, size_t m, Pass&& pass) {
    for (size_t i = 0; i < m; ++i) {
      if (std::isnan(scores[i])) continue;
      const std::pair<float, uint32_t> cand{scores[i], slots[i]};
      if (heap_.size() == k_ && !Better(cand, heap_.front())) continue;
      if (!pass(i)) continue;
      heap_.push_back(cand);
      std::push_heap(heap_.begin(), heap_.end(), Order());
      if (heap_.size() > k_) {
        std::pop_heap(heap_.begin(), heap_.end(), Order());
        heap_.pop_back();
      }
    }
  }

  // What was kept, best first.
  std::vector<std::pair<float, uint32_t>> Sorted() && {
    std::sort_heap(heap_.begin(), heap_.end(), Order());
    return std::move(heap_);
  }

 private:
  bool Better(const std::pair<float, uint32_t>& a, const std::pair<float, uint32_t>& b) const {
    if (a.first != b.first) return a.first > b.first;
    return id_of_(a.second) < id_of_(b.second);
  }
  auto Order() const {
    return [this](const auto& a, const auto& b) { return Better(a, b); };
  }

  const size_t k_;
  IdOf id_of_;
  std::vector<std::pair<float, uint32_t>> heap_;
};

}  // namespace

Result<std::vector<IndexHit>> ExactVectorIndex::Search(const std::vector<float>& query,
                                                       const IndexQuery& q) const {
  if (query.size() != dim_) {
    return Status::InvalidArgument("query vector has " + std::to_string(query.size()) +
                                   " dimensions; the vector index has " + std::to_string(dim_));
  }
  bool any_nonzero = false;
  for (float x : query) {
    if (!std::isfinite(x)) return Status::InvalidArgument("query vector holds a NaN or infinity");
    any_nonzero = any_nonzero || x != 0.0f;
  }
  std::vector<IndexHit> out;
  if (q.limit <= 0 || !any_nonzero) return out;  // a zero query ranks nothing

  std::shared_lock<std::shared_mutex> lock(mu_);
  const CompiledQuery cq = Compile(q);
  if (cq.impossible || ids_.empty()) return out;

  const size_t k = static_cast<size_t>(q.limit);
  const bool cold = ColdQuery();
  const size_t rows = cq.tenant < tenant_rows_.size() ? tenant_rows_[cq.tenant] : 0;
  // A process's first queries read what they visit with pread: a graph
  // search visits ~10,000 rows (~20,000 reads), while the float16 scan
  // reads its tenant's rows in large pieces; below cold_scan_bytes of
  // them the scan is the cheaper (and exact).
  const bool cold_scan =
      cold && half_ != nullptr && rows * dim_ * sizeof(uint16_t) <= options_.cold_scan_bytes;
  if (graph_ && graph_->nodes() > 0 && rows >= std::max<size_t>(options_.graph_min_records, 1) &&
      !cold_scan) {
    std::optional<std::vector<uint32_t>> found = GraphCandidates(query, cq, k, cold);
    if (found) return TopK(query, cq, k, &*found, cold);
  }
  // With float16 copies, a first pass finds the slots that can be in the
  // top k; only those are scored exactly (the same results, fewer bytes).
  const bool shortlisted = half_ != nullptr;
  std::vector<uint32_t> shortlist;
  if (shortlisted) shortlist = HalfShortlist(query, cq, k, cold);
  return TopK(query, cq, k, shortlisted ? &shortlist : nullptr, cold && shortlisted);
}

Result<std::vector<float>> ExactVectorIndex::Score(const std::vector<float>& query,
                                                   const std::vector<std::string_view>& ids,
                                                   const IndexQuery& q) const {
  if (query.size() != dim_) {
    return Status::InvalidArgument("query vector has " + std::to_string(query.size()) +
                                   " dimensions; the vector index has " + std::to_string(dim_));
  }
  for (float x : query) {
    if (!std::isfinite(x)) return Status::InvalidArgument("query vector holds a NaN or infinity");
  }
  std::vector<float> out(ids.size(), std::numeric_limits<float>::quiet_NaN());
  std::shared_lock<std::shared_mutex> lock(mu_);
  const CompiledQuery cq = Compile(q);
  if (cq.impossible) return out;
  if (ColdQuery() && ScoreCold(query, ids, cq, out)) return out;
  const std::vector<uint32_t> slots = FindSlots(ids);
  const float* rows[kBlock];
  size_t at[kBlock];
  float scores[kBlock];
  for (size_t next = 0; next < ids.size();) {
    size_t m = 0;
    for (; next < ids.size() && m < kBlock; ++next) {
      const uint32_t slot = slots[next];
      if (slot == kNoSlot || !Matches(meta_[slot], cq)) continue;
      rows[m] = vectors_.data() + size_t{slot} * dim_;
      at[m++] = next;
    }
    DotRows(query.data(), rows, m, dim_, scores);
    for (size_t i = 0; i < m; ++i) out[at[i]] = scores[i];
  }
  return out;
}

// Each stage's loads are issued for every id before the next stage reads
// them: at 100,000 records the table entry, the id's reference, its bytes
// and its row are each a cache miss at a random place, so a lookup at a
// time waits for four misses in a row, ids.size() times over.
std::vector<uint32_t> ExactVectorIndex::FindSlots(const std::vector<std::string_view>& ids) const {
  std::vector<uint32_t> slots(ids.size(), kNoSlot);
  if (table_.empty()) return slots;
  const size_t mask = table_.size() - 1;
  std::vector<uint32_t> first(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    first[i] = static_cast<uint32_t>(IdHash(ids[i]) & mask);
    __builtin_prefetch(table_.data() + first[i]);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint32_t e = table_[first[i]];
    if (e != 0 && e <= ids_.size()) __builtin_prefetch(ids_.data() + (e - 1));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint32_t e = table_[first[i]];
    if (e == 0 || e > ids_.size()) continue;
    const IdRef& r = ids_[e - 1];
    if (r.at < id_chars_.size()) __builtin_prefetch(id_chars_.data() + r.at);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    slots[i] = FindSlot(ids[i]);
    if (slots[i] != kNoSlot) __builtin_prefetch(vectors_.data() + size_t{slots[i]} * dim_);
  }
  return slots;
}

bool ExactVectorIndex::ScoreCold(const std::vector<float>& query, const std::vector<std::string_view>& ids,
                                 const CompiledQuery& cq, std::vector<float>& out) const {
  std::lock_guard<std::mutex> reads_lock(reads_mu_);
  const int fd = file_fd_.get();
  const size_t n = ids_.size();
  // Each id's probe run in the id table, read kProbeWindow entries at a
  // time (a run at most half full is rarely longer), names the slots that
  // can hold it.
  struct Probe {
    size_t id;  // index into ids
    uint32_t slot;
    IdRef ref;
  };
  std::vector<Probe> probes;
  if (!table_.empty()) {
    constexpr size_t kProbeWindow = 16;
    const size_t size = table_.size(), mask = size - 1;
    std::vector<size_t> pos(ids.size()), walked(ids.size(), 0), pending(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      pos[i] = IdHash(ids[i]) & mask;
      pending[i] = i;
    }
    std::vector<uint32_t> window(ids.size() * kProbeWindow);
    std::vector<const uint32_t*> entries(ids.size());
    std::vector<size_t> len(ids.size()), still;
    while (!pending.empty()) {
      for (size_t k = 0; k < pending.size(); ++k) {
        len[k] = std::min(kProbeWindow, size - pos[pending[k]]);
        entries[k] = table_.Queue(pos[pending[k]], len[k], window.data() + k * kProbeWindow, reads_);
      }
      if (!reads_.Run(fd)) return false;
      still.clear();
      for (size_t k = 0; k < pending.size(); ++k) {
        const size_t i = pending[k];
        bool ended = false;
        for (size_t j = 0; j < len[k] && !ended; ++j) {
          const uint32_t e = entries[k][j];
          ended = e == 0;
          if (e != 0 && e <= n) probes.push_back(Probe{i, e - 1, {}});  // e > n: a damaged file's entry
        }
        walked[i] += len[k];
        pos[i] = (pos[i] + len[k]) & mask;
        if (!ended && walked[i] < size) still.push_back(i);
      }
      pending.swap(still);
    }
  }
  // Their ids' references, then the bytes of those whose hash and size agree.
  for (Probe& p : probes) {
    if (const IdRef* r = ids_.Queue(p.slot, 1, &p.ref, reads_); r != &p.ref) p.ref = *r;
  }
  if (!reads_.Run(fd)) return false;
  std::vector<const IdRef*> candidates(probes.size(), nullptr);
  for (size_t k = 0; k < probes.size(); ++k) {
    const IdRef& r = probes[k].ref;
    const std::string_view id = ids[probes[k].id];
    if (r.hash == IdHash(id) && r.size == id.size()) candidates[k] = &r;
  }
  std::string bytes;
  const std::vector<const char*> chars = QueueIdBytes(candidates, bytes);
  if (!reads_.Run(fd)) return false;
  // The slot of each id (the first of its probe run that holds it), and
  // the metadata of those slots.
  std::vector<uint32_t> slot_of(ids.size(), kNoSlot);
  for (size_t k = 0; k < probes.size(); ++k) {
    const Probe& p = probes[k];
    if (chars[k] != nullptr && slot_of[p.id] == kNoSlot && std::string_view(chars[k], p.ref.size) == ids[p.id]) {
      slot_of[p.id] = p.slot;
    }
  }
  std::vector<size_t> found;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (slot_of[i] != kNoSlot) found.push_back(i);
  }
  std::vector<SlotMeta> metas(found.size());
  std::vector<const SlotMeta*> meta_of(found.size());
  for (size_t k = 0; k < found.size(); ++k) meta_of[k] = meta_.Queue(slot_of[found[k]], 1, &metas[k], reads_);
  if (!reads_.Run(fd)) return false;
  // The matching slots' rows, a block at a time.
  std::vector<float> scratch(kBlock * dim_);
  const float* rows[kBlock];
  size_t at[kBlock];
  float scores[kBlock];
  for (size_t next = 0; next < found.size();) {
    size_t m = 0;
    for (; next < found.size() && m < kBlock; ++next) {
      if (!Matches(*meta_of[next], cq)) continue;
      rows[m] = vectors_.Queue(size_t{slot_of[found[next]]} * dim_, dim_, scratch.data() + m * dim_, reads_);
      at[m++] = found[next];
    }
    if (!reads_.Run(fd)) return false;
    DotRows(query.data(), rows, m, dim_, scores);
    for (size_t i = 0; i < m; ++i) out[at[i]] = scores[i];
  }
  return true;
}

std::vector<const char*> ExactVectorIndex::QueueIdBytes(const std::vector<const IdRef*>& refs,
                                                         std::string& bytes) const {
  // Sized first: the pieces are queued into `bytes`, which must not move.
  std::vector<size_t> at(refs.size(), std::string::npos);
  bytes.clear();
  for (size_t k = 0; k < refs.size(); ++k) {
    if (refs[k] == nullptr || !InPool(*refs[k])) continue;
    at[k] = bytes.size();
    bytes.resize(bytes.size() + refs[k]->size);
  }
  std::vector<const char*> chars(refs.size(), nullptr);
  for (size_t k = 0; k < refs.size(); ++k) {
    if (at[k] == std::string::npos) continue;
    chars[k] = id_chars_.Queue(refs[k]->at, refs[k]->size, bytes.data() + at[k], reads_);
  }
  return chars;
}

std::vector<IndexHit> ExactVectorIndex::TopK(const std::vector<float>& query, const CompiledQuery& cq,
                                             size_t k, const std::vector<uint32_t>* subset, bool cold) const {
  const bool shortlisted = subset != nullptr;
  if (cold && shortlisted) {
    std::vector<IndexHit> out;
    if (TopKCold(query, cq, k, *subset, out)) return out;
  }
  const std::vector<uint32_t>& shortlist = shortlisted ? *subset : empty_;
  BestK best(k, ids_.size(), [this](uint32_t slot) { return IdAt(slot); });
  const float* qv = query.data();
  const size_t total = shortlisted ? shortlist.size() : ids_.size();
  // Slots are scored a block at a time (DotRows interleaves rows); the
  // filter is checked only for scores that would enter the heap.
  std::vector<float> scratch(cold ? kBlock * dim_ : 0);
  const float* rows[kBlock];
  uint32_t slots[kBlock];
  float scores[kBlock];
  for (size_t next = 0; next < total;) {
    size_t m = 0;
    for (; next < total && m < kBlock; ++next) {
      const uint32_t slot = shortlisted ? shortlist[next] : static_cast<uint32_t>(next);
      if (tenant_of_.At(slot, cold) != cq.tenant) continue;
      rows[m] = vectors_.Read(size_t{slot} * dim_, dim_, cold ? scratch.data() + m * dim_ : nullptr, cold);
      slots[m++] = slot;
    }
    DotRows(qv, rows, m, dim_, scores);
    best.Offer(scores, slots, m, [&](size_t i) { return Matches(meta_.At(slots[i], cold), cq); });
  }
  const std::vector<std::pair<float, uint32_t>> heap = std::move(best).Sorted();
  std::vector<IndexHit> out;
  out.reserve(heap.size());
  std::string buf;
  for (const auto& [score, slot] : heap) out.push_back(IndexHit{std::string(IdAt(slot, cold, &buf)), score});
  return out;
}

bool ExactVectorIndex::TopKCold(const std::vector<float>& query, const CompiledQuery& cq, size_t k,
                                const std::vector<uint32_t>& shortlist, std::vector<IndexHit>& out) const {
  std::lock_guard<std::mutex> reads_lock(reads_mu_);
  const int fd = file_fd_.get();
  BestK best(k, ids_.size(), [this](uint32_t slot) { return IdAt(slot); });
  std::vector<float> scratch(kBlock * dim_);
  uint32_t tenant_buf[kBlock];
  const uint32_t* tenant_at[kBlock];
  SlotMeta meta_buf[kBlock];
  const SlotMeta* meta_at[kBlock];
  const float* rows[kBlock];
  uint32_t slots[kBlock];
  float scores[kBlock];
  for (size_t next = 0; next < shortlist.size();) {
    const size_t count = std::min(kBlock, shortlist.size() - next);
    for (size_t i = 0; i < count; ++i) tenant_at[i] = tenant_of_.Queue(shortlist[next + i], 1, tenant_buf + i, reads_);
    if (!reads_.Run(fd)) return false;
    size_t m = 0;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t slot = shortlist[next + i];
      if (*tenant_at[i] != cq.tenant) continue;
      rows[m] = vectors_.Queue(size_t{slot} * dim_, dim_, scratch.data() + m * dim_, reads_);
      meta_at[m] = meta_.Queue(slot, 1, meta_buf + m, reads_);
      slots[m++] = slot;
    }
    if (!reads_.Run(fd)) return false;
    next += count;
    DotRows(query.data(), rows, m, dim_, scores);
    best.Offer(scores, slots, m, [&](size_t i) { return Matches(*meta_at[i], cq); });
  }
  const std::vector<std::pair<float, uint32_t>> heap = std::move(best).Sorted();
  // The kept slots' ids: their references, then their bytes.
  std::vector<IdRef> refs(heap.size());
  std::vector<const IdRef*> ref_at(heap.size());
  for (size_t j = 0; j < heap.size(); ++j) ref_at[j] = ids_.Queue(heap[j].second, 1, &refs[j], reads_);
  if (!reads_.Run(fd)) return false;
  std::string bytes;
  const std::vector<const char*> chars = QueueIdBytes(ref_at, bytes);  // a damaged file's: ""
  if (!reads_.Run(fd)) return false;
  out.clear();
  out.reserve(heap.size());
  for (size_t j = 0; j < heap.size(); ++j) {
    out.push_back(IndexHit{chars[j] != nullptr ? std::string(chars[j], ref_at[j]->size) : std::string(),
                           heap[j].first});
  }
  return true;
}

std::optional<std::vector<uint32_t>> ExactVectorIndex::GraphCandidates(const std::vector<float>& query,
                                                                       const CompiledQuery& cq, size_t k,
                                                                       bool cold) const {
  std::vector<uint32_t> pending;
  for (uint32_t node = graph_->nodes(); node < slot_of_node_.size(); ++node) {
    const uint32_t slot = slot_of_node_.At(node, cold);
    if (slot < ids_.size() && Matches(meta_.At(slot, cold), cq)) pending.push_back(slot);
  }
  NodeVectors nv = Nodes();
  std::unique_lock<std::mutex> reads_lock(reads_mu_, std::defer_lock);
  if (cold) {
    reads_lock.lock();  // reads_: one query at a time
    nv.files = NodeVectors::Files{&vectors_, &slot_of_node_, &reads_, file_fd_.get()};
  }
  const size_t live = graph_live_;
  size_t want = std::max<size_t>(static_cast<size_t>(std::max(options_.graph_ef_search, 1)), 2 * k);
  for (int round = 0; round < 4; ++round) {
    want = std::min(want, std::max<size_t>(live, 1));
    std::vector<uint32_t> out = pending;
    for (const auto& [sim, node] : graph_->Search(query.data(), want, nv)) {
      const uint32_t slot = slot_of_node_.At(node, cold);
      if (slot < ids_.size() && Matches(meta_.At(slot, cold), cq)) out.push_back(slot);
    }
    if (out.size() >= k || want >= live) return out;
    want *= 4;
    if (want > live / 8) break;
  }
  return std::nullopt;
}

std::vector<uint32_t> ExactVectorIndex::HalfShortlist(const std::vector<float>& query,
                                                      const CompiledQuery& cq, size_t k, bool cold) const {
  double sq = 0.0;
  for (float x : query) sq += static_cast<double>(x) * x;
  const double q_norm = std::sqrt(sq);
  // The bound is linear in the row's norm: e = e0 + e1 * norm.
  const float e0 = static_cast<float>(HalfDotErrorBound(q_norm, 0.0, dim_));
  const float e1 = static_cast<float>(HalfDotErrorBound(q_norm, 1.0, dim_)) - e0;
  constexpr float kInf = std::numeric_limits<float>::infinity();

  std::vector<float> lows;  // min-heap of the best k lower bounds
  lows.reserve(k + 1);
  float threshold = -kInf;                        // lows.front() once k are kept
  std::vector<std::pair<float, uint32_t>> cands;  // (upper, slot)
  const uint16_t* rows[kBlock];
  uint32_t slots[kBlock];
  float scores[kBlock];
  const size_t n = ids_.size();
  std::vector<uint32_t> tenant_buf(cold ? kScanChunk : 0);
  std::vector<float> norm_buf(cold ? kScanChunk : 0);
  std::vector<uint16_t> half_buf(cold ? kScanChunk * dim_ : 0);
  std::vector<SlotMeta> meta_buf(cold ? kScanChunk : 0);
  for (size_t chunk = 0; chunk < n; chunk += kScanChunk) {
    const size_t end = std::min(n, chunk + kScanChunk);
    // The chunk's rows from the first of the tenant's to its last.
    const uint32_t* tenants = tenant_of_.Read(chunk, end - chunk, tenant_buf.data(), cold);
    size_t first = end, last = chunk;
    for (size_t slot = chunk; slot < end; ++slot) {
      if (tenants[slot - chunk] != cq.tenant) continue;
      first = std::min(first, slot);
      last = slot + 1;
    }
    if (first >= last) continue;
    const float* norms = norms_.Read(first, last - first, norm_buf.data(), cold);
    const uint16_t* halves = halves_.Read(first * dim_, (last - first) * dim_, half_buf.data(), cold);
    const SlotMeta* metas = meta_.Read(first, last - first, meta_buf.data(), cold);
    for (size_t slot = first; slot < last;) {
      size_t m = 0;
      for (; slot < last && m < kBlock; ++slot) {
        if (tenants[slot - chunk] != cq.tenant) continue;
        rows[m] = halves + (slot - first) * dim_;
        slots[m++] = static_cast<uint32_t>(slot);
      }
      half_(query.data(), rows, m, dim_, scores);
      for (size_t i = 0; i < m; ++i) {
        const float e = e0 + e1 * norms[slots[i] - first];
        float upper = scores[i] + e, lower = scores[i] - e;
        if (!std::isfinite(upper) || !std::isfinite(lower)) upper = kInf, lower = -kInf;
        if (upper < threshold) continue;
        if (!Matches(metas[slots[i] - first], cq)) continue;
        cands.emplace_back(upper, slots[i]);
        if (lows.size() < k) {
          lows.push_back(lower);
          std::push_heap(lows.begin(), lows.end(), std::greater<float>());
        } else if (lower > lows.front()) {
          std::pop_heap(lows.begin(), lows.end(), std::greater<float>());
          lows.back() = lower;
          std::push_heap(lows.begin(), lows.end(), std::greater<float>());
        }
        if (lows.size() == k) threshold = lows.front();
        if (cands.size() >= 4 * k + 4096) {  // drop what the threshold now excludes
          std::erase_if(cands, [&](const auto& c) { return c.first < threshold; });
        }
      }
    }
  }
  std::vector<uint32_t> out;
  out.reserve(cands.size());
  for (const auto& [upper, slot] : cands) {
    if (upper >= threshold) out.push_back(slot);
  }
  return out;
}

CompiledQuery ExactVectorIndex::Compile(const IndexQuery& q) const {
  CompiledQuery c;
  auto required = [&](const std::string& v) {
    const uint32_t id = Lookup(v);
    if (id == kNoId) c.impossible = true;
    return id;
  };
  auto optional = [&](const std::string& v) { return v.empty() ? kNoId : required(v); };
  c.tenant = required(q.scope.tenant);
  c.user = optional(q.scope.user);
  c.agent = optional(q.scope.agent);
  c.session = optional(q.scope.session);
  c.mission = optional(q.scope.mission);
  c.operator_id = optional(q.scope.operator_id);

  const SearchFilter& f = q.filter;
  auto mask = [](const auto& values) {
    if (values.empty()) return ~0u;
    uint32_t m = 0;
    for (auto v : values) m |= 1u << static_cast<unsigned>(v);
    return m;
  };
  c.kinds = mask(f.kinds);
  c.layers = mask(f.layers);
  c.criticalities = mask(f.criticalities);
  // Any-of over strings: keep the known values; none known matches nothing.
  auto ids_of = [&](const std::vector<std::string>& values, std::vector<uint32_t>& out) {
    if (values.empty()) return;
    for (const std::string& v : values) {
      const uint32_t id = Lookup(v);
      if (id != kNoId) out.push_back(id);
    }
    if (out.empty()) c.impossible = true;
  };
  ids_of(f.sources, c.sources);
  ids_of(f.tags, c.tags);
  c.created_from = f.created_from;
  c.created_to = f.created_to;
  c.now = q.now;
  c.include_superseded = f.include_superseded;
  if (f.max_access_level) c.max_access_level = *f.max_access_level;
  return c;
}

}  // namespace msp::exact_index
