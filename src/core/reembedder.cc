// Reembedder: the embedder check at open and `msp reembed`.
#include "core/reembedder.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/import_export.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

constexpr char kEmbedderMetaKey[] = "embedder_id";
// The embedder an unfinished `msp reembed` moves the store to ("" or absent: none).
constexpr char kReembedTargetMetaKey[] = "reembed_target";

}  // namespace

Status Reembedder::CheckEmbedder() {
  MSP_ASSIGN_OR_RETURN(std::optional<std::string> recorded, ctx_.store.GetMeta(kEmbedderMetaKey));
  MSP_ASSIGN_OR_RETURN(std::optional<std::string> target, ctx_.store.GetMeta(kReembedTargetMetaKey));
  const std::string id = ctx_.embedder.id();
  if (target && !target->empty()) {
    return Status::FailedPrecondition(
        "the store at " + ctx_.store.Describe() + " is being re-embedded from '" + recorded.value_or("") +
        "' to '" + *target + "' (an unfinished `msp reembed`); configure the embedder '" + *target +
        "' and run `msp reembed` to finish, or configure '" + recorded.value_or("") +
        "' and run `msp reembed` to go back");
  }
  if (!recorded) {
    WriteBatch batch;
    batch.meta.emplace_back(kEmbedderMetaKey, id);
    batch.meta.emplace_back(kStoreUidMetaKey, NewUuid(ctx_.clock.NowMs()));
    MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(batch));
    return Status::Ok();
  }
  if (*recorded == id) {
    MSP_RETURN_IF_ERROR(EnsureStoreUid());
    return Status::Ok();
  }
  MSP_ASSIGN_OR_RETURN(bool empty, StoreIsEmpty());
  return Status::FailedPrecondition(
      "the store at " + ctx_.store.Describe() + " holds vectors made by embedder '" + *recorded +
      "', but msp is configured with '" + id + "'; run `msp reembed` to rebuild every vector with '" + id +
      "'" + (empty ? std::string(" (the store has no records yet: it switches at once)") : std::string()) +
      ", or configure the embedder the store was made with (embedder.provider, embedder.model, "
      "embedder.dimension; for native also embedder.pooling, embedder.quantize)");
}

// A store made before stores had a uid gets one (index files name it).
// Not written when the store refuses writes: the vector index is then
// not persisted.
Status Reembedder::EnsureStoreUid() {
  MSP_ASSIGN_OR_RETURN(std::optional<std::string> uid, ctx_.store.GetMeta(kStoreUidMetaKey));
  if (uid && !uid->empty()) return Status::Ok();
  WriteBatch batch;
  batch.meta.emplace_back(kStoreUidMetaKey, NewUuid(ctx_.clock.NowMs()));
  (void)ctx_.ApplyBatch(batch);
  return Status::Ok();
}

