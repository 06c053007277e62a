// PostgresStore: the Store interface over a pool of libpq connections.
#include "store/postgres/postgres_store.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_migrations.h"
#include "store/postgres/pg_options.h"
#include "store/postgres/pg_pool.h"
#include "store/postgres/pg_rows.h"
#include "store/record_row.h"
#include "util/time.h"

namespace msp {
namespace {

using namespace record_row;  // NOLINT: the row's columns name every statement here

// Rows per multi-row INSERT of records (32 parameters each; PostgreSQL
// allows 65535 parameters per statement).
constexpr int kPutChunk = 500;
constexpr int kScanPage = 256;
// Attempts for a call that lost its connection, or a transaction that hit a
// deadlock or serialization failure.
constexpr int kLostConnectionAttempts = 3;
constexpr int kConflictAttempts = 6;

bool IsRetryableConflict(const std::string& sqlstate) {
  return sqlstate == kPgSerializationFailure || sqlstate == kPgDeadlockDetected;
}

class PgLeaseImpl final : public StoreLease {
 public:
  PgLeaseImpl(std::unique_ptr<PgConnection> conn, int32_t key) : conn_(std::move(conn)), key_(key) {}
  ~PgLeaseImpl() override {
    if (!conn_->broken()) {
      (void)conn_->Exec("SELECT pg_advisory_unlock($1, $2)",
                        PgParams().Int(kPgLockLease).Int(key_), "release a lease", false);
    }
  }
  // A session advisory lock lasts as long as its session: the lease is held
  // while the connection answers.
  bool held() override { return conn_->Script("SELECT 1", "check a lease").ok(); }

 private:
  std::unique_ptr<PgConnection> conn_;
  int32_t key_;
};

class PostgresStoreImpl final : public PostgresStore {
 public:
  PostgresStoreImpl(PgConnectOptions options, int pool_size, int acquire_timeout_ms)
      : where_(options.describe),
        channel_(ChangeChannel(options.schema)),
        pool_(std::move(options), pool_size, acquire_timeout_ms) {}

  Result<std::vector<int64_t>> Apply(const WriteBatch& batch) override;
  Result<std::optional<Memory>> Get(const std::string& id) override;
  Result<std::vector<Memory>> GetMany(const std::vector<std::string>& ids,
                                      bool with_embeddings) override;
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
  std::string Describe() const override { return where_; }

  Result<int64_t> WaitForChange(int64_t after, int timeout_ms) override;
  Result<std::unique_ptr<StoreLease>> TryLease(const std::string& name) override;
  Status Ping() override;

  // Migrates the schema on one pooled connection.
  Status Migrate();

 private:
  // Runs `fn` (statements outside a transaction, safe to repeat) on a pooled
  // connection; again on a fresh one if the connection was lost.
  Status Run(std::string_view op, const std::function<Status(PgConnection&)>& fn);
  // Runs `fn` between BEGIN and COMMIT; again when the connection was lost
  // before COMMIT, or on a deadlock or serialization failure. A connection
  // lost during COMMIT leaves the outcome unknown: kUnavailable says so.
  Status Transact(std::string_view op, const std::function<Status(PgConnection&)>& fn);
  Status ApplyIn(PgConnection& c, const WriteBatch& batch, const std::vector<EncodedPut>& encoded,
                 const std::vector<std::pair<std::string, std::string>>& meta,
                 std::vector<int64_t>* seqs);

