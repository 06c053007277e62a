// NeighborGraph: insertion (greedy descent through the upper levels, then a
// best-first search of ef_construction candidates on each level the node
// joins, links chosen by the "spread out" rule, back links trimmed by the
// same rule) and search (greedy descent, then a best-first search of `ef`).
//
// Nearness is the dot product of the rows (the cosine, rows being unit
// length): higher is nearer, as in the exact scan.
#include "index/vector/graph.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <utility>

#include "embed/embedder.h"

namespace msp {
namespace {

using Hit = std::pair<float, uint32_t>;
constexpr int kMaxLevel = 24;
constexpr uint32_t kMaxM = 128;

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The nodes a search has seen. A query sees a few thousand nodes of a graph
// of millions, so it uses open addressing over node + 1 (0: empty), grown
// at half full, rather than a per-node array a short-lived process would
// have to allocate and clear. A build, which searches once per node, keeps
// a per-node stamp array instead (`dense_nodes` > 0), cleared by a new stamp.
class SeenSet {
 public:
  explicit SeenSet(size_t dense_nodes = 0) {
    if (dense_nodes > 0) {
      stamps_.assign(dense_nodes, 0);
    } else {
      cells_.assign(1024, 0);
    }
  }

  // True when `node` was not seen before. REQUIRES: node < dense_nodes
  // in the dense form.
  bool Add(uint32_t node) {
    if (!stamps_.empty()) {
      if (stamps_[node] == stamp_) return false;
      stamps_[node] = stamp_;
      return true;
    }
    const uint32_t key = node + 1;
    size_t mask = cells_.size() - 1;
    for (size_t i = SplitMix(key) & mask;; i = (i + 1) & mask) {
      if (cells_[i] == key) return false;
      if (cells_[i] == 0) {
        cells_[i] = key;
        if (++used_ * 2 > cells_.size()) Grow();
        return true;
      }
    }
  }

  void Reset() {
    if (!stamps_.empty()) {
      if (++stamp_ == 0) {
        std::fill(stamps_.begin(), stamps_.end(), 0u);
        stamp_ = 1;
      }
      return;
    }
    std::fill(cells_.begin(), cells_.end(), 0u);
    used_ = 0;
  }

 private:
  void Grow() {
    std::vector<uint32_t> old(cells_.size() * 2, 0);
    old.swap(cells_);
    const size_t mask = cells_.size() - 1;
    for (uint32_t key : old) {
      if (key == 0) continue;
      size_t i = SplitMix(key) & mask;
      while (cells_[i] != 0) i = (i + 1) & mask;
      cells_[i] = key;
    }
  }

