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
#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
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
#include "index/vector/graph.h"
#include "index/vector/mapped_array.h"
#include "index/vector/vector_file.h"
#include "util/hash.h"

namespace msp {
namespace {

constexpr uint32_t kNoId = std::numeric_limits<uint32_t>::max();

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
uint32_t IdHash(std::string_view id) {
  uint64_t h = Fnv1a64(id);
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return static_cast<uint32_t>(h ^ (h >> 33));
}

// The file's sections, in order (vector_file.h): the first kMetaSections
// are metadata, the rest vectors.
// The graph's sections are empty when it has none; they are checked with
// the vectors (on request), their values as they are used.
enum FileSection : size_t {
  kStringsSection, kMetaSection, kTagsSection, kIdsSection, kIdCharsSection, kTableSection,
  kTenantSection, kNormsSection, kVectorsSection, kHalvesSection,
  kNodeOfSlotSection, kSlotOfNodeSection, kGraphHeaderSection, kLevel0Section, kLevelsSection,
  kUpperAtSection, kUpperSection, kCountsSection, kSectionCount
};
// The counts section: u64 live tags, live id bytes, live placed graph
// nodes, then the rows of each interned string as a tenant; so a load needs
// no pass over the slots.
constexpr size_t kCountsHead = 3;
constexpr size_t kMetaSections = kVectorsSection;
constexpr uint32_t kFlagHalves = 1;
constexpr uint32_t kFlagGraph = 2;
// The id table is laid out by IdHash as it is now (files without it were
// laid out by plain FNV-1a: refused, and rebuilt by the caller).
constexpr uint32_t kFlagIdHash2 = 4;

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
    CompactPools();
    applied_seq_ = up_to_seq;
    return Status::Ok();
  }

