// Store: the source of truth for records, the change sequence, the audit log
// and small metadata. Backends (sqlite/, later postgres/) implement it and
// pass one conformance suite (tests/conformance/).
//
// Every Apply() is atomic: all of a batch lands or none of it. Every put and
// delete in a batch gets the next change-sequence number; derived indexes
// catch up from ChangesSince(). Access statistics (RecordAccess) are
// bookkeeping and do not enter the change sequence.
//
// Thread-safety: an implementation is safe to call from several threads, and
// several processes may open the same store.
#ifndef MSP_STORE_STORE_H_
#define MSP_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

enum class ChangeOp { kPut, kDelete };

struct Change {
  int64_t seq = 0;
  std::string record_id;
  ChangeOp op = ChangeOp::kPut;
  // The tenant of the record the change was made to (of the deleted record
  // for a delete), so that a reader can tell one tenant's changes from
  // another's once the record is gone. Empty for changes written before the
  // change log kept it (SQLite schema 4, PostgreSQL schema 2): unknown.
  std::string tenant;
  // A put that gives neither index anything to do: the record has no text
  // and no vector, and had none before the batch (or did not exist) — a
  // retrieval log, for instance. Replaying the change log may skip it
  // (IndexSync). False for every delete, and for changes written before the
  // change log kept it (SQLite schema 6, PostgreSQL schema 4).
  bool neutral = false;
};

// A put is neutral (Change::neutral) when this holds for the record it
// writes and for the version it replaces, if any.
inline bool HoldsNothingToIndex(const Memory& m) { return m.text.empty() && m.embedding.empty(); }

// A write's idempotency key as stored (Store::GetIdempotencyKey): what the
// request was and what it was answered, kept until expires_at.
struct IdempotencyKey {
  std::string tenant;
  std::string key;           // the caller's request id
  std::string request_hash;  // identifies the request's content
  std::string reply;         // the first answer, JSON text
  TimeMs created_at = 0;
  TimeMs expires_at = 0;
};

// One atomic unit of writes.
struct WriteBatch {
  std::vector<Memory> puts;              // insert, or replace the whole record by id
  std::vector<std::string> deletes;      // ids; deleting a missing id is an error
  std::vector<AuditEvent> audit;         // appended in the same transaction
  std::vector<std::pair<std::string, std::string>> meta;  // key/value upserts
  // Compare-and-swap conditions checked first, in the same transaction:
  // (id, seq) holds when the record's current seq equals seq, or, for seq 0,
  // when no record has that id. One that fails makes Apply() return
  // kConflict naming the record and its current seq; nothing is written.
  std::vector<std::pair<std::string, int64_t>> expect_seq;
  // Claimed in the same transaction: keys that expired by its created_at are
  // pruned first; then, if (tenant, key) is still held, Apply() returns
  // kAlreadyExists naming the key and nothing is written.
  std::optional<IdempotencyKey> idempotency;
  bool empty() const {
    return puts.empty() && deletes.empty() && audit.empty() && meta.empty() && expect_seq.empty() &&
           !idempotency;
  }
};

// Which records List/Count return. Scope follows Namespace::Contains.
struct RecordQuery {
  Namespace scope;
  std::vector<Kind> kinds;               // empty: any
  std::vector<Layer> layers;             // empty: any
  std::vector<std::string> sources;      // empty: any; else Memory::source one of these
  std::string session;                   // non-empty: only ns.session == session
  int64_t min_step = 0;                  // with session: step_number >= min_step
  std::optional<RecordState> state;      // nullopt: any
  TimeMs created_from = 0;               // inclusive; 0 unbounded
  TimeMs created_to = 0;                 // exclusive; 0 unbounded
  TimeMs not_expired_at = 0;             // > 0: exclude records with 0 < expires_at <= this
  std::optional<int> max_access_level;   // set: only records with access_level <= this
  enum class Order { kCreatedAsc, kCreatedDesc, kStepAsc, kStepDesc } order = Order::kCreatedAsc;
  int limit = 0;                         // 0: no limit
  int offset = 0;
  bool with_embeddings = true;
};

struct AuditQuery {
  std::string tenant;                    // required
  std::string record_id;                 // empty: any
  int limit = 100;
};