  std::vector<uint32_t> cells_;
  size_t used_ = 0;
  std::vector<uint32_t> stamps_;
  uint32_t stamp_ = 1;
};

// At most this many rows of one search step are read at once
// (NodeVectors::ReadMany): a level-0 list holds up to 2 m links.
constexpr size_t kRowsAtOnce = 64;

// Best-first search of one level from `entries` (scored), keeping the `ef`
// nearest; `read(node, out)` copies a node's links at that level into
// `out` and returns how many. Links at or past `limit` are ignored.
template <typename ReadLinks>
std::vector<Hit> SearchLevel(const float* q, const std::vector<Hit>& entries, size_t ef, uint32_t limit,
                             const NodeVectors& v, SeenSet& seen, ReadLinks&& read) {
  std::priority_queue<Hit> open;  // nearest on top
  std::priority_queue<Hit, std::vector<Hit>, std::greater<Hit>> best;  // farthest kept on top
  for (const Hit& e : entries) {
    if (!seen.Add(e.second)) continue;
    open.push(e);
    best.push(e);
    if (best.size() > ef) best.pop();
  }
  uint32_t links[kMaxM * 2];
  // Rows read from the file (v.files) go to `scratch`, kRowsAtOnce at a time.
  std::vector<float> scratch(v.files ? kRowsAtOnce * v.dim : 0);
  const float* got[kRowsAtOnce];
  const float* rows[kRowsAtOnce];
  uint32_t fresh[kRowsAtOnce];
  uint32_t ids[kRowsAtOnce];
  float sims[kRowsAtOnce];
  // Scores the rows of fresh[0 .. f) (a removed node has none: it is never
  // visited), in order.
  auto score = [&](size_t f) {
    v.ReadMany(fresh, f, scratch.data(), got);
    size_t m = 0;
    for (size_t i = 0; i < f; ++i) {
      if (got[i] == nullptr) continue;
      rows[m] = got[i];
      ids[m++] = fresh[i];
    }
    DotRows(q, rows, m, v.dim, sims);
    for (size_t i = 0; i < m; ++i) {
      if (std::isnan(sims[i])) continue;  // a damaged row leads nowhere
      if (best.size() < ef || sims[i] > best.top().first) {
        open.emplace(sims[i], ids[i]);
        best.emplace(sims[i], ids[i]);
        if (best.size() > ef) best.pop();
      }
    }
  };
  while (!open.empty()) {
    const Hit c = open.top();
    if (best.size() >= ef && c.first < best.top().first) break;
    open.pop();
    const size_t n = read(c.second, links);
    size_t f = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t e = links[i];
      if (e >= limit || !seen.Add(e)) continue;
      fresh[f++] = e;
      if (f == kRowsAtOnce) {
        score(f);
        f = 0;
      }
    }
    score(f);
  }
  std::vector<Hit> out(best.size());
  for (size_t i = out.size(); i-- > 0;) {
    out[i] = best.top();
    best.pop();
  }
  return out;
}

// The links a node keeps among `cands` (nearest first, with their nearness
// to the node): a candidate is kept when it is nearer the node than to
// every one kept before it, so the links point in different directions
// rather than all into the nearest cluster. At most `cap`.
std::vector<uint32_t> ChooseLinks(const std::vector<Hit>& cands, uint32_t cap, const NodeVectors& v) {
  std::vector<uint32_t> kept;
  std::vector<const float*> kept_rows;
  std::vector<float> sims(cap);
  for (const auto& [near, node] : cands) {
    if (kept.size() >= cap) break;
    const float* row = v.at(node);
    if (row == nullptr || std::isnan(near)) continue;
    DotRows(row, kept_rows.data(), kept_rows.size(), v.dim, sims.data());
    bool spread = true;
    for (size_t i = 0; i < kept_rows.size() && spread; ++i) spread = !(sims[i] > near);
    if (!spread) continue;
    kept.push_back(node);
    kept_rows.push_back(row);
  }
  return kept;
}

}  // namespace

// One Insert call: the shared state of its threads.
class NeighborGraph::Builder {
 public:
  Builder(NeighborGraph& g, const NodeVectors& v, uint32_t upto) : g_(g), v_(v), upto_(upto) {}

  std::mutex& LockOf(uint32_t node) { return locks_[node % kLocks]; }

  // Copies a node's links at level l under its lock.
  auto Reader(int l) {
    return [this, l](uint32_t node, uint32_t* out) -> size_t {
      std::lock_guard<std::mutex> lock(LockOf(node));
      return g_.CopyLinks(node, l, out, /*from_file=*/false);
    };
  }

