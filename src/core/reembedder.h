// Reembedder: which embedder a store's vectors come from. At open it checks
// that the configured embedder is the one the store's meta names (a new
// store takes it); `msp reembed` (MemoryLayer::Reembed) moves a store to
// another embedder by re-embedding every record, resumably.
//
// Thread-safety: CheckEmbedder runs once, before the engine serves calls;
// ReembedAll runs alone on an engine that serves no other call.
#ifndef MSP_CORE_REEMBEDDER_H_
#define MSP_CORE_REEMBEDDER_H_

#include <functional>
#include <string>
#include <vector>

#include "core/engine_context.h"

namespace msp {

class Reembedder {
 public:
  // `ctx` must outlive this object.
  explicit Reembedder(const EngineContext& ctx) : ctx_(ctx) {}

  // The embedder check: a store's vectors all come from one embedder, the
  // one its meta names. A new store takes the configured embedder (and a
  // uid); any other store must be re-embedded (`msp reembed`, instant for a
  // store without records) before another embedder may use it, and a store
  // with an unfinished reembed is refused until that run is finished
  // (FailedPrecondition naming `msp reembed`).
  Status CheckEmbedder();

  // Re-embeds every record not yet carrying the context's embedder's vector
  // (MemoryLayer::Reembed). The target is marked in the store first, so
  // CheckEmbedder refuses the store until a run finishes; each batch of
  // vectors is one atomic write, so a run may stop anywhere and the next
  // one skips what is done. Only on an engine whose embedder was not checked.
  Result<ReembedProgress> ReembedAll(const ReembedOptions& opts,
                                     const std::function<void(const ReembedProgress&)>& progress);

 private:
  Status EnsureStoreUid();
  Result<std::vector<Memory>> ReembedBatch(const std::vector<std::string>& ids);
  Result<bool> StoreIsEmpty();

  const EngineContext& ctx_;
};

}  // namespace msp

#endif  // MSP_CORE_REEMBEDDER_H_
