// The exact vector index (exact_index.h), its query side: a query compiled
// into ids and masks, the filter, the block-wise exact scan with its top-k
// heap, the float16 first pass that shortlists the slots that can be in the
// top k, the neighbour graph's candidates, and Score for given ids.
#include "index/vector/exact_index.h"

#include <cmath>
#include <functional>

namespace msp::exact_index {

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
  const bool cold = ColdQuery();
  std::vector<float> scratch(cold ? kBlock * dim_ : 0);
  const float* rows[kBlock];
  size_t at[kBlock];
  float scores[kBlock];
  for (size_t next = 0; next < ids.size();) {
    size_t m = 0;
    for (; next < ids.size() && m < kBlock; ++next) {
      const uint32_t slot = FindSlot(ids[next], cold);
      if (slot == kNoSlot || !Matches(meta_.At(slot, cold), cq)) continue;
      rows[m] = vectors_.Read(size_t{slot} * dim_, dim_, cold ? scratch.data() + m * dim_ : nullptr, cold);
      at[m++] = next;
    }
    DotRows(query.data(), rows, m, dim_, scores);
    for (size_t i = 0; i < m; ++i) out[at[i]] = scores[i];
  }
  return out;
}

std::vector<IndexHit> ExactVectorIndex::TopK(const std::vector<float>& query, const CompiledQuery& cq,
                                             size_t k, const std::vector<uint32_t>* subset, bool cold) const {
  const bool shortlisted = subset != nullptr;
  const std::vector<uint32_t>& shortlist = shortlisted ? *subset : empty_;
  // Min-heap on "better": the root is the worst of the kept hits.
  std::vector<std::pair<float, uint32_t>> heap;
  heap.reserve(std::min(k, ids_.size()) + 1);
  auto better = [this](const std::pair<float, uint32_t>& a, const std::pair<float, uint32_t>& b) {
    if (a.first != b.first) return a.first > b.first;
    return IdAt(a.second) < IdAt(b.second);  // ties: smaller id first, whatever the slots
  };
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
    for (size_t i = 0; i < m; ++i) {
      if (std::isnan(scores[i])) continue;  // a damaged vector ranks nothing
      const std::pair<float, uint32_t> cand{scores[i], slots[i]};
      if (heap.size() == k && !better(cand, heap.front())) continue;
      if (!Matches(meta_.At(slots[i], cold), cq)) continue;
      heap.push_back(cand);
      std::push_heap(heap.begin(), heap.end(), better);
      if (heap.size() > k) {
        std::pop_heap(heap.begin(), heap.end(), better);
        heap.pop_back();
      }
    }
  }
  std::sort_heap(heap.begin(), heap.end(), better);  // best first
  std::vector<IndexHit> out;
  out.reserve(heap.size());
  std::string buf;
  for (const auto& [score, slot] : heap) out.push_back(IndexHit{std::string(IdAt(slot, cold, &buf)), score});
  return out;
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
  if (cold) nv.files = NodeVectors::Files{&vectors_, &slot_of_node_};
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
