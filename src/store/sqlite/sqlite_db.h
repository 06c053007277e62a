// SqliteDb and Statement: a thin RAII layer over one sqlite3 connection.
//
// Every SQLite failure becomes a Status whose message names the operation and
// the database path. Prepared statements are cached per connection, keyed by
// their SQL text. Not thread-safe: the owner (SqliteStore) serialises access.
#ifndef MSP_STORE_SQLITE_SQLITE_DB_H_
#define MSP_STORE_SQLITE_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "msp/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace msp {

class SqliteDb;

// A prepared statement in use. Resets itself (and clears its bindings) when
// destroyed, so no read transaction is left open; finalizes it when owned.
class Statement {
 public:
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Bind parameters; `index` is 1-based. Text and blobs are copied.
  void BindInt(int index, int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, std::string_view value);
  void BindBlob(int index, const void* data, size_t size);
  void BindNull(int index);

  // Runs one step: true when a row is available, false when done. A failed
  // bind above is reported here.
  Result<bool> Step();
  // Runs to completion, ignoring rows, and resets (bindings are kept).
  Status Run();
  // Ready for another round of binds and steps.
  void Reset();

  // Column readers for the current row; `index` is 0-based.
  bool IsNull(int index) const;
  int64_t ColumnInt(int index) const;
  double ColumnDouble(int index) const;
  std::string ColumnText(int index) const;
  // The same text without a copy (valid until the next Step or Reset).
  std::string_view ColumnView(int index) const;
  // Blob bytes (valid until the next Step or Reset) and their size.
  const void* ColumnBlob(int index) const;
  size_t ColumnBytes(int index) const;

 private:
  friend class SqliteDb;
  Statement(SqliteDb* db, sqlite3_stmt* stmt, bool owned, std::string_view op);
  void NoteBind(int rc);

  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  bool owned_;
  int bind_rc_ = 0;  // the first failed bind's result code (0: none)
  std::string op_;  // names the operation in error messages
};

class SqliteDb {
 public:
  // Opens (creating if needed) the database file at `path` read-write,
  // through the SQLite VFS named `vfs` ("": the default one).
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, const std::string& vfs = "");
  // Opens the existing database file at `path` read-only (SQLite's
  // mode=ro); with `immutable`, also without the WAL's shared-memory file,
  // for a database on a mount where it cannot be made (SQLite then assumes
  // that nobody changes the file while it is open).
  static Result<std::unique_ptr<SqliteDb>> OpenReadOnly(const std::string& path, bool immutable,
                                                        const std::string& vfs = "");
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Runs one or more statements without results (PRAGMAs, DDL, BEGIN).
  Status Exec(std::string_view sql, std::string_view op);
  // A statement for `sql`: from the cache when `cache` is set (until the
  // cache is full), otherwise prepared for this one use. `op` names the
  // operation in error messages.
  Result<Statement> Prepare(const std::string& sql, std::string_view op, bool cache = true);
  // The rowid of the last insert on this connection.
  int64_t LastInsertRowid() const;
  // Rows changed by the last statement.
  int Changes() const;

  // A Status for SQLite result code `rc` during `op`:
  // "sqlite: <op> on <path> failed: <message>". BUSY and LOCKED map to
  // kUnavailable, CORRUPT and NOTADB to kCorruption, I/O, CANTOPEN, FULL,
  // READONLY and PERM to kIoError, CONSTRAINT and TOOBIG to kInvalidArgument;
  // IOERR_DATA (a page of an encrypted store failing its check) to
  // kCorruption.
  Status Error(int rc, std::string_view op) const;

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  static constexpr size_t kMaxCachedStatements = 256;

  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

// A transaction that rolls back unless committed.
class Transaction {
 public:
  enum class Mode { kDeferred, kImmediate };
  // Begins a transaction on `db`; check status() before use.
  Transaction(SqliteDb* db, Mode mode, std::string_view op);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  const Status& status() const { return begin_status_; }
  Status Commit();

 private:
  SqliteDb* db_;
  std::string op_;
  Status begin_status_;
  bool open_ = false;
};

}  // namespace msp

#endif  // MSP_STORE_SQLITE_SQLITE_DB_H_
