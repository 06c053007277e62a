// The engine: MemoryLayer over a Store, an Embedder and the derived indexes.
// A thin coordinator (leveldb's DBImpl is the model): it owns the parts it
// is made of and hands each call to the part that does that job:
//   core/write_planner.h   writes: policy, twin search, merge, eviction,
//                          group commit
//   core/episodes.h        a session's steps
//   core/consolidator.h    episodes into facts, also in the background
//   core/retriever.h       ranked search: candidates, fusion, access
//   core/record_reader.h   reads by id, lists, history, changes, audit
//   core/reembedder.h      the embedder check and `msp reembed`
//   core/index_sync.h      the derived indexes caught up with the store
//   core/access_log.h      retrieval's access bookkeeping, batched
//   core/stats.h           `msp stats`
// The parts share an EngineContext (core/engine_context.h).
//
// Every write goes: validate -> policy -> build records -> one atomic
// Store::Apply (records, audit events, progress markers together). Indexes
// are never written directly: before each query they catch up from the
// store's change sequence, so any process's writes are seen by all.
#include "core/engine.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <utility>

#include "consolidate/llm_extractor.h"
#include "core/access_log.h"
#include "core/consolidator.h"
#include "core/engine_context.h"
#include "core/episodes.h"
#include "core/import_export.h"
#include "core/index_sync.h"
#include "core/record_reader.h"
#include "core/reembedder.h"
#include "core/retriever.h"
#include "core/stats.h"
#include "core/write_planner.h"
#include "core/write_policy.h"
#include "provider/embedder_factory.h"
#include "store/sqlite/encrypted_vfs.h"

namespace msp {
namespace {

class SystemClockImpl final : public Clock {
 public:
  TimeMs NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

void StderrWarn(const std::string& message) { std::cerr << "msp: warning: " << message << "\n"; }

class Engine final : public MemoryLayer {
 public:
  Engine(const Options& options, EngineParts parts)
      : options_(options),
        store_(std::move(parts.store)),
        embedder_(std::move(parts.embedder)),
        lexical_(std::move(parts.lexical)),
        vector_(std::move(parts.vector)),
        extractor_(std::move(parts.extractor)),
        clock_(parts.clock ? std::move(parts.clock) : SystemClock()),
        warn_(parts.warn ? std::move(parts.warn) : StderrWarn),
        index_sync_(*store_, *lexical_, *vector_, embedder_->id(), std::move(parts.vector_file), warn_),
        access_(*store_, std::move(parts.access_spool)),
        ctx_{options_, *store_, *embedder_, *lexical_, *vector_, *clock_, index_sync_, access_, write_mu_,
             disk_full_},
        reembedder_(ctx_),
        writes_(ctx_),
        retriever_(ctx_),
        reader_(ctx_),
        consolidator_(ctx_, *extractor_, writes_, retriever_),
        episodes_(ctx_, consolidator_) {}

  ~Engine() override { access_.Close(); }

  // The embedder check (core/reembedder.h), then the persisted vector
  // index is loaded. Before any other call.
  Status Init() {
    MSP_RETURN_IF_ERROR(reembedder_.CheckEmbedder());
    if (store_->read_only()) {
      warn_("the store " + store_->Describe() +
            " is read-only for this process (a read-only mount, or files it may not write): reads work, writes "
            "are refused, and the indexes are caught up in memory only");
    }
    return index_sync_.Open();
  }

  // Starts the background consolidation worker (consolidation.background)
  // and queues the sessions a previous run left queued. After Init().
  Status StartBackgroundConsolidation() { return consolidator_.StartBackground(); }

  // Catches the indexes up as other servers' writes commit; see
  // IndexSync::StartFollowing.
  void StartFollowingChanges() { index_sync_.StartFollowing(); }

  // MemoryLayer::Reembed; only on an engine made without Init.
  Result<ReembedProgress> ReembedAll(const ReembedOptions& opts,
                                     const std::function<void(const ReembedProgress&)>& progress) {
    return reembedder_.ReembedAll(opts, progress);
  }

  // ---- writes ---------------------------------------------------------

  Result<WriteResult> Write(const WriteRequest& r) override {
    MSP_ASSIGN_OR_RETURN(auto results, WriteMany({r}));
    return std::move(results.front());
  }

  Result<std::vector<WriteResult>> WriteMany(const std::vector<WriteRequest>& requests) override {
    return writes_.WriteMany(requests);
  }

  Result<WriteResult> AddFact(const FactRequest& r) override { return writes_.AddFact(r); }

  Result<WriteResult> SupersedeFact(const Namespace& scope, const std::string& old_id,
                                    const FactRequest& r) override {
    return writes_.SupersedeFact(scope, old_id, r);
  }

