// ConsolidationWorker: a single thread draining a queue of sessions, with
// retries after a backoff.
#include "consolidate/worker.h"

#include <algorithm>

namespace msp {

ConsolidationWorker::ConsolidationWorker(Job job, ConsolidationWorkerOptions options, Listener listener)
    : job_(std::move(job)), options_(options), listener_(std::move(listener)) {
  thread_ = std::thread([this] { Run(); });
}

ConsolidationWorker::~ConsolidationWorker() { Stop(); }

std::string ConsolidationWorker::KeyOf(const Namespace& ns, const std::string& session) {
  Namespace base = ns;
  base.session.clear();
  return base.ToString() + "/session=" + session;
}

std::chrono::milliseconds ConsolidationWorker::Backoff(int attempts) const {
  long long ms = std::max(0, options_.initial_backoff_ms);
  for (int i = 1; i < attempts && ms < options_.max_backoff_ms; ++i) ms *= 2;
  return std::chrono::milliseconds(std::min<long long>(ms, std::max(0, options_.max_backoff_ms)));
}

void ConsolidationWorker::Enqueue(const Namespace& ns, const std::string& session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  const std::string key = KeyOf(ns, session);
  if (key == running_key_) {
    again_ = true;
    return;
  }
  if (!queued_keys_.insert(key).second) return;
  queue_.push_back(Item{key, ns, session, 0, std::chrono::steady_clock::now()});
  wake_.notify_all();
}

void ConsolidationWorker::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return stopping_ || (queue_.empty() && running_key_.empty()); });
}

void ConsolidationWorker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  idle_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ConsolidationWorker::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

ConsolidationWorker::Stats ConsolidationWorker::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.queued = queue_.size();
  s.busy = !running_key_.empty();
  return s;
}

void ConsolidationWorker::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopping_) break;
    if (queue_.empty()) {
      idle_.notify_all();
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      continue;
    }
    // The item whose time has come first.
    auto next = std::min_element(queue_.begin(), queue_.end(),
                                 [](const Item& a, const Item& b) { return a.ready_at < b.ready_at; });
    const auto now = std::chrono::steady_clock::now();
    if (next->ready_at > now) {
      const auto until = next->ready_at;
      wake_.wait_until(lock, until, [this] { return stopping_; });
      continue;  // re-pick: new work may have arrived
    }
    Item item = std::move(*next);
    queue_.erase(next);
    queued_keys_.erase(item.key);
    running_key_ = item.key;
    again_ = false;
    lock.unlock();
    Status status = job_(item.ns, item.session);
    if (listener_) listener_(item.ns, item.session, status);
    lock.lock();
    running_key_.clear();
    if (status.ok()) {
      ++stats_.completed;
    } else {
      ++stats_.failed_attempts;
      stats_.last_error = status.ToString();
      ++item.attempts;
      if (item.attempts >= options_.max_attempts) {
        ++stats_.given_up;
      } else if (!stopping_ && queued_keys_.insert(item.key).second) {
        item.ready_at = std::chrono::steady_clock::now() + Backoff(item.attempts);
        queue_.push_back(std::move(item));
        continue;
      }
    }
    if (again_ && !stopping_ && queued_keys_.insert(item.key).second) {
      queue_.push_back(Item{item.key, item.ns, item.session, 0, std::chrono::steady_clock::now()});
    }
    again_ = false;
  }
  idle_.notify_all();
}

}  // namespace msp
