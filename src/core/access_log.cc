// AccessLog: retrieval's access bookkeeping, batched, and spooled at close.
//
// The spool is a text file of batches, one JSON object a line
// ({"at": ms, "ids": [...]}), each written after a newline of its own so
// that a line torn by a killed process never runs into the next batch: a
// fold skips every line that does not parse.
#include "core/access_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "util/data_file.h"
#include "util/file_io.h"
#include "util/owned_fd.h"

namespace msp {

void AccessLog::Note(const std::vector<std::string>& ids, TimeMs at) {
  if (store_.read_only()) return;  // no bookkeeping on a store this process may not write
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) first_at_ = at;
    pending_.insert(pending_.end(), ids.begin(), ids.end());
    pending_at_ = std::max(pending_at_, at);
    if (at - first_at_ < kFlushIntervalMs) return;
  }
  Flush();
}

TimeMs AccessLog::TakePending(std::vector<std::string>* ids) {
  std::lock_guard<std::mutex> lock(mu_);
  ids->swap(pending_);
  return std::exchange(pending_at_, 0);
}

void AccessLog::Flush() {
  std::vector<std::string> ids;
  const TimeMs at = TakePending(&ids);
  if (!ids.empty()) (void)store_.RecordAccess(ids, at);
  FoldSpool();
}

void AccessLog::Close() {
  std::vector<std::string> ids;
  const TimeMs at = TakePending(&ids);
  if (ids.empty()) return;
  size_t size = 0;
  if (spool_.empty() || !Append(ids, at, &size)) {
    (void)store_.RecordAccess(ids, at);
    return;
  }
  if (size >= kSpoolFoldBytes) FoldSpool();
}

bool AccessLog::Append(const std::vector<std::string>& ids, TimeMs at, size_t* size) {
  const nlohmann::json batch = {{"at", at}, {"ids", ids}};
  const std::string line = "\n" + batch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  OwnedFd fd(::open(spool_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode));
  if (!fd.valid() || flock(fd.get(), LOCK_EX) != 0) return false;  // closing fd unlocks
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return false;
  if (!WriteFileAt(fd.get(), static_cast<uint64_t>(st.st_size), line.data(), line.size())) {
    (void)!ftruncate(fd.get(), st.st_size);  // no part of a batch may be folded twice
    return false;
  }
  *size = static_cast<size_t>(st.st_size) + line.size();
  return true;
}

void AccessLog::FoldSpool() {
  if (spool_.empty()) return;
  struct stat st;
  if (stat(spool_.c_str(), &st) != 0 || st.st_size == 0) return;
  OwnedFd fd(::open(spool_.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.valid() || flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return;
  if (fstat(fd.get(), &st) != 0 || st.st_size == 0) return;
  std::string text(static_cast<size_t>(st.st_size), '\0');
  if (!ReadFileAt(fd.get(), 0, text.data(), text.size())) return;
  // Each complete line that parses is a batch; the rest (a line torn by a
  // killed process, which has no newline yet or was followed by another
  // batch's) is skipped.
  size_t keep_from = text.size();
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin);
    if (end == std::string::npos) break;
    const std::string_view line(text.data() + begin, end - begin);
    const size_t next = end + 1;
    if (!line.empty()) {
      nlohmann::json batch = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      const bool valid = batch.is_object() && batch.contains("at") && batch["at"].is_number_integer() &&
                         batch.contains("ids") && batch["ids"].is_array() &&
                         std::all_of(batch["ids"].begin(), batch["ids"].end(),
                                     [](const nlohmann::json& id) { return id.is_string(); });
      if (valid && !store_.RecordAccess(batch["ids"].get<std::vector<std::string>>(), batch["at"].get<TimeMs>())
                         .ok()) {
        keep_from = begin;  // the store refuses now: this batch and the later ones wait
        break;
      }
    }
    begin = next;
  }
  const std::string rest = keep_from < text.size() ? text.substr(keep_from) : std::string();
  if (ftruncate(fd.get(), 0) == 0 && !rest.empty()) (void)WriteFileAt(fd.get(), 0, rest.data(), rest.size());
}

}  // namespace msp
