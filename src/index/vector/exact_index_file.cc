// The exact vector index (exact_index.h), its file side: Save writes the
// per-slot arrays as they are (vector_file.h); Load maps them from the file,
// checks what a load must (sizes, strings, counts, the id table) and, when
// asked, every checksum and every slot's references.
#include "index/vector/exact_index.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace msp::exact_index {
namespace {

// The file's sections, in order (vector_file.h): the first kMetaSections
// are metadata, the rest vectors.
// The graph's sections are empty when it has none; they are checked with
// the vectors (on request), their values as they are used.
// clang-format off
enum FileSection : size_t {
  kStringsSection, kMetaSection, kTagsSection, kIdsSection, kIdCharsSection, kTableSection,
  kTenantSection, kNormsSection, kVectorsSection, kHalvesSection,
  kNodeOfSlotSection, kSlotOfNodeSection, kGraphHeaderSection, kLevel0Section, kLevelsSection,
  kUpperAtSection, kUpperSection, kCountsSection, kSectionCount
};
// clang-format on
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

}  // namespace

Status ExactVectorIndex::Save(const std::string& path, std::string_view identity) const {
  MSP_ASSIGN_OR_RETURN(StagedVectorFile staged, Stage(path, identity));
  return staged.Commit();
}

Result<StagedVectorFile> ExactVectorIndex::Stage(const std::string& path, std::string_view identity) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  // A loaded table nothing has changed since is checked before it is
  // written again (CheckTable repairs it when something changes).
  if (!table_checked_ && !TableConsistent()) {
    return Status::Corruption("vector index: the id table loaded from its file is damaged; not written to " + path);
  }
  std::string strings;  // each: u32 size, then the bytes
  for (const std::string& s : string_of_) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    strings.append(reinterpret_cast<const char*>(&n), sizeof n);
    strings += s;
  }
  auto section = [](const auto& a) { return VectorFileSection{a.data(), a.size() * sizeof(*a.data())}; };
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

Status ExactVectorIndex::Load(const std::string& path, std::string_view identity, bool verify_vectors) {
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
  if (p.fd.get() < 0)
    return Status::IoError("cannot open the vector index file " + path + " again: " + std::strerror(errno));
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
  if (!mapped)
    return Status::IoError("cannot map the vector index file " + path + ": " + std::strerror(errno));
  auto section = [](const auto& a) { return VectorFileSection{a.data(), a.size() * sizeof(*a.data())}; };
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
    const std::vector<VectorFileSection> meta_sections{{strings.data(), strings.size()},
                                                       section(p.meta),
                                                       section(p.tag_pool),
                                                       section(p.ids),
                                                       section(p.id_chars),
                                                       section(p.table),
                                                       section(p.tenant_of),
                                                       section(p.norms)};
    if (ChainChecksum(file.identity_checksum(), meta_sections) != file.meta_checksum()) {
      return bad("metadata checksum mismatch");
    }
    const std::vector<VectorFileSection> rest{section(p.vectors),
                                              section(p.halves),
                                              section(p.node_of_slot),
                                              section(p.slot_of_node),
                                              {&graph_header, has_graph ? sizeof graph_header : 0},
                                              section(p.graph.level0()),
                                              section(p.graph.levels()),
                                              section(p.graph.upper_at()),
                                              section(p.graph.upper()),
                                              {counts_bytes.data(), counts_bytes.size()}};
    if (ChainChecksum(0, rest) != file.vector_checksum()) return bad("vector checksum mismatch");
  }
  if (has_graph && (!p.graph.Adopt(graph_header) || p.node_of_slot.size() != n ||
                    p.slot_of_node.size() < graph_header.nodes)) {
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
  // The id table's size (a power of two, larger than the slots: a probe
  // always ends). Its entries are checked before the index first changes
  // (Apply, CheckTable): a query walks at most the whole table and skips
  // an entry naming no slot, so an unchecked table can miss a record's
  // vector but never read out of bounds; a short-lived process that only
  // queries does not read its megabytes.
  const size_t table = p.table.size();
  if (n > 0 && (table <= n || (table & (table - 1)) != 0)) return bad("id table of the wrong size");
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
  table_checked_ = n == 0;
  cold_queries_.store(kColdQueries, std::memory_order_relaxed);
  return Status::Ok();
}

template <typename P, typename Bad>
Status ExactVectorIndex::CheckSlots(const P& p, size_t n, const GraphHeader& graph, bool has_graph,
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
      if (node >= p.slot_of_node.size() || p.slot_of_node[node] != slot)
        return bad("graph node table garbled");
      want[2] += node < graph.nodes;
    }
    for (uint32_t slot : p.slot_of_node) {
      if (slot != kNoSlot && slot >= n) return bad("graph node table garbled");
    }
  }
  if (want != counts) return bad("counts disagree with the slots");
  return Status::Ok();
}

}  // namespace msp::exact_index
