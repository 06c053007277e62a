// The derived indexes: a lexical index (lexical/, Xapian BM25) and a vector
// index (vector/, exact scan, and a graph for large layers). Both are
// rebuilt from the store at will and are stamped with the last
// change-sequence number they reflect.
#ifndef MSP_INDEX_INDEX_H_
#define MSP_INDEX_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"
#include "index/vector/vector_file.h"
#include "msp/types.h"

namespace msp {

// What a query may see: the namespace scope, the filter, and "now" (records
// with 0 < expires_at <= now are never returned).
struct IndexQuery {
  Namespace scope;
  SearchFilter filter;
  TimeMs now = 0;
  std::string text;   // lexical only
  int limit = 10;
  // Lexical only. When non-empty: only episodes of these sessions (values of
  // EpisodePosition::session), every visible one of them, each scored by
  // `text` (0 when no term matches), best first.
  std::vector<std::string> sessions;
  // Lexical only, with `sessions`: instead, only the visible episodes of
  // those sessions that `text` matches, each scored 0 (in no set order) and,
  // from SearchEpisodes, with the query terms it contains
  // (LexicalHit::terms), for a session-level BM25. `limit` does not apply.
  bool session_terms = false;
};

struct IndexHit {
  std::string id;
  double score = 0.0;  // BM25 weight or cosine
};

// Where an episode sits in its session. `session` is an opaque key equal for
// the episodes of one session (of one namespace); empty for records that are
// not episodes of a session, whose step is then 0.
struct EpisodePosition {
  std::string session;
  int64_t step = 0;
};

// A query term an episode contains: its place among the query's distinct
// terms (the same in every search of one query text), its frequency in the
// episode (wdf) and its inverse document frequency in the index,
// ln(1 + (N - df + 0.5) / (df + 0.5)).
struct TermMatch {
  uint32_t term = 0;
  uint32_t wdf = 0;
  double idf = 0.0;
};

struct LexicalHit {
  IndexHit hit;
  EpisodePosition position;
  // A record indexed as passages (RetrievalOptions::passage_bytes): the
  // passage this hit is, as byte offsets into its text; both 0 otherwise.
  // Search and a search of `sessions` give each record once, by its best
  // passage; with session_terms each matching passage is a hit of its own.
  size_t passage_begin = 0;
  size_t passage_end = 0;
  // How much of the query the search's best hit matches: the share of the
  // query terms' inverse document frequency (a term no document holds
  // counts its most) that its terms hold, on [0, 1]; the same in every hit
  // of one search, and only of a search without `sessions` (else 0).
  double query_match = 0.0;
  std::vector<TermMatch> terms;  // with IndexQuery::session_terms only
};

// What a ranked lexical search (IndexQuery::sessions empty) left out, so a
// caller that asked for fewer candidates than it could use can tell whether
// the rest could change its ranking (Retriever::Search).
struct LexicalRest {
  // The hits are every visible record the query matches.
  bool complete = true;
  // When not complete: no record left out scores above this (its best
  // passage's BM25 weight is at most this).
  double max_score = 0.0;
  // Whether any document of the index, at the revision searched, is an
  // episode of a session (when none, hits carry no EpisodePosition and
  // their episode context is their own score).
  bool sessions = false;
};

// The one definition of "record r is visible to query q" (scope, filter,
// expiry, state). The lexical index encodes the same rules as boolean terms;
// tests check that the two agree.
bool MatchesQuery(const Memory& r, const IndexQuery& q);

// Errors: Corruption when the index's files are damaged or gone (Reset
// repairs that), DiskFull when the disk is full, IoError for other
// failures of the system.
//
// Thread-safety: safe from several threads; several processes may share one
// index directory (writes take Xapian's lock, waiting for other writers).
class LexicalIndex {
 public:
  virtual ~LexicalIndex() = default;
  // The change sequence the index reflects (0 when empty or new).
  virtual Result<int64_t> AppliedSeq() = 0;
  // Brings the index to `up_to_seq`: (re)indexes `upserts`, removes
  // `deletes` (missing ids are ignored). A no-op when the index already
  // reflects up_to_seq or later. Atomic.
  virtual Status Apply(const std::vector<Memory>& upserts, const std::vector<std::string>& deletes,
                       int64_t up_to_seq) = 0;
  // Empties the index and resets AppliedSeq to 0.
  virtual Status Clear() = 0;
  // For an index whose files are damaged or gone: sets them aside (beside
  // the index, replacing any set aside before) and starts an empty index
  // (AppliedSeq 0) without reading them. The caller replays the store.
  virtual Status Reset() = 0;
  // BM25 top `q.limit` over q.text, best first, only records matching q.
  virtual Result<std::vector<IndexHit>> Search(const IndexQuery& q) = 0;
  // As Search, with each hit's place in its session; when `rest` is not
  // null it receives what the search left out (only meaningful without
  // IndexQuery::sessions).
  virtual Result<std::vector<LexicalHit>> SearchEpisodes(const IndexQuery& q, LexicalRest* rest) = 0;
  Result<std::vector<LexicalHit>> SearchEpisodes(const IndexQuery& q) { return SearchEpisodes(q, nullptr); }
  virtual Result<int64_t> DocCount() = 0;
  // For a long-lived process, once: keeps in memory what every search reads
  // of the index's files beside Xapian's own (the docid map: 64 bytes a
  // document), at most `max_bytes`. A short-lived process should not call
  // it (it reads the whole map). Best effort; results are unchanged.
  virtual void Warm(size_t /*max_bytes*/) {}
};

// Opens or creates the Xapian index in `dir`. With `sync_commits`, each
// commit is fsynced (four fdatasyncs: three tables and the version file);
// without, commits reach the page cache only, so they survive a killed
// process but a power loss may lose the last ones (replayed from the store
// by the next catch-up, the index being stamped with the change it
// reflects) or leave the index to be rebuilt. The engine syncs them when
// store.synchronous is "full" (or "extra"), as SQLite does its own.
// Damaged files (or a file where the folder should be) do not fail the
// open: the first call that reads them answers Corruption.
//
// With `read_only` (a data directory this process may not write) nothing
// is ever written to `dir`: reads use the files as they are, and the first
// Apply, Clear or Reset moves the index into memory (a copy of what the
// files hold, or empty when they cannot be read), where it is caught up
// and read from then on; the files are left as they were.
//
// With `in_memory` (an encrypted store, docs/encryption.md) the index lives
// in memory only, starts empty and is caught up from the store; `dir` only
// names it in messages.
Result<std::unique_ptr<LexicalIndex>> OpenLexicalIndex(const std::string& dir, const RetrievalOptions& options,
                                                       bool sync_commits = true, bool read_only = false,
                                                       bool in_memory = false);

// The state of a vector index's graph: rows placed in it (`placed`, of
// which `removed` have since left the index) and rows waiting (`pending`).
struct VectorGraphInfo {
  bool built = false;
  size_t placed = 0, removed = 0, pending = 0;
};

// Exact cosine scan over L2-normalised vectors, held in memory.
// Thread-safety: safe from several threads (readers share, Apply excludes).
class VectorIndex {
 public:
  virtual ~VectorIndex() = default;
  virtual int dimension() const = 0;
  virtual int64_t AppliedSeq() const = 0;
  // As LexicalIndex::Apply. Records without an embedding of this dimension
  // are dropped from the index.
  virtual Status Apply(const std::vector<Memory>& upserts, const std::vector<std::string>& deletes,
                       int64_t up_to_seq) = 0;
  virtual void Clear() = 0;
  // Top `q.limit` by cosine with `query` (dimension() floats), best first.
  virtual Result<std::vector<IndexHit>> Search(const std::vector<float>& query,
                                               const IndexQuery& q) const = 0;
  // The exact cosine with `query` of each of `ids`, in the order given: NaN
  // for an id the index does not hold or q may not see (MatchesQuery's
  // rules); q.limit is ignored. Equal to Search's scores bit for bit.
  virtual Result<std::vector<float>> Score(const std::vector<float>& query, const std::vector<std::string_view>& ids,
                                           const IndexQuery& q) const = 0;
  virtual size_t size() const = 0;

