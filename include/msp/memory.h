// MemoryLayer: the engine, as every face (CLI, REST, MCP, library) sees it.
//
// Open() one per data directory and process. Thread-safe: calls may come from
// several threads; several processes may open the same data directory (the
// store serialises writers, the derived indexes catch up before each query).
#ifndef MSP_MEMORY_H_
#define MSP_MEMORY_H_

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// A source of time, so tests can move it.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs NowMs() const = 0;
};
// The system clock.
std::shared_ptr<Clock> SystemClock();

struct ListRequest {
  Namespace scope;
  SearchFilter filter;
  std::string session;   // episodes of one session, by step
  int limit = 100;       // 0: all
  int offset = 0;
  bool newest_first = false;
  bool include_expired = false;
  // > 0: only records that held at this time, superseded ones included
  // (as RetrieveRequest::as_of).
  TimeMs as_of = 0;
};

// How `msp reembed` runs (MemoryLayer::Reembed).
struct ReembedOptions {
  // Records per batch: one embedder call (split by embedder.batch_size) and
  // one atomic store write. 0: embedder.batch_size.
  int batch_size = 0;
  // Stop after this many batches, leaving the rest for a later run (0: all).
  int max_batches = 0;
};

// Where a reembed stands; passed to the progress callback after each batch
// and returned at the end.
struct ReembedProgress {
  std::string from_embedder;  // the store's embedder when the run started ("" for a new store)
  std::string to_embedder;    // the configured embedder
  int64_t total = 0;          // records in the store
  int64_t done = 0;           // records whose vector to_embedder made (earlier runs included)
  int64_t embedded = 0;       // records this run embedded
  int64_t elapsed_ms = 0;     // since this run started (monotonic clock)
  // The store's identity is to_embedder: every record carries its vector.
  bool finished = false;
};

// A batch of typed records written as one atomic unit, for the parts of msp
// that own their record formats (mission memory, the knowledge graph,
// procedural memory). See MemoryLayer::Commit.
struct RecordBatch {
  Namespace scope;                    // every put and delete must lie inside it
  // Empty id: a new record (id and created_at assigned). With an id: insert,
  // or replace the whole record (created_at kept as given; 0 becomes now).
  std::vector<Memory> puts;
  // Compare-and-swap, empty or one per put: -1 unconditional; 0 the id must
  // not exist yet; > 0 the record's current seq must equal it.
  std::vector<int64_t> expected_seq;
  std::vector<std::string> deletes;   // ids of records visible in scope
  std::string actor;                  // for the audit log; empty: options.actor
  std::string reason;                 // for the audit log
};

// The store's page cache of a process that called MemoryLayer::WarmUp.
inline constexpr size_t kResidentStoreCacheBytes = size_t{64} << 20;

class MemoryLayer {
 public:
  static Result<std::unique_ptr<MemoryLayer>> Open(const Options& options,
                                                   std::shared_ptr<Clock> clock = nullptr);

  // Rebuilds the vector of every record with options.embedder (the new
  // embedder), `reembed.batch_size` records at a time, each batch one atomic
  // store write. Resumable: records already carrying the new embedder's
  // vector are skipped, so a run that was interrupted (or stopped by
  // max_batches) continues where it stopped. While a reembed is unfinished,
  // Open() refuses the store (FailedPrecondition naming both embedders);
  // running Reembed with the old embedder configured goes back. When every
  // record is done, the store's embedder becomes the new one. Opens the store
  // itself: no other MemoryLayer of this process should hold it, and other
  // processes using it should be stopped first (they would keep writing
  // vectors of the old embedder). `progress` (may be empty) is called after
  // each batch.
  static Result<ReembedProgress> Reembed(const Options& options, const ReembedOptions& reembed,
                                         const std::function<void(const ReembedProgress&)>& progress,
                                         std::shared_ptr<Clock> clock = nullptr);
  virtual ~MemoryLayer() = default;
  MemoryLayer(const MemoryLayer&) = delete;
  MemoryLayer& operator=(const MemoryLayer&) = delete;

  // A write through the write policy. Refusals come back as kRefused with the
  // rule that fired; the refusal is audited and nothing is stored.
  virtual Result<WriteResult> Write(const WriteRequest& request) = 0;
  // Many writes in one atomic transaction (the fast path for bulk loads).
  // All or nothing: the first invalid or refused request fails the whole
  // batch, naming its index, and nothing is stored.
  virtual Result<std::vector<WriteResult>> WriteMany(const std::vector<WriteRequest>& requests) = 0;

  // Episodic memory: append a step (structural checks only: sensitivity
  // high, size, UTF-8). Consolidation runs when the session has
  // every_n_episodes new steps.
  virtual Result<Memory> AddEpisode(const EpisodeStep& step) = 0;
  // The last `k` steps of a session, oldest first (k = 0: all).
  virtual Result<std::vector<Memory>> LastSteps(const Namespace& scope, const std::string& session,
                                                int k) = 0;
  // Ends a session: consolidates what is left of it.
  virtual Result<ConsolidationReport> EndSession(const Namespace& scope,
                                                 const std::string& session) = 0;

  // Semantic memory: add a fact, or merge it into a near-duplicate.
  virtual Result<WriteResult> AddFact(const FactRequest& request) = 0;
  // Replaces fact `old_id` by a new fact; the old one stays in history,
  // marked superseded and linked to its successor.
  virtual Result<WriteResult> SupersedeFact(const Namespace& scope, const std::string& old_id,
                                            const FactRequest& replacement) = 0;
  // Every version of a record, oldest first, following supersede links.
  virtual Result<std::vector<Memory>> History(const Namespace& scope, const std::string& id) = 0;