// A claim on a piece of background work, shared by every process using the
// store (Store::TryLease). Released when destroyed.
class StoreLease {
 public:
  virtual ~StoreLease() = default;
  // False once the claim may have been lost (on PostgreSQL: its database
  // session ended); check before long work.
  virtual bool held() = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Applies `batch` atomically. Puts of records whose id exists replace them.
  // Episodes are unique by (namespace, step_number > 0): a put that would
  // give a session a second record with the same step fails the batch with
  // AlreadyExists.
  // On success each put's Memory::seq is the number its change got (returned
  // in order, puts then deletes).
  virtual Result<std::vector<int64_t>> Apply(const WriteBatch& batch) = 0;

  virtual Result<std::optional<Memory>> Get(const std::string& id) = 0;
  // Records that exist among `ids`, in the order of `ids`; missing ones skipped.
  virtual Result<std::vector<Memory>> GetMany(const std::vector<std::string>& ids,
                                              bool with_embeddings = true) = 0;
  virtual Result<std::vector<Memory>> List(const RecordQuery& query) = 0;
  // How many records List(query) returns (limit and offset honoured).
  virtual Result<int64_t> Count(const RecordQuery& query) = 0;
  // Calls `fn` for every record (in id order) until it returns false; for
  // rebuilding indexes without loading everything at once.
  virtual Status Scan(const std::function<bool(const Memory&)>& fn) = 0;

  // Changes with seq > after, ascending, at most `limit` (0: all).
  virtual Result<std::vector<Change>> ChangesSince(int64_t after, int limit) = 0;
  virtual Result<int64_t> LastSeq() = 0;

  // Bumps access_count by one and sets last_accessed = at, for each id (an
  // id given twice counts twice). Bookkeeping: committed without an fsync,
  // so a machine crash (not a process crash) may lose the last bumps.
  virtual Status RecordAccess(const std::vector<std::string>& ids, TimeMs at) = 0;

  // Lets the store keep up to `bytes` of its pages in this process's memory
  // (SQLite's page cache of its connection, 2 MB unless raised). A
  // long-lived process raises it: a search reads its records' pages, and a
  // page already in memory costs no read. Filled as pages are read, not at
  // once. A no-op where the store keeps no cache of its own.
  virtual void SetCacheBytes(size_t /*bytes*/) {}
  // For a long-lived process, once, after SetCacheBytes: fills that cache
  // now with the pages reads by id walk (the id index first, then the
  // records), so that the pages a search reads later replace others
  // rather than each taking new memory (a page fault, ~10 µs on a virtual
  // machine: most of a server's faults on new questions). Lets other
  // calls in between its steps. Returns the bytes the cache holds after
  // (0 where the store keeps no cache of its own). Best effort.
  virtual size_t FillCache() { return 0; }

  // Newest first, at most query.limit events.
  virtual Result<std::vector<AuditEvent>> ListAudit(const AuditQuery& query) = 0;
  virtual Result<int64_t> CountAudit(const std::string& tenant) = 0;

  virtual Result<std::optional<std::string>> GetMeta(const std::string& key) = 0;

  // The idempotency key (tenant, key) unless absent or expired at `now`.
  virtual Result<std::optional<IdempotencyKey>> GetIdempotencyKey(const std::string& tenant, const std::string& key,
                                                                  TimeMs now) = 0;

  // Waits until a change with seq > `after` may have committed (through any
  // process) or `timeout_ms` passes, then returns the last seq known. For
  // followers that keep derived indexes warm; a query must still catch up
  // from LastSeq() itself. The default polls LastSeq(); PostgreSQL is woken
  // by NOTIFY.
  virtual Result<int64_t> WaitForChange(int64_t after, int timeout_ms);

  // Claims background work `name` (consolidating one session, a refresh) so
  // that processes sharing the store do it once: nullptr while another
  // holder has it. The default grants every claim: a store only one machine
  // uses needs no more than the callers' own locks.
  virtual Result<std::unique_ptr<StoreLease>> TryLease(const std::string& name);

  // Where the store lives, for messages ("/data/.msp/msp.db").
  virtual std::string Describe() const = 0;

  // True when the store was opened read-only because this process may not
  // write it (a read-only mount, a data directory or file the user may only
  // read): reads work, and Apply and RecordAccess answer ReadOnly.
  virtual bool read_only() const { return false; }
};

// Opens (creating if needed, migrating forward) the store named by
// options.backend under options.data_dir. A SQLite store this process may
// not write is opened read-only (Store::read_only), if its schema is current.
Result<std::unique_ptr<Store>> OpenStore(const StoreOptions& options);

}  // namespace msp

#endif  // MSP_STORE_STORE_H_
