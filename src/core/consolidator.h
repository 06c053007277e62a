// Consolidator: turns a session's episodes into durable facts. The
// extractor (core's Extractor: rules or a model) reads the episodes after
// the session's progress mark and proposes facts; they are planned through
// the write path (core/write_planner.h: twins merge, a contradicted fact is
// superseded, eviction past the per-user limit) and land in one batch with
// the new progress mark, so a crash neither loses nor duplicates facts.
//
// A session is consolidated when a caller asks (Consolidate, EndSession) or
// after every_n_episodes new steps (AfterEpisode); with
// consolidation.background set, on a worker thread from a queue kept in the
// store, so a restart finds what was left queued.
//
// Thread-safety: every method is safe from several threads; one
// consolidation runs at a time in a process, and servers sharing a store
// take a lease on the session.
#ifndef MSP_CORE_CONSOLIDATOR_H_
#define MSP_CORE_CONSOLIDATOR_H_

#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "consolidate/extractor.h"
#include "consolidate/worker.h"
#include "core/engine_context.h"
#include "core/retriever.h"
#include "core/write_planner.h"

namespace msp {

class Consolidator {
 public:
  // Every argument must outlive this object.
  Consolidator(const EngineContext& ctx, Extractor& extractor, WritePlanner& writes, Retriever& retriever)
      : ctx_(ctx), extractor_(extractor), writes_(writes), retriever_(retriever) {}

  // Starts the background worker (consolidation.background) and queues the
  // sessions a previous run left queued.
  Status StartBackground();

  // MemoryLayer::Consolidate: the session, or every session in `scope`
  // with episodes when `session` is empty.
  Result<ConsolidationReport> Consolidate(const Namespace& scope, const std::string& session);

  // MemoryLayer::EndSession. With a background worker the session is only
  // queued (an empty report).
  Result<ConsolidationReport> EndSession(const Namespace& scope, const std::string& session);

  // MemoryLayer::WaitForConsolidation: waits for the worker's queue.
  Status Wait();

  // Called after `episode` is stored: consolidates its session when it has
  // gathered every_n_episodes new steps (on the worker when
  // consolidation.background is set). A failed consolidation's error says
  // that the episode is stored.
  Status AfterEpisode(const Memory& episode, const std::string& actor);

 private:
  Result<ConsolidationReport> ConsolidateSession(const Namespace& ns, const std::string& session,
                                                 const std::string& actor);
  Result<int64_t> ConsolidatedUpTo(const Namespace& ns, const std::string& session);
  Status Queue(const Namespace& ns, const std::string& session);
  Status Unqueue(const Namespace& ns, const std::string& session);
  Result<nlohmann::json> ReadQueueMeta();

  const EngineContext& ctx_;
  Extractor& extractor_;
  WritePlanner& writes_;
  Retriever& retriever_;
  // One consolidation at a time in this process (the worker's and callers').
  std::mutex consolidate_mu_;
  std::mutex queue_meta_mu_;  // the read-modify-write of the stored queue
  // Last, so it stops (finishing its job) before the parts it uses go away.
  std::unique_ptr<ConsolidationWorker> worker_;
};

}  // namespace msp

#endif  // MSP_CORE_CONSOLIDATOR_H_