  // Persistence (index/vector/vector_file.h has the format). Save writes
  // the whole index to `path` atomically (a temporary file beside it,
  // fsynced, renamed over it), stamped with AppliedSeq() and `identity`:
  // what the caller built it from (its store and embedder). Unavailable
  // when another process is saving the same file at that moment.
  virtual Status Save(const std::string& path, std::string_view identity) const = 0;
  // Save in two steps (vector_file.h): the file is written while changes
  // wait, and synced and put in place by Commit() after they may go on.
  virtual Result<StagedVectorFile> Stage(const std::string& path, std::string_view identity) const = 0;
  // Replaces the contents with the file at `path`, mapped copy-on-write
  // rather than read: opening costs time in proportion to the metadata
  // (checked against its checksum), and a vector's page is read when a
  // query first touches it. With `verify_vectors` the vectors' checksum is
  // checked as well (reading every page). NotFound when there is no file;
  // Corruption when it is torn or garbled, of another dimension or layout,
  // or stamped with another identity; IoError when it cannot be read. On
  // any error the index is unchanged (the caller rebuilds from the store).
  // A garbled vector that passes unverified scores NaN and ranks nothing.
  virtual Status Load(const std::string& path, std::string_view identity, bool verify_vectors) = 0;

  // The approximate search's graph (MakeVectorIndex): Apply never builds it,
  // since a process that replays a few changes must not pay for a graph.
  // ExtendGraph places up to `max_nodes` of the rows not yet in it, after
  // building it afresh when the index has reached graph_min_records without
  // one, or when removed rows outnumber the live ones in it. Rows not yet
  // placed are scanned exactly by every graph query, so results never miss
  // them. A no-op for an index without a graph (MakeExactVectorIndex).
  virtual Status ExtendGraph(size_t max_nodes) = 0;
  virtual VectorGraphInfo graph_info() const = 0;