Result<ReembedProgress> Reembedder::ReembedAll(const ReembedOptions& opts,
                                               const std::function<void(const ReembedProgress&)>& progress) {
  if (opts.batch_size < 0 || opts.max_batches < 0) {
    return Status::InvalidArgument("reembed batch_size and max_batches must be >= 0");
  }
  const auto started = std::chrono::steady_clock::now();
  ReembedProgress p;
  p.to_embedder = ctx_.embedder.id();
  MSP_ASSIGN_OR_RETURN(std::optional<std::string> recorded, ctx_.store.GetMeta(kEmbedderMetaKey));
  MSP_ASSIGN_OR_RETURN(std::optional<std::string> target, ctx_.store.GetMeta(kReembedTargetMetaKey));
  p.from_embedder = recorded.value_or("");
  const size_t batch_size = static_cast<size_t>(
      opts.batch_size > 0 ? opts.batch_size : std::max(1, ctx_.options.embedder.batch_size));
  auto report = [&]() {
    p.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                        started)
                       .count();
    if (progress) progress(p);
  };
  // A record without a vector of this size (a malformed embedding in the
  // store, read as none) is made again too, whatever embedder it names.
  const size_t dim = static_cast<size_t>(ctx_.embedder.dimension());
  std::map<std::string, int64_t> by_tenant;  // records re-embedded per tenant, for the audit
  int batches = 0;
  // Records written meanwhile by a process still on the old embedder are
  // caught by the next pass; a few passes settle it.
  constexpr int kPasses = 3;
  for (int pass = 0;; ++pass) {
    std::vector<std::string> todo;
    int64_t total = 0;
    MSP_RETURN_IF_ERROR(ctx_.store.Scan([&](const Memory& m) {
      ++total;
      if (m.embedder_id != p.to_embedder || m.embedding.size() != dim) todo.push_back(m.id);
      return true;
    }));
    p.total = total;
    p.done = total - static_cast<int64_t>(todo.size());
    if (todo.empty()) break;
    if (pass == kPasses) {
      return Status::Unavailable(
          "reembed: records made by the old embedder kept arriving from another process; stop the other "
          "msp processes on " + ctx_.store.Describe() + " and run `msp reembed` again to finish");
    }
    if (!target || *target != p.to_embedder) {
      WriteBatch mark;
      mark.meta.emplace_back(kReembedTargetMetaKey, p.to_embedder);
      MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(mark));
      target = p.to_embedder;
    }
    if (pass == 0) report();
    for (size_t i = 0; i < todo.size(); i += batch_size) {
      if (opts.max_batches > 0 && batches >= opts.max_batches) {
        report();
        return p;
      }
      const std::vector<std::string> ids(todo.begin() + static_cast<std::ptrdiff_t>(i),
                                         todo.begin() + static_cast<std::ptrdiff_t>(std::min(todo.size(), i + batch_size)));
      MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, ReembedBatch(ids));
      for (const Memory& m : stored) ++by_tenant[m.ns.tenant];
      ++batches;
      p.embedded += static_cast<int64_t>(stored.size());
      p.done += static_cast<int64_t>(stored.size());
      report();
    }
  }
  // Every record carries the new vector: switch the store's identity.
  const TimeMs now = ctx_.clock.NowMs();
  WriteBatch finish;
  finish.meta.emplace_back(kEmbedderMetaKey, p.to_embedder);
  finish.meta.emplace_back(kReembedTargetMetaKey, "");
  for (const auto& [tenant, n] : by_tenant) {
    finish.audit.push_back(MakeAudit(now, ctx_.ActorOf(""), AuditAction::kUpdate, "", tenant,
                                     "re-embedded " + std::to_string(n) + " records with " + p.to_embedder,
                                     json{{"from", p.from_embedder}, {"to", p.to_embedder}, {"records", n}}));
  }
  MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(finish));
  // The vector index holds the new vectors only, and is persisted for
  // the new embedder (the old file no longer fits the store).
  MSP_RETURN_IF_ERROR(EnsureStoreUid());
  MSP_RETURN_IF_ERROR(ctx_.index_sync.Open());
  MSP_RETURN_IF_ERROR(ctx_.index_sync.Rebuild(/*lexical_too=*/false));
  p.finished = true;
  report();
  return p;
}

// Stores the records `ids` (those that still exist and are not done) with
// this engine's vectors, in one write that holds only if none of them
// changed since it was read (compare-and-swap on seq); a record another
// process changed meanwhile is read and, if its text changed, embedded
// again. Returns the records stored.
Result<std::vector<Memory>> Reembedder::ReembedBatch(const std::vector<std::string>& ids) {
  const std::string id = ctx_.embedder.id();
  std::map<std::string, std::pair<std::string, std::vector<float>>> made;  // id -> (text, vector)
  constexpr int kAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    MSP_ASSIGN_OR_RETURN(auto records, ctx_.store.GetMany(ids, /*with_embeddings=*/true));
    const size_t dim = static_cast<size_t>(ctx_.embedder.dimension());
    records.erase(std::remove_if(records.begin(), records.end(),
                                 [&](const Memory& m) { return m.embedder_id == id && m.embedding.size() == dim; }),
                  records.end());
    std::vector<Memory> fresh;
    for (const Memory& m : records) {
      auto it = made.find(m.id);
      if (it == made.end() || it->second.first != m.text) fresh.push_back(m);
    }
    MSP_RETURN_IF_ERROR(EmbedRecords(ctx_.embedder, &fresh));
    for (Memory& m : fresh) made[m.id] = {m.text, std::move(m.embedding)};
    WriteBatch batch;
    for (Memory& m : records) {
      batch.expect_seq.emplace_back(m.id, m.seq);
      m.embedding = made[m.id].second;
      m.embedder_id = id;
      batch.puts.push_back(std::move(m));
    }
    if (batch.puts.empty()) return batch.puts;
    Status applied = ctx_.ApplyBatch(batch);
    if (applied.ok()) return std::move(batch.puts);
    if (applied.code() != StatusCode::kConflict || attempt == kAttempts) return applied;
  }
}

// True when the store holds no record at all (any tenant).
Result<bool> Reembedder::StoreIsEmpty() {
  bool empty = true;
  MSP_RETURN_IF_ERROR(ctx_.store.Scan([&](const Memory&) {
    empty = false;
    return false;
  }));
  return empty;
}

}  // namespace msp