  Result<std::vector<Memory>> Commit(const RecordBatch& b) override { return writes_.Commit(b); }

  Status Delete(const Namespace& scope, const std::string& id, const std::string& reason,
                const std::string& actor) override {
    return writes_.Delete(scope, id, reason, actor);
  }

  // ---- episodes and consolidation ----------------------------------------

  Result<Memory> AddEpisode(const EpisodeStep& step) override { return episodes_.Add(step); }

  Result<std::vector<Memory>> LastSteps(const Namespace& scope, const std::string& session, int k) override {
    return episodes_.LastSteps(scope, session, k);
  }

  Result<ConsolidationReport> EndSession(const Namespace& scope, const std::string& session) override {
    return consolidator_.EndSession(scope, session);
  }

  Result<ConsolidationReport> Consolidate(const Namespace& scope, const std::string& session) override {
    return consolidator_.Consolidate(scope, session);
  }

  Status WaitForConsolidation() override { return consolidator_.Wait(); }

  // ---- reads ------------------------------------------------------------

  Result<std::vector<SearchHit>> Retrieve(const RetrieveRequest& r) override {
    return retriever_.Retrieve(r);
  }

  Result<RetrieveResult> Search(const RetrieveRequest& r) override { return retriever_.Search(r); }

  Result<Memory> Get(const Namespace& scope, const std::string& id) override {
    return reader_.Get(scope, id);
  }

  Result<std::vector<Memory>> List(const ListRequest& r) override { return reader_.List(r); }

  Result<std::vector<Memory>> History(const Namespace& scope, const std::string& id) override {
    return reader_.History(scope, id);
  }

  Result<int64_t> LastChangeSeq() override { return store_->LastSeq(); }

  Result<RecordChanges> ChangesSince(const Namespace& scope, int64_t after, int limit) override {
    return reader_.ChangesSince(scope, after, limit);
  }

  Result<std::vector<AuditEvent>> Audit(const Namespace& scope, const std::string& record_id,
                                        int limit) override {
    return reader_.Audit(scope, record_id, limit);
  }

  // ---- the store and the indexes as a whole -----------------------------

  Status Reindex() override { return index_sync_.Rebuild(/*lexical_too=*/true); }
  Status CatchUpIndexes() override { return index_sync_.CatchUp(); }
  Status PersistIndexes() override {
    index_sync_.PersistSoon();
    return Status::Ok();
  }
  Status WarmUp() override {
    store_->SetCacheBytes(kResidentStoreCacheBytes);
    // A quarter of the machine's memory at most (vector index.h, Warm).
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t quarter = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 4 : 0;
    lexical_->Warm(quarter / 16);
    vector_->Warm(quarter);
    (void)store_->FillCache();
    return Status::Ok();
  }
  Status FlushAccessLog() override {
    access_.Flush();
    return Status::Ok();
  }

  // Leaves both indexes caught up and the vector index persisted, so the
  // first query after an import does not pay for indexing it.
  Result<ImportReport> Import(std::istream& in, const std::string& actor) override {
    std::lock_guard<std::mutex> lock(write_mu_);
    Result<ImportReport> imported =
        ImportJsonl(in, *store_, *embedder_, options_, clock_->NowMs(), ctx_.ActorOf(actor));
    disk_full_.After(imported.status());
    MSP_ASSIGN_OR_RETURN(ImportReport report, std::move(imported));
    MSP_RETURN_IF_ERROR(index_sync_.CatchUpAndPersist());
    return report;
  }

  Result<int64_t> Export(const Namespace& scope, std::ostream& out) override {
    MSP_RETURN_IF_ERROR(ValidateCommon(scope, {}, "", 1.0, "", {}));
    access_.Flush();
    return ExportJsonl(*store_, scope, out);
  }

  Status CheckStore() override {
    MSP_RETURN_IF_ERROR(store_->LastSeq().status());
    if (store_->read_only()) {
      return Status::ReadOnly("the store " + store_->Describe() + " is read-only: reads work, writes are refused");
    }
    if (std::string full = disk_full_.message(); !full.empty()) return Status::DiskFull(std::move(full));
    return Status::Ok();
  }

  Result<Stats> GetStats(const Namespace& scope, std::optional<int> max_access_level) override {
    return CollectStats(ctx_, scope, max_access_level);
  }

