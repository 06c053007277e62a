// The long-lived commands' index housekeeping (see index_housekeeping.h).
#include "cli/index_housekeeping.h"

namespace msp {

IndexHousekeeping::IndexHousekeeping(MemoryLayer& engine, std::ostream& err, std::chrono::milliseconds idle)
    : engine_(engine), err_(err), thread_([this, idle] { Run(idle); }) {}

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

void IndexHousekeeping::Run(std::chrono::milliseconds idle) {
  if (const Status s = engine_.CatchUpIndexes(); !s.ok()) {
    err_ << "msp: warning: catching up the indexes at start: " << s.message() << std::endl;
  } else {
    (void)engine_.PersistIndexes();
  }
  int64_t seen = -1;
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, idle, [this] { return stopping_; })) {
    lock.unlock();
    if (Result<int64_t> seq = engine_.LastChangeSeq(); seq.ok()) {
      if (*seq == seen && engine_.CatchUpIndexes().ok()) (void)engine_.PersistIndexes();
      seen = *seq;
    }
    lock.lock();
  }
}

}  // namespace msp
