// IndexSync: keeps the derived indexes (lexical, vector) caught up with the
// store's change sequence, and the vector index persisted beside the store
// so that a process maps it instead of rebuilding it from every record.
//
// The store is the truth. Before a query the engine calls CatchUp(), which
// replays the changes after what the indexes reflect. The vector index is
// loaded at Open() from its file (index/vector/vector_file.h) when the file
// is stamped with this store's uid, this embedder and dimension, and is no
// newer than the store; a missing, foreign, stale-from-the-future, torn or
// garbled file is set aside and the index rebuilt from the store, never an
// error for the caller. After a catch-up that replayed enough changes the
// file is written again (atomically), so the next process replays little.
//
// The vector index's graph (large layers) is extended at the same points,
// a bounded number of rows at a time (GraphBudget), and whole by Rebuild
// and CatchUpAndPersist: a process that replays a few changes never builds
// a graph, and the rows not yet placed are scanned exactly meanwhile.
//
// The work of a save point (placing rows in the graph, writing the file)
// is never done by the query or write that reached it: CatchUp asks a
// background thread (started the first time) for it and returns. The
// thread places rows a slice at a time, letting queries and writes in
// between, writes the file (changes wait for that; queries do not) and
// syncs and renames it without holding anything. The destructor finishes
// work already asked for, so a short-lived process that reached a save
// point saves before it exits, after it has answered.
//
// Like a damaged vector file, a lexical index that cannot be opened or
// read (Corruption: a truncated or garbled file, a deleted folder, a file
// in its place) is set aside (LexicalIndex::Reset) and rebuilt from the
// store, by the catch-up that met it or by RepairLexical for a search that
// did. Every rebuild after damage is logged through `warn` and counted
// (rebuilds()).
//
// On a read-only store (Store::read_only) nothing is written: the vector
// file is loaded but never saved or set aside, and the catch-up stays in
// memory (the lexical index is opened read-only too, see OpenLexicalIndex).
//
// On a store shared by several servers, StartFollowing() keeps the indexes
// caught up in the background as other servers' writes commit.
//
// Thread-safety: every method is safe from several threads (one lock
// serialises catch-ups and saves); several processes may share the files.
#ifndef MSP_CORE_INDEX_SYNC_H_
#define MSP_CORE_INDEX_SYNC_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "index/index.h"
#include "store/store.h"

namespace msp {

// The store's identity in its meta table: a UUID written once, so an index
// file made for another store (or a store re-created in the same folder) is
// never taken for this one's.
inline constexpr char kStoreUidMetaKey[] = "store_uid";

// Where the engine's warnings go (one line each, no newline).
using WarnFn = std::function<void(const std::string&)>;

// Derived indexes rebuilt from the store because they were found damaged,
// since this object was made.
struct IndexRebuilds {
  int64_t lexical = 0;
  int64_t vector = 0;
};

class IndexSync {
 public:
  // `vector_file`: where the vector index is persisted ("" keeps it in
  // memory only); `warn` receives what was repaired (may be empty). The
  // parts must outlive this object.
  IndexSync(Store& store, LexicalIndex& lexical, VectorIndex& vector, std::string embedder_id,
            std::string vector_file, WarnFn warn = nullptr);
  // Stops the follower, if started.
  ~IndexSync();
  IndexSync(const IndexSync&) = delete;
  IndexSync& operator=(const IndexSync&) = delete;

  // Loads the persisted vector index if it fits (see above). Errors only
  // when the store cannot be read.
  Status Open();

  // Starts a thread that catches the indexes up as other servers' writes
  // commit (a store shared by several servers, e.g. PostgreSQL, whose
  // NOTIFY wakes the wait), so a query rarely waits for a catch-up.
  // Queries still catch up first. At most once; stops when this object is
  // destroyed (within about 100 ms).
  void StartFollowing();

  // Replays the change sequence into both indexes; when the replay since
  // the file was written has grown past SaveThreshold(), asks the
  // background thread to persist the vector index (a failed save is
  // reported by last_save_error(), not returned: the indexes in memory are
  // right either way).
  Status CatchUp();

  // Waits until the background work asked for so far is done.
  void FinishMaintenance();