  const std::string where_;
  const std::string channel_;
  PgPool pool_;
  std::mutex listen_mu_;  // the listening connection (WaitForChange)
  std::unique_ptr<PgConnection> listener_;
  int64_t known_last_ = 0;  // the last seq the listener has heard of
};

Status PostgresStoreImpl::Run(std::string_view op,
                              const std::function<Status(PgConnection&)>& fn) {
  Status status;
  for (int attempt = 1; attempt <= kLostConnectionAttempts; ++attempt) {
    MSP_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire(op));
    status = fn(*conn);
    if (status.ok() || !conn->broken()) return status;
  }
  return status;
}

Status PostgresStoreImpl::Transact(std::string_view op,
                                   const std::function<Status(PgConnection&)>& fn) {
  Status status;
  int lost = 0;
  int conflicts = 0;
  while (true) {
    MSP_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire(op));
    status = conn->Script("BEGIN", op);
    if (status.ok()) {
      status = fn(*conn);
      if (status.ok()) {
        status = conn->Script("COMMIT", std::string(op) + " (commit)");
        if (!status.ok() && conn->broken()) {
          return Status::Unavailable(status.message() +
                                     "; the connection was lost while committing, so whether "
                                     "the write landed is unknown: read before retrying");
        }
        if (status.ok()) return status;
      }
    }
    const std::string sqlstate = conn->last_sqlstate();
    if (!conn->broken()) {
      (void)conn->Script("ROLLBACK", std::string(op) + " (roll back)");
    }
    if (conn->broken()) {
      if (++lost >= kLostConnectionAttempts) return status;
    } else if (IsRetryableConflict(sqlstate)) {
      if (++conflicts >= kConflictAttempts) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(1 << conflicts));
    } else {
      return status;
    }
  }
}

Result<std::vector<int64_t>> PostgresStoreImpl::Apply(const WriteBatch& batch) {
  std::vector<int64_t> seqs;
  if (batch.empty()) return seqs;

  // Validate and encode before the transaction.
  std::vector<EncodedPut> encoded;
  encoded.reserve(batch.puts.size());
  for (const Memory& m : batch.puts) {
    MSP_RETURN_IF_ERROR(ValidatePgPut(m));
    MSP_ASSIGN_OR_RETURN(EncodedPut enc, EncodePut(m));
    encoded.push_back(std::move(enc));
  }
  std::set<std::string> deleted;
  for (const std::string& id : batch.deletes) {
    if (id.empty()) return Status::InvalidArgument("delete: an id in the batch is empty");
    if (HasNul(id)) return Status::InvalidArgument("delete: an id holds a NUL byte");
    // The second delete of an id in one batch finds nothing, as on SQLite.
    if (!deleted.insert(id).second) {
      return Status::NotFound("delete: no record with id " + id + " in " + where_ +
                              " (it is deleted twice in the batch); nothing in the batch was "
                              "applied");
    }
  }
  for (const AuditEvent& e : batch.audit) {
    for (const std::string* s : {&e.actor, &e.record_id, &e.tenant, &e.reason, &e.details_json}) {
      if (HasNul(*s)) return Status::InvalidArgument("audit: an event holds a NUL byte");
    }
  }
  // Upserts of one key in one batch: the last value wins.
  std::vector<std::pair<std::string, std::string>> meta;
  {
    std::map<std::string, size_t> at;
    for (const auto& [key, value] : batch.meta) {
      if (key.empty()) return Status::InvalidArgument("meta: a key in the batch is empty");
      if (HasNul(key) || HasNul(value)) {
        return Status::InvalidArgument("meta: key " + key + " holds a NUL byte");
      }
      auto [it, inserted] = at.emplace(key, meta.size());
      if (inserted) {
        meta.emplace_back(key, value);
      } else {
        meta[it->second].second = value;
      }
    }
  }
  for (const auto& [id, expected] : batch.expect_seq) {
    if (HasNul(id)) return Status::InvalidArgument("expect: an id holds a NUL byte");
  }
  if (batch.idempotency) {
    const IdempotencyKey& k = *batch.idempotency;
    for (const std::string* s : {&k.tenant, &k.key, &k.request_hash, &k.reply}) {
      if (HasNul(*s)) return Status::InvalidArgument("idempotency key: a field holds a NUL byte");
    }
  }

  MSP_RETURN_IF_ERROR(Transact("apply", [&](PgConnection& c) {
    seqs.clear();
    return ApplyIn(c, batch, encoded, meta, &seqs);
  }));
  return seqs;
}

