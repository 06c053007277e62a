// WritePlanner: every write of records the engine makes, planned into one
// atomic Store::Apply each — validation and the write policy
// (core/write_policy.h), the vectors, the twin search that merges a
// near-duplicate fact into the stored one, supersession, eviction past the
// per-user limit, and the audit events, which land in the same batch.
//
// Concurrent WriteMany calls in one process share a transaction and its
// fsync (group commit; leveldb's writer queue is the model): the first
// caller to find no commit under way leads; it plans every queued call in
// turn into one batch (so a call sees the facts of the calls before it, as
// records of one WriteMany do: a twin merges), plans evictions for the
// whole batch, and applies it once. If that batch fails, each call is
// planned and applied alone, so one call's conflict or refusal never fails
// another's.
//
// Consolidation (core/consolidator.h) plans its facts with the same steps
// (FactRecord, PlanFact, PlanMerge, ReplaceInBatch, CandidateTarget,
// PlanEvictions) under the context's write lock.
//
// Thread-safety: the MemoryLayer calls are safe from several threads; the
// planning steps require the context's write_mu held.
#ifndef MSP_CORE_WRITE_PLANNER_H_
#define MSP_CORE_WRITE_PLANNER_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/engine_context.h"

namespace msp {

class WritePlanner {
 public:
  // `ctx` must outlive this object.
  explicit WritePlanner(const EngineContext& ctx) : ctx_(ctx) {}

  // The MemoryLayer calls of the same names.
  Result<std::vector<WriteResult>> WriteMany(const std::vector<WriteRequest>& requests);
  Result<WriteResult> AddFact(const FactRequest& r);
  Result<WriteResult> SupersedeFact(const Namespace& scope, const std::string& old_id, const FactRequest& r);
  Result<std::vector<Memory>> Commit(const RecordBatch& b);
  Status Delete(const Namespace& scope, const std::string& id, const std::string& reason,
                const std::string& actor);

  // The record of a new fact, with its vector (episode ids become
  // provenance).
  Result<Memory> FactRecord(const FactRequest& r, TimeMs now);

  // Adds `m` (a new fact) to `batch`, or merges it into its twin (the most
  // similar active fact of its namespace and access level, in the store or
  // in `pending`, the facts this batch already changed). Returns the stored
  // id and whether it merged. REQUIRES: ctx.write_mu held.
  Result<std::pair<std::string, bool>> PlanFact(Memory m, const std::string& actor, TimeMs now,
                                                WriteBatch* batch, std::vector<Memory>* pending);

  // Merges fact `m` into the stored fact `t` (confidence, provenance, tags,
  // expiry) in `batch`, replacing an earlier put of `t` there. Returns t's id.
  std::string PlanMerge(Memory t, const Memory& m, const std::string& reason, const std::string& actor,
                        TimeMs now, WriteBatch* batch, std::vector<Memory>* pending);

  // Puts `r` into `batch` and `pending`, replacing an earlier put of its id.
  static void ReplaceInBatch(const Memory& r, WriteBatch* batch, std::vector<Memory>* pending);

  // The active fact `id` a consolidation candidate names as its merge or
  // supersede target, as this batch left it; nullopt when it is gone, not
  // an active fact, or outside `scope` (the candidate is then added).
  Result<std::optional<Memory>> CandidateTarget(const std::string& id, const Namespace& scope,
                                                const std::vector<Memory>& pending);

  // Adds evictions to `batch` for every user whose active facts would pass
  // max_items_per_user once `batch` lands; returns the evicted ids, and by
  // user in `by_user` when given. REQUIRES: ctx.write_mu held.
  Result<std::vector<std::string>> PlanEvictions(
      WriteBatch* batch, const std::string& actor, TimeMs now,
      std::map<std::pair<std::string, std::string>, std::vector<std::string>>* by_user = nullptr);

 private:
  struct WriteJob;

  Result<Memory> PrepareWrite(const WriteRequest& r, TimeMs now);
  Result<std::optional<Memory>> FindTwin(const Memory& m, const std::vector<Memory>& pending);
  Result<WriteResult> StoreFact(Memory m, const std::string& actor, TimeMs now);
  Result<std::vector<WriteResult>> PlanWrites(const std::vector<WriteRequest>& requests,
                                              std::vector<Memory> records, TimeMs now, WriteBatch* batch,
                                              std::vector<Memory>* pending);
  Result<std::vector<WriteResult>> WriteAlone(WriteJob& job);
  // A write with an idempotency key (core/idempotency.h): alone, not in a
  // group, its key claimed in its own batch.
  Result<WriteResult> WriteKeyed(const WriteRequest& r);
  void RunWriteGroup(const std::vector<WriteJob*>& group);

  static constexpr size_t kMaxGroupRecords = 1000;  // a group stops growing past this many

  const EngineContext& ctx_;
  std::mutex group_mu_;
  std::deque<WriteJob*> group_queue_;  // guarded by group_mu_
  bool group_leader_ = false;          // guarded by group_mu_
};

}  // namespace msp

#endif  // MSP_CORE_WRITE_PLANNER_H_
