// SqliteStore: the Store interface on one SQLite database file.
#include "store/sqlite/sqlite_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "store/record_row.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/encrypted_vfs.h"
#include "store/sqlite/frame_vfs.h"
#include "store/sqlite/sqlite_db.h"
#include "util/time.h"

namespace msp {
namespace {

using namespace record_row;  // NOLINT: the row's columns name every statement here
using Json = nlohmann::json;

const std::string& SelectRecords(bool with_embedding) {
  static const std::string kWith = "SELECT " + SelectList() + " FROM records";
  static const std::string kWithout = "SELECT " + SelectList("NULL") + " FROM records";
  return with_embedding ? kWith : kWithout;
}

// INSERT ... ON CONFLICT(id) DO UPDATE: replaces the whole record in place.
const std::string& UpsertRecordSql() {
  static const std::string kSql = [] {
    std::string cols, params, updates;
    for (size_t i = 0; i < kColumns.size(); ++i) {
      if (i > 0) {
        cols += ", ";
        params += ", ";
      }
      cols += kColumns[i];
      params += "?" + std::to_string(i + 1);
      if (i == kId) continue;
      if (!updates.empty()) updates += ", ";
      updates += std::string(kColumns[i]) + " = excluded." + std::string(kColumns[i]);
    }
    return "INSERT INTO records (" + cols + ") VALUES (" + params + ") ON CONFLICT(id) DO UPDATE SET " +
           updates;
  }();
  return kSql;
}

// A statement's parameters (1-based: column + 1) from a record.
class StatementWriter final : public RowWriter {
 public:
  explicit StatementWriter(Statement& s) : s_(s) {}
  void Text(int col, std::string_view value) override { s_.BindText(col + 1, value); }
  void Int(int col, int64_t value) override { s_.BindInt(col + 1, value); }
  void Double(int col, double value) override { s_.BindDouble(col + 1, value); }
  void Blob(int col, const void* data, size_t size) override { s_.BindBlob(col + 1, data, size); }
  void Null(int col) override { s_.BindNull(col + 1); }

 private:
  Statement& s_;
};

void BindRecord(Statement& s, const Memory& m, const EncodedPut& enc, int64_t seq) {
  StatementWriter w(s);
  WriteRow(m, enc, seq, w);
}

// The current row of a SelectRecords() statement.
class StatementReader final : public RowReader {
 public:
  explicit StatementReader(const Statement& s) : s_(s) {}
  std::string_view Text(int col) const override { return s_.ColumnView(col); }
  int64_t Int(int col) const override { return s_.ColumnInt(col); }
  double Double(int col) const override { return s_.ColumnDouble(col); }
  bool IsNull(int col) const override { return s_.IsNull(col); }
  bool Blob(int col, std::string_view* out) const override {
    const size_t bytes = s_.ColumnBytes(col);
    *out = bytes == 0 ? std::string_view() : std::string_view(static_cast<const char*>(s_.ColumnBlob(col)), bytes);
    return true;
  }

 private:
  const Statement& s_;
};

// Reads the current row of a SelectRecords() statement into *m.
Status ReadRecord(const Statement& s, const std::string& path, Memory* m) {
  return ReadRow(StatementReader(s), "sqlite", path, m);
}

// A WHERE clause and its parameters, built from a RecordQuery.
struct Filter {
  std::string sql;
  std::vector<std::variant<int64_t, std::string>> params;