Status PostgresStoreImpl::ApplyIn(PgConnection& c, const WriteBatch& batch,
                                  const std::vector<EncodedPut>& encoded,
                                  const std::vector<std::pair<std::string, std::string>>& meta,
                                  std::vector<int64_t>* seqs) {
  const int64_t changes = static_cast<int64_t>(batch.puts.size() + batch.deletes.size());
  const int64_t at = WallClockMs();
  int64_t base = 0;
  if (changes > 0 || !batch.expect_seq.empty()) {
    // Takes the change counter's row lock until commit: writers queue here.
    MSP_ASSIGN_OR_RETURN(
        PgResult counter,
        changes > 0
            ? c.Exec("UPDATE change_counter SET last_seq = last_seq + $1 "
                     "RETURNING last_seq, pg_notify($2, last_seq::text)",
                     PgParams().Int(changes).Text(channel_), "apply (change counter)")
            : c.Exec("SELECT last_seq FROM change_counter FOR UPDATE", PgParams(),
                     "apply (change counter)"));
    if (counter.rows() != 1) {
      return Status::Corruption("postgres: change_counter in " + where_ + " has " +
                                std::to_string(counter.rows()) + " rows, not 1");
    }
    base = counter.Int(0, 0) - changes;
  }

  if (!batch.expect_seq.empty()) {
    std::vector<std::string> ids;
    for (const auto& e : batch.expect_seq) ids.push_back(e.first);
    MSP_ASSIGN_OR_RETURN(PgResult current,
                         c.Exec("SELECT id, seq FROM records WHERE id = ANY($1::text[])",
                                PgParams().Text(PgTextArray(ids)), "apply (expect)"));
    std::unordered_map<std::string, int64_t> seq_of;
    for (int i = 0; i < current.rows(); ++i) {
      seq_of.emplace(std::string(current.Text(i, 0)), current.Int(i, 1));
    }
    for (const auto& [id, expected] : batch.expect_seq) {
      auto it = seq_of.find(id);
      const bool row = it != seq_of.end();
      const int64_t actual = row ? it->second : 0;
      if (actual != expected) {
        return Status::Conflict(
            "record " + id + (row ? " is at seq " + std::to_string(actual) : " does not exist") +
            (expected == 0 ? ", expected it not to exist"
                           : ", expected seq " + std::to_string(expected)) +
            "; it was changed concurrently: read it again and retry");
      }
    }
  }

  // Neutral puts (Change::neutral): those holding nothing to index whose
  // row before the batch, if any, held nothing either.
  std::set<std::string, std::less<>> indexed_before;
  {
    std::vector<std::string> ids;
    for (const Memory& m : batch.puts) {
      if (HoldsNothingToIndex(m)) ids.push_back(m.id);
    }
    if (!ids.empty()) {
      MSP_ASSIGN_OR_RETURN(
          PgResult held,
          c.Exec("SELECT id FROM records WHERE id = ANY($1::text[]) AND (\"text\" <> '' OR "
                 "(embedding IS NOT NULL AND length(embedding) > 0))",
                 PgParams().Text(PgTextArray(ids)), "apply (neutral puts)"));
      for (int i = 0; i < held.rows(); ++i) indexed_before.emplace(held.Text(i, 0));
    }
  }

  // Puts, in chunks; a chunk never holds one id twice (ON CONFLICT may not
  // touch a row twice in one statement), so a later put of an id replaces
  // the earlier one, in order.
  for (size_t begin = 0; begin < batch.puts.size();) {
    std::set<std::string_view> ids;
    size_t end = begin;
    while (end < batch.puts.size() && end - begin < static_cast<size_t>(kPutChunk) &&
           ids.insert(batch.puts[end].id).second) {
      ++end;
    }
    PgParams params;
    for (size_t i = begin; i < end; ++i) {
      PgBindRecord(params, batch.puts[i], encoded[i], base + 1 + static_cast<int64_t>(i));
    }
    const int rows = static_cast<int>(end - begin);
    auto done = c.Exec(PgUpsertSql(rows), params, "apply (put)", rows <= 4 || rows == kPutChunk);
    if (!done.ok()) {
      if (done.status().code() == StatusCode::kAlreadyExists) {
        return Status::AlreadyExists(
            "put: a session already has an episode with that step number (" +
            done.status().message() + "); nothing in the batch was applied");
      }
      return done.status();
    }
    begin = end;
  }

  std::map<std::string, std::string, std::less<>> deleted_tenant;  // id -> its tenant
  if (!batch.deletes.empty()) {
    MSP_ASSIGN_OR_RETURN(
        PgResult gone, c.Exec("DELETE FROM records WHERE id = ANY($1::text[]) RETURNING id, tenant",
                              PgParams().Text(PgTextArray(batch.deletes)), "apply (delete)"));
    for (int i = 0; i < gone.rows(); ++i) {
      deleted_tenant.emplace(std::string(gone.Text(i, 0)), std::string(gone.Text(i, 1)));
    }
    for (const std::string& id : batch.deletes) {
      if (!deleted_tenant.count(id)) {
        return Status::NotFound("delete: no record with id " + id + " in " + where_ +
                                "; nothing in the batch was applied");
      }
    }
  }

  if (changes > 0) {
    std::vector<std::string> ids;
    std::vector<std::string> ops;
    std::vector<std::string> tenants;
    std::vector<std::string> neutral;  // "t" or "f", as a text array
    ids.reserve(static_cast<size_t>(changes));
    ops.reserve(static_cast<size_t>(changes));
    tenants.reserve(static_cast<size_t>(changes));
    neutral.reserve(static_cast<size_t>(changes));
    for (const Memory& m : batch.puts) {
      ids.push_back(m.id);
      ops.emplace_back("put");
      tenants.push_back(m.ns.tenant);
      neutral.emplace_back(HoldsNothingToIndex(m) && !indexed_before.count(m.id) ? "t" : "f");
    }
    for (const std::string& id : batch.deletes) {
      ids.push_back(id);
      ops.emplace_back("delete");
      tenants.push_back(deleted_tenant.find(id)->second);
      neutral.emplace_back("f");
    }
    MSP_RETURN_IF_ERROR(
        c.Exec("INSERT INTO changes (seq, record_id, op, at, tenant, neutral) "
               "SELECT $1::bigint + u.i, u.id, u.op, $2::bigint, u.tenant, u.neutral::boolean "
               "FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY "
               "AS u(id, op, tenant, neutral, i)",
               PgParams().Int(base).Int(at).Text(PgTextArray(ids)).Text(PgTextArray(ops)).Text(
                   PgTextArray(tenants)).Text(PgTextArray(neutral)),
               "apply (changes)")
            .status());
    for (int64_t i = 1; i <= changes; ++i) seqs->push_back(base + i);
  }

  if (!batch.audit.empty()) {
    std::vector<int64_t> ats;
    std::vector<std::string> actors, actions, record_ids, tenants, reasons, details;
    for (const AuditEvent& e : batch.audit) {
      ats.push_back(e.at);
      actors.push_back(e.actor);
      actions.emplace_back(AuditActionName(e.action));
      record_ids.push_back(e.record_id);
      tenants.push_back(e.tenant);
      reasons.push_back(e.reason);
      details.push_back(e.details_json);
    }
    MSP_RETURN_IF_ERROR(
        c.Exec("INSERT INTO audit (at, actor, action, record_id, tenant, reason, details_json) "
               "SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], "
               "$5::text[], $6::text[], $7::text[])",
               PgParams()
                   .Text(PgIntArray(ats))
                   .Text(PgTextArray(actors))
                   .Text(PgTextArray(actions))
                   .Text(PgTextArray(record_ids))
                   .Text(PgTextArray(tenants))
                   .Text(PgTextArray(reasons))
                   .Text(PgTextArray(details)),
               "apply (audit)")
            .status());
  }

  if (batch.idempotency) {
    // Expired keys go first, so that one may be used again; a key still held
    // (committed, or in a concurrent transaction that commits) inserts nothing.
    const IdempotencyKey& k = *batch.idempotency;
    MSP_RETURN_IF_ERROR(c.Exec("DELETE FROM idempotency_keys WHERE expires_at <= $1", PgParams().Int(k.created_at),
                               "apply (prune idempotency keys)")
                            .status());
    MSP_ASSIGN_OR_RETURN(
        PgResult claimed,
        c.Exec("INSERT INTO idempotency_keys (tenant, key, request_hash, reply, created_at, expires_at) "
               "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, key) DO NOTHING RETURNING 1",
               PgParams().Text(k.tenant).Text(k.key).Text(k.request_hash).Text(k.reply).Int(k.created_at).Int(
                   k.expires_at),
               "apply (idempotency key)"));
    if (claimed.rows() == 0) {
      return Status::AlreadyExists("idempotency key '" + k.key + "' of tenant '" + k.tenant +
                                   "' is already used; nothing in the batch was applied");
    }
  }

  if (!meta.empty()) {
    std::vector<std::string> keys, values;
    for (const auto& [key, value] : meta) {
      keys.push_back(key);
      values.push_back(value);
    }
    MSP_RETURN_IF_ERROR(c.Exec("INSERT INTO meta (key, value) "
                               "SELECT * FROM unnest($1::text[], $2::text[]) "
                               "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                               PgParams().Text(PgTextArray(keys)).Text(PgTextArray(values)),
                               "apply (meta)")
                            .status());
  }
  return Status::Ok();
}