  void InsertOne(uint32_t node, SeenSet& seen) {
    const float* q = v_.at(node);
    if (q == nullptr) return;  // removed before it was placed
    const int level = g_.levels_[node];
    uint32_t entry;
    int top;
    {
      std::lock_guard<std::mutex> lock(entry_mu_);
      if (g_.h_.entry == kNoNode) {
        g_.h_.entry = node;
        g_.h_.top_level = level;
        return;
      }
      entry = g_.h_.entry;
      top = g_.h_.top_level;
    }
    const float* entry_row = v_.at(entry);
    if (entry_row == nullptr) return;  // cannot happen: Removed() never overlaps Insert
    std::vector<Hit> near{{Dot(q, entry_row, v_.dim), entry}};
    for (int l = top; l > level; --l) {
      seen.Reset();
      near = SearchLevel(q, near, 1, upto_, v_, seen, Reader(l));
    }
    for (int l = std::min(level, top); l >= 0; --l) {
      seen.Reset();
      near = SearchLevel(q, near, g_.h_.ef_construction, upto_, v_, seen, Reader(l));
      const std::vector<uint32_t> links = ChooseLinks(near, g_.Capacity(l), v_);
      {
        std::lock_guard<std::mutex> lock(LockOf(node));
        uint32_t* list = g_.MutableList(node, l);
        list[0] = static_cast<uint32_t>(links.size());
        std::copy(links.begin(), links.end(), list + 1);
      }
      for (uint32_t other : links) LinkBack(other, node, l);
    }
    if (level > top) {
      std::lock_guard<std::mutex> lock(entry_mu_);
      if (level > g_.h_.top_level) {
        g_.h_.entry = node;
        g_.h_.top_level = level;
      }
    }
  }

 private:
  // Adds `node` to the links of `other` at level l; a full list is chosen
  // again from its links and `node` (removed nodes drop out there).
  void LinkBack(uint32_t other, uint32_t node, int l) {
    const float* base = v_.at(other);
    if (base == nullptr) return;
    std::lock_guard<std::mutex> lock(LockOf(other));
    uint32_t* list = g_.MutableList(other, l);
    if (list == nullptr) return;
    const uint32_t cap = g_.Capacity(l);
    const uint32_t n = std::min(list[0], cap);
    if (std::find(list + 1, list + 1 + n, node) != list + 1 + n) return;
    if (n < cap) {
      list[1 + n] = node;
      list[0] = n + 1;
      return;
    }
    std::vector<Hit> cands;
    cands.reserve(n + 1);
    const float* rows[kMaxM * 2 + 1];
    uint32_t ids[kMaxM * 2 + 1];
    float sims[kMaxM * 2 + 1];
    size_t m = 0;
    for (uint32_t i = 0; i <= n; ++i) {
      const uint32_t e = i < n ? list[1 + i] : node;
      const float* row = e < upto_ ? v_.at(e) : nullptr;
      if (row == nullptr) continue;
      rows[m] = row;
      ids[m++] = e;
    }
    DotRows(base, rows, m, v_.dim, sims);
    for (size_t i = 0; i < m; ++i) cands.emplace_back(sims[i], ids[i]);
    std::sort(cands.begin(), cands.end(), std::greater<Hit>());
    const std::vector<uint32_t> keep = ChooseLinks(cands, cap, v_);
    list[0] = static_cast<uint32_t>(keep.size());
    std::copy(keep.begin(), keep.end(), list + 1);
  }

  static constexpr size_t kLocks = 4096;
  NeighborGraph& g_;
  const NodeVectors& v_;
  const uint32_t upto_;
  std::mutex entry_mu_;
  std::mutex locks_[kLocks];
};

NeighborGraph::NeighborGraph(uint32_t m, uint32_t ef_construction, uint64_t seed) {
  h_.m = std::clamp<uint32_t>(m, 2, kMaxM);
  h_.m0 = 2 * h_.m;
  h_.ef_construction = std::max<uint32_t>(ef_construction, 1);
  h_.seed = seed;
  level_mult_ = 1.0 / std::log(static_cast<double>(h_.m));
}

int NeighborGraph::LevelOf(uint32_t node) const {
  // u in (0, 1] from the node's number: level floor(-ln(u) / ln(m)).
  const double u = static_cast<double>((SplitMix(h_.seed ^ node) >> 11) + 1) * 0x1p-53;
  return std::min(static_cast<int>(-std::log(u) * level_mult_), kMaxLevel);
}