  // For a long-lived process, once: maps every page of a loaded file into
  // this process now (a few megabytes at a time, queries going on between
  // them), and from then on reads through the mapping. Until then a query
  // reads the scattered elements it needs with pread, since a page fault
  // costs up to tens of preads on a virtual machine; a server answering
  // varied queries would otherwise pay faults for thousands of queries as
  // they touch new pages one by one. A short-lived process should not call
  // it (it reads the whole file). At most `max_bytes` are mapped in: the
  // arrays every query reads first, the float16 rows next, the float32
  // rows last, and an array that would pass the budget is left to be
  // faulted in as queries touch it (so a file larger than the memory it
  // may take does not push everything else out of the page cache). Rows
  // changed since the load are in memory already; a Load or Clear after it
  // starts the reads over.
  virtual void Warm(size_t /*max_bytes*/) const {}
};

std::unique_ptr<VectorIndex> MakeExactVectorIndex(int dimension);

// An approximate search for large layers: an HNSW graph (vector/graph.h)
// over the same vectors, used only where it pays, saved and mapped with them.
struct VectorIndexOptions {
  // The graph is built once the index holds this many vectors, and a query
  // uses it only when its tenant holds this many; 0 never builds one.
  size_t graph_min_records = 50000;
  // 32 / 200: recall@10 0.961 at 1,000,000 records when the engine asks for
  // its 200 candidates (16 / 100: 0.872); the build takes ~3.5x as long
  // (bench/README.md, "Vector search speed and scale").
  int graph_m = 32;                 // links per node
  int graph_ef_construction = 200;  // candidates explored per insertion
  int graph_ef_search = 160;        // candidates explored per query (at least 2 * limit)
  int build_threads = 0;            // for large batches; 0: the hardware's threads
  // A process's first queries read the index file with pread (a graph
  // search then costs ~20,000 reads); while a tenant's float16 rows take at
  // most this many bytes they scan those instead (exact, and cheaper up to
  // about 170,000 rows of 384 dimensions); 0: always the graph.
  size_t cold_scan_bytes = size_t{128} << 20;
};

// As MakeExactVectorIndex, with the graph of `options`. A graph query takes
// the graph's nearest candidates, keeps those matching the query
// (MatchesQuery's rules) and scores them exactly as the exact scan does;
// when too few match (a selective filter), it widens the search a few times
// and then falls back to the exact scan. So results are exact whenever the
// graph is not used, and approximate (some of the true top k may be missed)
// when it is; scores are always the exact cosines.
std::unique_ptr<VectorIndex> MakeVectorIndex(int dimension, const VectorIndexOptions& options);

}  // namespace msp

#endif  // MSP_INDEX_INDEX_H_