Result<std::optional<Memory>> PostgresStoreImpl::Get(const std::string& id) {
  std::optional<Memory> out;
  const Status run_status = Run("get", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec(PgSelectRecords(true) + " WHERE id = $1",
                                             PgParams().Text(id), "get"));
    out.reset();
    if (r.rows() == 0) return Status::Ok();
    Memory m;
    MSP_RETURN_IF_ERROR(PgReadRecord(r, 0, where_, &m));
    out = std::move(m);
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return out;
}

Result<std::vector<Memory>> PostgresStoreImpl::GetMany(const std::vector<std::string>& ids,
                                                       bool with_embeddings) {
  std::vector<Memory> out;
  if (ids.empty()) return out;
  // One statement: every record comes from the same snapshot.
  std::vector<Memory> found;
  const Status run_status = Run("get many", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(
        PgResult r, c.Exec(PgSelectRecords(with_embeddings) + " WHERE id = ANY($1::text[])",
                           PgParams().Text(PgTextArray(ids)), "get many"));
    MSP_ASSIGN_OR_RETURN(found, PgReadRecords(r, where_));
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < found.size(); ++i) index.emplace(found[i].id, i);
  out.reserve(found.size());
  for (const std::string& id : ids) {
    auto it = index.find(id);
    if (it != index.end()) out.push_back(found[it->second]);
  }
  return out;
}

