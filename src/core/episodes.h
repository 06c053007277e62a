// Episodes: the episodic layer — a session's steps, added one at a time
// with a step number unique in the session (the next free one when the
// caller gives none, even under writers in other processes), and read back
// as a session's last steps. Adding a step may trigger the session's
// consolidation (core/consolidator.h). A step with a request id is added
// once: a repeat answers the first step's record (core/idempotency.h).
//
// Thread-safety: every method is safe from several threads.
#ifndef MSP_CORE_EPISODES_H_
#define MSP_CORE_EPISODES_H_

#include <optional>
#include <string>
#include <vector>

#include "core/consolidator.h"
#include "core/engine_context.h"

namespace msp {

class Episodes {
 public:
  // `ctx` and `consolidator` must outlive this object.
  Episodes(const EngineContext& ctx, Consolidator& consolidator) : ctx_(ctx), consolidator_(consolidator) {}

  // MemoryLayer::AddEpisode and MemoryLayer::LastSteps.
  Result<Memory> Add(const EpisodeStep& step);
  Result<std::vector<Memory>> LastSteps(const Namespace& scope, const std::string& session, int k);

 private:
  // The record a step with this request id (and `hash`) already added;
  // none when the key is free; Conflict when it was used for another step.
  Result<std::optional<Memory>> RepeatOf(const EpisodeStep& step, const std::string& hash, TimeMs now);
  Result<int64_t> LastStepNumber(const Namespace& ns, const std::string& session);

  const EngineContext& ctx_;
  Consolidator& consolidator_;
};

}  // namespace msp

#endif  // MSP_CORE_EPISODES_H_