  void Clear() override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    ClearLocked();
  }

  // The file is written under the shared lock (changes wait; queries go
  // on) and synced and put in place after it is released.
  Status Save(const std::string& path, std::string_view identity) const override {
    MSP_ASSIGN_OR_RETURN(StagedVectorFile staged, Stage(path, identity));
    return staged.Commit();
  }

  Result<StagedVectorFile> Stage(const std::string& path, std::string_view identity) const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    std::string strings;  // each: u32 size, then the bytes
    for (const std::string& s : string_of_) {
      const uint32_t n = static_cast<uint32_t>(s.size());
      strings.append(reinterpret_cast<const char*>(&n), sizeof n);
      strings += s;
    }
    auto section = [](const auto& a) {
      return VectorFileSection{a.data(), a.size() * sizeof(*a.data())};
    };
    std::vector<VectorFileSection> sections(kSectionCount);
    sections[kStringsSection] = VectorFileSection{strings.data(), strings.size()};
    sections[kMetaSection] = section(meta_);
    sections[kTagsSection] = section(tag_pool_);
    sections[kIdsSection] = section(ids_);
    sections[kIdCharsSection] = section(id_chars_);
    sections[kTableSection] = section(table_);
    sections[kTenantSection] = section(tenant_of_);
    sections[kNormsSection] = section(norms_);
    sections[kVectorsSection] = section(vectors_);
    sections[kHalvesSection] = section(halves_);
    if (graph_) {
      sections[kNodeOfSlotSection] = section(node_of_slot_);
      sections[kSlotOfNodeSection] = section(slot_of_node_);
      sections[kGraphHeaderSection] = VectorFileSection{&graph_->header(), sizeof(GraphHeader)};
      sections[kLevel0Section] = section(graph_->level0());
      sections[kLevelsSection] = section(graph_->levels());
      sections[kUpperAtSection] = section(graph_->upper_at());
      sections[kUpperSection] = section(graph_->upper());
    }
    std::vector<uint64_t> counts{live_tags_, live_id_chars_, graph_live_};
    counts.insert(counts.end(), tenant_rows_.begin(), tenant_rows_.end());
    sections[kCountsSection] = VectorFileSection{counts.data(), counts.size() * sizeof(uint64_t)};
    VectorFileInfo info;
    info.dimension = static_cast<uint32_t>(dim_);
    info.flags = (half_ ? kFlagHalves : 0) | (graph_ ? kFlagGraph : 0) | kFlagIdHash2;
    info.count = ids_.size();
    info.strings = string_of_.size();
    info.applied_seq = applied_seq_;
    return StageVectorFile(path, info, identity, sections, kMetaSections);
  }

  Status Load(const std::string& path, std::string_view identity, bool verify_vectors) override {
    MSP_ASSIGN_OR_RETURN(VectorFile file,
                         VectorFile::Open(path, static_cast<uint32_t>(dim_), identity, kSectionCount));
    const VectorFileInfo& info = file.info();
    auto bad = [&](const std::string& what) {
      return Status::Corruption("vector index file " + path + ": " + what);
    };
    if ((info.flags & ~kFlagGraph) != ((half_ ? kFlagHalves : 0u) | kFlagIdHash2)) {
      return bad("written with another vector or id table layout");
    }
    if (info.count > kNoSlot - 1 || info.strings > kNoId - 1) return bad("too many records");
    const size_t n = static_cast<size_t>(info.count);
    // The sizes every section must have.
    auto expect = [&](FileSection s, uint64_t want) { return file.bytes(s) == want; };
    if (!expect(kMetaSection, n * sizeof(SlotMeta)) || !expect(kIdsSection, n * sizeof(IdRef)) ||
        !expect(kTenantSection, n * sizeof(uint32_t)) || !expect(kVectorsSection, n * dim_ * sizeof(float)) ||
        !expect(kNormsSection, half_ ? n * sizeof(float) : 0) ||
        !expect(kHalvesSection, half_ ? n * dim_ * sizeof(uint16_t) : 0) ||
        file.bytes(kTagsSection) % sizeof(uint32_t) != 0 || file.bytes(kTableSection) % sizeof(uint32_t) != 0) {
      return bad("section sizes disagree with the header");
    }
    Parts p;
    MSP_ASSIGN_OR_RETURN(std::string strings, file.Read(kStringsSection));
    // The arrays' pages stay mapped after `file` closes; this descriptor
    // stays open with them for reads by pread (ColdQuery).
    p.fd = OwnedFd(fcntl(file.fd(), F_DUPFD_CLOEXEC, 0));
    if (p.fd.get() < 0) return Status::IoError("cannot open the vector index file " + path + " again: " + std::strerror(errno));
    const int fd = p.fd.get();
    bool mapped = true;
    // Pages are read as they are touched (MAP_POPULATE of the metadata, or
    // of the float16 copies a scan reads, measured slower at 100,000 records).
    auto map = [&](auto& array, FileSection s) {
      using T = std::remove_reference_t<decltype(*array.data())>;
      mapped = mapped && array.MapFile(fd, file.offset(s), static_cast<size_t>(file.bytes(s) / sizeof(T)));
    };
    map(p.meta, kMetaSection);
    map(p.tag_pool, kTagsSection);
    map(p.ids, kIdsSection);
    map(p.id_chars, kIdCharsSection);
    map(p.table, kTableSection);
    map(p.tenant_of, kTenantSection);
    map(p.norms, kNormsSection);
    map(p.vectors, kVectorsSection);
    map(p.halves, kHalvesSection);
    // The graph's arrays; the graph itself only when this index keeps one.
    const bool has_graph = (info.flags & kFlagGraph) != 0;
    GraphHeader graph_header;
    if (has_graph) {
      if (file.bytes(kGraphHeaderSection) != sizeof graph_header) return bad("graph header of the wrong size");
      MSP_ASSIGN_OR_RETURN(std::string header, file.Read(kGraphHeaderSection));
      std::memcpy(&graph_header, header.data(), sizeof graph_header);
      map(p.node_of_slot, kNodeOfSlotSection);
      map(p.slot_of_node, kSlotOfNodeSection);
      map(p.graph.level0(), kLevel0Section);
      map(p.graph.levels(), kLevelsSection);
      map(p.graph.upper_at(), kUpperAtSection);
      map(p.graph.upper(), kUpperSection);
    }
    if (!mapped) return Status::IoError("cannot map the vector index file " + path + ": " + std::strerror(errno));
    auto section = [](const auto& a) {
      return VectorFileSection{a.data(), a.size() * sizeof(*a.data())};
    };
    MSP_ASSIGN_OR_RETURN(std::string counts_bytes, file.Read(kCountsSection));
    // With verification: both checksums and every slot's references (below).
    // Without, the header, the sizes, the strings, the counts and the id
    // table are checked, and each slot's references where they are used:
    // reading all metadata would cost a short-lived process more than its
    // query. A garbled slot then ranks wrongly but never reads out of
    // bounds, and the engine checks every record it serves against the
    // store, so a damaged index can mislead a ranking but never show a
    // record to a query that may not see it.
    if (verify_vectors) {
      const std::vector<VectorFileSection> meta_sections{
          {strings.data(), strings.size()}, section(p.meta), section(p.tag_pool), section(p.ids),
          section(p.id_chars), section(p.table), section(p.tenant_of), section(p.norms)};
      if (ChainChecksum(file.identity_checksum(), meta_sections) != file.meta_checksum()) {
        return bad("metadata checksum mismatch");
      }
      const std::vector<VectorFileSection> rest{
          section(p.vectors), section(p.halves), section(p.node_of_slot), section(p.slot_of_node),
          {&graph_header, has_graph ? sizeof graph_header : 0}, section(p.graph.level0()),
          section(p.graph.levels()), section(p.graph.upper_at()), section(p.graph.upper()),
          {counts_bytes.data(), counts_bytes.size()}};
      if (ChainChecksum(0, rest) != file.vector_checksum()) return bad("vector checksum mismatch");
    }
    if (has_graph &&
        (!p.graph.Adopt(graph_header) || p.node_of_slot.size() != n || p.slot_of_node.size() < graph_header.nodes)) {
      return bad("graph sections disagree with its header");
    }
    for (size_t at = 0; at < strings.size();) {
      uint32_t len = 0;
      if (strings.size() - at < sizeof len) return bad("strings section torn");
      std::memcpy(&len, strings.data() + at, sizeof len);
      at += sizeof len;
      if (strings.size() - at < len) return bad("strings section torn");
      p.string_of.emplace_back(strings.data() + at, len);
      at += len;
    }
    if (p.string_of.size() != info.strings) return bad("string count disagrees with the header");
    if (file.bytes(kCountsSection) != (kCountsHead + p.string_of.size()) * sizeof(uint64_t)) {
      return bad("counts section of the wrong size");
    }
    std::vector<uint64_t> counts(kCountsHead + p.string_of.size());
    std::memcpy(counts.data(), counts_bytes.data(), counts_bytes.size());
    // The id table: every entry names a slot, and as many entries as slots
    // (so a probe always ends: the table is never full).
    const size_t table = p.table.size();
    if (n > 0 && (table <= n || (table & (table - 1)) != 0)) return bad("id table of the wrong size");
    // Read with pread in chunks: faulting in its pages would cost a
    // short-lived process more than the check.
    size_t used = 0;
    std::vector<uint32_t> chunk(std::min<size_t>(table, 16384));
    for (size_t at = 0; at < table; at += chunk.size()) {
      const size_t len = std::min(chunk.size(), table - at);
      const uint32_t* entries = std::as_const(p.table).Read(at, len, chunk.data(), /*from_file=*/true);
      for (size_t i = 0; i < len; ++i) {
        if (entries[i] > n) return bad("id table names a missing slot");
        used += entries[i] != 0;
      }
    }
    if (used != n) return bad("id table disagrees with the slots");
    // Every slot's references, which a load without verification leaves to
    // be checked where they are used (RefsOk): a pass over all metadata
    // costs a short-lived process more than its query.
    if (verify_vectors) MSP_RETURN_IF_ERROR(CheckSlots(p, n, graph_header, has_graph, counts, bad));
    std::unique_lock<std::shared_mutex> lock(mu_);
    ClearLocked();
    meta_ = std::move(p.meta);
    tag_pool_ = std::move(p.tag_pool);
    ids_ = std::move(p.ids);
    id_chars_ = std::move(p.id_chars);
    table_ = std::move(p.table);
    tenant_of_ = std::move(p.tenant_of);
    norms_ = std::move(p.norms);
    vectors_ = std::move(p.vectors);
    halves_ = std::move(p.halves);
    string_of_ = std::move(p.string_of);
    strings_.reserve(string_of_.size());
    for (uint32_t i = 0; i < string_of_.size(); ++i) strings_.emplace(string_of_[i], i);
    live_tags_ = counts[0];
    live_id_chars_ = counts[1];
    tenant_rows_.assign(counts.begin() + kCountsHead, counts.end());
    if (has_graph && options_.graph_min_records > 0) {
      node_of_slot_ = std::move(p.node_of_slot);
      slot_of_node_ = std::move(p.slot_of_node);
      graph_ = std::make_unique<NeighborGraph>(std::move(p.graph));
      graph_live_ = std::min<uint64_t>(counts[2], graph_->nodes());
    }
    applied_seq_ = info.applied_seq;
    file_fd_ = std::move(p.fd);
    cold_queries_.store(kColdQueries, std::memory_order_relaxed);
    return Status::Ok();
  }

  // The full check of a loaded file's slots (verify_vectors): every
  // reference in range, the node tables inverse to each other, the counts
  // equal to what the slots say.
  template <typename P, typename Bad>
  static Status CheckSlots(const P& p, size_t n, const GraphHeader& graph, bool has_graph,
                           const std::vector<uint64_t>& counts, const Bad& bad) {
    const uint32_t strings_n = static_cast<uint32_t>(p.string_of.size());
    std::vector<uint64_t> want(kCountsHead + strings_n, 0);
    for (size_t slot = 0; slot < n; ++slot) {
      const SlotMeta& m = p.meta[slot];
      const IdRef& id = p.ids[slot];
      if (m.tenant >= strings_n || m.user >= strings_n || m.agent >= strings_n || m.session >= strings_n ||
          m.mission >= strings_n || m.operator_id >= strings_n || m.source >= strings_n ||
          m.tags_at > p.tag_pool.size() || m.tags_count > p.tag_pool.size() - m.tags_at ||
          p.tenant_of[slot] != m.tenant || id.at > p.id_chars.size() || id.size > p.id_chars.size() - id.at) {
        return bad("slot " + std::to_string(slot) + " refers outside the file");
      }
      want[0] += m.tags_count;
      want[1] += id.size;
      ++want[kCountsHead + m.tenant];
    }
    for (uint32_t t : p.tag_pool) {
      if (t >= strings_n) return bad("a tag refers outside the file");
    }
    if (has_graph) {
      for (size_t slot = 0; slot < n; ++slot) {
        const uint32_t node = p.node_of_slot[slot];
        if (node >= p.slot_of_node.size() || p.slot_of_node[node] != slot) return bad("graph node table garbled");
        want[2] += node < graph.nodes;
      }
      for (uint32_t slot : p.slot_of_node) {
        if (slot != kNoSlot && slot >= n) return bad("graph node table garbled");
      }
    }
    if (want != counts) return bad("counts disagree with the slots");
    return Status::Ok();
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
    const bool cold = ColdQuery();
    const size_t rows = cq.tenant < tenant_rows_.size() ? tenant_rows_[cq.tenant] : 0;
    // A process's first queries read what they visit with pread: a graph
    // search visits ~10,000 rows (~20,000 reads), while the float16 scan
    // reads its tenant's rows in large pieces; below cold_scan_bytes of
    // them the scan is the cheaper (and exact).
    const bool cold_scan = cold && half_ != nullptr && rows * dim_ * sizeof(uint16_t) <= options_.cold_scan_bytes;
    if (graph_ && graph_->nodes() > 0 && rows >= std::max<size_t>(options_.graph_min_records, 1) && !cold_scan) {
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

  Status ExtendGraph(size_t max_nodes) override {
    std::unique_lock<std::shared_mutex> lock(mu_);
    return ExtendGraphLocked(max_nodes);
  }

  VectorGraphInfo graph_info() const override {
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

 private:
  static constexpr size_t kBlock = 64;

  // The best k of `slots` (every slot when null) matching cq, scored
  // exactly, best first.
  // REQUIRES: mu_ held (shared is enough).
  // With `cold` (a subset only), rows and metadata are read with pread.
  std::vector<IndexHit> TopK(const std::vector<float>& query, const CompiledQuery& cq, size_t k,
                             const std::vector<uint32_t>* subset, bool cold = false) const {
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

  // The graph's candidates for a query: the slots among the graph's nearest
  // that match cq, at least k of them (or every match), and every matching
  // row not yet placed in the graph; nullopt when a selective filter would
  // need too wide a search (scan instead).
  // REQUIRES: mu_ held (shared is enough); graph_ != nullptr.
  // With `cold`, what the search reads is read with pread (ColdQuery).
  std::optional<std::vector<uint32_t>> GraphCandidates(const std::vector<float>& query, const CompiledQuery& cq,
                                                       size_t k, bool cold) const {
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

  NodeVectors Nodes() const {
    return NodeVectors{vectors_.data(), ids_.size(), dim_, slot_of_node_.data(), slot_of_node_.size(), std::nullopt};
  }

  // ExtendGraph. REQUIRES: mu_ held exclusively.
  Status ExtendGraphLocked(size_t max_nodes) {
    if (options_.graph_min_records == 0 || max_nodes == 0) return Status::Ok();
    const size_t removed = graph_ ? graph_->nodes() - graph_live_ : 0;
    if (graph_ && removed > graph_live_) DropGraph();  // mostly holes: built again
    if (!graph_) {
      if (ids_.size() < options_.graph_min_records) return Status::Ok();
      graph_ = std::make_unique<NeighborGraph>(static_cast<uint32_t>(std::max(options_.graph_m, 2)),
                                               static_cast<uint32_t>(std::max(options_.graph_ef_construction, 1)),
                                               /*seed=*/100);
      graph_live_ = 0;
      node_of_slot_.resize(ids_.size());
      slot_of_node_.resize(ids_.size());
      for (uint32_t slot = 0; slot < ids_.size(); ++slot) node_of_slot_[slot] = slot_of_node_[slot] = slot;
    }
    const uint32_t from = graph_->nodes();
    const uint32_t upto = static_cast<uint32_t>(from + std::min<size_t>(slot_of_node_.size() - from, max_nodes));
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

  void DropGraph() {
    graph_.reset();
    graph_live_ = 0;
    node_of_slot_.clear();
    slot_of_node_.clear();
  }

  // The matching slots whose exact score can be among the best k: each
  // slot's float16 score gives an interval [lower, upper] that holds its
  // exact score (HalfDotErrorBound); the k-th best lower bound T is at most
  // the k-th best exact score, so every slot of the exact top k (ties
  // included) has upper >= T. Returns those slots, in slot order.
  // REQUIRES: mu_ held (shared is enough); half_ != nullptr.
  // With `cold`, the rows are read with pread, kScanChunk slots at a time.
  std::vector<uint32_t> HalfShortlist(const std::vector<float>& query, const CompiledQuery& cq, size_t k,
                                      bool cold) const {
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

  // REQUIRES: mu_ held exclusively.
  uint32_t Intern(const std::string& s) {
    auto [it, inserted] = strings_.try_emplace(s, static_cast<uint32_t>(string_of_.size()));
    if (inserted) {
      string_of_.push_back(s);
      tenant_rows_.push_back(0);
    }
    return it->second;
  }

  // kNoId when never interned (so nothing stored can equal it).
  uint32_t Lookup(const std::string& s) const {
    auto it = strings_.find(s);
    return it == strings_.end() ? kNoId : it->second;
  }

  // ---- ids: a pool of bytes, and an open-addressing table of slot + 1 ----

  // A slot's id ("" when its reference is out of range: a damaged file):
  // a view of the mapping, or with `from_file` of `*buf`, into which the
  // table entry and the bytes are read with pread.
  std::string_view IdAt(size_t slot, bool from_file = false, std::string* buf = nullptr) const {
    return IdBytes(ids_.At(slot, from_file), from_file, buf);
  }
  std::string_view IdBytes(const IdRef& r, bool from_file, std::string* buf) const {
    if (r.at > id_chars_.size() || r.size > id_chars_.size() - r.at) return {};
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
  uint32_t FindSlot(std::string_view id, bool from_file = false) const {
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
  size_t TablePos(uint32_t slot) {
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

  void RebuildTable() {
    std::fill(table_.begin(), table_.end(), 0u);
    for (size_t slot = 0; slot < ids_.size(); ++slot) TablePut(static_cast<uint32_t>(slot));
  }

  void TablePut(uint32_t slot) {
    const size_t mask = table_.size() - 1;
    size_t i = ids_[slot].hash & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = slot + 1;
  }

  // Keeps the table at most half full: doubles it and re-places every slot.
  void ReserveTable(size_t slots) {
    if (table_.size() >= 2 * slots && !table_.empty()) return;
    size_t size = std::max<size_t>(table_.size(), 16);
    while (size < 2 * slots) size *= 2;
    table_.clear();
    table_.resize(size);
    RebuildTable();
  }

  // Removes the table entry at `pos`, shifting later entries of its probe
  // run back so that every entry stays reachable from its home position.
  void TableErase(size_t pos) {
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

  // Pools keep the bytes of removed ids and tags until the garbage
  // outgrows what is live; then they are rewritten in slot order.
  // REQUIRES: mu_ held exclusively.
  void CompactPools() {
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
      std::memcpy(id_chars_.data() + ref.at, m.id.data(), m.id.size());
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
    float* row = vectors_.data() + size_t{slot} * dim_;
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
      for (size_t i = 0; i < dim_; ++i) {
        const float x = m.embedding[i];
        sq += static_cast<double>(x) * x;
        in_range = in_range && std::fabs(x) <= kHalfMax;
        halves_[size_t{slot} * dim_ + i] = FloatToHalf(x);
      }
      // Rounded up, so the error bound built from it stays a bound.
      norms_[slot] = in_range ? static_cast<float>(std::sqrt(sq) * (1.0 + 1e-6))
                              : std::numeric_limits<float>::infinity();
    }
  }

  void Remove(const std::string& id) {
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
      std::copy(vectors_.data() + size_t{last} * dim_, vectors_.data() + (size_t{last} + 1) * dim_,
                vectors_.data() + size_t{slot} * dim_);
      meta_[slot] = meta_[last];
      tenant_of_[slot] = tenant_of_[last];
      if (graph_) {
        node_of_slot_[slot] = node_of_slot_[last];
        if (node_of_slot_[slot] < slot_of_node_.size()) slot_of_node_[node_of_slot_[slot]] = slot;
      }
      if (half_) {
        std::copy(halves_.data() + size_t{last} * dim_, halves_.data() + (size_t{last} + 1) * dim_,
                  halves_.data() + size_t{slot} * dim_);
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

  // After a node's row left it. REQUIRES: mu_ held exclusively.
  void ForgetNode(uint32_t node) {
    if (node >= graph_->nodes()) return;  // never placed
    --graph_live_;
    graph_->Removed(node, Nodes());
  }

  // REQUIRES: mu_ held exclusively.
  void ClearLocked() {
    vectors_.clear();
    halves_.clear();
    norms_.clear();
    meta_.clear();
    tag_pool_.clear();
    tenant_of_.clear();
    ids_.clear();
    id_chars_.clear();
    table_.clear();
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

  bool Matches(const SlotMeta& m, const CompiledQuery& c) const {
    auto part = [](uint32_t want, uint32_t have) { return want == kNoId || want == have; };
    if (m.tenant != c.tenant || !part(c.user, m.user) || !part(c.agent, m.agent) ||
        !part(c.session, m.session) || !part(c.mission, m.mission) ||
        !part(c.operator_id, m.operator_id)) {
      return false;
    }
    // An enum byte past the mask's 32 bits (a damaged file's) matches nothing.
    auto in = [](uint32_t mask, uint8_t value) { return value < 32 && ((mask >> value) & 1u) != 0; };
    if (!in(c.kinds, m.kind) || !in(c.layers, m.layer) || !in(c.criticalities, m.criticality)) return false;
    if (!c.sources.empty() &&
        std::find(c.sources.begin(), c.sources.end(), m.source) == c.sources.end()) {
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
  int64_t applied_seq_ = 0;                 // guarded by mu_ (as is everything below)
  MappedArray<float> vectors_;              // slot * dim_ ..
  // First-pass copies (when half_ != nullptr): float16 of each vector and
  // its L2 norm (infinity when an element is beyond kHalfMax).
  const HalfDotRowsFn half_ = dim_ >= 16 ? ActiveHalfDotKernel() : nullptr;
  MappedArray<uint16_t> halves_;            // slot * dim_ ..
  MappedArray<float> norms_;                // per slot
  MappedArray<SlotMeta> meta_;              // per slot
  MappedArray<uint32_t> tag_pool_;          // SlotMeta::tags_at ..
  MappedArray<uint32_t> tenant_of_;         // per slot, = meta_[slot].tenant
  MappedArray<IdRef> ids_;                  // per slot
  MappedArray<char> id_chars_;              // IdRef::at ..
  MappedArray<uint32_t> table_;             // slot + 1 (0: empty), at IdHash & (size - 1) onwards
  size_t live_tags_ = 0, live_id_chars_ = 0;  // pool entries in use
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
  size_t graph_live_ = 0;               // placed nodes whose row is still here
  // The file the arrays were mapped from (closed when they are cleared),
  // and how many more queries read their scattered elements from it with
  // pread (ColdQuery).
  OwnedFd file_fd_;
  mutable std::atomic<int> cold_queries_{0};
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