  void Add(std::string_view clause) {
    sql += sql.empty() ? " WHERE " : " AND ";
    sql += clause;
  }
  void AddEquals(std::string_view column, const std::string& value) {
    Add(std::string(column) + " = ?");
    params.emplace_back(value);
  }
  template <typename E, typename Name>
  void AddAnyOf(std::string_view column, const std::vector<E>& values, Name name) {
    if (values.empty()) return;
    std::string clause = std::string(column) + " IN (";
    for (size_t i = 0; i < values.size(); ++i) {
      clause += i == 0 ? "?" : ", ?";
      params.emplace_back(std::string(name(values[i])));
    }
    Add(clause + ")");
  }
  void Bind(Statement& s, int first = 1) const {
    int index = first;
    for (const auto& p : params) {
      if (std::holds_alternative<int64_t>(p)) {
        s.BindInt(index++, std::get<int64_t>(p));
      } else {
        s.BindText(index++, std::get<std::string>(p));
      }
    }
  }
};

Filter BuildFilter(const RecordQuery& q) {
  Filter f;
  f.AddEquals("tenant", q.scope.tenant);
  if (!q.scope.user.empty()) f.AddEquals("user_id", q.scope.user);
  if (!q.scope.agent.empty()) f.AddEquals("agent_id", q.scope.agent);
  if (!q.scope.session.empty()) f.AddEquals("session_id", q.scope.session);
  if (!q.scope.mission.empty()) f.AddEquals("mission_id", q.scope.mission);
  if (!q.scope.operator_id.empty()) f.AddEquals("operator_id", q.scope.operator_id);
  f.AddAnyOf("kind", q.kinds, &KindName);
  f.AddAnyOf("layer", q.layers, &LayerName);
  f.AddAnyOf("source", q.sources, +[](const std::string& s) { return std::string_view(s); });
  if (!q.session.empty()) f.AddEquals("session_id", q.session);
  if (q.min_step > 0) {
    f.Add("step_number >= ?");
    f.params.emplace_back(q.min_step);
  }
  if (q.state) f.AddEquals("state", std::string(RecordStateName(*q.state)));
  if (q.created_from > 0) {
    f.Add("created_at >= ?");
    f.params.emplace_back(q.created_from);
  }
  if (q.created_to > 0) {
    f.Add("created_at < ?");
    f.params.emplace_back(q.created_to);
  }
  if (q.not_expired_at > 0) {
    f.Add("(expires_at = 0 OR expires_at > ?)");
    f.params.emplace_back(q.not_expired_at);
  }
  if (q.max_access_level) {
    f.Add("access_level <= ?");
    f.params.emplace_back(static_cast<int64_t>(*q.max_access_level));
  }
  return f;
}

class SqliteStore final : public Store {
 public:
  SqliteStore(std::unique_ptr<SqliteDb> db, std::string synchronous, bool read_only = false)
      : db_(std::move(db)), synchronous_(std::move(synchronous)), read_only_(read_only) {}

  Result<std::vector<int64_t>> Apply(const WriteBatch& batch) override;
  Result<std::optional<Memory>> Get(const std::string& id) override;
  Result<std::vector<Memory>> GetMany(const std::vector<std::string>& ids,
                                      bool with_embeddings) override;
  Result<std::vector<Memory>> List(const RecordQuery& query) override;
  Result<int64_t> Count(const RecordQuery& query) override;
  Status Scan(const std::function<bool(const Memory&)>& fn) override;
  Result<std::vector<Change>> ChangesSince(int64_t after, int limit) override;
  void SetCacheBytes(size_t bytes) override;
  size_t FillCache() override;
  Result<int64_t> LastSeq() override;
  Status RecordAccess(const std::vector<std::string>& ids, TimeMs at) override;
  Result<std::vector<AuditEvent>> ListAudit(const AuditQuery& query) override;
  Result<int64_t> CountAudit(const std::string& tenant) override;
  Result<std::optional<std::string>> GetMeta(const std::string& key) override;
  Result<std::optional<IdempotencyKey>> GetIdempotencyKey(const std::string& tenant, const std::string& key,
                                                          TimeMs now) override;
  std::string Describe() const override { return db_->path(); }
  bool read_only() const override { return read_only_; }

 private:
  static constexpr int kScanPage = 256;

  Status RefuseWrite() const {
    return Status::ReadOnly("the store " + db_->path() +
                            " is read-only for this process (a read-only mount, or files it may not write): "
                            "reads work, writes are refused");
  }

