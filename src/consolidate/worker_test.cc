// ConsolidationWorker: runs queued sessions on its thread, coalesces
// repeats, retries failures with backoff, gives up, and stops cleanly.
#include "consolidate/worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>

#include "tests/support/test_util.h"

namespace msp {
namespace {

Namespace Ns(const std::string& user) {
  Namespace ns;
  ns.user = user;
  return ns;
}

// A gate the test opens to let a blocked job finish.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(ConsolidationWorkerTest, RunsQueuedSessionsOffTheCallersThread) {
  std::mutex mu;
  std::vector<std::string> ran;
  std::thread::id job_thread;
  ConsolidationWorker worker([&](const Namespace& ns, const std::string& session) {
    std::lock_guard<std::mutex> lock(mu);
    ran.push_back(ns.user + "/" + session);
    job_thread = std::this_thread::get_id();
    return Status::Ok();
  });
  worker.Enqueue(Ns("ann"), "s1");
  worker.Enqueue(Ns("bob"), "s2");
  worker.Drain();
  EXPECT_EQ(ran, (std::vector<std::string>{"ann/s1", "bob/s2"}));
  EXPECT_NE(job_thread, std::this_thread::get_id());
  ConsolidationWorker::Stats s = worker.GetStats();
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.queued, 0u);
  EXPECT_FALSE(s.busy);
}

TEST(ConsolidationWorkerTest, RepeatsCoalesceAndASessionQueuedWhileRunningRunsAgain) {
  Gate started;
  Gate release;
  std::atomic<int> runs{0};
  ConsolidationWorker worker([&](const Namespace&, const std::string& session) {
    if (session == "s1" && runs.fetch_add(1) == 0) {
      started.Open();
      release.Wait();
    }
    return Status::Ok();
  });
  worker.Enqueue(Ns("ann"), "s1");
  started.Wait();  // s1 is running
  for (int i = 0; i < 5; ++i) worker.Enqueue(Ns("ann"), "s1");
  EXPECT_EQ(worker.GetStats().queued, 0u);  // remembered as "again", not queued five times
  EXPECT_TRUE(worker.GetStats().busy);
  release.Open();
  worker.Drain();
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(worker.GetStats().completed, 2);
}

TEST(ConsolidationWorkerTest, FailuresAreRetriedThenGivenUp) {
  std::atomic<int> calls{0};
  ConsolidationWorkerOptions o;
  o.max_attempts = 3;
  o.initial_backoff_ms = 1;
  o.max_backoff_ms = 2;
  std::vector<std::string> heard;
  std::mutex mu;
  ConsolidationWorker worker(
      [&](const Namespace&, const std::string& session) {
        ++calls;
        if (session == "flaky" && calls.load() == 1) return Status::Unavailable("model down");
        if (session == "broken") return Status::Unavailable("model still down");
        return Status::Ok();
      },
      o,
      [&](const Namespace&, const std::string& session, const Status& st) {
        std::lock_guard<std::mutex> lock(mu);
        heard.push_back(session + ":" + (st.ok() ? "ok" : "error"));
      });
  worker.Enqueue(Ns("ann"), "flaky");
  worker.Drain();
  EXPECT_EQ(calls.load(), 2);
  worker.Enqueue(Ns("ann"), "broken");
  worker.Drain();
  EXPECT_EQ(calls.load(), 5);
  ConsolidationWorker::Stats s = worker.GetStats();
  EXPECT_EQ(s.completed, 1);
  EXPECT_EQ(s.failed_attempts, 4);
  EXPECT_EQ(s.given_up, 1);
  EXPECT_NE(s.last_error.find("model still down"), std::string::npos);
  EXPECT_EQ(heard, (std::vector<std::string>{"flaky:error", "flaky:ok", "broken:error", "broken:error",
                                             "broken:error"}));
}

TEST(ConsolidationWorkerTest, StopLetsTheRunningJobFinishAndDropsTheQueue) {
  Gate started;
  Gate release;
  std::atomic<int> finished{0};
  std::map<std::string, int> seen;
  auto worker = std::make_unique<ConsolidationWorker>([&](const Namespace&, const std::string& session) {
    if (session == "slow") {
      started.Open();
      release.Wait();
    }
    ++seen[session];
    ++finished;
    return Status::Ok();
  });
  worker->Enqueue(Ns("ann"), "slow");
  started.Wait();
  worker->Enqueue(Ns("ann"), "later");
  std::thread stopper([&] { worker->Stop(); });
  while (!worker->stopping()) std::this_thread::yield();  // Stop has begun before the job ends
  release.Open();
  stopper.join();
  EXPECT_EQ(finished.load(), 1);
  EXPECT_EQ(seen.count("later"), 0u);
  worker->Enqueue(Ns("ann"), "after-stop");  // ignored
  worker->Drain();                            // returns at once
  worker.reset();
  EXPECT_EQ(finished.load(), 1);
}

}  // namespace
}  // namespace msp