const uint32_t* NeighborGraph::List(uint32_t node, int level) const {
  if (level == 0) return level0_.data() + size_t{node} * (1 + h_.m0);
  if (level > levels_[node]) return nullptr;
  const size_t at = size_t{upper_at_[node]} + size_t(level - 1) * (1 + h_.m);
  if (at + 1 + h_.m > upper_.size()) return nullptr;
  return upper_.data() + at;
}

uint32_t* NeighborGraph::MutableList(uint32_t node, int level) {
  // Through the arrays' Mutable(), never a cast of List(): a list changed
  // behind the array's back would still be read from the mapped file's
  // unchanged bytes by a cold query (MappedArray::Read). The levels are
  // only read (const), so threads inserting at once share nothing else.
  if (level == 0) return level0_.Mutable(size_t{node} * (1 + h_.m0), 1 + h_.m0);
  if (level > std::as_const(levels_)[node]) return nullptr;
  const size_t at = size_t{std::as_const(upper_at_)[node]} + size_t(level - 1) * (1 + h_.m);
  if (at + 1 + h_.m > upper_.size()) return nullptr;
  return upper_.Mutable(at, 1 + h_.m);
}

void NeighborGraph::Insert(uint32_t upto, const NodeVectors& v, int threads) {
  const uint32_t from = h_.nodes;
  if (upto <= from) return;
  // Every array takes its final size first, so threads never move them.
  level0_.resize(size_t{upto} * (1 + h_.m0));
  levels_.resize(upto);
  upper_at_.resize(upto);
  size_t pool = upper_.size();
  for (uint32_t node = from; node < upto; ++node) {
    const int level = v.at(node) != nullptr ? LevelOf(node) : 0;
    levels_[node] = static_cast<uint8_t>(level);
    upper_at_[node] = static_cast<uint32_t>(pool);
    pool += size_t(level) * (1 + h_.m);
  }
  if (pool > std::numeric_limits<uint32_t>::max()) throw std::bad_alloc();
  upper_.resize(pool);

  auto builder = std::make_unique<Builder>(*this, v, upto);
  const uint32_t count = upto - from;
  const uint32_t workers = std::clamp<uint32_t>(static_cast<uint32_t>(std::max(threads, 1)), 1, count);
  if (workers == 1) {
    SeenSet seen(upto);
    for (uint32_t node = from; node < upto; ++node) builder->InsertOne(node, seen);
  } else {
    // Threads change lists at once: the arrays stop reading from the file
    // first, so that Mutable() marks nothing (its page set is not shared
    // safely between threads).
    level0_.EndFileView();
    upper_.EndFileView();
    std::atomic<uint32_t> next{from};
    std::exception_ptr failure;
    std::mutex failure_mu;
    std::vector<std::thread> pool_threads;
    for (uint32_t t = 0; t < workers; ++t) {
      pool_threads.emplace_back([&] {
        try {
          SeenSet seen(upto);
          for (uint32_t node = next++; node < upto; node = next++) builder->InsertOne(node, seen);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mu);
          failure = std::current_exception();
          next = upto;
        }
      });
    }
    for (auto& t : pool_threads) t.join();
    if (failure) std::rethrow_exception(failure);
  }
  h_.nodes = upto;
}