  // Appends a change row; returns its seq. REQUIRES: mu_ held, in a transaction.
  Result<int64_t> AppendChange(const std::string& id, const std::string& tenant, std::string_view op,
                               int64_t at, bool neutral = false);
  // Whether a put of `m` is neutral (Change::neutral), from the row it
  // replaces. REQUIRES: mu_ held, in a transaction, before the put.
  Result<bool> NeutralPut(const Memory& m);

  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;
  size_t cache_bytes_ = 0;  // what SetCacheBytes set (0: not raised); guarded by mu_
  const std::string synchronous_;  // the connection's PRAGMA synchronous
  const bool read_only_;
};

Result<int64_t> SqliteStore::AppendChange(const std::string& id, const std::string& tenant,
                                          std::string_view op, int64_t at, bool neutral) {
  MSP_ASSIGN_OR_RETURN(
      Statement s, db_->Prepare("INSERT INTO changes (record_id, op, at, tenant, neutral) VALUES (?, ?, ?, ?, ?)",
                                "apply (change)"));
  s.BindText(1, id);
  s.BindText(2, op);
  s.BindInt(3, at);
  s.BindText(4, tenant);
  s.BindInt(5, neutral ? 1 : 0);
  MSP_RETURN_IF_ERROR(s.Run());
  return db_->LastInsertRowid();
}

Result<bool> SqliteStore::NeutralPut(const Memory& m) {
  if (!HoldsNothingToIndex(m)) return false;
  MSP_ASSIGN_OR_RETURN(
      Statement s, db_->Prepare("SELECT text = '' AND (embedding IS NULL OR length(embedding) = 0) FROM records "
                                "WHERE id = ?",
                                "apply (neutral put)"));
  s.BindText(1, m.id);
  MSP_ASSIGN_OR_RETURN(bool row, s.Step());
  return !row || s.ColumnInt(0) != 0;
}

Result<std::vector<int64_t>> SqliteStore::Apply(const WriteBatch& batch) {
  std::vector<int64_t> seqs;
  if (batch.empty()) return seqs;
  if (read_only_) return RefuseWrite();

  // Validate and encode before taking the write lock.
  std::vector<EncodedPut> encoded;
  encoded.reserve(batch.puts.size());
  for (const Memory& m : batch.puts) {
    MSP_RETURN_IF_ERROR(ValidatePut(m));
    MSP_ASSIGN_OR_RETURN(EncodedPut enc, EncodePut(m));
    encoded.push_back(std::move(enc));
  }
  for (const std::string& id : batch.deletes) {
    if (id.empty()) return Status::InvalidArgument("delete: an id in the batch is empty");
  }
  for (const auto& [key, value] : batch.meta) {
    if (key.empty()) return Status::InvalidArgument("meta: a key in the batch is empty");
  }
  seqs.reserve(batch.puts.size() + batch.deletes.size());

  std::lock_guard<std::mutex> lock(mu_);
  Transaction txn(db_.get(), Transaction::Mode::kImmediate, "apply");
  MSP_RETURN_IF_ERROR(txn.status());
  const int64_t at = WallClockMs();

  if (!batch.expect_seq.empty()) {
    MSP_ASSIGN_OR_RETURN(Statement current,
                         db_->Prepare("SELECT seq FROM records WHERE id = ?", "apply (expect)"));
    for (const auto& [id, expected] : batch.expect_seq) {
      current.Reset();
      current.BindText(1, id);
      MSP_ASSIGN_OR_RETURN(bool row, current.Step());
      const int64_t actual = row ? current.ColumnInt(0) : 0;
      if (actual != expected) {
        return Status::Conflict(
            "record " + id + (row ? " is at seq " + std::to_string(actual) : " does not exist") +
            (expected == 0 ? ", expected it not to exist"
                           : ", expected seq " + std::to_string(expected)) +
            "; it was changed concurrently: read it again and retry");
      }
    }
  }

  if (batch.idempotency) {
    const IdempotencyKey& k = *batch.idempotency;
    MSP_ASSIGN_OR_RETURN(Statement prune, db_->Prepare("DELETE FROM idempotency_keys WHERE expires_at <= ?",
                                                       "apply (prune idempotency keys)"));
    prune.BindInt(1, k.created_at);
    MSP_RETURN_IF_ERROR(prune.Run());
    MSP_ASSIGN_OR_RETURN(Statement held, db_->Prepare("SELECT 1 FROM idempotency_keys WHERE tenant = ? AND key = ?",
                                                      "apply (idempotency key)"));
    held.BindText(1, k.tenant);
    held.BindText(2, k.key);
    MSP_ASSIGN_OR_RETURN(bool row, held.Step());
    if (row) {
      return Status::AlreadyExists("idempotency key '" + k.key + "' of tenant '" + k.tenant +
                                   "' is already used; nothing in the batch was applied");
    }
    held.Reset();
    MSP_ASSIGN_OR_RETURN(Statement insert,
                         db_->Prepare("INSERT INTO idempotency_keys (tenant, key, request_hash, reply, created_at, "
                                      "expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                                      "apply (idempotency key)"));
    insert.BindText(1, k.tenant);
    insert.BindText(2, k.key);
    insert.BindText(3, k.request_hash);
    insert.BindText(4, k.reply);
    insert.BindInt(5, k.created_at);
    insert.BindInt(6, k.expires_at);
    MSP_RETURN_IF_ERROR(insert.Run());
  }

  if (!batch.puts.empty()) {
    MSP_ASSIGN_OR_RETURN(Statement upsert, db_->Prepare(UpsertRecordSql(), "apply (put)"));
    for (size_t i = 0; i < batch.puts.size(); ++i) {
      const Memory& m = batch.puts[i];
      MSP_ASSIGN_OR_RETURN(bool neutral, NeutralPut(m));
      MSP_ASSIGN_OR_RETURN(int64_t seq, AppendChange(m.id, m.ns.tenant, "put", at, neutral));
      BindRecord(upsert, m, encoded[i], seq);
      MSP_RETURN_IF_ERROR(upsert.Run().WithContext("record " + m.id));
      seqs.push_back(seq);
    }
  }
  if (!batch.deletes.empty()) {
    MSP_ASSIGN_OR_RETURN(Statement erase, db_->Prepare("DELETE FROM records WHERE id = ? RETURNING tenant",
                                                       "apply (delete)"));
    for (const std::string& id : batch.deletes) {
      erase.Reset();
      erase.BindText(1, id);
      MSP_ASSIGN_OR_RETURN(bool row, erase.Step());
      if (!row) {
        return Status::NotFound("delete: no record with id " + id + " in " + db_->path() +
                                "; nothing in the batch was applied");
      }
      const std::string tenant = erase.ColumnText(0);
      MSP_ASSIGN_OR_RETURN(bool more, erase.Step());  // finishes the statement
      if (more) return Status::Corruption("sqlite: two records with id " + id + " in " + db_->path());
      MSP_ASSIGN_OR_RETURN(int64_t seq, AppendChange(id, tenant, "delete", at));
      seqs.push_back(seq);
    }
  }
  if (!batch.audit.empty()) {
    MSP_ASSIGN_OR_RETURN(
        Statement insert,
        db_->Prepare("INSERT INTO audit (at, actor, action, record_id, tenant, reason, "
                     "details_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     "apply (audit)"));
    for (const AuditEvent& e : batch.audit) {
      insert.BindInt(1, e.at);
      insert.BindText(2, e.actor);
      insert.BindText(3, AuditActionName(e.action));
      insert.BindText(4, e.record_id);
      insert.BindText(5, e.tenant);
      insert.BindText(6, e.reason);
      insert.BindText(7, e.details_json);
      MSP_RETURN_IF_ERROR(insert.Run());
    }
  }
  if (!batch.meta.empty()) {
    MSP_ASSIGN_OR_RETURN(
        Statement upsert,
        db_->Prepare("INSERT INTO meta (key, value) VALUES (?, ?) "
                     "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     "apply (meta)"));
    for (const auto& [key, value] : batch.meta) {
      upsert.BindText(1, key);
      upsert.BindText(2, value);
      MSP_RETURN_IF_ERROR(upsert.Run());
    }
  }
  MSP_RETURN_IF_ERROR(txn.Commit());
  return seqs;
}

Result<std::optional<Memory>> SqliteStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s, db_->Prepare(SelectRecords(true) + " WHERE id = ?", "get"));
  s.BindText(1, id);
  MSP_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<Memory>();
  Memory m;
  MSP_RETURN_IF_ERROR(ReadRecord(s, db_->path(), &m));
  return std::optional<Memory>(std::move(m));
}

// GetMany reads the ids a chunk at a time with one statement
// (`id IN (?1, ..., ?16)`, a short chunk padded with its last id, so one
// cached statement serves every size): against one statement a record in a
// read transaction, a top-10 read costs about a fifth fewer instructions.
constexpr size_t kGetManyChunk = 16;

const std::string& GetManySql(bool with_embeddings) {
  static const std::array<std::string, 2> kSql = [] {
    std::string in = " WHERE id IN (";
    for (size_t i = 0; i < kGetManyChunk; ++i) in += (i == 0 ? "?" : ", ?");
    in += ")";
    return std::array<std::string, 2>{SelectRecords(false) + in, SelectRecords(true) + in};
  }();
  return kSql[with_embeddings ? 1 : 0];
}

Result<std::vector<Memory>> SqliteStore::GetMany(const std::vector<std::string>& ids,
                                                 bool with_embeddings) {
  std::vector<Memory> out;
  if (ids.empty()) return out;
  out.reserve(ids.size());
  std::lock_guard<std::mutex> lock(mu_);
  // One snapshot for every record: a single statement is one; more take a
  // read transaction.
  std::optional<Transaction> txn;
  if (ids.size() > kGetManyChunk) {
    txn.emplace(db_.get(), Transaction::Mode::kDeferred, "get many");
    MSP_RETURN_IF_ERROR(txn->status());
  }
  MSP_ASSIGN_OR_RETURN(Statement s, db_->Prepare(GetManySql(with_embeddings), "get many"));
  std::vector<Memory> rows;
  rows.reserve(kGetManyChunk);
  for (size_t begin = 0; begin < ids.size(); begin += kGetManyChunk) {
    const size_t end = std::min(ids.size(), begin + kGetManyChunk);
    for (size_t i = 0; i < kGetManyChunk; ++i) {
      s.BindText(static_cast<int>(i + 1), ids[std::min(begin + i, end - 1)]);
    }
    rows.clear();
    while (true) {
      MSP_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      MSP_RETURN_IF_ERROR(ReadRecord(s, db_->path(), &rows.emplace_back()));
    }
    s.Reset();
    // In the order of `ids`; an id asked for twice is served twice.
    std::array<int, kGetManyChunk> found;
    for (size_t i = begin; i < end; ++i) {
      found[i - begin] = -1;
      for (size_t j = 0; j < rows.size(); ++j) {
        if (rows[j].id == ids[i]) found[i - begin] = static_cast<int>(j);
      }
    }
    for (size_t i = begin; i < end; ++i) {
      const int j = found[i - begin];
      if (j < 0) continue;
      const bool used_again = std::find(found.begin() + static_cast<std::ptrdiff_t>(i - begin) + 1,
                                        found.begin() + static_cast<std::ptrdiff_t>(end - begin), j) !=
                              found.begin() + static_cast<std::ptrdiff_t>(end - begin);
      Memory& m = rows[static_cast<size_t>(j)];
      if (used_again) {
        out.push_back(m);
      } else {
        out.push_back(std::move(m));
      }
    }
  }
  if (txn) MSP_RETURN_IF_ERROR(txn->Commit());
  return out;
}

Result<std::vector<Memory>> SqliteStore::List(const RecordQuery& query) {
  MSP_RETURN_IF_ERROR(ValidateQuery(query, "list"));
  const Filter filter = BuildFilter(query);
  const std::string sql = SelectRecords(query.with_embeddings) + filter.sql +
                          std::string(OrderBy(query.order)) + " LIMIT ? OFFSET ?";
  std::vector<Memory> out;
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql, "list"));
  filter.Bind(s);
  const int next = static_cast<int>(filter.params.size()) + 1;
  s.BindInt(next, query.limit > 0 ? query.limit : -1);
  s.BindInt(next + 1, query.offset);
  while (true) {
    MSP_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    Memory m;
    MSP_RETURN_IF_ERROR(ReadRecord(s, db_->path(), &m));
    out.push_back(std::move(m));
  }
  return out;
}

Result<int64_t> SqliteStore::Count(const RecordQuery& query) {
  MSP_RETURN_IF_ERROR(ValidateQuery(query, "count"));
  const Filter filter = BuildFilter(query);
  std::string sql;
  if (query.limit == 0 && query.offset == 0) {
    sql = "SELECT count(*) FROM records" + filter.sql;
  } else {
    sql = "SELECT count(*) FROM (SELECT 1 FROM records" + filter.sql + " LIMIT ? OFFSET ?)";
  }
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql, "count"));
  filter.Bind(s);
  if (query.limit != 0 || query.offset != 0) {
    const int next = static_cast<int>(filter.params.size()) + 1;
    s.BindInt(next, query.limit > 0 ? query.limit : -1);
    s.BindInt(next + 1, query.offset);
  }
  MSP_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::Internal("sqlite: count on " + db_->path() + " returned no row");
  return s.ColumnInt(0);
}

Status SqliteStore::Scan(const std::function<bool(const Memory&)>& fn) {
  const std::string sql = SelectRecords(true) + " WHERE id > ? ORDER BY id LIMIT " +
                          std::to_string(kScanPage);
  std::string after;
  while (true) {
    // Load one page under the lock, then call `fn` without it, so `fn` may
    // use the store.
    std::vector<Memory> page;
    {
      std::lock_guard<std::mutex> lock(mu_);
      MSP_ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql, "scan"));
      s.BindText(1, after);
      while (true) {
        MSP_ASSIGN_OR_RETURN(bool row, s.Step());
        if (!row) break;
        Memory m;
        MSP_RETURN_IF_ERROR(ReadRecord(s, db_->path(), &m));
        page.push_back(std::move(m));
      }
    }
    for (const Memory& m : page) {
      if (!fn(m)) return Status::Ok();
    }
    if (page.size() < static_cast<size_t>(kScanPage)) return Status::Ok();
    after = page.back().id;
  }
}

