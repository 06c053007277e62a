// Episodes: the episodic layer — a session's steps, added one at a time
// with a step number unique in the session (the next free one when the
// caller gives none, even under writers in other processes), and read back
// as a session's last steps. Adding a step may trigger the session's
// consolidation (core/consolidator.h).
//
// Thread-safety: every method is safe from several threads.
#ifndef MSP_CORE_EPISODES_H_
#define MSP_CORE_EPISODES_H_

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
  Result<int64_t> LastStepNumber(const Namespace& ns, const std::string& session);

  const EngineContext& ctx_;
  Consolidator& consolidator_;
};

}  // namespace msp

#endif  // MSP_CORE_EPISODES_H_
