// The background consolidation worker: one thread and a queue of sessions
// to consolidate, so that the writes that trigger consolidation never wait
// for a model.
//
// The worker knows nothing about stores or models: it runs the job it was
// given for each queued (namespace, session). The job itself must be
// restartable (the engine's consolidation lands its facts and its progress
// marker in one atomic batch), so a job cut short by a crash or a Stop is
// simply run again later.
//
// Thread-safe. The destructor stops the worker (see Stop()).
#ifndef MSP_CONSOLIDATE_WORKER_H_
#define MSP_CONSOLIDATE_WORKER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "msp/status.h"
#include "msp/types.h"

namespace msp {

struct ConsolidationWorkerOptions {
  // Attempts per queued session before it is given up (its episodes stay
  // unconsolidated until the session is queued again).
  int max_attempts = 3;
  int initial_backoff_ms = 2000;  // wait before the 2nd attempt, doubled after each
  int max_backoff_ms = 60000;
};

class ConsolidationWorker {
 public:
  using Job = std::function<Status(const Namespace& ns, const std::string& session)>;
  // Called after each job: its session and what it returned (may be empty).
  using Listener = std::function<void(const Namespace& ns, const std::string& session, const Status& status)>;

  struct Stats {
    int64_t completed = 0;        // jobs that returned ok
    int64_t failed_attempts = 0;  // attempts that returned an error
    int64_t given_up = 0;         // sessions dropped after max_attempts
    std::string last_error;       // the last error's text ("" if none)
    size_t queued = 0;            // waiting (retries included)
    bool busy = false;            // a job is running
  };

  explicit ConsolidationWorker(Job job, ConsolidationWorkerOptions options = {}, Listener listener = nullptr);
  ~ConsolidationWorker();
  ConsolidationWorker(const ConsolidationWorker&) = delete;
  ConsolidationWorker& operator=(const ConsolidationWorker&) = delete;

  // Queues the session unless it is already waiting; a session queued while
  // its job runs is run once more afterwards (new episodes may have come).
  // Never blocks on a job. Ignored after Stop().
  void Enqueue(const Namespace& ns, const std::string& session);

  // Blocks until nothing is queued or running (retries waiting for their
  // backoff included: they run or are given up first).
  void Drain();

  // Lets the running job finish, then ends the thread; what is still queued
  // is dropped (the job's own progress marker keeps it resumable).
  // Idempotent.
  void Stop();

  Stats GetStats() const;
  // True once Stop() has begun.
  bool stopping() const;

 private:
  struct Item {
    std::string key;
    Namespace ns;
    std::string session;
    int attempts = 0;
    std::chrono::steady_clock::time_point ready_at;
  };
  static std::string KeyOf(const Namespace& ns, const std::string& session);
  void Run();
  std::chrono::milliseconds Backoff(int attempts) const;

  Job job_;
  ConsolidationWorkerOptions options_;
  Listener listener_;

  mutable std::mutex mu_;
  std::condition_variable wake_;   // the thread: new work or stop
  std::condition_variable idle_;   // Drain(): the queue emptied
  std::deque<Item> queue_;
  std::set<std::string> queued_keys_;
  std::string running_key_;
  bool again_ = false;             // running_key_ was queued while it ran
  bool stopping_ = false;
  Stats stats_;
  std::thread thread_;
};

}  // namespace msp

#endif  // MSP_CONSOLIDATE_WORKER_H_