Result<std::vector<Change>> SqliteStore::ChangesSince(int64_t after, int limit) {
  if (limit < 0) {
    return Status::InvalidArgument("changes since: limit must be >= 0 (got " +
                                   std::to_string(limit) + ")");
  }
  std::vector<Change> out;
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("SELECT seq, record_id, op, tenant, neutral FROM changes WHERE seq > ? ORDER BY seq LIMIT ?",
                   "changes since"));
  s.BindInt(1, after);
  s.BindInt(2, limit > 0 ? limit : -1);
  while (true) {
    MSP_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    Change c;
    c.seq = s.ColumnInt(0);
    c.record_id = s.ColumnText(1);
    c.tenant = s.ColumnText(3);
    c.neutral = s.ColumnInt(4) != 0;
    const std::string op = s.ColumnText(2);
    if (op == "put") {
      c.op = ChangeOp::kPut;
    } else if (op == "delete") {
      c.op = ChangeOp::kDelete;
    } else {
      return Status::Corruption("sqlite: change " + std::to_string(c.seq) + " in " + db_->path() +
                                " has an unknown op '" + op + "'");
    }
    out.push_back(std::move(c));
  }
  return out;
}

Result<int64_t> SqliteStore::LastSeq() {
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s,
                       db_->Prepare("SELECT COALESCE(MAX(seq), 0) FROM changes", "last seq"));
  MSP_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::Internal("sqlite: last seq on " + db_->path() + " returned no row");
  return s.ColumnInt(0);
}

