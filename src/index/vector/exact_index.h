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
//
// Every per-slot array is flat (MappedArray of trivially copyable values:
// ids and tags live in pools, ids are found through an open-addressing
// table), so Save writes the arrays as they are and Load maps them from
// the file (vector_file.h) instead of reading and parsing: opening a
// persisted index costs time in proportion to its metadata, and the
// vectors' pages are read only when a query touches them.
//
// Internal to index/vector/: the class behind MakeVectorIndex and
// MakeExactVectorIndex (index/index.h). Its members are defined in
// exact_index.cc (writes, the id table, interning, the graph's upkeep),
// exact_index_search.cc (queries: the compiled filter, the scan, the
// float16 shortlist, the graph's candidates) and exact_index_file.cc (Save
// and Load: the file layout, the mapped arrays and their checks).
#ifndef MSP_INDEX_VECTOR_EXACT_INDEX_H_
#define MSP_INDEX_VECTOR_EXACT_INDEX_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "embed/dot.h"
#include "embed/embedder.h"
#include "index/index.h"
#include "index/vector/file_reads.h"
#include "index/vector/graph.h"
#include "index/vector/mapped_array.h"
#include "index/vector/vector_file.h"
#include "util/hash.h"
#include "util/owned_fd.h"

namespace msp::exact_index {

inline constexpr uint32_t kNoId = std::numeric_limits<uint32_t>::max();

// What MatchesQuery needs of one record, stored as is in the index file.
// Strings are interned ids; tags are tags_count ids at tags_at in the tag pool.
struct SlotMeta {
  uint32_t tenant = 0, user = 0, agent = 0, session = 0, mission = 0, operator_id = 0;
  uint32_t source = 0;
  uint32_t tags_at = 0, tags_count = 0;
  uint8_t kind = 0, layer = 0, criticality = 0, state = 0, access_level = 0;
  uint8_t unused[3] = {0, 0, 0};
  int64_t created_at = 0;
  int64_t expires_at = 0;
};
static_assert(sizeof(SlotMeta) == 64);

// A slot's id: `size` bytes at `at` in the id pool, and its hash.
struct IdRef {
  uint64_t at = 0;
  uint32_t size = 0;
  uint32_t hash = 0;
};

// FNV-1a's low bits depend only on the low bits of the bytes, so ids that
// share a long prefix (UUIDv7s made in one millisecond or one second
// differ in a few hex digits) crowd a few table positions and probes run
// long; a 64-bit finaliser spreads every input bit over the low bits.
inline uint32_t IdHash(std::string_view id) {
  uint64_t h = Fnv1a64(id);
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return static_cast<uint32_t>(h ^ (h >> 33));
}

// A query turned into ids and masks. `impossible` when no record can match.
struct CompiledQuery {
  bool impossible = false;
  uint32_t tenant = kNoId;
  // kNoId: any value (the scope part is empty).
  uint32_t user = kNoId, agent = kNoId, session = kNoId, mission = kNoId, operator_id = kNoId;
  uint32_t kinds = ~0u, layers = ~0u, criticalities = ~0u;  // bit per enum value
  std::vector<uint32_t> sources;                            // empty: any
  std::vector<uint32_t> tags;                               // empty: any
  int64_t created_from = 0, created_to = 0;
  int64_t now = 0;
  bool include_superseded = false;
  int max_access_level = kMaxAccessLevel;
};

inline constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

class ExactVectorIndex final : public VectorIndex {
 public:
  ExactVectorIndex(int dimension, const VectorIndexOptions& options)
      : dim_(static_cast<size_t>(std::max(dimension, 0))), options_(options) {}

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
               int64_t up_to_seq) override;

  void Clear() override;

  // The file is written under the shared lock (changes wait; queries go
  // on) and synced and put in place after it is released.
  Status Save(const std::string& path, std::string_view identity) const override;

  Result<StagedVectorFile> Stage(const std::string& path, std::string_view identity) const override;

  Status Load(const std::string& path, std::string_view identity, bool verify_vectors) override;

  // The full check of a loaded file's slots (verify_vectors): every
  // reference in range, the node tables inverse to each other, the counts
  // equal to what the slots say.
  template <typename P, typename Bad>
  static Status CheckSlots(const P& p, size_t n, const GraphHeader& graph, bool has_graph,
                           const std::vector<uint64_t>& counts, const Bad& bad);

