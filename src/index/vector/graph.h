// NeighborGraph: a hierarchical navigable small-world graph (HNSW: Malkov and
// Yashunin, 2016) over numbered nodes, for the vector index's approximate
// search on large layers.
//
// Unlike a graph library's, its state is a handful of flat arrays of
// integers (MappedArray), and the vectors are not copied into it: a node's
// vector is read from the index's rows through the index's node -> slot
// table (NodeVectors). So the index saves the graph as sections of its file
// and a process maps them instead of rebuilding the graph: opening costs
// nothing in proportion to the graph, and a query reads only the pages of
// the nodes it visits.
//
// Nodes are numbered 0, 1, 2, ... in the order they are inserted and are
// never renumbered; a node whose vector has left the index ("removed") stays
// in its neighbours' lists but is never visited or returned, and drops out
// of a list when that list is next rewritten. The index rebuilds the graph
// when removed nodes become too many.
//
// Layout: level 0 holds (1 + m0) u32 per node: a count, then the links.
// A node drawn at level L > 0 also has L lists of (1 + m) u32 in the upper
// pool, from upper_at[node]. A node's level is a pure function of its
// number and the seed, so a graph is the same whatever order of threads
// built it only when built by one thread.
//
// Thread-safety: Insert runs its own threads and must not overlap any other
// call; Search and the accessors may run from several threads at once.
#ifndef MSP_INDEX_VECTOR_GRAPH_H_
#define MSP_INDEX_VECTOR_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "index/vector/file_reads.h"
#include "index/vector/mapped_array.h"

namespace msp {

inline constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();

// Where each node's vector is: rows of `dim` floats, reached through the
// index's node -> slot table. A node past the table or mapped to a slot
// past the rows (kNoNode included) has no vector: it was removed.
// With `files` set (a search only), the table and the rows are read from the
// index file rather than through the mapping (MappedArray::Read; the index's
// ColdQuery says when): with `reads` and `fd`, the rows of one step of the
// search together (ReadMany), else with one pread each.
struct NodeVectors {
  const float* rows = nullptr;
  size_t slots = 0;
  size_t dim = 0;
  const uint32_t* slot_of = nullptr;
  size_t nodes = 0;
  struct Files {
    const MappedArray<float>* rows = nullptr;
    const MappedArray<uint32_t>* slot_of = nullptr;
    FileReads* reads = nullptr;  // the caller's, used by one search at a time
    int fd = -1;
  };
  std::optional<Files> files;

  const float* at(uint32_t node) const {
    if (node >= nodes) return nullptr;
    const uint32_t slot = slot_of[node];
    return slot < slots ? rows + size_t{slot} * dim : nullptr;
  }
  // As at(), but with `files` the row is read into `scratch` (dim floats).
  const float* read(uint32_t node, float* scratch) const {
    if (!files) return at(node);
    if (node >= nodes) return nullptr;
    const uint32_t slot = files->slot_of->At(node, true);
    return slot < slots ? files->rows->Read(size_t{slot} * dim, dim, scratch, true) : nullptr;
  }
  // read() of nodes[0 .. m): out[i] the row of nodes[i] or nullptr; with
  // `files`, row i is read into scratch + i * dim. With files->reads the
  // node table's entries, then the rows, go to the kernel in one batch
  // each (two system calls rather than up to two a node).
  void ReadMany(const uint32_t* nodes_in, size_t m, float* scratch, const float** out) const;
};

// The graph's shape and where a search starts; saved as one section.
struct GraphHeader {
  uint32_t m = 0;           // links per node on the upper levels
  uint32_t m0 = 0;          // links per node on level 0 (2 m)
  uint32_t nodes = 0;       // nodes inserted
  uint32_t entry = kNoNode; // a node of the top level
  int32_t top_level = -1;   // -1: empty
  uint32_t ef_construction = 0;
  uint64_t seed = 0;
};
static_assert(sizeof(GraphHeader) == 32);

// A search's answer: similarity (dot product) and node, best first.
using GraphHits = std::vector<std::pair<float, uint32_t>>;

class NeighborGraph {
 public:
  NeighborGraph(uint32_t m, uint32_t ef_construction, uint64_t seed);

  const GraphHeader& header() const { return h_; }
  uint32_t nodes() const { return h_.nodes; }

  // Inserts nodes nodes() .. upto - 1 in order (a removed one takes its
  // number but no place in the graph) with `threads` threads (at least 1).
  // Throws std::bad_alloc when memory runs out; the graph is then unusable
  // (the caller drops it).
  void Insert(uint32_t upto, const NodeVectors& v, int threads);

  // The `ef` nodes nearest `query` the search finds, best first; removed
  // nodes are never among them. When v.files is set, the links are read
  // from the file too.
  GraphHits Search(const float* query, size_t ef, const NodeVectors& v) const;

  // Call when `node` was removed: a new entry point is chosen when it was
  // the entry (the highest live node; the graph is empty when none is left).
  void Removed(uint32_t node, const NodeVectors& v);

  // ---- persistence: the arrays as they are, and back ----
  MappedArray<uint32_t>& level0() { return level0_; }
  MappedArray<uint8_t>& levels() { return levels_; }
  MappedArray<uint32_t>& upper_at() { return upper_at_; }
  MappedArray<uint32_t>& upper() { return upper_; }
  const MappedArray<uint32_t>& level0() const { return level0_; }
  const MappedArray<uint8_t>& levels() const { return levels_; }
  const MappedArray<uint32_t>& upper_at() const { return upper_at_; }
  const MappedArray<uint32_t>& upper() const { return upper_; }
  // Takes a header read from a file with the arrays already mapped; false
  // when they disagree with it (sizes, shape). Link values are checked as
  // they are read, so a damaged graph searches badly but stays in bounds.
  bool Adopt(const GraphHeader& h);

 private:
  class Builder;
  struct Lists;

  uint32_t Capacity(int level) const { return level == 0 ? h_.m0 : h_.m; }
  int LevelOf(uint32_t node) const;
  // The list of `node` at `level`: [0] the count, then the links; nullptr
  // when the node has no such level (or the arrays are damaged).
  const uint32_t* List(uint32_t node, int level) const;
  // Copies the links of `node` at `level` into `out` (room for the level's
  // capacity) and returns how many, reading from the file with pread when
  // `from_file` (MappedArray::Read).
  size_t CopyLinks(uint32_t node, int level, uint32_t* out, bool from_file) const;
  uint32_t* MutableList(uint32_t node, int level);

  GraphHeader h_;
  double level_mult_;            // 1 / ln(m)
  MappedArray<uint32_t> level0_;    // node * (1 + m0) ..
  MappedArray<uint8_t> levels_;     // per node
  MappedArray<uint32_t> upper_at_;  // per node: offset of its level-1 list in upper_
  MappedArray<uint32_t> upper_;     // (1 + m) per upper level of each node
};

}  // namespace msp

#endif  // MSP_INDEX_VECTOR_GRAPH_H_