void SqliteStore::SetCacheBytes(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  // A negative cache_size counts KiB.
  if (db_->Exec("PRAGMA cache_size = -" + std::to_string(std::max<size_t>(bytes / 1024, 1)), "set cache size").ok()) {
    cache_bytes_ = bytes;
  }
}

// A slice at a time, the lock let go in between: the id index in id order
// (a covering scan), then the records in rowid order, until a slice no
// longer grows the cache (SQLite recycles its pages: it is full) or the
// table ends.
size_t SqliteStore::FillCache() {
  auto used = [&] {  // REQUIRES: mu_ held
    int now = 0, high = 0;
    sqlite3_db_status(db_->handle(), SQLITE_DBSTATUS_CACHE_USED, &now, &high, /*resetFlg=*/0);
    return static_cast<size_t>(std::max(now, 0));
  };
  constexpr int kSlice = 1024;
  std::string after_id;
  bool ids_done = false;
  int64_t after_rowid = 0;
  for (;;) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cache_bytes_ == 0) return 0;
    const size_t before = used();
    Result<Statement> s =
        ids_done ? db_->Prepare("SELECT rowid, length(tenant) FROM records WHERE rowid > ? ORDER BY rowid LIMIT " +
                                    std::to_string(kSlice),
                                "fill cache")
                 : db_->Prepare("SELECT id FROM records WHERE id > ? ORDER BY id LIMIT " + std::to_string(kSlice),
                                "fill cache");
    if (!s.ok()) return used();
    if (ids_done) {
      s->BindInt(1, after_rowid);
    } else {
      s->BindText(1, after_id);
    }
    int rows = 0;
    for (Result<bool> row = s->Step(); row.ok() && *row; row = s->Step(), ++rows) {
      if (ids_done) {
        after_rowid = s->ColumnInt(0);
      } else {
        after_id = s->ColumnText(0);
      }
    }
    if (rows < kSlice) {
      if (ids_done) return used();
      ids_done = true;
    } else if (ids_done && used() <= before) {
      return used();
    }
  }
}

