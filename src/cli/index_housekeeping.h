// Index housekeeping for the long-lived commands (`msp serve`, `msp mcp`): a
// thread that catches the derived indexes up as the process starts, rather
// than in its first request, then warms the engine up (MemoryLayer::WarmUp:
// the vector file's pages mapped in, a larger store cache); writes the
// access bookkeeping of the requests' searches, so that no request waits
// for it; and writes the
// vector file whenever the store has been quiet for a while and the file
// lacks changes this process replayed, so that a process starting on the
// store afterwards (a hook, a write, a command without the resident path)
// replays nothing.
#ifndef MSP_CLI_INDEX_HOUSEKEEPING_H_
#define MSP_CLI_INDEX_HOUSEKEEPING_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <ostream>
#include <thread>

#include "msp/memory.h"

namespace msp {

// How long the store must be quiet (its change sequence still) before the
// file is written.
inline constexpr std::chrono::milliseconds kIdleSave{30000};
// How often the access bookkeeping is written (a search writes it itself
// when it finds a batch a second old: never, at this pace).
inline constexpr std::chrono::milliseconds kAccessFlushEvery{250};
// The least time between two such saves (each rewrites the whole file:
// ~270 MB at 100,000 records).
inline constexpr std::chrono::minutes kIdleSaveGap{5};

class IndexHousekeeping {
 public:
  // Starts the thread: CatchUpIndexes (a failure is a warning on `err`),
  // PersistIndexes, WarmUp; then FlushAccessLog every
  // kAccessFlushEvery, and every `idle` a look at the change sequence: when
  // it has not moved since the last look, but since the last such save, at
  // least kIdleSaveGap ago, CatchUpIndexes and PersistIndexes.
  // `engine` and `err` must outlive this object.
  // `warm`, when given, is called on the thread once WarmUp has returned.
  IndexHousekeeping(MemoryLayer& engine, std::ostream& err, std::chrono::milliseconds idle = kIdleSave,
                    std::function<void()> warm = {});
  // Stop().
  ~IndexHousekeeping();
  IndexHousekeeping(const IndexHousekeeping&) = delete;
  IndexHousekeeping& operator=(const IndexHousekeeping&) = delete;

  // Ends the thread, then asks for a last save of what this process
  // replayed (finished as the engine closes). Idempotent.
  void Stop();

 private:
  void Run(std::chrono::milliseconds idle, const std::function<void()>& warm);

  MemoryLayer& engine_;
  std::ostream& err_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;     // last: it uses the members above
};

}  // namespace msp

#endif  // MSP_CLI_INDEX_HOUSEKEEPING_H_
