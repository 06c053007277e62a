// AccessLog: the access bookkeeping of retrieval, kept in memory and written
// in batches.
//
// Retrieve's bumps of access_count / last_accessed are noted here and
// written in one Store::RecordAccess (bookkeeping: not fsynced) by the first
// retrieval a second or more after the oldest one, before any write
// (eviction reads the counts) and any read that returns records, and when
// the engine closes. So a search writes nothing itself, a short-lived
// process writes once at exit, and a server once a second at most. A flush
// records the batch's latest access time as last_accessed; a failed flush
// drops its bumps, and a read-only store (Store::read_only) keeps none.
//
// Thread-safety: every method is safe from several threads.
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
  // `store` must outlive this object.
  explicit AccessLog(Store& store) : store_(store) {}

  // Notes one access of each of `ids` at `at` (by the engine's clock), and
  // flushes when the oldest pending access is kFlushIntervalMs old.
  void Note(const std::vector<std::string>& ids, TimeMs at);

  // Writes the pending accesses, if any.
  void Flush();

 private:
  static constexpr TimeMs kFlushIntervalMs = 1000;

  Store& store_;
  std::mutex mu_;
  std::vector<std::string> pending_;  // an id once per bump; guarded by mu_
  TimeMs pending_at_ = 0;             // the latest bump's time; guarded by mu_
  TimeMs first_at_ = 0;               // the oldest pending bump's time; guarded by mu_
};

}  // namespace msp

#endif  // MSP_CORE_ACCESS_LOG_H_
