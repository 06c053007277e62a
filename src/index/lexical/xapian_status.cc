// The lexical index's errors (xapian_status.h): what a Xapian exception
// says about the index's files, as a Status with what to do about it.
#include "index/lexical/xapian_status.h"

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

#include <xapian.h>

namespace msp::xapian_lexical {
namespace {

// True when the system error behind `e` (if any) is `err`.
bool SystemErrorIs(const Xapian::Error& e, int err) {
  const char* sys = e.get_error_string();
  return sys != nullptr && std::string_view(sys) == std::strerror(err);
}

}  // namespace

bool IsDamage(const Xapian::Error& e) {
  const std::string type = e.get_type();
  if (type == "DatabaseCorruptError" || type == "DatabaseVersionError") return true;
  if (type != "DatabaseError" && type != "DatabaseOpeningError" && type != "DatabaseNotFoundError") return false;
  const char* sys = e.get_error_string();
  if (sys == nullptr || *sys == '\0') return true;  // the data itself is wrong ("EOF reading block 0")
  return SystemErrorIs(e, ENOENT) || SystemErrorIs(e, ENOTDIR);
}

Status FromXapian(const std::string& dir, const char* op, const Xapian::Error& e) {
  std::string msg = "lexical index " + dir + ": " + op + ": " + e.get_type() + ": " + e.get_msg();
  if (!e.get_context().empty()) msg += " (" + e.get_context() + ")";
  if (e.get_error_string() != nullptr && *e.get_error_string() != '\0') msg += ": " + std::string(e.get_error_string());
  const std::string type = e.get_type();
  if (type == "DatabaseLockError") return Status::Unavailable(msg + "; another writer holds the lock, retry");
  if (IsDamage(e)) return Status::Corruption(msg + "; the index is damaged: it is set aside and rebuilt from the store");
  if (SystemErrorIs(e, ENOSPC) || SystemErrorIs(e, EDQUOT)) {
    return Status::DiskFull(msg + "; the disk is full: free space and retry");
  }
  return Status::IoError(msg);
}

Result<int64_t> ParseSeq(const std::string& dir, const std::string& s) {
  if (s.empty()) return int64_t{0};
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
    return Status::Corruption("lexical index " + dir + ": bad last_seq metadata '" + s +
                              "'; the index is damaged: it is set aside and rebuilt from the store");
  }
  return v;
}

}  // namespace msp::xapian_lexical