void NodeVectors::ReadMany(const uint32_t* nodes_in, size_t m, float* scratch, const float** out) const {
  if (m > kRowsAtOnce) {
    for (size_t at = 0; at < m; at += kRowsAtOnce) {
      ReadMany(nodes_in + at, std::min(kRowsAtOnce, m - at), scratch + at * dim, out + at);
    }
    return;
  }
  if (!files || files->reads == nullptr || m < 2) {
    for (size_t i = 0; i < m; ++i) out[i] = read(nodes_in[i], files ? scratch + i * dim : nullptr);
    return;
  }
  FileReads& reads = *files->reads;
  uint32_t slot_buf[kRowsAtOnce];
  const uint32_t* slot_at[kRowsAtOnce];
  for (size_t i = 0; i < m; ++i) {
    slot_at[i] = nodes_in[i] < nodes ? files->slot_of->Queue(nodes_in[i], 1, slot_buf + i, reads) : nullptr;
  }
  bool whole = reads.Run(files->fd);
  for (size_t i = 0; i < m && whole; ++i) {
    const uint32_t slot = slot_at[i] != nullptr ? *slot_at[i] : kNoNode;
    out[i] = slot < slots ? files->rows->Queue(size_t{slot} * dim, dim, scratch + i * dim, reads) : nullptr;
  }
  whole = whole && reads.Run(files->fd);
  // A piece the kernel did not give whole (the file cut short under the
  // mapping): each row as read() reads it, which falls back to the mapping.
  if (!whole) {
    for (size_t i = 0; i < m; ++i) out[i] = read(nodes_in[i], scratch + i * dim);
  }
}

size_t NeighborGraph::CopyLinks(uint32_t node, int level, uint32_t* out, bool from_file) const {
  const size_t width = 1 + Capacity(level);
  uint32_t list[1 + 2 * kMaxM];
  const uint32_t* at = nullptr;
  if (level == 0) {
    if (size_t{node} * width + width > level0_.size()) return 0;
    at = level0_.Read(size_t{node} * width, width, list, from_file);
  } else {
    if (node >= levels_.size() || level > levels_.At(node, from_file)) return 0;
    const size_t start = size_t{upper_at_.At(node, from_file)} + size_t(level - 1) * width;
    if (start + width > upper_.size()) return 0;
    at = upper_.Read(start, width, list, from_file);
  }
  const size_t n = std::min<size_t>(at[0], width - 1);
  std::copy(at + 1, at + 1 + n, out);
  return n;
}

GraphHits NeighborGraph::Search(const float* query, size_t ef, const NodeVectors& v) const {
  if (h_.entry >= h_.nodes) return {};
  std::vector<float> entry_scratch(v.files ? v.dim : 0);
  const float* entry_row = v.read(h_.entry, entry_scratch.data());
  if (entry_row == nullptr) return {};
  const bool from_file = v.files.has_value();
  auto reader = [this, from_file](int l) {
    return [this, l, from_file](uint32_t node, uint32_t* out) -> size_t {
      return CopyLinks(node, l, out, from_file);
    };
  };
  SeenSet seen;
  std::vector<Hit> near{{Dot(query, entry_row, v.dim), h_.entry}};
  for (int l = std::min(h_.top_level, kMaxLevel); l > 0; --l) {
    seen.Reset();
    near = SearchLevel(query, near, 1, h_.nodes, v, seen, reader(l));
  }
  seen.Reset();
  return SearchLevel(query, near, std::max<size_t>(ef, 1), h_.nodes, v, seen, reader(0));
}

void NeighborGraph::Removed(uint32_t node, const NodeVectors& v) {
  if (node != h_.entry) return;
  h_.entry = kNoNode;
  h_.top_level = -1;
  for (uint32_t n = 0; n < h_.nodes; ++n) {
    if (levels_[n] > h_.top_level && v.at(n) != nullptr) {
      h_.entry = n;
      h_.top_level = levels_[n];
    }
  }
}

bool NeighborGraph::Adopt(const GraphHeader& h) {
  if (h.m < 2 || h.m > kMaxM || h.m0 != 2 * h.m || h.ef_construction == 0) return false;
  if (level0_.size() != size_t{h.nodes} * (1 + h.m0) || levels_.size() != h.nodes ||
      upper_at_.size() != h.nodes) {
    return false;
  }
  const bool empty = h.entry == kNoNode && h.top_level == -1;
  if (!empty && (h.entry >= h.nodes || h.top_level < 0 || h.top_level > kMaxLevel)) return false;
  h_ = h;
  level_mult_ = 1.0 / std::log(static_cast<double>(h_.m));
  return true;
}

}  // namespace msp
