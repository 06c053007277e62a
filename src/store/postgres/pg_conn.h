// PgConnection, PgParams, PgResult: a thin RAII layer over one libpq
// connection (the C API; no exceptions to catch).
//
// Every failure becomes a Status whose message names the operation and the
// server: a lost or refused connection, a statement timeout, too many
// connections or a server shutting down are kUnavailable (retry later);
// deadlocks and serialization failures are kConflict; bad data is
// kInvalidArgument; anything else kIoError. The SQLSTATE of the last failure
// is kept for the caller's retry decisions. Statements are prepared once per
// connection and cached by their SQL text. Not thread-safe: one user at a
// time (PgPool hands connections out).
#ifndef MSP_STORE_POSTGRES_PG_CONN_H_
#define MSP_STORE_POSTGRES_PG_CONN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "msp/status.h"

struct pg_conn;
struct pg_result;

namespace msp {

// How to reach the server and how each session is set up.
struct PgConnectOptions {
  std::string conninfo;             // a libpq connection string or postgresql:// URL
  std::string schema;               // the search_path of every session (a plain identifier)
  int connect_timeout_ms = 5000;    // rounded up to whole seconds (libpq's unit), >= 2 s
  int statement_timeout_ms = 30000; // 0: none
  std::string describe;             // the server as messages name it (no password)
};

// The parameters of one statement, in order ($1, $2, ...). Values are copied.
class PgParams {
 public:
  PgParams& Text(std::string_view value);
  PgParams& Int(int64_t value);
  PgParams& Double(double value);
  // Sent in binary, for a bytea parameter.
  PgParams& Bytes(const void* data, size_t size);
  PgParams& Null();
  size_t size() const { return values_.size(); }

 private:
  friend class PgConnection;
  std::vector<std::string> values_;
  std::vector<char> is_null_;
  std::vector<int> formats_;  // 0 text, 1 binary
};

// The rows of a finished statement, every column in text format.
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(pg_result* result);
  PgResult(PgResult&& other) noexcept;
  PgResult& operator=(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int rows() const;
  // Rows an INSERT/UPDATE/DELETE touched.
  int64_t affected() const;
  bool IsNull(int row, int col) const;
  std::string_view Text(int row, int col) const;
  // REQUIRES: the column holds an integer (Int) or a float (Double); a value
  // that does not parse reads as 0.
  int64_t Int(int row, int col) const;
  double Double(int row, int col) const;
  // Decodes a bytea column ("\x..." hex text) into `out`; false if malformed.
  bool Bytea(int row, int col, std::string* out) const;

 private:
  pg_result* result_ = nullptr;
};

class PgConnection {
 public:
  // Connects and sets the session up (client encoding UTF8, search_path,
  // statement_timeout). kUnavailable when the server cannot be reached.
  static Result<std::unique_ptr<PgConnection>> Connect(const PgConnectOptions& options);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement with parameters (prepared and cached unless `cache`
  // is false) and returns its rows.
  Result<PgResult> Exec(const std::string& sql, const PgParams& params, std::string_view op,
                        bool cache = true);
  // Runs one or more statements without parameters (DDL, BEGIN, COMMIT).
  Status Script(std::string_view sql, std::string_view op);

  // True once the connection is lost; the pool then closes it.
  bool broken() const;
  // True when no transaction is open (the state a pooled connection must be in).
  bool idle() const;
  // The SQLSTATE of the last failed statement ("" if none, or not from the server).
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  pg_conn* handle() const { return conn_; }
  const PgConnectOptions& options() const { return options_; }

  // Reads the notifications that have arrived (non-blocking) and returns
  // their payloads. kUnavailable if the connection was lost.
  Result<std::vector<std::string>> DrainNotifications();
  // The socket, for poll(); -1 when broken.
  int socket() const;

 private:
  PgConnection(pg_conn* conn, PgConnectOptions options);
  // A Status for the failure of `result` (may be null) in operation `op`.
  Status Failure(pg_result* result, std::string_view op);

  pg_conn* conn_;
  PgConnectOptions options_;
  std::unordered_map<std::string, std::string> prepared_;  // SQL -> statement name
  std::string last_sqlstate_;
};

// "a\"b" -> {"a\"b"}: a PostgreSQL text[] literal (for = ANY($1) and unnest).
std::string PgTextArray(const std::vector<std::string>& values);
std::string PgIntArray(const std::vector<int64_t>& values);
// A double-quoted SQL identifier.
std::string PgQuoteIdent(std::string_view name);

// SQLSTATEs the store reacts to.
inline constexpr std::string_view kPgUniqueViolation = "23505";
inline constexpr std::string_view kPgSerializationFailure = "40001";
inline constexpr std::string_view kPgDeadlockDetected = "40P01";

}  // namespace msp

#endif  // MSP_STORE_POSTGRES_PG_CONN_H_