  Result<std::vector<IndexHit>> Search(const std::vector<float>& query, const IndexQuery& q) const override;

  Result<std::vector<float>> Score(const std::vector<float>& query, const std::vector<std::string_view>& ids,
                                   const IndexQuery& q) const override;

  Status ExtendGraph(size_t max_nodes) override;

  VectorGraphInfo graph_info() const override;

  void Warm(size_t max_bytes) const override;

 private:
  static constexpr size_t kBlock = 64;

  // The best k of `slots` (every slot when null) matching cq, scored
  // exactly, best first.
  // REQUIRES: mu_ held (shared is enough).
  // With `cold` (a subset only), rows and metadata are read with pread.
  std::vector<IndexHit> TopK(const std::vector<float>& query, const CompiledQuery& cq, size_t k,
                             const std::vector<uint32_t>* subset, bool cold = false) const;
  // TopK of a cold query over a shortlist, what it reads of the file (the
  // slots' tenants, rows and metadata a block at a time, then the kept
  // slots' id references and bytes) batched on reads_ rather than one pread
  // an element. False when a piece could not be read whole: TopK then runs.
  // REQUIRES: mu_ held (shared is enough).
  bool TopKCold(const std::vector<float>& query, const CompiledQuery& cq, size_t k,
                const std::vector<uint32_t>& shortlist, std::vector<IndexHit>& out) const;

  // The graph's candidates for a query: the slots among the graph's nearest
  // that match cq, at least k of them (or every match), and every matching
  // row not yet placed in the graph; nullopt when a selective filter would
  // need too wide a search (scan instead).
  // REQUIRES: mu_ held (shared is enough); graph_ != nullptr.
  // With `cold`, what the search reads is read with pread (ColdQuery).
  std::optional<std::vector<uint32_t>> GraphCandidates(const std::vector<float>& query,
                                                       const CompiledQuery& cq, size_t k, bool cold) const;

  // Score for a cold query (ColdQuery): what it needs of the file (the id
  // table's probe runs, ids, metadata, rows) read in a few batches
  // (FileReads) rather than a pread each. False when a batch could not be
  // read (`out` then partly filled; score through the mapping instead).
  // REQUIRES: mu_ held (shared is enough).
  bool ScoreCold(const std::vector<float>& query, const std::vector<std::string_view>& ids,
                 const CompiledQuery& cq, std::vector<float>& out) const;

  NodeVectors Nodes() const {
    return NodeVectors{vectors_.data(),      ids_.size(),          dim_,
                       slot_of_node_.data(), slot_of_node_.size(), std::nullopt};
  }

  // ExtendGraph. REQUIRES: mu_ held exclusively.
  Status ExtendGraphLocked(size_t max_nodes);

  void DropGraph();

  // The matching slots whose exact score can be among the best k: each
  // slot's float16 score gives an interval [lower, upper] that holds its
  // exact score (HalfDotErrorBound); the k-th best lower bound T is at most
  // the k-th best exact score, so every slot of the exact top k (ties
  // included) has upper >= T. Returns those slots, in slot order.
  // REQUIRES: mu_ held (shared is enough); half_ != nullptr.
  // With `cold`, the rows are read with pread, kScanChunk slots at a time.
  std::vector<uint32_t> HalfShortlist(const std::vector<float>& query, const CompiledQuery& cq, size_t k,
                                      bool cold) const;

  // REQUIRES: mu_ held exclusively.
  uint32_t Intern(const std::string& s);

  // kNoId when never interned (so nothing stored can equal it).
  uint32_t Lookup(const std::string& s) const;

  // ---- ids: a pool of bytes, and an open-addressing table of slot + 1 ----

  // Whether a reference's bytes lie in the id pool (not so in a damaged file).
  bool InPool(const IdRef& r) const { return r.at <= id_chars_.size() && r.size <= id_chars_.size() - r.at; }

  // Queues on reads_ the bytes of refs[k] for each k where refs[k] is set
  // and InPool, into `bytes` (resized to hold them all); returns where each
  // id's bytes will be once reads_ has run (nullptr: not queued).
  // REQUIRES: reads_mu_ held.
  std::vector<const char*> QueueIdBytes(const std::vector<const IdRef*>& refs, std::string& bytes) const;

