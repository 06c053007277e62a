// AccessLog: the access bookkeeping of retrieval, kept in memory and written
// in batches.
//
// Retrieve's bumps of access_count / last_accessed are noted here and
// written in one Store::RecordAccess (bookkeeping: not fsynced) by the first
// retrieval a second or more after the oldest one, before any write
// (eviction reads the counts) and any read that returns records. So a
// search writes nothing itself, and a server writes once a second at most.
// A flush records the batch's latest access time as last_accessed; a failed
// flush drops its bumps, and a read-only store (Store::read_only) keeps none.
//
// When the engine closes, the bumps still pending go to the spool (a file
// beside the store, when there is one) instead of the store: one appended
// line, no fsync. Writing them to the store would make the process's close
// checkpoint the database (three fsyncs), which a short-lived process such
// as `msp search` would pay for every query. The next flush of any process
// on the store (a write, a read of records, a server's second) folds the
// spool in, each spooled batch with its own access time; a closing process
// folds it too once it holds kSpoolFoldBytes, so it stays small when only
// searches run. Spooled bumps are bookkeeping like the rest: a process
// killed before it closes loses its pending bumps, a batch torn by a kill
// is skipped, and a process killed while folding can count the batches it
// folded twice.
//
// Thread-safety: every method is safe from several threads; several
// processes share a spool (appends and folds hold an flock on it).
#ifndef MSP_CORE_ACCESS_LOG_H_
#define MSP_CORE_ACCESS_LOG_H_

#include <mutex>
#include <string>
#include <vector>

#include "msp/types.h"
#include "store/store.h"

namespace msp {

class AccessLog {
 public:
  // `store` must outlive this object. `spool`: the file Close() appends the
  // pending bumps to ("": none, Close() writes them to the store).
  explicit AccessLog(Store& store, std::string spool = "") : store_(store), spool_(std::move(spool)) {}

  // Notes one access of each of `ids` at `at` (by the engine's clock), and
  // flushes when the oldest pending access is kFlushIntervalMs old.
  void Note(const std::vector<std::string>& ids, TimeMs at);

  // Writes the pending accesses, if any, and folds the spool in.
  void Flush();

  // When the engine closes: the pending accesses go to the spool (to the
  // store when there is none or it cannot be written).
  void Close();

  // Bytes of spool past which a closing process folds it in.
  static constexpr size_t kSpoolFoldBytes = 64 * 1024;

 private:
  static constexpr TimeMs kFlushIntervalMs = 1000;

  // Moves the pending bumps into *ids (empty when there are none) and
  // returns the latest one's time.
  TimeMs TakePending(std::vector<std::string>* ids);

  // Appends one batch to the spool; false (spool unchanged) when it cannot.
  // Sets *size to the spool's size after it.
  bool Append(const std::vector<std::string>& ids, TimeMs at, size_t* size);

  // Writes the spool's batches to the store and empties it; a batch the
  // store refuses stays in the spool with those after it. Nothing when
  // another process holds the spool (it appends or folds).
  void FoldSpool();

  Store& store_;
  const std::string spool_;
  std::mutex mu_;
  std::vector<std::string> pending_;  // an id once per bump; guarded by mu_
  TimeMs pending_at_ = 0;             // the latest bump's time; guarded by mu_
  TimeMs first_at_ = 0;               // the oldest pending bump's time; guarded by mu_
};

}  // namespace msp

#endif  // MSP_CORE_ACCESS_LOG_H_
