// EngineContext: what every part of the engine runs on — the options, the
// store, the embedder, the derived indexes, the clock, the access log and
// the write lock — and the few steps all the parts take: the actor of a
// call, an audit event, a batch applied after the access log is flushed, a
// record read as a scope sees it.
//
// The engine (core/engine.cc) owns everything the context refers to and
// outlives every part that holds one. The context itself holds no state.
#ifndef MSP_CORE_ENGINE_CONTEXT_H_
#define MSP_CORE_ENGINE_CONTEXT_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/access_log.h"
#include "core/index_sync.h"
#include "embed/embedder.h"
#include "index/index.h"
#include "msp/memory.h"
#include "store/store.h"

namespace msp {

// Whether the store's disk was full at the last write: set by a write that
// failed with DiskFull, cleared by the next one that succeeds. For health
// checks (MemoryLayer::CheckStore). Thread-safe.
class DiskFullNote {
 public:
  void After(const Status& write) {
    if (write.code() == StatusCode::kDiskFull) {
      std::lock_guard<std::mutex> lock(mu_);
      message_ = write.message();
    } else if (write.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      message_.clear();
    }
  }
  // The failed write's message, or "" when the last write did not fail so.
  std::string message() const {
    std::lock_guard<std::mutex> lock(mu_);
    return message_;
  }

 private:
  mutable std::mutex mu_;
  std::string message_;  // guarded by mu_
};

struct EngineContext {
  const Options& options;
  Store& store;
  Embedder& embedder;
  LexicalIndex& lexical;
  VectorIndex& vector;
  const Clock& clock;
  IndexSync& index_sync;
  AccessLog& access;
  // Serialises this process's read-modify-write sequences (dedup, step
  // numbers, eviction). Other processes are serialised by the store.
  std::mutex& write_mu;
  DiskFullNote& disk_full;

  // The caller's actor, else the configured one.
  std::string ActorOf(const std::string& actor) const { return actor.empty() ? options.actor : actor; }

  // Applies `batch` in one Store::Apply, after flushing the access log
  // (eviction reads the access counts), and notes a full disk. ApplyBatchSeqs
  // returns the seqs the store gave the puts.
  Status ApplyBatch(const WriteBatch& batch) const;
  Result<std::vector<int64_t>> ApplyBatchSeqs(const WriteBatch& batch) const;

  // Record `id` as `scope` sees it: NotFound when it is missing, outside
  // the scope, or (unless `allow_expired`) expired.
  Result<Memory> GetVisible(const Namespace& scope, const std::string& id, bool allow_expired) const;

  // Fills m's embedding and embedder_id from its text.
  Status Embed(Memory* m) const;

  // Audits a refusal and returns it. The refused text is not kept (it may
  // be the very thing that must not be stored); only its size is.
  Status RefuseAndAudit(const Status& refusal, const std::string& tenant, const std::string& actor,
                        TimeMs now, const std::string& text) const;
};

// An audit event with `details` as its JSON details.
AuditEvent MakeAudit(TimeMs now, const std::string& actor, AuditAction action, const std::string& record_id,
                     const std::string& tenant, std::string reason,
                     const nlohmann::json& details = nlohmann::json::object());

// A new record with a fresh id, created and updated at `now`.
Memory NewRecord(const Namespace& ns, Kind kind, Layer layer, const std::string& text, TimeMs now);

// True when `m` held at time `t` (RetrieveRequest::as_of): from valid_at
// (else created_at) until invalid_at (else, once superseded, until it was
// superseded; else still).
bool HeldAt(const Memory& m, TimeMs t);

}  // namespace msp

#endif  // MSP_CORE_ENGINE_CONTEXT_H_