// Bookkeeping, not fsynced: the commit runs at synchronous = OFF (in WAL
// mode it still cannot corrupt the database; a machine crash may lose it),
// and the connection's setting is restored after.
Status SqliteStore::RecordAccess(const std::vector<std::string>& ids, TimeMs at) {
  if (ids.empty()) return Status::Ok();
  if (read_only_) return RefuseWrite();
  std::lock_guard<std::mutex> lock(mu_);
  MSP_RETURN_IF_ERROR(db_->Exec("PRAGMA synchronous = OFF", "record access"));
  Status status = [&]() -> Status {
    Transaction txn(db_.get(), Transaction::Mode::kImmediate, "record access");
    MSP_RETURN_IF_ERROR(txn.status());
    MSP_ASSIGN_OR_RETURN(Statement s, db_->Prepare("UPDATE records SET access_count = access_count "
                                                   "+ ?, last_accessed = ? WHERE id = ?",
                                                   "record access"));
    // Each record's row is rewritten once however often the batch names it
    // (a server's second of searches names the popular records many times),
    // in key order.
    std::vector<std::string_view> sorted(ids.begin(), ids.end());
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size();) {
      size_t j = i + 1;
      while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
      s.BindInt(1, static_cast<int64_t>(j - i));
      s.BindInt(2, at);
      s.BindText(3, sorted[i]);
      MSP_RETURN_IF_ERROR(s.Run());
      i = j;
    }
    return txn.Commit();
  }();
  const Status restored = db_->Exec("PRAGMA synchronous = " + synchronous_, "record access");
  return status.ok() ? restored : status;
}

