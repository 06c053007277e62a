// AccessLog: retrieval's access bookkeeping, batched.
#include "core/access_log.h"

#include <algorithm>
#include <utility>

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

void AccessLog::Flush() {
  std::vector<std::string> ids;
  TimeMs at = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) return;
    ids.swap(pending_);
    at = std::exchange(pending_at_, 0);
  }
  (void)store_.RecordAccess(ids, at);
}

}  // namespace msp
