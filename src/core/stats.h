// Stats: what `msp stats` reports about a scope — record counts by state,
// kind and layer, how far each derived index has caught up with the
// store's change sequence, the audit trail's size, the embedder and where
// the store lives.
#ifndef MSP_CORE_STATS_H_
#define MSP_CORE_STATS_H_

#include <optional>

#include "core/engine_context.h"

namespace msp {

// MemoryLayer::GetStats: catches the indexes up first, so the applied seqs
// read as the store's last seq on a quiet store.
Result<Stats> CollectStats(const EngineContext& ctx, const Namespace& scope,
                           std::optional<int> max_access_level);

}  // namespace msp

#endif  // MSP_CORE_STATS_H_
