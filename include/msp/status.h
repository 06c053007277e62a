// Status and Result<T>: how every fallible msp call reports failure.
//
// No exceptions cross the public API. A Status carries a code and a message
// that names what was wrong and what to do; Result<T> carries either a value
// or a non-ok Status. Both are [[nodiscard]].
#ifndef MSP_STATUS_H_
#define MSP_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace msp {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller's input is malformed; nothing changed
  kNotFound,           // no such record (or not visible to the caller)
  kAlreadyExists,
  kRefused,            // the write policy declined to store; reason in message
  kFailedPrecondition, // e.g. embedding dimension differs from the store's
  kConflict,           // a concurrent edit won; retry with fresh state
  kIoError,            // the file system or database failed
  kCorruption,
  kUnavailable,        // a backend is down or locked; retry later
  kInternal,
  kForbidden,          // the caller's clearance does not allow the call (Caller)
  kDiskFull,           // the disk holding the data is full; nothing was written
  kReadOnly,           // the data directory is read-only; writes are refused
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status Refused(std::string m) { return {StatusCode::kRefused, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
  static Status Conflict(std::string m) { return {StatusCode::kConflict, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Forbidden(std::string m) { return {StatusCode::kForbidden, std::move(m)}; }
  static Status DiskFull(std::string m) { return {StatusCode::kDiskFull, std::move(m)}; }
  static Status ReadOnly(std::string m) { return {StatusCode::kReadOnly, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsInvalidArgument() const { return code_ == StatusCode::kInvalidArgument; }
  bool IsRefused() const { return code_ == StatusCode::kRefused; }

  // "invalid_argument: text is empty"
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a T or a non-ok Status. REQUIRES: value() only when ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result built from an ok Status has no value");
    if (status_.ok()) status_ = Status::Internal("Result built from ok Status without a value");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace msp

// Early-return helpers for internal code.
#define MSP_RETURN_IF_ERROR(expr)            \
  do {                                       \
    ::msp::Status msp_status_ = (expr);      \
    if (!msp_status_.ok()) return msp_status_; \
  } while (0)

#define MSP_CONCAT_INNER_(a, b) a##b
#define MSP_CONCAT_(a, b) MSP_CONCAT_INNER_(a, b)
#define MSP_ASSIGN_OR_RETURN(lhs, expr) \
  MSP_ASSIGN_OR_RETURN_IMPL_(MSP_CONCAT_(msp_result_, __LINE__), lhs, expr)
#define MSP_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#endif  // MSP_STATUS_H_