Result<std::vector<AuditEvent>> SqliteStore::ListAudit(const AuditQuery& query) {
  if (query.tenant.empty()) return Status::InvalidArgument("list audit: tenant is required");
  if (query.limit < 0) {
    return Status::InvalidArgument("list audit: limit must be >= 0 (got " +
                                   std::to_string(query.limit) + ")");
  }
  std::string sql =
      "SELECT seq, at, actor, action, record_id, tenant, reason, details_json FROM audit "
      "WHERE tenant = ?";
  if (!query.record_id.empty()) sql += " AND record_id = ?";
  sql += " ORDER BY seq DESC LIMIT ?";
  std::vector<AuditEvent> out;
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql, "list audit"));
  int index = 1;
  s.BindText(index++, query.tenant);
  if (!query.record_id.empty()) s.BindText(index++, query.record_id);
  s.BindInt(index, query.limit > 0 ? query.limit : -1);
  while (true) {
    MSP_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    AuditEvent e;
    e.seq = s.ColumnInt(0);
    e.at = s.ColumnInt(1);
    e.actor = s.ColumnText(2);
    const std::string action = s.ColumnText(3);
    std::optional<AuditAction> parsed = ParseAuditAction(action);
    if (!parsed) {
      return Status::Corruption("sqlite: audit event " + std::to_string(e.seq) + " in " +
                                db_->path() + " has an unknown action '" + action + "'");
    }
    e.action = *parsed;
    e.record_id = s.ColumnText(4);
    e.tenant = s.ColumnText(5);
    e.reason = s.ColumnText(6);
    e.details_json = s.ColumnText(7);
    out.push_back(std::move(e));
  }
  return out;
}

Result<int64_t> SqliteStore::CountAudit(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s,
                       db_->Prepare("SELECT count(*) FROM audit WHERE tenant = ?", "count audit"));
  s.BindText(1, tenant);
  MSP_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::Internal("sqlite: count audit on " + db_->path() + " returned no row");
  return s.ColumnInt(0);
}

Result<std::optional<std::string>> SqliteStore::GetMeta(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s,
                       db_->Prepare("SELECT value FROM meta WHERE key = ?", "get meta"));
  s.BindText(1, key);
  MSP_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.ColumnText(0));
}

Result<std::optional<IdempotencyKey>> SqliteStore::GetIdempotencyKey(const std::string& tenant,
                                                                     const std::string& key, TimeMs now) {
  std::lock_guard<std::mutex> lock(mu_);
  MSP_ASSIGN_OR_RETURN(Statement s,
                       db_->Prepare("SELECT request_hash, reply, created_at, expires_at FROM idempotency_keys "
                                    "WHERE tenant = ? AND key = ? AND expires_at > ?",
                                    "get idempotency key"));
  s.BindText(1, tenant);
  s.BindText(2, key);
  s.BindInt(3, now);
  MSP_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<IdempotencyKey>();
  IdempotencyKey k;
  k.tenant = tenant;
  k.key = key;
  k.request_hash = s.ColumnText(0);
  k.reply = s.ColumnText(1);
  k.created_at = s.ColumnInt(2);
  k.expires_at = s.ColumnInt(3);
  return std::optional<IdempotencyKey>(std::move(k));
}

// Sets WAL mode, synchronous and foreign keys, and migrates the schema.
Status ConfigureConnection(SqliteDb& db, const std::string& synchronous) {
  {
    MSP_ASSIGN_OR_RETURN(Statement s, db.Prepare("PRAGMA journal_mode = WAL", "set journal mode",
                                                 /*cache=*/false));
    MSP_ASSIGN_OR_RETURN(bool row, s.Step());
    const std::string mode = row ? s.ColumnText(0) : std::string();
    if (mode != "wal") {
      return Status::IoError("sqlite: cannot use WAL mode for " + db.path() +
                             " (journal mode is '" + mode +
                             "'); put the data directory on a local file system");
    }
  }
  MSP_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous = " + synchronous, "set synchronous"));
  MSP_RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys = ON", "enable foreign keys"));
  return Migrate(db, SchemaMigrations());
}

