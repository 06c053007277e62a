// SqliteDb and Statement: RAII over sqlite3 handles and statements.
#include "store/sqlite/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace msp {
namespace {

StatusCode CodeFor(int rc) {
  if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
    return StatusCode::kAlreadyExists;
  }
  if (rc == SQLITE_IOERR_DATA) return StatusCode::kCorruption;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return StatusCode::kCorruption;
    case SQLITE_FULL:
      return StatusCode::kDiskFull;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return StatusCode::kIoError;
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
      return StatusCode::kInvalidArgument;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

// ---- Statement ----

Statement::Statement(SqliteDb* db, sqlite3_stmt* stmt, bool owned, std::string_view op)
    : db_(db), stmt_(stmt), owned_(owned), op_(op) {}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(other.stmt_),
      owned_(other.owned_),
      bind_rc_(other.bind_rc_),
      op_(std::move(other.op_)) {
  other.stmt_ = nullptr;
  other.owned_ = false;
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (owned_) {
    sqlite3_finalize(stmt_);
  } else {
    Reset();
  }
}

void Statement::BindInt(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_, index, value));
}
void Statement::BindDouble(int index, double value) {
  NoteBind(sqlite3_bind_double(stmt_, index, value));
}
void Statement::BindText(int index, std::string_view value) {
  NoteBind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}
void Statement::BindBlob(int index, const void* data, size_t size) {
  NoteBind(sqlite3_bind_blob64(stmt_, index, data, size, SQLITE_TRANSIENT));
}
void Statement::BindNull(int index) { NoteBind(sqlite3_bind_null(stmt_, index)); }

void Statement::NoteBind(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

Result<bool> Statement::Step() {
  if (bind_rc_ != SQLITE_OK) {
    const int rc = bind_rc_;
    return db_->Error(rc, op_ + " (bind)");
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status error = db_->Error(rc, op_);
  sqlite3_reset(stmt_);
  return error;
}

Status Statement::Run() {
  while (true) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
  }
  sqlite3_reset(stmt_);
  return Status::Ok();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_rc_ = SQLITE_OK;
}

bool Statement::IsNull(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }
int64_t Statement::ColumnInt(int index) const { return sqlite3_column_int64(stmt_, index); }
double Statement::ColumnDouble(int index) const { return sqlite3_column_double(stmt_, index); }
std::string Statement::ColumnText(int index) const { return std::string(ColumnView(index)); }
std::string_view Statement::ColumnView(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  const int size = sqlite3_column_bytes(stmt_, index);
  if (text == nullptr) return std::string_view();
  return std::string_view(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}
const void* Statement::ColumnBlob(int index) const { return sqlite3_column_blob(stmt_, index); }
size_t Statement::ColumnBytes(int index) const {
  return static_cast<size_t>(sqlite3_column_bytes(stmt_, index));
}

// ---- SqliteDb ----

namespace {

// Opens `name` (a path or a file: URI) with `flags`; a failure's message
// names `path`, what SQLite said, then `hint`.
Result<sqlite3*> OpenHandle(const std::string& name, int flags, const std::string& vfs, const std::string& path,
                            const std::string& hint) {
  sqlite3* handle = nullptr;
  const int rc =
      sqlite3_open_v2(name.c_str(), &handle, flags | SQLITE_OPEN_NOMUTEX, vfs.empty() ? nullptr : vfs.c_str());
  if (rc != SQLITE_OK) {
    const std::string detail = handle != nullptr ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    sqlite3_close_v2(handle);
    return Status(CodeFor(rc), "sqlite: cannot open database " + path + ": " + detail + hint);
  }
  sqlite3_extended_result_codes(handle, 1);
  return handle;
}

}  // namespace

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, const std::string& vfs) {
  MSP_ASSIGN_OR_RETURN(sqlite3 * handle, OpenHandle(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs, path,
                                                     " (check that the directory exists and is writable)"));
  return std::unique_ptr<SqliteDb>(new SqliteDb(handle, path));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::OpenReadOnly(const std::string& path, bool immutable,
                                                        const std::string& vfs) {
  // A URI, so that mode and immutable can be given: the path's own '%',
  // '?' and '#' are escaped.
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[static_cast<unsigned char>(c) >> 4];
      uri += kHex[static_cast<unsigned char>(c) & 0xf];
    } else {
      uri += c;
    }
  }
  uri += immutable ? "?mode=ro&immutable=1" : "?mode=ro";
  MSP_ASSIGN_OR_RETURN(sqlite3 * handle, OpenHandle(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, vfs, path, " (opening it read-only)"));
  return std::unique_ptr<SqliteDb>(new SqliteDb(handle, path));
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  cache_.clear();
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status SqliteDb::Exec(std::string_view sql, std::string_view op) {
  char* message = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::Ok();
  Status status = Error(rc, op);
  sqlite3_free(message);
  return status;
}

Result<Statement> SqliteDb::Prepare(const std::string& sql, std::string_view op, bool cache) {
  if (cache) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return Statement(this, it->second, /*owned=*/false, op);
  }
  sqlite3_stmt* stmt = nullptr;
  const bool keep = cache && cache_.size() < kMaxCachedStatements;
  const unsigned int flags = keep ? SQLITE_PREPARE_PERSISTENT : 0;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), flags, &stmt,
                                    nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(rc, std::string(op) + " (prepare)");
  }
  if (keep) {
    cache_.emplace(sql, stmt);
    return Statement(this, stmt, /*owned=*/false, op);
  }
  return Statement(this, stmt, /*owned=*/true, op);
}

int64_t SqliteDb::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
int SqliteDb::Changes() const { return sqlite3_changes(db_); }

Status SqliteDb::Error(int rc, std::string_view op) const {
  const std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string message = "sqlite: " + std::string(op) + " on " + path_ + " failed: " + detail;
  const StatusCode code = CodeFor(rc);
  if (code == StatusCode::kUnavailable) {
    message += " (the database is locked by another writer; retry)";
  } else if (rc == SQLITE_IOERR_DATA) {
    message += " (a page of the encrypted store failed its check: the file was damaged or changed outside msp)";
  } else if (code == StatusCode::kDiskFull) {
    message += " (the disk is full: nothing was written; free space and retry)";
  }
  return Status(code, std::move(message));
}

// ---- Transaction ----

Transaction::Transaction(SqliteDb* db, Mode mode, std::string_view op) : db_(db), op_(op) {
  begin_status_ = db_->Exec(mode == Mode::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED",
                            op_ + " (begin)");
  open_ = begin_status_.ok();
}

Transaction::~Transaction() {
  if (open_) {
    // Nothing useful to do if the rollback fails: the connection's next BEGIN reports it.
    (void)db_->Exec("ROLLBACK", op_ + " (rollback)");
  }
}

Status Transaction::Commit() {
  if (!open_) return Status::Internal("sqlite: " + op_ + ": commit without an open transaction");
  Status status = db_->Exec("COMMIT", op_ + " (commit)");
  if (status.ok()) {
    open_ = false;
    return status;
  }
  // A failed COMMIT (for example SQLITE_BUSY) leaves the transaction open; roll it back.
  (void)db_->Exec("ROLLBACK", op_ + " (rollback)");
  open_ = false;
  return status;
}

}  // namespace msp
