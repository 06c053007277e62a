// PgConnection and friends over libpq.
#include "store/postgres/pg_conn.h"

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "util/text.h"

namespace msp {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

// ---- PgParams ----

PgParams& PgParams::Text(std::string_view value) {
  values_.emplace_back(value);
  is_null_.push_back(0);
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::Int(int64_t value) { return Text(std::to_string(value)); }

PgParams& PgParams::Double(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);  // shortest exact form
  return Text(ec == std::errc() ? std::string_view(buf, static_cast<size_t>(end - buf)) : "NaN");
}

PgParams& PgParams::Bytes(const void* data, size_t size) {
  values_.emplace_back(static_cast<const char*>(data), size);
  is_null_.push_back(0);
  formats_.push_back(1);
  return *this;
}

PgParams& PgParams::Null() {
  values_.emplace_back();
  is_null_.push_back(1);
  formats_.push_back(0);
  return *this;
}

// ---- PgResult ----

PgResult::PgResult(pg_result* result) : result_(result) {}
PgResult::PgResult(PgResult&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
PgResult& PgResult::operator=(PgResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = other.result_;
    other.result_ = nullptr;
  }
  return *this;
}
PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PgResult::rows() const { return result_ == nullptr ? 0 : PQntuples(result_); }

int64_t PgResult::affected() const {
  if (result_ == nullptr) return 0;
  const char* n = PQcmdTuples(result_);
  int64_t value = 0;
  std::from_chars(n, n + std::strlen(n), value);
  return value;
}

bool PgResult::IsNull(int row, int col) const { return PQgetisnull(result_, row, col) != 0; }

std::string_view PgResult::Text(int row, int col) const {
  return std::string_view(PQgetvalue(result_, row, col),
                          static_cast<size_t>(PQgetlength(result_, row, col)));
}

int64_t PgResult::Int(int row, int col) const {
  const std::string_view text = Text(row, col);
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

double PgResult::Double(int row, int col) const {
  // PQgetvalue's text is NUL-terminated; strtod reads "Infinity" and "NaN" too.
  return std::strtod(PQgetvalue(result_, row, col), nullptr);
}

bool PgResult::Bytea(int row, int col, std::string* out) const {
  const std::string_view text = Text(row, col);
  out->clear();
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' || text.size() % 2 != 0) return false;
  out->resize((text.size() - 2) / 2);
  for (size_t i = 0; i < out->size(); ++i) {
    const int hi = HexValue(text[2 + 2 * i]);
    const int lo = HexValue(text[3 + 2 * i]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<char>(hi * 16 + lo);
  }
  return true;
}

// ---- PgConnection ----

PgConnection::PgConnection(pg_conn* conn, PgConnectOptions options)
    : conn_(conn), options_(std::move(options)) {}

PgConnection::~PgConnection() { PQfinish(conn_); }

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const PgConnectOptions& options) {
  const int timeout_s = std::max(2, (options.connect_timeout_ms + 999) / 1000);
  const std::string timeout = std::to_string(timeout_s);
  // Keywords before dbname are defaults the connection string may override;
  // the ones after it are forced.
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname",
                            "client_encoding", nullptr};
  const char* values[] = {timeout.c_str(), "msp", options.conninfo.c_str(), "UTF8", nullptr};
  pg_conn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Status::Unavailable("postgres: out of memory connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string why(TrimAsciiSpace(PQerrorMessage(conn)));
    PQfinish(conn);
    return Status::Unavailable("postgres: cannot connect to " + options.describe + ": " + why +
                               " (is PostgreSQL running and store.postgres_url right?)");
  }
  // Notices (CREATE ... IF NOT EXISTS, DROP ... CASCADE) are not errors: keep them off stderr.
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  std::unique_ptr<PgConnection> c(new PgConnection(conn, options));
  std::string setup = "SET search_path TO " + PgQuoteIdent(options.schema) +
                      "; SET statement_timeout = " + std::to_string(options.statement_timeout_ms);
  MSP_RETURN_IF_ERROR(c->Script(setup, "set up the session"));
  return c;
}

bool PgConnection::broken() const { return PQstatus(conn_) != CONNECTION_OK; }

bool PgConnection::idle() const { return PQtransactionStatus(conn_) == PQTRANS_IDLE; }

int PgConnection::socket() const { return broken() ? -1 : PQsocket(conn_); }

Status PgConnection::Failure(pg_result* result, std::string_view op) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_ = state != nullptr ? state : "";
  std::string why(TrimAsciiSpace(result != nullptr && PQresultErrorMessage(result)[0] != '\0'
                                     ? PQresultErrorMessage(result)
                                     : PQerrorMessage(conn_)));
  if (why.empty()) why = "unknown error";
  const std::string where = "postgres: " + std::string(op) + " on " + options_.describe + ": ";
  if (broken()) {
    return Status::Unavailable(where + "lost the connection (" + why +
                               "); the server may be restarting: retry later");
  }
  const std::string_view s = last_sqlstate_;
  if (s == "57014") {
    return Status::Unavailable(where + "timed out after store.postgres_statement_timeout_ms = " +
                               std::to_string(options_.statement_timeout_ms) + " ms (" + why + ")");
  }
  if (StartsWith(s, "08") || StartsWith(s, "53") || StartsWith(s, "57P") || s == "55P03") {
    return Status::Unavailable(where + why + "; retry later");
  }
  if (s == kPgSerializationFailure || s == kPgDeadlockDetected) {
    return Status::Conflict(where + why + "; retry");
  }
  if (s == kPgUniqueViolation) return Status::AlreadyExists(where + why);
  if (StartsWith(s, "22") || StartsWith(s, "23")) return Status::InvalidArgument(where + why);
  return Status::IoError(where + why);
}