Result<std::vector<Memory>> PostgresStoreImpl::List(const RecordQuery& query) {
  MSP_RETURN_IF_ERROR(ValidateQuery(query, "list"));
  PgFilter filter = BuildPgFilter(query);
  const std::string limit = filter.Next();
  PgAddLimit(filter.params, query.limit);
  const std::string offset = filter.Next();
  filter.params.Int(query.offset);
  const std::string sql = PgSelectRecords(query.with_embeddings) + filter.sql +
                          std::string(OrderBy(query.order)) + " LIMIT " + limit + " OFFSET " +
                          offset;
  std::vector<Memory> out;
  const Status run_status = Run("list", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec(sql, filter.params, "list"));
    MSP_ASSIGN_OR_RETURN(out, PgReadRecords(r, where_));
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return out;
}

Result<int64_t> PostgresStoreImpl::Count(const RecordQuery& query) {
  MSP_RETURN_IF_ERROR(ValidateQuery(query, "count"));
  PgFilter filter = BuildPgFilter(query);
  std::string sql;
  if (query.limit == 0 && query.offset == 0) {
    sql = "SELECT count(*) FROM records" + filter.sql;
  } else {
    const std::string limit = filter.Next();
    PgAddLimit(filter.params, query.limit);
    const std::string offset = filter.Next();
    filter.params.Int(query.offset);
    sql = "SELECT count(*) FROM (SELECT 1 FROM records" + filter.sql + " LIMIT " + limit +
          " OFFSET " + offset + ") AS page";
  }
  int64_t n = 0;
  const Status run_status = Run("count", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec(sql, filter.params, "count"));
    if (r.rows() != 1) return Status::Internal("postgres: count on " + where_ + " returned no row");
    n = r.Int(0, 0);
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return n;
}

