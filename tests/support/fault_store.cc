// FaultStore (see fault_store.h).
#include "tests/support/fault_store.h"

#include <utility>

namespace msp::testing {

Status DiskFull() {
  return Status::DiskFull("write to the store failed: No space left on device (ENOSPC); the disk is full");
}

Status FsyncFailed() { return Status::IoError("fsync of the store at commit failed: Input/output error (EIO)"); }

Status Unreachable() { return Status::Unavailable("the store's server closed the connection"); }

FaultStore::FaultStore(std::unique_ptr<Store> base) : base_(std::move(base)) {}

void FaultStore::Fail(StoreOp op, Status status, FaultPlan plan) {
  std::lock_guard<std::mutex> lock(mu_);
  OpState& s = ops_[static_cast<size_t>(op)];
  s.status = std::move(status);
  s.planned_at = s.calls;
  s.plan = plan;
}

void FaultStore::Heal(StoreOp op) {
  std::lock_guard<std::mutex> lock(mu_);
  ops_[static_cast<size_t>(op)].status.reset();
}

void FaultStore::HealAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (OpState& s : ops_) s.status.reset();
}

int64_t FaultStore::calls(StoreOp op) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_[static_cast<size_t>(op)].calls;
}

int64_t FaultStore::failures(StoreOp op) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_[static_cast<size_t>(op)].failures;
}

std::optional<Status> FaultStore::Next(StoreOp op) {
  std::lock_guard<std::mutex> lock(mu_);
  OpState& s = ops_[static_cast<size_t>(op)];
  const int64_t n = ++s.calls - s.planned_at;  // this call's number since Fail()
  if (!s.status) return std::nullopt;
  bool fail = false;
  switch (s.plan.repeat) {
    case FaultRepeat::kOnce: fail = n == s.plan.nth; break;
    case FaultRepeat::kFromThen: fail = n >= s.plan.nth; break;
    case FaultRepeat::kEveryNth: fail = n % s.plan.nth == 0; break;
  }
  if (!fail) return std::nullopt;
  ++s.failures;
  std::optional<Status> status = s.status;
  if (s.plan.repeat == FaultRepeat::kOnce) s.status.reset();
  return status;
}

Result<std::vector<int64_t>> FaultStore::Apply(const WriteBatch& batch) {
  if (std::optional<Status> fault = Next(StoreOp::kApply)) return *fault;
  return base_->Apply(batch);
}

Result<std::optional<Memory>> FaultStore::Get(const std::string& id) {
  if (std::optional<Status> fault = Next(StoreOp::kGet)) return *fault;
  return base_->Get(id);
}

Result<std::vector<Memory>> FaultStore::GetMany(const std::vector<std::string>& ids, bool with_embeddings) {
  if (std::optional<Status> fault = Next(StoreOp::kGetMany)) return *fault;
  return base_->GetMany(ids, with_embeddings);
}

Result<std::vector<Memory>> FaultStore::List(const RecordQuery& query) {
  if (std::optional<Status> fault = Next(StoreOp::kList)) return *fault;
  return base_->List(query);
}

Result<int64_t> FaultStore::Count(const RecordQuery& query) { return base_->Count(query); }

Status FaultStore::Scan(const std::function<bool(const Memory&)>& fn) { return base_->Scan(fn); }

Result<std::vector<Change>> FaultStore::ChangesSince(int64_t after, int limit) {
  if (std::optional<Status> fault = Next(StoreOp::kChangesSince)) return *fault;
  return base_->ChangesSince(after, limit);
}

Result<int64_t> FaultStore::LastSeq() {
  if (std::optional<Status> fault = Next(StoreOp::kLastSeq)) return *fault;
  return base_->LastSeq();
}

Status FaultStore::RecordAccess(const std::vector<std::string>& ids, TimeMs at) {
  if (std::optional<Status> fault = Next(StoreOp::kRecordAccess)) return *fault;
  return base_->RecordAccess(ids, at);
}

Result<std::vector<AuditEvent>> FaultStore::ListAudit(const AuditQuery& query) { return base_->ListAudit(query); }

Result<int64_t> FaultStore::CountAudit(const std::string& tenant) { return base_->CountAudit(tenant); }

Result<std::optional<std::string>> FaultStore::GetMeta(const std::string& key) { return base_->GetMeta(key); }

Result<std::optional<IdempotencyKey>> FaultStore::GetIdempotencyKey(const std::string& tenant, const std::string& key,
                                                                    TimeMs now) {
  return base_->GetIdempotencyKey(tenant, key, now);
}

Result<int64_t> FaultStore::WaitForChange(int64_t after, int timeout_ms) {
  return base_->WaitForChange(after, timeout_ms);
}

Result<std::unique_ptr<StoreLease>> FaultStore::TryLease(const std::string& name) { return base_->TryLease(name); }

std::string FaultStore::Describe() const { return "faults over " + base_->Describe(); }

}  // namespace msp::testing
