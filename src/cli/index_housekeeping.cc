// The long-lived commands' index housekeeping (see index_housekeeping.h).
#include "cli/index_housekeeping.h"

#include <algorithm>
#include <utility>

namespace msp {

IndexHousekeeping::IndexHousekeeping(MemoryLayer& engine, std::ostream& err, std::chrono::milliseconds idle,
                                     std::function<void()> warm)
    : engine_(engine), err_(err), thread_([this, idle, warm = std::move(warm)] { Run(idle, warm); }) {}

IndexHousekeeping::~IndexHousekeeping() { Stop(); }

void IndexHousekeeping::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  (void)engine_.PersistIndexes();
}

void IndexHousekeeping::Run(std::chrono::milliseconds idle, const std::function<void()>& warm) {
  if (const Status s = engine_.CatchUpIndexes(); !s.ok()) {
    err_ << "msp: warning: catching up the indexes at start: " << s.message() << std::endl;
  } else {
    (void)engine_.PersistIndexes();
  }
  (void)engine_.WarmUp();
  if (warm) warm();
  int64_t seen = -1;
  int64_t saved_at = -1;  // the sequence the last idle save covered
  auto last_save = std::chrono::steady_clock::now();
  auto next_look = last_save + idle;
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::min(idle, kAccessFlushEvery), [this] { return stopping_; })) {
    lock.unlock();
    (void)engine_.FlushAccessLog();
    if (std::chrono::steady_clock::now() < next_look) {
      lock.lock();
      continue;
    }
    next_look = std::chrono::steady_clock::now() + idle;
    if (Result<int64_t> seq = engine_.LastChangeSeq(); seq.ok()) {
      // Quiet since the last look, changed since the last save, and not
      // within kIdleSaveGap of it: a large index's file is not rewritten
      // for every write that comes alone.
      const auto now = std::chrono::steady_clock::now();
      if (*seq == seen && *seq != saved_at && now - last_save >= kIdleSaveGap &&
          engine_.CatchUpIndexes().ok()) {
        (void)engine_.PersistIndexes();
        saved_at = *seq;
        last_save = now;
      }
      seen = *seq;
    }
    lock.lock();
  }
}

}  // namespace msp