  virtual Result<std::vector<SearchHit>> Retrieve(const RetrieveRequest& request) = 0;
  // Retrieve with the session ranking beside the hits (RetrieveResult,
  // request.top_sessions of them). The default answers Retrieve's hits and
  // no sessions; the engine ranks them.
  virtual Result<RetrieveResult> Search(const RetrieveRequest& request) {
    MSP_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, Retrieve(request));
    return RetrieveResult{std::move(hits), {}};
  }
  virtual Result<Memory> Get(const Namespace& scope, const std::string& id) = 0;
  virtual Result<std::vector<Memory>> List(const ListRequest& request) = 0;
  virtual Status Delete(const Namespace& scope, const std::string& id, const std::string& reason,
                        const std::string& actor) = 0;

  // Administrative write of typed records (RecordBatch): no worth-storing
  // policy, only structural checks (namespace inside scope, UTF-8, sizes,
  // JSON body an object, access level 0..kMaxAccessLevel; empty text is
  // allowed and never matches a search). Records are embedded, indexed and
  // audited; the whole batch lands or nothing does. A failed expected_seq is
  // kConflict naming the record and its current seq. Episodes are refused
  // (AddEpisode numbers their steps). Returns the stored records with id and
  // seq (without vectors), in the order of `puts`.
  virtual Result<std::vector<Memory>> Commit(const RecordBatch& batch) = 0;

  // The change sequence, for a view derived from records that must see every
  // process's writes before it answers (the knowledge graph's): read
  // LastChangeSeq(), load the records, then replay ChangesSince pages from
  // that seq before each read. A page gives the current state of the records
  // its changes name (a record put and deleted since is in `gone`), so
  // replaying is idempotent and the view equals the store at up_to or later.
  // The default (a layer without a store) is FailedPrecondition.
  // The store's last change-sequence number (0 for an empty store).
  virtual Result<int64_t> LastChangeSeq() {
    return Status::FailedPrecondition("this memory layer keeps no change sequence");
  }
  // Up to `limit` changes after seq `after`, ascending. REQUIRES: limit >= 1.
  virtual Result<RecordChanges> ChangesSince(const Namespace& /*scope*/, int64_t /*after*/, int /*limit*/) {
    return Status::FailedPrecondition("this memory layer keeps no change sequence");
  }

  // Runs the extractor over the episodes of `scope` not yet consolidated
  // (one session when `session` is set).
  virtual Result<ConsolidationReport> Consolidate(const Namespace& scope,
                                                  const std::string& session) = 0;
  // With consolidation.background: blocks until the worker has nothing
  // queued or running (sessions it gave up on stay unconsolidated). Without
  // it: returns at once.
  virtual Status WaitForConsolidation() { return Status::Ok(); }

  // Rebuilds the derived indexes from the store.
  virtual Status Reindex() = 0;
  // Brings the derived indexes up to date with the store's change sequence
  // (every query does this first; calling it ahead only moves the cost).
  virtual Status CatchUpIndexes() { return Status::Ok(); }
  // Writes the persisted vector index when it lacks changes this layer has
  // replayed (in the background; returns at once). A long-lived process
  // calls it when idle so that the next process opening the store replays
  // nothing; the file is written anyway every so many changes.
  virtual Status PersistIndexes() { return Status::Ok(); }
  // For a long-lived process (a server), once it has caught up: reads the
  // persisted vector index's pages into this process in the caller's thread
  // (queries go on meanwhile; a quarter of the machine's memory at most,
  // the float32 rows last), copies the lexical index's docid map into
  // memory (64 bytes a document), and lets the store keep more of its pages
  // in memory (kResidentStoreCacheBytes), filled now, so that later queries
  // find what they touch in memory rather than paying a page fault or a
  // read for it. A short-lived process should not call it: it reads the
  // whole files.
  virtual Status WarmUp() { return Status::Ok(); }
  // Writes the access bookkeeping that retrievals batch in memory
  // (access_count, last_accessed; retrieval.record_access) now. Otherwise
  // the retrieval that finds the batch a second old writes it and waits for
  // the write; a long-lived process calls this from a thread of its own
  // more often than that, so that no request does.
  virtual Status FlushAccessLog() { return Status::Ok(); }

  // JSONL, one record a line (format in README). Import is all-or-nothing:
  // on any bad line nothing is applied and the error names the line.
  virtual Result<ImportReport> Import(std::istream& in, const std::string& actor) = 0;
  virtual Result<int64_t> Export(const Namespace& scope, std::ostream& out) = 0;

  // Counts of the records in scope; with max_access_level, only of the
  // records at or below it (an asker's clearance), so that counts say
  // nothing of what the asker may not see. audit_events counts the tenant's
  // whole log either way: a caller with a clearance should not show it.
  virtual Result<Stats> GetStats(const Namespace& scope, std::optional<int> max_access_level = std::nullopt) = 0;
  // The audit log of scope.tenant (one record's when record_id is set),
  // newest first.
  virtual Result<std::vector<AuditEvent>> Audit(const Namespace& scope, const std::string& record_id,
                                                int limit) = 0;

  // Checks that the store answers (one cheap read), for health checks:
  // kUnavailable while a database backend (PostgreSQL) cannot be reached;
  // kReadOnly when the store answers but this process may not write it;
  // kDiskFull when the last write failed because the disk was full (until
  // a write succeeds).
  virtual Status CheckStore() { return Status::Ok(); }

 protected:
  MemoryLayer() = default;
};

}  // namespace msp

#endif  // MSP_MEMORY_H_
