// The engine behind MemoryLayer: write policy, episodes, facts, retrieval,
// consolidation and index catch-up over one Store, one Embedder and the two
// derived indexes. Faces (CLI, REST, MCP, library) reach it only through
// include/msp/memory.h.
#ifndef MSP_CORE_ENGINE_H_
#define MSP_CORE_ENGINE_H_

#include <functional>
#include <memory>
#include <string>

#include "consolidate/extractor.h"
#include "embed/embedder.h"
#include "core/index_sync.h"
#include "index/index.h"
#include "msp/memory.h"
#include "store/store.h"

namespace msp {

// Everything the engine runs on, so tests can hand in their own parts.
struct EngineParts {
  std::unique_ptr<Store> store;
  std::unique_ptr<Embedder> embedder;
  std::unique_ptr<LexicalIndex> lexical;
  std::unique_ptr<VectorIndex> vector;
  std::unique_ptr<Extractor> extractor;
  std::shared_ptr<Clock> clock;
  // Where the vector index is persisted ("": in memory only); see
  // core/index_sync.h.
  std::string vector_file;
  // Where a closing engine spools its pending access bumps ("": it writes
  // them to the store); see core/access_log.h.
  std::string access_spool;
  // Where warnings go (a damaged index rebuilt, ...); empty: standard error.
  WarnFn warn;
};

// Builds an engine from parts. Checks that the store's vectors were made by
// this embedder and that no reembed is unfinished (FailedPrecondition
// otherwise, naming `msp reembed`) and records the embedder on first use.
Result<std::unique_ptr<MemoryLayer>> MakeEngine(const Options& options, EngineParts parts);

// MemoryLayer::Reembed over parts: re-embeds the store's records with
// parts.embedder, without the embedder check MakeEngine makes.
Result<ReembedProgress> ReembedStore(const Options& options, EngineParts parts, const ReembedOptions& reembed,
                                     const std::function<void(const ReembedProgress&)>& progress);

}  // namespace msp

#endif  // MSP_CORE_ENGINE_H_