  // A slot's id ("" when its reference is out of range: a damaged file):
  // a view of the mapping, or with `from_file` of `*buf`, into which the
  // table entry and the bytes are read with pread.
  std::string_view IdAt(size_t slot, bool from_file = false, std::string* buf = nullptr) const {
    return IdBytes(ids_.At(slot, from_file), from_file, buf);
  }
  std::string_view IdBytes(const IdRef& r, bool from_file, std::string* buf) const {
    if (!InPool(r)) return {};
    char* scratch = nullptr;
    if (from_file) {
      buf->resize(r.size);
      scratch = buf->data();
    }
    return std::string_view(id_chars_.Read(r.at, r.size, scratch, from_file), r.size);
  }

  // A slot's tags (none when out of range: a damaged file).
  std::pair<const uint32_t*, size_t> TagsOf(const SlotMeta& m) const {
    if (m.tags_at > tag_pool_.size() || m.tags_count > tag_pool_.size() - m.tags_at) return {nullptr, 0};
    return {tag_pool_.data() + m.tags_at, m.tags_count};
  }

  // Counts a row of `tenant` in or out (an id out of range, from a damaged
  // file, counts nowhere).
  void CountRow(uint32_t tenant, int delta) {
    if (tenant < tenant_rows_.size()) tenant_rows_[tenant] += static_cast<size_t>(delta);
  }

  // The slot holding `id`, or kNoSlot. REQUIRES: mu_ held (shared is enough).
  // With `from_file`, the table, ids and id bytes are read with pread.
  uint32_t FindSlot(std::string_view id, bool from_file = false) const;
  // FindSlot of each id (not from the file), the ids' lookups overlapped.
  std::vector<uint32_t> FindSlots(const std::vector<std::string_view>& ids) const;

  // Rent or buy: a query of a process that has only just mapped the file
  // reads the few hundred scattered elements it needs (id table, ids,
  // metadata, rows) with pread, since touching a page of the mapping for
  // the first time costs a page fault, which is up to tens of times a
  // pread on a virtual machine. After kColdQueries queries the process has
  // paid about as much in preads as faulting the hot pages in would have
  // cost, and it reads through the mapping from then on (a server), while
  // a command-line process never pays for the faults. Arrays that changed
  // since the load are read from memory either way (MappedArray::Read).
  static constexpr int kColdQueries = 16;
  // Slots a cold scan reads at a time (192 KB of float16 rows at 384).
  static constexpr size_t kScanChunk = 256;
  bool ColdQuery() const {
    if (cold_queries_.load(std::memory_order_relaxed) <= 0) return false;
    return cold_queries_.fetch_sub(1, std::memory_order_relaxed) > 0;
  }

  // The table position holding `slot`. REQUIRES: slot is in the table
  // (when a damaged file left it out, the table is built again from the
  // slots first).
  size_t TablePos(uint32_t slot);

  void RebuildTable();

  // Whether every entry of the id table names a slot and there are as many
  // entries as slots (Load leaves this unchecked; see table_checked_).
  // REQUIRES: mu_ held (shared is enough).
  bool TableConsistent() const;

  // Before the index first changes after a Load: a table that fails
  // TableConsistent is built again from the slots. REQUIRES: mu_ held
  // exclusively.
  void CheckTable();

  void TablePut(uint32_t slot);

  // Keeps the table at most half full: doubles it and re-places every slot.
  void ReserveTable(size_t slots);

  // Removes the table entry at `pos`, shifting later entries of its probe
  // run back so that every entry stays reachable from its home position.
  void TableErase(size_t pos);

  // Pools keep the bytes of removed ids and tags until the garbage
  // outgrows what is live; then they are rewritten in slot order.
  // REQUIRES: mu_ held exclusively.
  void CompactPools();

  void Upsert(const Memory& m);

  void Remove(const std::string& id);

  // After a node's row left it. REQUIRES: mu_ held exclusively.
  void ForgetNode(uint32_t node);

  // REQUIRES: mu_ held exclusively.
  void ClearLocked();

  // REQUIRES: mu_ held (shared is enough).
  CompiledQuery Compile(const IndexQuery& q) const;

