// The exact vector index: every vector in one flat float array, scanned with
// DotRows() (AVX-512/AVX when the CPU has them) for each query, the best
// `limit` kept in a small heap.
//
// Per slot it keeps only what MatchesQuery looks at, compactly: strings
// (namespace parts, source, tags) are interned to 32-bit ids, enums stored as
// bytes. A query is compiled once into ids and bit masks; a value the index
// has never seen cannot match, so such a query needs no scan. The filter is
// checked only for slots whose score would enter the heap, except the tenant
// (kept in its own array), which is checked before the dot product so other
// tenants' vectors are not even read. Tests check that the compiled filter
// agrees with MatchesQuery.
//
// Records whose embedding is not dimension() finite floats are dropped (an
// upsert without one removes the record's old vector). Apply indexes
// `upserts` before removing `deletes`. Search returns nothing for an all-zero
// query (it has no direction); equal scores are ordered by id.
//
// Deletion swaps the last slot into the hole, so storage stays dense.
// Interned strings are kept until Clear().
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "embed/dot.h"
#include "embed/embedder.h"
#include "index/index.h"

// hnswlib defines non-inline functions in its headers: include it in this
// one translation unit only. Its prefetching search loops read the int just
// past an upper-level link list (inside malloc's usable size in practice,
// but AddressSanitizer reports it); sanitizer builds turn that code off.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>

namespace msp {
namespace {

constexpr uint32_t kNoId = std::numeric_limits<uint32_t>::max();

// Lets slot_of_ be searched with a string_view, without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// What MatchesQuery needs of one record.
struct SlotMeta {
  uint32_t tenant = 0, user = 0, agent = 0, session = 0, mission = 0, operator_id = 0;
  uint32_t source = 0;
  uint8_t kind = 0, layer = 0, criticality = 0, state = 0, access_level = 0;
  int64_t created_at = 0;
  int64_t expires_at = 0;
  std::vector<uint32_t> tags;
};

// A query turned into ids and masks. `impossible` when no record can match.
struct CompiledQuery {
  bool impossible = false;
  uint32_t tenant = kNoId;
  // kNoId: any value (the scope part is empty).
  uint32_t user = kNoId, agent = kNoId, session = kNoId, mission = kNoId, operator_id = kNoId;
  uint32_t kinds = ~0u, layers = ~0u, criticalities = ~0u;  // bit per enum value
  std::vector<uint32_t> sources;  // empty: any
  std::vector<uint32_t> tags;     // empty: any
  int64_t created_from = 0, created_to = 0;
  int64_t now = 0;
  bool include_superseded = false;
  int max_access_level = kMaxAccessLevel;
};

constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

// hnswlib's distance for our vectors: 1 - Dot (so graph distances order
// rows exactly as the exact scan's scores do).
class DotSpace final : public hnswlib::SpaceInterface<float> {
 public:
  explicit DotSpace(size_t dim) : dim_(dim) {}
  size_t get_data_size() override { return dim_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &Distance; }
  void* get_dist_func_param() override { return &dim_; }

 private:
  static float Distance(const void* a, const void* b, const void* dim) {
    return 1.0f - Dot(static_cast<const float*>(a), static_cast<const float*>(b),
                      *static_cast<const size_t*>(dim));
  }
  size_t dim_;
};

using Graph = hnswlib::HierarchicalNSW<float>;

class ExactVectorIndex final : public VectorIndex {
 public:
  ExactVectorIndex(int dimension, const VectorIndexOptions& options)
      : dim_(static_cast<size_t>(std::max(dimension, 0))), options_(options), space_(dim_) {}

  int dimension() const override { return static_cast<int>(dim_); }

  int64_t AppliedSeq() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return applied_seq_;
  }

  size_t size() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return ids_.size();
  }