// True when this process may not write the database file (when it
// exists) or its folder, where SQLite makes the WAL and its shared memory:
// a read-only mount, or permissions that let the user only read.
bool CannotWrite(const std::string& db_path) {
  std::string dir = std::filesystem::path(db_path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (::access(db_path.c_str(), F_OK) == 0 && ::access(db_path.c_str(), W_OK) != 0) return true;
  return ::access(dir.c_str(), W_OK) != 0;
}

// The store opened read-only: the database as it is (never migrated). On a
// mount where the WAL's shared-memory file cannot be made (it is removed
// when the last writer closes), SQLite opens it immutable instead.
Result<std::unique_ptr<Store>> OpenReadOnlyStore(const std::string& db_path, const std::string& synchronous,
                                                 int busy_timeout_ms, const std::string& vfs) {
  if (::access(db_path.c_str(), F_OK) != 0) {
    return Status::ReadOnly("no store at " + db_path + ", and its directory is read-only for this process: "
                            "it cannot be created there");
  }
  Result<int> version = Status::Internal("unreached");
  std::unique_ptr<SqliteDb> db;
  for (bool immutable : {false, true}) {
    MSP_ASSIGN_OR_RETURN(db, SqliteDb::OpenReadOnly(db_path, immutable, vfs));
    sqlite3_busy_timeout(db->handle(), busy_timeout_ms);
    if (!vfs.empty()) {
      MSP_RETURN_IF_ERROR(db->Exec("PRAGMA temp_store = MEMORY", "keep temporary tables in memory"));
    }
    version = ReadSchemaVersion(*db);
    if (version.ok() || version.status().code() != StatusCode::kIoError) break;
  }
  MSP_RETURN_IF_ERROR(version.status());
  const int latest = SchemaMigrations().back().version;
  if (*version != latest) {
    return Status::FailedPrecondition("sqlite: database " + db_path + " has schema version " +
                                      std::to_string(*version) + " and this msp needs " + std::to_string(latest) +
                                      ", but it is read-only for this process: open it once with msp where it "
                                      "is writable to migrate it");
  }
  return std::unique_ptr<Store>(new SqliteStore(std::move(db), synchronous, /*read_only=*/true));
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& db_path,
                                               const StoreOptions& options) {
  std::string synchronous;
  if (options.synchronous == "full") {
    synchronous = "FULL";
  } else if (options.synchronous == "normal") {
    synchronous = "NORMAL";
  } else {
    return Status::InvalidArgument("store synchronous must be \"full\" or \"normal\", got \"" +
                                   options.synchronous + "\"");
  }
  if (options.busy_timeout_ms < 0) {
    return Status::InvalidArgument("store busy_timeout_ms must be >= 0, got " +
                                   std::to_string(options.busy_timeout_ms));
  }

  // Encryption at rest (encrypted_vfs.h): the key is checked against the
  // file before SQLite touches it, so a wrong or missing key changes nothing.
  MSP_ASSIGN_OR_RETURN(std::optional<StoreKey> key, LoadStoreKey(options));
  MSP_RETURN_IF_ERROR(CheckStoreFile(db_path, key));
  std::string vfs;
  if (key) {
    MSP_ASSIGN_OR_RETURN(vfs, EncryptedVfsName(*key));
  }

  if (CannotWrite(db_path)) return OpenReadOnlyStore(db_path, synchronous, options.busy_timeout_ms, vfs);
  // A plain store writes each WAL frame in one write (frame_vfs.h). Not
  // under the encrypting VFS: its recovery needs to see the main file as
  // its own.
  if (!key) {
    MSP_ASSIGN_OR_RETURN(vfs, JoinedFramesVfsName(""));
  }
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(db_path, vfs));
  sqlite3_busy_timeout(db->handle(), options.busy_timeout_ms);
  if (key) {
    // A new file reserves each page's tail for the nonce and tag (an
    // existing one keeps what its header says); temporary tables and
    // sorts stay in memory, never in a plain temporary file.
    int reserve = kReserveBytes;
    sqlite3_file_control(db->handle(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
    MSP_RETURN_IF_ERROR(db->Exec("PRAGMA temp_store = MEMORY", "keep temporary tables in memory"));
  }

  // Switching a new database to WAL can report SQLITE_BUSY without waiting
  // for the busy handler while another process creates the same file; retry
  // the (idempotent) setup until the busy timeout has passed.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.busy_timeout_ms);
  std::minstd_rand jitter(static_cast<unsigned>(WallClockMs()));
  while (true) {
    Status status = ConfigureConnection(*db, synchronous);
    if (status.ok() || status.code() != StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() >= deadline) {
      MSP_RETURN_IF_ERROR(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + jitter() % 10));
  }
  return std::unique_ptr<Store>(new SqliteStore(std::move(db), synchronous));
}

}  // namespace msp