  bool Matches(const SlotMeta& m, const CompiledQuery& c) const {
    auto part = [](uint32_t want, uint32_t have) { return want == kNoId || want == have; };
    if (m.tenant != c.tenant || !part(c.user, m.user) || !part(c.agent, m.agent) ||
        !part(c.session, m.session) || !part(c.mission, m.mission) || !part(c.operator_id, m.operator_id)) {
      return false;
    }
    // An enum byte past the mask's 32 bits (a damaged file's) matches nothing.
    auto in = [](uint32_t mask, uint8_t value) { return value < 32 && ((mask >> value) & 1u) != 0; };
    if (!in(c.kinds, m.kind) || !in(c.layers, m.layer) || !in(c.criticalities, m.criticality)) return false;
    if (!c.sources.empty() && std::find(c.sources.begin(), c.sources.end(), m.source) == c.sources.end()) {
      return false;
    }
    if (!c.tags.empty()) {
      const auto [tags, count] = TagsOf(m);
      const bool any = std::any_of(tags, tags + count, [&](uint32_t t) {
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

  // The arrays Load maps before they replace the index's own.
  struct Parts {
    OwnedFd fd;
    MappedArray<SlotMeta> meta;
    MappedArray<uint32_t> tag_pool;
    MappedArray<IdRef> ids;
    MappedArray<char> id_chars;
    MappedArray<uint32_t> table;
    MappedArray<uint32_t> tenant_of;
    MappedArray<float> norms;
    MappedArray<float> vectors;
    MappedArray<uint16_t> halves;
    MappedArray<uint32_t> node_of_slot;
    MappedArray<uint32_t> slot_of_node;
    NeighborGraph graph{2, 1, 0};  // its header comes from the file
    std::vector<std::string> string_of;
  };

  const size_t dim_;
  mutable std::shared_mutex mu_;
  int64_t applied_seq_ = 0;     // guarded by mu_ (as is everything below)
  MappedArray<float> vectors_;  // slot * dim_ ..
  // First-pass copies (when half_ != nullptr): float16 of each vector and
  // its L2 norm (infinity when an element is beyond kHalfMax).
  const HalfDotRowsFn half_ = dim_ >= 16 ? ActiveHalfDotKernel() : nullptr;
  MappedArray<uint16_t> halves_;                       // slot * dim_ ..
  MappedArray<float> norms_;                           // per slot
  MappedArray<SlotMeta> meta_;                         // per slot
  MappedArray<uint32_t> tag_pool_;                     // SlotMeta::tags_at ..
  MappedArray<uint32_t> tenant_of_;                    // per slot, = meta_[slot].tenant
  MappedArray<IdRef> ids_;                             // per slot
  MappedArray<char> id_chars_;                         // IdRef::at ..
  MappedArray<uint32_t> table_;                        // slot + 1 (0: empty), at IdHash & (size - 1) onwards
  bool table_checked_ = true;                          // false from a Load until CheckTable
  size_t live_tags_ = 0, live_id_chars_ = 0;           // pool entries in use
  std::unordered_map<std::string, uint32_t> strings_;  // interned: string -> id
  std::vector<std::string> string_of_;                 // id -> string

  // The graph (when built) names rows by node: a number given to a row
  // when it enters the index (or its vector moves), never reused while the
  // graph lives; slots move, nodes do not. Nodes from graph_->nodes() on
  // are not placed yet. Empty without a graph.
  const VectorIndexOptions options_;
  MappedArray<uint32_t> node_of_slot_;  // per slot
  MappedArray<uint32_t> slot_of_node_;  // per node, kNoSlot once removed
  std::vector<size_t> tenant_rows_;     // rows per interned id (as a tenant)
  std::unique_ptr<NeighborGraph> graph_;
  size_t graph_live_ = 0;  // placed nodes whose row is still here
  // The file the arrays were mapped from (closed when they are cleared),
  // and how many more queries read their scattered elements from it with
  // pread (ColdQuery).
  OwnedFd file_fd_;
  mutable std::atomic<int> cold_queries_{0};
  // The batched reads of cold queries (ScoreCold), one query at a time.
  mutable std::mutex reads_mu_;
  mutable FileReads reads_;
  const std::vector<uint32_t> empty_;
};

}  // namespace msp::exact_index

#endif  // MSP_INDEX_VECTOR_EXACT_INDEX_H_