Result<PgResult> PgConnection::Exec(const std::string& sql, const PgParams& params,
                                    std::string_view op, bool cache) {
  last_sqlstate_.clear();
  const int n = static_cast<int>(params.size());
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    values[i] = params.is_null_[i] ? nullptr : params.values_[i].data();
    lengths[i] = static_cast<int>(params.values_[i].size());
  }
  // Text parameters must be NUL-terminated: std::string's data() is.
  pg_result* result = nullptr;
  if (cache) {
    auto it = prepared_.find(sql);
    if (it == prepared_.end()) {
      const std::string name = "msp_" + std::to_string(prepared_.size() + 1);
      pg_result* prepared = PQprepare(conn_, name.c_str(), sql.c_str(), n, nullptr);
      if (prepared == nullptr || PQresultStatus(prepared) != PGRES_COMMAND_OK) {
        Status failure = Failure(prepared, op);
        if (prepared != nullptr) PQclear(prepared);
        return failure;
      }
      PQclear(prepared);
      it = prepared_.emplace(sql, name).first;
    }
    result = PQexecPrepared(conn_, it->second.c_str(), n, values.data(), lengths.data(),
                            params.formats_.data(), 0);
  } else {
    result = PQexecParams(conn_, sql.c_str(), n, nullptr, values.data(), lengths.data(),
                          params.formats_.data(), 0);
  }
  const ExecStatusType status = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    Status failure = Failure(result, op);
    if (result != nullptr) PQclear(result);
    return failure;
  }
  return PgResult(result);
}

Status PgConnection::Script(std::string_view sql, std::string_view op) {
  last_sqlstate_.clear();
  const std::string text(sql);
  pg_result* result = PQexec(conn_, text.c_str());
  const ExecStatusType status = result != nullptr ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    Status failure = Failure(result, op);
    if (result != nullptr) PQclear(result);
    return failure;
  }
  PQclear(result);
  return Status::Ok();
}

Result<std::vector<std::string>> PgConnection::DrainNotifications() {
  if (PQconsumeInput(conn_) == 0 || broken()) {
    return Status::Unavailable("postgres: lost the listening connection to " + options_.describe + ": " +
                               std::string(TrimAsciiSpace(PQerrorMessage(conn_))));
  }
  std::vector<std::string> payloads;
  while (PGnotify* notify = PQnotifies(conn_)) {
    payloads.emplace_back(notify->extra != nullptr ? notify->extra : "");
    PQfreemem(notify);
  }
  return payloads;
}

// ---- literals ----

std::string PgTextArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string PgIntArray(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  out += '}';
  return out;
}

std::string PgQuoteIdent(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace msp