  // As CatchUp, for the vector index only (the lexical index waits for the
  // next query): for readers of vectors alone, such as the write path's
  // twin search, since a lexical catch-up commits Xapian (four fsyncs).
  Status CatchUpVectors();

  // Empties both indexes (or only the vector index), replays everything and
  // persists the vector index: `msp reindex`, the end of a reembed. A
  // lexical index that cannot be emptied is set aside instead: the old
  // index is never needed.
  Status Rebuild(bool lexical_too);

  // For a lexical search that answered Corruption (`cause`): sets the
  // lexical index aside, starts it empty and catches it up, unless another
  // caller did so since lexical_resets() was `seen` (read before the search).
  Status RepairLexical(const Status& cause, int64_t seen);
  int64_t lexical_resets() const;

  IndexRebuilds rebuilds() const;

  // Catches up and persists the vector index whatever the replay was: after
  // an import, so the next process starts from a file.
  Status CatchUpAndPersist();

  // Asks the background thread to write the vector index's file when changes
  // were replayed into it since it was written (below the save threshold
  // too), and returns at once: a long-lived process that is idle, so that
  // the next process starting on the store replays nothing. Does nothing on
  // a read-only store or when nothing is unsaved.
  void PersistSoon();

  // Changes replayed into the vector index since its file was written (or
  // loaded), and how many make a save.
  int64_t unsaved_changes() const;
  int64_t SaveThreshold() const;
  // What Open() found: "loaded", "none" (no file), "not persisted", or why
  // the file was set aside.
  std::string open_note() const;
  std::string last_save_error() const;

 private:
  // Replays into the vector index, and into the lexical one too when
  // `lexical`; a damaged lexical index is reset and replayed whole, once.
  // REQUIRES: mu_ held.
  Status CatchUpLocked(bool lexical = true);
  // One replay; a lexical call's Corruption is returned in *lexical_damage
  // too. REQUIRES: mu_ held.
  Status ReplayLocked(bool lexical, Status* lexical_damage);
  // Sets the lexical index aside and counts and logs it. REQUIRES: mu_ held.
  Status ResetLexicalLocked(const Status& cause);
  void Warn(const std::string& message) const;
  Status ApplyVectors(const std::vector<Memory>& records, std::vector<std::string> deletes, int64_t up_to);
  // Places up to `graph_budget` rows in the vector index's graph, then
  // writes the file: staged under the lock, synced and renamed with it let
  // go (busy_ counts it meanwhile; changes replayed then count towards the
  // next save). REQUIRES: `lock` holds mu_.
  void SaveLocked(std::unique_lock<std::mutex>& lock, size_t graph_budget);
  // Asks the background thread for a save point's work, starting it the
  // first time. REQUIRES: mu_ held.
  void RequestMaintenanceLocked();
  // The background thread: a save point's work for each request, until
  // stopped with none left.
  void Maintain();
  size_t GraphBudget() const;
  Result<std::string> Identity();

  Store& store_;
  LexicalIndex& lexical_;
  VectorIndex& vector_;
  const std::string embedder_id_;
  const std::string vector_file_;
  const WarnFn warn_;
  mutable std::mutex mu_;
  std::string identity_;       // "" until Open() (or when the store has no uid): not persisted
  int64_t unsaved_ = 0;        // guarded by mu_
  std::string open_note_;      // guarded by mu_
  std::string save_error_;     // guarded by mu_
  // The background thread's state, guarded by mu_.
  std::condition_variable maintenance_cv_;  // a request, a stop, or work done
  bool maintenance_asked_ = false;
  // Saves being committed with mu_ let go, and maintenance passes under
  // way: Rebuild, CatchUpAndPersist and the maintainer wait for 0, since
  // the file lock of a save in flight would refuse theirs. (A count, not a
  // flag: one ending must not clear another's.)
  int busy_ = 0;
  bool stop_maintaining_ = false;
  IndexRebuilds rebuilds_;     // guarded by mu_
  std::atomic<bool> stop_following_{false};
  std::thread maintainer_;  // these two last: they use the members above
  std::thread follower_;
};

}  // namespace msp

#endif  // MSP_CORE_INDEX_SYNC_H_