Status PostgresStoreImpl::Scan(const std::function<bool(const Memory&)>& fn) {
  const std::string sql = PgSelectRecords(true) + " WHERE id > $1 ORDER BY id LIMIT " +
                          std::to_string(kScanPage);
  std::string after;
  while (true) {
    // Load one page, then call `fn` with no connection held, so `fn` may
    // use the store.
    std::vector<Memory> page;
    const Status run_status = Run("scan", [&](PgConnection& c) -> Status {
      MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec(sql, PgParams().Text(after), "scan"));
      MSP_ASSIGN_OR_RETURN(page, PgReadRecords(r, where_));
      return Status::Ok();
    });
    MSP_RETURN_IF_ERROR(run_status);
    for (const Memory& m : page) {
      if (!fn(m)) return Status::Ok();
    }
    if (page.size() < static_cast<size_t>(kScanPage)) return Status::Ok();
    after = page.back().id;
  }
}

Result<std::vector<Change>> PostgresStoreImpl::ChangesSince(int64_t after, int limit) {
  if (limit < 0) {
    return Status::InvalidArgument("changes since: limit must be >= 0 (got " +
                                   std::to_string(limit) + ")");
  }
  std::vector<Change> out;
  PgParams params;
  params.Int(after);
  PgAddLimit(params, limit);
  const Status run_status = Run("changes since", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("SELECT seq, record_id, op, tenant, neutral FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2",
               params, "changes since"));
    out.clear();
    out.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
      Change ch;
      ch.seq = r.Int(i, 0);
      ch.record_id = std::string(r.Text(i, 1));
      ch.tenant = std::string(r.Text(i, 3));
      ch.neutral = r.Text(i, 4) == "t";
      const std::string_view op = r.Text(i, 2);
      if (op == "put") {
        ch.op = ChangeOp::kPut;
      } else if (op == "delete") {
        ch.op = ChangeOp::kDelete;
      } else {
        return Status::Corruption("postgres: change " + std::to_string(ch.seq) + " in " + where_ +
                                  " has an unknown op '" + std::string(op) + "'");
      }
      out.push_back(std::move(ch));
    }
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return out;
}

Result<int64_t> PostgresStoreImpl::LastSeq() {
  int64_t last = 0;
  const Status run_status = Run("last seq", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT last_seq FROM change_counter", PgParams(),
                                            "last seq"));
    if (r.rows() != 1) {
      return Status::Corruption("postgres: change_counter in " + where_ + " has " +
                                std::to_string(r.rows()) + " rows, not 1");
    }
    last = r.Int(0, 0);
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return last;
}

Status PostgresStoreImpl::RecordAccess(const std::vector<std::string>& ids, TimeMs at) {
  if (ids.empty()) return Status::Ok();
  for (const std::string& id : ids) {
    if (HasNul(id)) return Status::InvalidArgument("record access: an id holds a NUL byte");
  }
  // Sorted, so concurrent callers lock rows in one order; an id given twice
  // counts twice, as on SQLite.
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  const std::string array = PgTextArray(sorted);
  // Bookkeeping: committed without waiting for the WAL flush.
  return Transact("record access", [&](PgConnection& c) {
    MSP_RETURN_IF_ERROR(c.Exec("SET LOCAL synchronous_commit TO OFF", PgParams(), "record access").status());
    return c.Exec("UPDATE records AS r SET access_count = r.access_count + u.n, "
                  "last_accessed = $1 FROM (SELECT id, count(*) AS n FROM unnest($2::text[]) "
                  "AS id GROUP BY id) AS u WHERE r.id = u.id",
                  PgParams().Int(at).Text(array), "record access")
        .status();
  });
}