  Status Apply(const std::vector<Memory>& upserts, const std::vector<std::string>& deletes,
               int64_t up_to_seq) override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (applied_seq_ >= up_to_seq) return Status::Ok();
    for (const Memory& m : upserts) {
      if (m.embedding.size() != dim_ || dim_ == 0 ||
          !std::all_of(m.embedding.begin(), m.embedding.end(), [](float x) { return std::isfinite(x); })) {
        Remove(m.id);  // no usable vector: the record leaves the index
        continue;
      }
      Upsert(m);
    }
    for (const std::string& id : deletes) Remove(id);
    MSP_RETURN_IF_ERROR(SyncGraph());
    applied_seq_ = up_to_seq;
    return Status::Ok();
  }

  void Clear() override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    vectors_.clear();
    vectors_.shrink_to_fit();
    halves_.clear();
    halves_.shrink_to_fit();
    norms_.clear();
    key_of_slot_.clear();
    slot_of_key_.clear();
    tenant_rows_.clear();
    graph_.reset();
    pending_.clear();
    meta_.clear();
    tenant_of_.clear();
    ids_.clear();
    slot_of_.clear();
    strings_.clear();
    applied_seq_ = 0;
  }

  Result<std::vector<IndexHit>> Search(const std::vector<float>& query,
                                       const IndexQuery& q) const override {
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
    if (graph_ && cq.tenant < tenant_rows_.size() &&
        tenant_rows_[cq.tenant] >= std::max<size_t>(options_.graph_min_records, 1)) {
      MSP_ASSIGN_OR_RETURN(std::optional<std::vector<uint32_t>> found, GraphCandidates(query, cq, k));
      if (found) return TopK(query, cq, k, &*found);
    }
    // With float16 copies, a first pass finds the slots that can be in the
    // top k; only those are scored exactly (the same results, fewer bytes).
    const bool shortlisted = half_ != nullptr;
    std::vector<uint32_t> shortlist;
    if (shortlisted) shortlist = HalfShortlist(query, cq, k);
    return TopK(query, cq, k, shortlisted ? &shortlist : nullptr);
  }

  Result<std::vector<float>> Score(const std::vector<float>& query, const std::vector<std::string_view>& ids,
                                   const IndexQuery& q) const override {
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
    const float* rows[kBlock];
    size_t at[kBlock];
    float scores[kBlock];
    for (size_t next = 0; next < ids.size();) {
      size_t m = 0;
      for (; next < ids.size() && m < kBlock; ++next) {
        auto it = slot_of_.find(ids[next]);
        if (it == slot_of_.end() || !Matches(meta_[it->second], cq)) continue;
        rows[m] = vectors_.data() + it->second * dim_;
        at[m++] = next;
      }
      DotRows(query.data(), rows, m, dim_, scores);
      for (size_t i = 0; i < m; ++i) out[at[i]] = scores[i];
    }
    return out;
  }

 private:
  static constexpr size_t kBlock = 64;

  // The best k of `slots` (every slot when null) matching cq, scored
  // exactly, best first.
  // REQUIRES: mu_ held (shared is enough).
  std::vector<IndexHit> TopK(const std::vector<float>& query, const CompiledQuery& cq, size_t k,
                             const std::vector<uint32_t>* subset) const {
    const bool shortlisted = subset != nullptr;
    const std::vector<uint32_t>& shortlist = shortlisted ? *subset : empty_;
    // Min-heap on "better": the root is the worst of the kept hits.
    std::vector<std::pair<float, uint32_t>> heap;
    heap.reserve(std::min(k, ids_.size()) + 1);
    auto better = [this](const std::pair<float, uint32_t>& a, const std::pair<float, uint32_t>& b) {
      if (a.first != b.first) return a.first > b.first;
      return ids_[a.second] < ids_[b.second];  // ties: smaller id first, whatever the slots
    };
    const float* qv = query.data();
    const size_t total = shortlisted ? shortlist.size() : ids_.size();
    // Slots are scored a block at a time (DotRows interleaves rows); the
    // filter is checked only for scores that would enter the heap.
    const float* rows[kBlock];
    uint32_t slots[kBlock];
    float scores[kBlock];
    for (size_t next = 0; next < total;) {
      size_t m = 0;
      for (; next < total && m < kBlock; ++next) {
        const uint32_t slot = shortlisted ? shortlist[next] : static_cast<uint32_t>(next);
        if (tenant_of_[slot] != cq.tenant) continue;
        rows[m] = vectors_.data() + size_t{slot} * dim_;
        slots[m++] = slot;
      }
      DotRows(qv, rows, m, dim_, scores);
      for (size_t i = 0; i < m; ++i) {
        const std::pair<float, uint32_t> cand{scores[i], slots[i]};
        if (heap.size() == k && !better(cand, heap.front())) continue;
        if (!Matches(meta_[slots[i]], cq)) continue;
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
    for (const auto& [score, slot] : heap) out.push_back(IndexHit{ids_[slot], score});
    return out;
  }

  // The graph's candidates for a query: the slots among the graph's nearest
  // that match cq, at least k of them (or every match); nullopt when a
  // selective filter would need too wide a search (scan instead).
  // REQUIRES: mu_ held (shared is enough); graph_ != nullptr.
  Result<std::optional<std::vector<uint32_t>>> GraphCandidates(const std::vector<float>& query,
                                                               const CompiledQuery& cq, size_t k) const {
    const size_t live = ids_.size();
    size_t want = std::max<size_t>(static_cast<size_t>(std::max(options_.graph_ef_search, 1)), 2 * k);
    for (int round = 0; round < 4; ++round) {
      want = std::min(want, live);
      std::vector<uint32_t> out;
      try {
        auto found = graph_->searchKnn(query.data(), want);
        out.reserve(found.size());
        while (!found.empty()) {
          const uint64_t key = found.top().second;
          found.pop();
          const uint32_t slot = key < slot_of_key_.size() ? slot_of_key_[key] : kNoSlot;
          if (slot != kNoSlot && Matches(meta_[slot], cq)) out.push_back(slot);
        }
      } catch (const std::exception& e) {
        return Status::Internal(std::string("vector graph search failed: ") + e.what());
      }
      if (out.size() >= k || want >= live) return std::optional<std::vector<uint32_t>>(std::move(out));
      want *= 4;
      if (want > live / 8) break;
    }
    return std::optional<std::vector<uint32_t>>();
  }

  // Brings the graph in line with the rows: builds it when the index
  // reaches graph_min_records, adds the rows upserted since the last call,
  // rebuilds it when deleted nodes outnumber the live ones.
  // REQUIRES: mu_ held exclusively.
  Status SyncGraph() {
    if (options_.graph_min_records == 0) return Status::Ok();
    try {
      if (graph_ && graph_->num_deleted_ > ids_.size()) graph_.reset();
      if (!graph_) {
        pending_.clear();
        if (ids_.size() < options_.graph_min_records) return Status::Ok();
        graph_ = std::make_unique<Graph>(&space_, ids_.size() + ids_.size() / 2 + 1024,
                                         static_cast<size_t>(std::max(options_.graph_m, 2)),
                                         static_cast<size_t>(std::max(options_.graph_ef_construction, 1)),
                                         /*random_seed=*/100);
        for (size_t slot = 0; slot < ids_.size(); ++slot) pending_.push_back(key_of_slot_[slot]);
      }
      std::vector<uint64_t> keys;
      keys.reserve(pending_.size());
      for (uint64_t key : pending_) {
        if (key < slot_of_key_.size() && slot_of_key_[key] != kNoSlot) keys.push_back(key);
      }
      pending_.clear();
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      if (graph_->cur_element_count + keys.size() > graph_->max_elements_) {
        graph_->resizeIndex(std::max(graph_->max_elements_ * 2, graph_->cur_element_count + keys.size()));
      }
      auto add = [&](size_t from, size_t step) {
        for (size_t i = from; i < keys.size(); i += step) {
          graph_->addPoint(vectors_.data() + size_t{slot_of_key_[keys[i]]} * dim_, keys[i]);
        }
      };
      const size_t threads = keys.size() < 4096 ? 1
                             : options_.build_threads > 0
                                 ? static_cast<size_t>(options_.build_threads)
                                 : std::max<size_t>(std::thread::hardware_concurrency(), 1);
      if (threads == 1) {
        add(0, 1);
      } else {
        std::vector<std::thread> workers;
        std::exception_ptr failure;
        std::mutex failure_mu;
        for (size_t t = 0; t < threads; ++t) {
          workers.emplace_back([&, t] {
            try {
              add(t, threads);
            } catch (...) {
              std::lock_guard<std::mutex> lock(failure_mu);
              failure = std::current_exception();
            }
          });
        }
        for (auto& w : workers) w.join();
        if (failure) std::rethrow_exception(failure);
      }
    } catch (const std::exception& e) {
      graph_.reset();  // rebuilt from the rows on the next Apply
      pending_.clear();
      return Status::Internal(std::string("vector graph update failed: ") + e.what());
    }
    return Status::Ok();
  }

  // The matching slots whose exact score can be among the best k: each
  // slot's float16 score gives an interval [lower, upper] that holds its
  // exact score (HalfDotErrorBound); the k-th best lower bound T is at most
  // the k-th best exact score, so every slot of the exact top k (ties
  // included) has upper >= T. Returns those slots, in slot order.
  // REQUIRES: mu_ held (shared is enough); half_ != nullptr.
  std::vector<uint32_t> HalfShortlist(const std::vector<float>& query, const CompiledQuery& cq,
                                      size_t k) const {
    double sq = 0.0;
    for (float x : query) sq += static_cast<double>(x) * x;
    const double q_norm = std::sqrt(sq);
    // The bound is linear in the row's norm: e = e0 + e1 * norm.
    const float e0 = static_cast<float>(HalfDotErrorBound(q_norm, 0.0, dim_));
    const float e1 = static_cast<float>(HalfDotErrorBound(q_norm, 1.0, dim_)) - e0;
    constexpr float kInf = std::numeric_limits<float>::infinity();

    std::vector<float> lows;  // min-heap of the best k lower bounds
    lows.reserve(k + 1);
    float threshold = -kInf;  // lows.front() once k are kept
    std::vector<std::pair<float, uint32_t>> cands;  // (upper, slot)
    const uint16_t* rows[kBlock];
    uint32_t slots[kBlock];
    float scores[kBlock];
    const size_t n = ids_.size();
    for (size_t slot = 0; slot < n;) {
      size_t m = 0;
      for (; slot < n && m < kBlock; ++slot) {
        if (tenant_of_[slot] != cq.tenant) continue;
        rows[m] = halves_.data() + slot * dim_;
        slots[m++] = static_cast<uint32_t>(slot);
      }
      half_(query.data(), rows, m, dim_, scores);
      for (size_t i = 0; i < m; ++i) {
        const float e = e0 + e1 * norms_[slots[i]];
        float upper = scores[i] + e, lower = scores[i] - e;
        if (!std::isfinite(upper) || !std::isfinite(lower)) upper = kInf, lower = -kInf;
        if (upper < threshold) continue;
        if (!Matches(meta_[slots[i]], cq)) continue;
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
    std::vector<uint32_t> out;
    out.reserve(cands.size());
    for (const auto& [upper, slot] : cands) {
      if (upper >= threshold) out.push_back(slot);
    }
    return out;
  }

  // REQUIRES: mu_ held exclusively.
  uint32_t Intern(const std::string& s) {
    auto [it, inserted] = strings_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
    return it->second;
  }

  // kNoId when never interned (so nothing stored can equal it).
  uint32_t Lookup(const std::string& s) const {
    auto it = strings_.find(s);
    return it == strings_.end() ? kNoId : it->second;
  }

  void Upsert(const Memory& m) {
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
    meta.tags.reserve(m.tags.size());
    for (const std::string& t : m.tags) meta.tags.push_back(Intern(t));

    auto it = slot_of_.find(m.id);
    const bool existed = it != slot_of_.end();
    size_t slot;
    if (it != slot_of_.end()) {
      slot = it->second;
    } else {
      slot = ids_.size();
      slot_of_.emplace(m.id, slot);
      ids_.push_back(m.id);
      meta_.emplace_back();
      tenant_of_.push_back(0);
      vectors_.resize(vectors_.size() + dim_);
      key_of_slot_.push_back(slot_of_key_.size());
      slot_of_key_.push_back(static_cast<uint32_t>(slot));
      if (half_) {
        halves_.resize(halves_.size() + dim_);
        norms_.push_back(0.0f);
      }
    }
    if (existed) --tenant_rows_[meta_[slot].tenant];  // the record may change tenant
    if (meta.tenant >= tenant_rows_.size()) tenant_rows_.resize(size_t{meta.tenant} + 1, 0);
    ++tenant_rows_[meta.tenant];
    tenant_of_[slot] = meta.tenant;
    meta_[slot] = std::move(meta);
    if (graph_) pending_.push_back(key_of_slot_[slot]);
    std::copy(m.embedding.begin(), m.embedding.end(), vectors_.begin() + static_cast<ptrdiff_t>(slot * dim_));
    if (half_) {
      double sq = 0.0;
      bool in_range = true;
      for (size_t i = 0; i < dim_; ++i) {
        const float x = m.embedding[i];
        sq += static_cast<double>(x) * x;
        in_range = in_range && std::fabs(x) <= kHalfMax;
        halves_[slot * dim_ + i] = FloatToHalf(x);
      }
      // Rounded up, so the error bound built from it stays a bound.
      norms_[slot] = in_range ? static_cast<float>(std::sqrt(sq) * (1.0 + 1e-6))
                              : std::numeric_limits<float>::infinity();
    }
  }

  void Remove(const std::string& id) {
    auto it = slot_of_.find(id);
    if (it == slot_of_.end()) return;
    const size_t slot = it->second;
    const size_t last = ids_.size() - 1;
    slot_of_.erase(it);
    --tenant_rows_[meta_[slot].tenant];
    const uint64_t key = key_of_slot_[slot];
    slot_of_key_[key] = kNoSlot;
    if (graph_) {
      try {
        graph_->markDelete(key);
      } catch (const std::exception&) {
        // Not in the graph yet (pending): nothing to unlink.
      }
    }
    if (slot != last) {
      std::copy(vectors_.begin() + static_cast<ptrdiff_t>(last * dim_),
                vectors_.begin() + static_cast<ptrdiff_t>((last + 1) * dim_),
                vectors_.begin() + static_cast<ptrdiff_t>(slot * dim_));
      meta_[slot] = std::move(meta_[last]);
      tenant_of_[slot] = tenant_of_[last];
      key_of_slot_[slot] = key_of_slot_[last];
      slot_of_key_[key_of_slot_[slot]] = static_cast<uint32_t>(slot);
      if (half_) {
        std::copy(halves_.begin() + static_cast<ptrdiff_t>(last * dim_),
                  halves_.begin() + static_cast<ptrdiff_t>((last + 1) * dim_),
                  halves_.begin() + static_cast<ptrdiff_t>(slot * dim_));
        norms_[slot] = norms_[last];
      }
      ids_[slot] = std::move(ids_[last]);
      slot_of_[ids_[slot]] = slot;
    }
    vectors_.resize(last * dim_);
    if (half_) {
      halves_.resize(last * dim_);
      norms_.pop_back();
    }
    meta_.pop_back();
    tenant_of_.pop_back();
    key_of_slot_.pop_back();
    ids_.pop_back();
  }

  // REQUIRES: mu_ held (shared is enough).
  CompiledQuery Compile(const IndexQuery& q) const {
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

  static bool Matches(const SlotMeta& m, const CompiledQuery& c) {
    auto part = [](uint32_t want, uint32_t have) { return want == kNoId || want == have; };
    if (m.tenant != c.tenant || !part(c.user, m.user) || !part(c.agent, m.agent) ||
        !part(c.session, m.session) || !part(c.mission, m.mission) ||
        !part(c.operator_id, m.operator_id)) {
      return false;
    }
    if (!((c.kinds >> m.kind) & 1u) || !((c.layers >> m.layer) & 1u) ||
        !((c.criticalities >> m.criticality) & 1u)) {
      return false;
    }
    if (!c.sources.empty() &&
        std::find(c.sources.begin(), c.sources.end(), m.source) == c.sources.end()) {
      return false;
    }
    if (!c.tags.empty()) {
      const bool any = std::any_of(m.tags.begin(), m.tags.end(), [&](uint32_t t) {
        return std::find(c.tags.begin(), c.tags.end(), t) != c.tags.end();
      });
      if (!any) return false;
    }
    if (c.created_from != 0 && m.created_at < c.created_from) return false;
    if (c.created_to != 0 && m.created_at >= c.created_to) return false;
    if (m.expires_at > 0 && m.expires_at <= c.now) return false;
    if (!c.include_superseded && m.state == static_cast<uint8_t>(RecordState::kSuperseded)) return false;
    if (m.access_level > c.max_access_level) return false;
    return true;
  }

  const size_t dim_;
  mutable std::shared_mutex mu_;
  int64_t applied_seq_ = 0;                       // guarded by mu_
  std::vector<float> vectors_;                    // slot * dim_ .. ; guarded by mu_
  // First-pass copies (when half_ != nullptr): float16 of each vector and
  // its L2 norm (infinity when an element is beyond kHalfMax).
  const HalfDotRowsFn half_ = dim_ >= 16 ? ActiveHalfDotKernel() : nullptr;
  std::vector<uint16_t> halves_;                  // slot * dim_ .. ; guarded by mu_
  std::vector<float> norms_;                      // per slot; guarded by mu_
  std::vector<SlotMeta> meta_;                    // per slot; guarded by mu_
  std::vector<uint32_t> tenant_of_;               // per slot, = meta_[slot].tenant
  std::vector<std::string> ids_;                  // per slot; guarded by mu_
  // Keyed by views of ids_'s strings would dangle when ids_ grows: own them.
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> slot_of_;  // guarded by mu_
  std::unordered_map<std::string, uint32_t> strings_;  // interned; guarded by mu_

  // The graph (when built) names rows by key: a number given to a record
  // when it enters the index, never reused; slots move, keys do not.
  const VectorIndexOptions options_;
  DotSpace space_;
  std::vector<uint64_t> key_of_slot_;   // per slot; guarded by mu_
  std::vector<uint32_t> slot_of_key_;   // per key, kNoSlot once removed; guarded by mu_
  std::vector<size_t> tenant_rows_;     // rows per interned tenant id; guarded by mu_
  std::unique_ptr<Graph> graph_;        // guarded by mu_
  std::vector<uint64_t> pending_;       // keys upserted since the graph last caught up
  const std::vector<uint32_t> empty_;
};

}  // namespace

std::unique_ptr<VectorIndex> MakeExactVectorIndex(int dimension) {
  VectorIndexOptions no_graph;
  no_graph.graph_min_records = 0;
  return std::make_unique<ExactVectorIndex>(dimension, no_graph);
}

std::unique_ptr<VectorIndex> MakeVectorIndex(int dimension, const VectorIndexOptions& options) {
  return std::make_unique<ExactVectorIndex>(dimension, options);
}

}  // namespace msp
