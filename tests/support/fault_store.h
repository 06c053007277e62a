// FaultStore: a Store decorator that passes every call to another Store
// and fails chosen calls on command, for tests of how the engine behaves
// when its store does (a full disk, a failed fsync, a lost server).
//
//   auto faults = std::make_unique<FaultStore>(std::move(sqlite));
//   FaultStore* control = faults.get();   // keep it; hand `faults` on
//   control->Fail(StoreOp::kApply, DiskFull());           // the next Apply
//   control->Fail(StoreOp::kGetMany, Unreachable(), {.nth = 2, .repeat = FaultRepeat::kFromThen});
//   ... control->Heal(StoreOp::kGetMany);
//
// A failing call does not reach the wrapped store, so a failed Apply writes
// nothing: it stands for a transaction that rolled back (ENOSPC while
// writing, an fsync that failed at commit). Count, Scan, the audit and meta
// reads, WaitForChange and TryLease always pass through.
//
// Thread-safe: calls may come from several threads; each call is counted
// once, in the order the calls take the decorator's lock, so "the 5th Apply"
// is the 5th to arrive.
#ifndef MSP_TESTS_SUPPORT_FAULT_STORE_H_
#define MSP_TESTS_SUPPORT_FAULT_STORE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "msp/status.h"
#include "msp/types.h"
#include "store/store.h"

namespace msp::testing {

// The calls a FaultStore can fail.
enum class StoreOp { kApply, kGetMany, kChangesSince, kLastSeq, kGet, kList, kRecordAccess };
inline constexpr size_t kStoreOpCount = 7;

// What happens after the first failing call.
enum class FaultRepeat {
  kOnce,       // only the nth call fails
  kFromThen,   // the nth call and every later one fail, until Heal()
  kEveryNth,   // the nth, 2nth, 3nth ... calls fail, until Heal()
};

struct FaultPlan {
  int64_t nth = 1;  // counted from the Fail() call: 1 is the next call. REQUIRES: >= 1
  FaultRepeat repeat = FaultRepeat::kOnce;
};

// Statuses a real store reports, for Fail().
Status DiskFull();       // DiskFull: "No space left on device" (ENOSPC), as SQLite's SQLITE_FULL
Status FsyncFailed();    // IoError: fsync reported EIO at commit
Status Unreachable();    // Unavailable: the database server went away

class FaultStore final : public Store {
 public:
  explicit FaultStore(std::unique_ptr<Store> base);

  // Makes calls of `op` fail with `status` as `plan` says, replacing any
  // fault planned for `op` before. REQUIRES: !status.ok(), plan.nth >= 1.
  void Fail(StoreOp op, Status status, FaultPlan plan = {});
  // No more failures of `op` (or of any call).
  void Heal(StoreOp op);
  void HealAll();

  // Calls of `op` since the store was made (failed ones included), and how
  // many of them failed.
  int64_t calls(StoreOp op) const;
  int64_t failures(StoreOp op) const;

  Store& base() { return *base_; }
  bool read_only() const override { return base_->read_only(); }

  Result<std::vector<int64_t>> Apply(const WriteBatch& batch) override;
  Result<std::optional<Memory>> Get(const std::string& id) override;
  Result<std::vector<Memory>> GetMany(const std::vector<std::string>& ids, bool with_embeddings) override;
  Result<std::vector<Memory>> List(const RecordQuery& query) override;
  Result<int64_t> Count(const RecordQuery& query) override;
  Status Scan(const std::function<bool(const Memory&)>& fn) override;
  Result<std::vector<Change>> ChangesSince(int64_t after, int limit) override;
  Result<int64_t> LastSeq() override;
  Status RecordAccess(const std::vector<std::string>& ids, TimeMs at) override;
  Result<std::vector<AuditEvent>> ListAudit(const AuditQuery& query) override;
  Result<int64_t> CountAudit(const std::string& tenant) override;
  Result<std::optional<std::string>> GetMeta(const std::string& key) override;
  Result<std::optional<IdempotencyKey>> GetIdempotencyKey(const std::string& tenant, const std::string& key,
                                                          TimeMs now) override;
  Result<int64_t> WaitForChange(int64_t after, int timeout_ms) override;
  Result<std::unique_ptr<StoreLease>> TryLease(const std::string& name) override;
  std::string Describe() const override;

 private:
  struct OpState {
    int64_t calls = 0;
    int64_t failures = 0;
    // The planned fault: calls numbered from planned_at + 1.
    std::optional<Status> status;
    int64_t planned_at = 0;
    FaultPlan plan;
  };

  // Counts a call of `op`; the status it fails with, if it does.
  std::optional<Status> Next(StoreOp op);

  std::unique_ptr<Store> base_;
  mutable std::mutex mu_;
  std::array<OpState, kStoreOpCount> ops_;
};

}  // namespace msp::testing

#endif  // MSP_TESTS_SUPPORT_FAULT_STORE_H_
