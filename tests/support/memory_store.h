// MemoryStore: a Store (store/store.h) held in memory, for tests that want
// the Store's contracts without a database file. It passes the Store
// conformance suite (tests/conformance/memory_conformance_test.cc).
//
// Nothing is persisted: the records live as long as some handle on them.
// NewHandle() opens a second handle on the same records, as a second
// process opening the same database file would.
//
// Thread-safe: every method may be called from several threads, on one
// handle or on several handles of the same records.
#ifndef MSP_TESTS_SUPPORT_MEMORY_STORE_H_
#define MSP_TESTS_SUPPORT_MEMORY_STORE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "msp/status.h"
#include "msp/types.h"
#include "store/store.h"

namespace msp::testing {

class MemoryStore final : public Store {
 public:
  // A new, empty store.
  MemoryStore();
  ~MemoryStore() override;

  // Another handle on this store's records.
  std::unique_ptr<MemoryStore> NewHandle() const;

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
  std::string Describe() const override { return "memory"; }

 private:
  struct Tables;
  explicit MemoryStore(std::shared_ptr<Tables> tables);

  // The records List(query) returns, in its order, before limit and offset.
  // REQUIRES: tables_->mu held.
  std::vector<const Memory*> Select(const RecordQuery& query) const;

  std::shared_ptr<Tables> tables_;
};

}  // namespace msp::testing

#endif  // MSP_TESTS_SUPPORT_MEMORY_STORE_H_