Result<std::vector<AuditEvent>> PostgresStoreImpl::ListAudit(const AuditQuery& query) {
  if (query.tenant.empty()) return Status::InvalidArgument("list audit: tenant is required");
  if (query.limit < 0) {
    return Status::InvalidArgument("list audit: limit must be >= 0 (got " +
                                   std::to_string(query.limit) + ")");
  }
  std::string sql =
      "SELECT seq, at, actor, action, record_id, tenant, reason, details_json FROM audit "
      "WHERE tenant = $1";
  PgParams params;
  params.Text(query.tenant);
  if (!query.record_id.empty()) {
    sql += " AND record_id = $2 ORDER BY seq DESC LIMIT $3";
    params.Text(query.record_id);
  } else {
    sql += " ORDER BY seq DESC LIMIT $2";
  }
  PgAddLimit(params, query.limit);
  std::vector<AuditEvent> out;
  const Status run_status = Run("list audit", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec(sql, params, "list audit"));
    out.clear();
    for (int i = 0; i < r.rows(); ++i) {
      AuditEvent e;
      e.seq = r.Int(i, 0);
      e.at = r.Int(i, 1);
      e.actor = std::string(r.Text(i, 2));
      const std::string_view action = r.Text(i, 3);
      std::optional<AuditAction> parsed = ParseAuditAction(action);
      if (!parsed) {
        return Status::Corruption("postgres: audit event " + std::to_string(e.seq) + " in " +
                                  where_ + " has an unknown action '" + std::string(action) + "'");
      }
      e.action = *parsed;
      e.record_id = std::string(r.Text(i, 4));
      e.tenant = std::string(r.Text(i, 5));
      e.reason = std::string(r.Text(i, 6));
      e.details_json = std::string(r.Text(i, 7));
      out.push_back(std::move(e));
    }
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return out;
}

Result<int64_t> PostgresStoreImpl::CountAudit(const std::string& tenant) {
  int64_t n = 0;
  const Status run_status = Run("count audit", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT count(*) FROM audit WHERE tenant = $1",
                                            PgParams().Text(tenant), "count audit"));
    n = r.rows() == 1 ? r.Int(0, 0) : 0;
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return n;
}

Result<std::optional<std::string>> PostgresStoreImpl::GetMeta(const std::string& key) {
  std::optional<std::string> out;
  const Status run_status = Run("get meta", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT value FROM meta WHERE key = $1",
                                            PgParams().Text(key), "get meta"));
    out.reset();
    if (r.rows() > 0) out = std::string(r.Text(0, 0));
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return out;
}

Result<std::optional<IdempotencyKey>> PostgresStoreImpl::GetIdempotencyKey(const std::string& tenant,
                                                                           const std::string& key, TimeMs now) {
  if (HasNul(tenant) || HasNul(key)) return Status::InvalidArgument("idempotency key: a NUL byte in the key");
  std::optional<IdempotencyKey> out;
  const Status run_status = Run("get idempotency key", [&](PgConnection& c) -> Status {
    MSP_ASSIGN_OR_RETURN(PgResult r,
                         c.Exec("SELECT request_hash, reply, created_at, expires_at FROM idempotency_keys "
                                "WHERE tenant = $1 AND key = $2 AND expires_at > $3",
                                PgParams().Text(tenant).Text(key).Int(now), "get idempotency key"));
    out.reset();
    if (r.rows() > 0) {
      IdempotencyKey k;
      k.tenant = tenant;
      k.key = key;
      k.request_hash = std::string(r.Text(0, 0));
      k.reply = std::string(r.Text(0, 1));
      k.created_at = r.Int(0, 2);
      k.expires_at = r.Int(0, 3);
      out = std::move(k);
    }
    return Status::Ok();
  });
  MSP_RETURN_IF_ERROR(run_status);
  return out;
}