 private:
  // The parts the engine runs on, then the ones it is made of; each after
  // what it uses, so it goes away first.
  const Options options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Embedder> embedder_;
  std::unique_ptr<LexicalIndex> lexical_;
  std::unique_ptr<VectorIndex> vector_;
  std::unique_ptr<Extractor> extractor_;
  std::shared_ptr<Clock> clock_;
  const WarnFn warn_;
  IndexSync index_sync_;  // after the parts it keeps in step
  AccessLog access_;
  std::mutex write_mu_;  // see EngineContext::write_mu
  DiskFullNote disk_full_;
  const EngineContext ctx_;
  Reembedder reembedder_;
  WritePlanner writes_;
  Retriever retriever_;
  RecordReader reader_;
  // Its worker stops (finishing its job) before the parts it uses go away.
  Consolidator consolidator_;
  Episodes episodes_;
};

}  // namespace

std::shared_ptr<Clock> SystemClock() {
  static std::shared_ptr<Clock> clock = std::make_shared<SystemClockImpl>();
  return clock;
}

Result<std::unique_ptr<MemoryLayer>> MakeEngine(const Options& options, EngineParts parts) {
  if (!parts.store || !parts.embedder || !parts.lexical || !parts.vector || !parts.extractor) {
    return Status::InvalidArgument("MakeEngine: every part must be given");
  }
  if (parts.vector->dimension() != parts.embedder->dimension()) {
    return Status::InvalidArgument("vector index dimension differs from the embedder's");
  }
  auto engine = std::make_unique<Engine>(options, std::move(parts));
  MSP_RETURN_IF_ERROR(engine->Init());
  if (options.consolidation.background) MSP_RETURN_IF_ERROR(engine->StartBackgroundConsolidation());
  if (options.store.backend == StoreBackend::kPostgres) engine->StartFollowingChanges();
  return std::unique_ptr<MemoryLayer>(std::move(engine));
}

Result<ReembedProgress> ReembedStore(const Options& options, EngineParts parts, const ReembedOptions& reembed,
                                     const std::function<void(const ReembedProgress&)>& progress) {
  if (!parts.store || !parts.embedder || !parts.lexical || !parts.vector || !parts.extractor) {
    return Status::InvalidArgument("ReembedStore: every part must be given");
  }
  if (parts.vector->dimension() != parts.embedder->dimension()) {
    return Status::InvalidArgument("vector index dimension differs from the embedder's");
  }
  Engine engine(options, std::move(parts));
  return engine.ReembedAll(reembed, progress);
}

namespace {

// The parts MemoryLayer::Open and MemoryLayer::Reembed run on.
Result<EngineParts> OpenParts(const Options& options, std::shared_ptr<Clock> clock) {
  EngineParts parts;
  MSP_ASSIGN_OR_RETURN(parts.store, OpenStore(options.store));
  MSP_ASSIGN_OR_RETURN(parts.embedder, OpenEmbedder(options.embedder, options.openai_api_key));
  const bool sync_lexical = options.store.synchronous == "full" || options.store.synchronous == "extra";
  // An encrypted store's indexes stay in memory, rebuilt from the store at
  // open (docs/encryption.md): on disk they would hold its text in the clear.
  const bool encrypted = options.store.backend == StoreBackend::kSqlite && EncryptionConfigured(options.store);
  MSP_ASSIGN_OR_RETURN(parts.lexical,
                       OpenLexicalIndex(options.store.data_dir + "/lexical", options.retrieval, sync_lexical,
                                        /*read_only=*/parts.store->read_only(), /*in_memory=*/encrypted));
  // Exact scan below 50,000 rows a tenant, the graph above; both are
  // persisted with the vectors (index_sync.h), and the graph is extended
  // only at save points, never by a process that replays a few changes.
  parts.vector = MakeVectorIndex(parts.embedder->dimension(), VectorIndexOptions{});
  if (!encrypted) parts.vector_file = options.store.data_dir + "/vector/index.msv";
  // Access bumps a closing process has not written wait beside the store
  // (in the clear, so not beside an encrypted one).
  if (!encrypted && options.store.backend == StoreBackend::kSqlite) parts.access_spool = options.store.data_dir + "/access.spool";
  // openai_api_key: the llm extractor's key fallback, for api.openai.com only.
  MSP_ASSIGN_OR_RETURN(parts.extractor, MakeConfiguredExtractor(options, options.openai_api_key));
  parts.clock = std::move(clock);
  return parts;
}

}  // namespace

Result<std::unique_ptr<MemoryLayer>> MemoryLayer::Open(const Options& options, std::shared_ptr<Clock> clock) {
  MSP_ASSIGN_OR_RETURN(EngineParts parts, OpenParts(options, std::move(clock)));
  return MakeEngine(options, std::move(parts));
}

Result<ReembedProgress> MemoryLayer::Reembed(const Options& options, const ReembedOptions& reembed,
                                             const std::function<void(const ReembedProgress&)>& progress,
                                             std::shared_ptr<Clock> clock) {
  MSP_ASSIGN_OR_RETURN(EngineParts parts, OpenParts(options, std::move(clock)));
  return ReembedStore(options, std::move(parts), reembed, progress);
}

}  // namespace msp