Result<int64_t> PostgresStoreImpl::WaitForChange(int64_t after, int timeout_ms) {
  std::lock_guard<std::mutex> lock(listen_mu_);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, timeout_ms));
  if (listener_ == nullptr || listener_->broken()) {
    listener_.reset();
    MSP_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Connect(pool_.options()));
    MSP_RETURN_IF_ERROR(conn->Script("LISTEN " + PgQuoteIdent(channel_), "listen"));
    // Read after listening: a change committed later is notified.
    MSP_ASSIGN_OR_RETURN(PgResult r, conn->Exec("SELECT last_seq FROM change_counter", PgParams(),
                                                "wait for change", false));
    known_last_ = r.rows() == 1 ? r.Int(0, 0) : 0;
    listener_ = std::move(conn);
  }
  while (known_last_ <= after) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd pfd{listener_->socket(), POLLIN, 0};
    if (pfd.fd < 0) return Status::Unavailable("postgres: lost the listening connection to " + where_);
    const int ready = poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      return Status::IoError("postgres: poll on the listening connection failed: " +
                             std::string(std::strerror(errno)));
    }
    // Each payload is the last seq its commit made.
    MSP_ASSIGN_OR_RETURN(std::vector<std::string> payloads, listener_->DrainNotifications());
    for (const std::string& p : payloads) {
      int64_t seq = 0;
      std::from_chars(p.data(), p.data() + p.size(), seq);
      known_last_ = std::max(known_last_, seq);
    }
  }
  return known_last_;
}

Result<std::unique_ptr<StoreLease>> PostgresStoreImpl::TryLease(const std::string& name) {
  // A dedicated connection: the lock lives as long as its session.
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Connect(pool_.options()));
  const int32_t key = PgLockKey(pool_.options().schema, name);
  MSP_ASSIGN_OR_RETURN(PgResult r, conn->Exec("SELECT pg_try_advisory_lock($1, $2)",
                                              PgParams().Int(kPgLockLease).Int(key),
                                              "take lease " + name, false));
  if (r.rows() != 1 || r.Text(0, 0) != "t") return std::unique_ptr<StoreLease>();
  return std::unique_ptr<StoreLease>(new PgLeaseImpl(std::move(conn), key));
}

Status PostgresStoreImpl::Ping() {
  return Run("ping", [&](PgConnection& c) { return c.Script("SELECT 1", "ping"); });
}

Status PostgresStoreImpl::Migrate() {
  MSP_ASSIGN_OR_RETURN(PgPool::Lease conn, pool_.Acquire("migrate schema"));
  return PgMigrate(*conn, PgSchemaMigrations());
}

}  // namespace

std::string ChangeChannel(const std::string& schema) {
  std::string channel = "msp_changes_" + schema;
  // Channel names are identifiers (at most 63 bytes): a long schema name
  // gives way to its hash.
  if (channel.size() > 63) {
    char hex[9];
    std::snprintf(hex, sizeof(hex), "%08x", static_cast<uint32_t>(PgLockKey(schema, "changes")));
    channel = "msp_changes_" + schema.substr(0, 40) + "_" + hex;
  }
  return channel;
}

Result<std::unique_ptr<PostgresStore>> OpenPostgresStore(const StoreOptions& options) {
  MSP_RETURN_IF_ERROR(ValidatePostgresOptions(options));
  PgConnectOptions connect;
  connect.conninfo = options.postgres_url;
  connect.schema = options.postgres_schema;
  connect.connect_timeout_ms = options.postgres_connect_timeout_ms;
  connect.statement_timeout_ms = options.postgres_statement_timeout_ms;
  MSP_ASSIGN_OR_RETURN(connect.describe,
                       DescribeConninfo(options.postgres_url, options.postgres_schema));
  auto store = std::make_unique<PostgresStoreImpl>(std::move(connect), options.postgres_pool_size,
                                                   options.postgres_connect_timeout_ms);
  MSP_RETURN_IF_ERROR(store->Migrate());
  return std::unique_ptr<PostgresStore>(std::move(store));
}

}  // namespace msp
