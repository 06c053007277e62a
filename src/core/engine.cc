// The engine: MemoryLayer over a Store, an Embedder and the derived indexes.
//
// Every write goes: validate -> policy -> build records -> one atomic
// Store::Apply (records, audit events, progress markers together). Indexes
// are never written directly: before each query they catch up from the
// store's change sequence, so any process's writes are seen by all.
#include "core/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/fusion.h"
#include "core/import_export.h"
#include "core/index_sync.h"
#include "core/rank/episode_context.h"
#include "core/write_policy.h"
#include "consolidate/llm_extractor.h"
#include "consolidate/worker.h"
#include "provider/embedder_factory.h"
#include "util/time.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

// Retrieve scores the sessions of the first hits as wholes (session BM25):
// at most this many sessions, in order of the hits, which bounds the
// episodes read. On LoCoMo (up to 35 sessions a conversation) 20 scores as
// well as all of them.
constexpr size_t kMatchSessions = 20;
constexpr char kEmbedderMetaKey[] = "embedder_id";
// The embedder an unfinished `msp reembed` moves the store to ("" or absent: none).
constexpr char kReembedTargetMetaKey[] = "reembed_target";

class SystemClockImpl final : public Clock {
 public:
  TimeMs NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

std::string ConsolidationKey(const Namespace& ns, const std::string& session) {
  Namespace base = ns;
  base.session.clear();
  return "consolidated/" + base.ToString() + "/session=" + session;
}

// The sessions queued for background consolidation, kept in the store so a
// restart picks them up again: {ConsolidationKey: {namespace parts}}.
constexpr char kConsolidationQueueMetaKey[] = "consolidation_queue";

json NamespaceJson(const Namespace& ns) {
  return json{{"tenant", ns.tenant}, {"user", ns.user},       {"agent", ns.agent},
              {"session", ns.session}, {"mission", ns.mission}, {"operator", ns.operator_id}};
}

Namespace NamespaceFromJson(const json& j) {
  Namespace ns;
  ns.tenant = j.value("tenant", std::string("default"));
  ns.user = j.value("user", std::string());
  ns.agent = j.value("agent", std::string());
  ns.session = j.value("session", std::string());
  ns.mission = j.value("mission", std::string());
  ns.operator_id = j.value("operator", std::string());
  return ns;
}

// True when `m` held at time `t` (RetrieveRequest::as_of): from valid_at
// (else created_at) until invalid_at (else, once superseded, until it was
// superseded; else still).
bool HeldAt(const Memory& m, TimeMs t) {
  const TimeMs from = m.valid_at > 0 ? m.valid_at : m.created_at;
  if (t < from) return false;
  TimeMs until = m.invalid_at;
  if (until == 0 && m.state == RecordState::kSuperseded) until = m.updated_at;
  return until == 0 || t < until;
}

std::vector<std::string> Union(std::vector<std::string> a, const std::vector<std::string>& b) {
  for (const auto& x : b) {
    if (std::find(a.begin(), a.end(), x) == a.end()) a.push_back(x);
  }
  return a;
}

std::vector<ProvenanceRef> UnionRefs(std::vector<ProvenanceRef> a, const std::vector<ProvenanceRef>& b) {
  for (const auto& x : b) {
    if (std::find(a.begin(), a.end(), x) == a.end()) a.push_back(x);
  }
  return a;
}

// The text an episode is indexed and shown by: the explicit text, else the
// content's "text" string, else every string in the content joined.
std::string EpisodeText(const EpisodeStep& step, const json& content) {
  if (!step.text.empty()) return step.text;
  if (content.is_object() && content.contains("text") && content["text"].is_string()) {
    return content["text"].get<std::string>();
  }
  std::string out;
  std::vector<const json*> stack{&content};
  while (!stack.empty()) {
    const json* j = stack.back();
    stack.pop_back();
    if (j->is_string()) {
      if (!out.empty()) out += ' ';
      out += j->get<std::string>();
    } else if (j->is_structured()) {
      std::vector<const json*> kids;
      for (const auto& kid : *j) kids.push_back(&kid);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
    }
  }
  return out;
}

AuditEvent MakeAudit(TimeMs now, const std::string& actor, AuditAction action,
                     const std::string& record_id, const std::string& tenant, std::string reason,
                     json details = json::object()) {
  AuditEvent e;
  e.at = now;
  e.actor = actor;
  e.action = action;
  e.record_id = record_id;
  e.tenant = tenant;
  e.reason = std::move(reason);
  e.details_json = details.dump();
  return e;
}

// Runs `body` on a thread until destroyed; `body` returns when told to stop.
class StoppableThread {
 public:
  explicit StoppableThread(std::function<void(const std::atomic<bool>& stop)> body)
      : thread_([this, body = std::move(body)] { body(stop_); }) {}
  ~StoppableThread() {
    stop_ = true;
    thread_.join();
  }
  StoppableThread(const StoppableThread&) = delete;
  StoppableThread& operator=(const StoppableThread&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

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
        index_sync_(*store_, *lexical_, *vector_, embedder_->id(), std::move(parts.vector_file)) {}

  ~Engine() override { FlushAccess(); }

  // Starts the background consolidation worker (consolidation.background)
  // and queues the sessions a previous run left queued. After Init().
  Status StartBackgroundConsolidation() { return StartWorker(); }

  // Catches the indexes up as other servers' writes commit (a store shared
  // by several servers, e.g. PostgreSQL, whose NOTIFY wakes the wait), so a
  // query rarely waits for a catch-up. Queries still catch up first.
  void StartFollowingChanges() {
    follower_ = std::make_unique<StoppableThread>([this](const std::atomic<bool>& stop) {
      constexpr int kWaitMs = 100;  // also how long stopping may take
      int64_t seen = 0;
      while (!stop.load()) {
        auto last = store_->WaitForChange(seen, kWaitMs);
        if (!last.ok()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(kWaitMs));  // the store is down
        } else if (*last > seen && CatchUp().ok()) {
          seen = *last;
        }
      }
    });
  }

  // The embedder check: a store's vectors all come from one embedder, the
  // one its meta names. A new store takes the configured embedder; any other
  // store must be re-embedded (`msp reembed`, instant for a store without
  // records) before another embedder may use it, and a store with an
  // unfinished reembed is refused until that run is finished.
  Status Init() {
    MSP_ASSIGN_OR_RETURN(std::optional<std::string> recorded, store_->GetMeta(kEmbedderMetaKey));
    MSP_ASSIGN_OR_RETURN(std::optional<std::string> target, store_->GetMeta(kReembedTargetMetaKey));
    const std::string id = embedder_->id();
    if (target && !target->empty()) {
      return Status::FailedPrecondition(
          "the store at " + store_->Describe() + " is being re-embedded from '" + recorded.value_or("") +
          "' to '" + *target + "' (an unfinished `msp reembed`); configure the embedder '" + *target +
          "' and run `msp reembed` to finish, or configure '" + recorded.value_or("") +
          "' and run `msp reembed` to go back");
    }
    if (!recorded) {
      WriteBatch batch;
      batch.meta.emplace_back(kEmbedderMetaKey, id);
      batch.meta.emplace_back(kStoreUidMetaKey, NewUuid(clock_->NowMs()));
      MSP_RETURN_IF_ERROR(ApplyBatch(batch));
      return index_sync_.Open();
    }
    if (*recorded == id) {
      MSP_RETURN_IF_ERROR(EnsureStoreUid());
      return index_sync_.Open();
    }
    MSP_ASSIGN_OR_RETURN(bool empty, StoreIsEmpty());
    return Status::FailedPrecondition(
        "the store at " + store_->Describe() + " holds vectors made by embedder '" + *recorded +
        "', but msp is configured with '" + id + "'; run `msp reembed` to rebuild every vector with '" + id +
        "'" + (empty ? std::string(" (the store has no records yet: it switches at once)") : std::string()) +
        ", or configure the embedder the store was made with (embedder.provider, embedder.model, "
        "embedder.dimension)");
  }

  // A store made before stores had a uid gets one (index files name it).
  // Not written when the store refuses writes: the vector index is then
  // not persisted.
  Status EnsureStoreUid() {
    MSP_ASSIGN_OR_RETURN(std::optional<std::string> uid, store_->GetMeta(kStoreUidMetaKey));
    if (uid && !uid->empty()) return Status::Ok();
    WriteBatch batch;
    batch.meta.emplace_back(kStoreUidMetaKey, NewUuid(clock_->NowMs()));
    (void)ApplyBatch(batch);
    return Status::Ok();
  }

  // Re-embeds every record not yet carrying this engine's embedder's vector
  // (MemoryLayer::Reembed). The target is marked in the store first, so
  // Init refuses the store until a run finishes; each batch of vectors is one
  // atomic write, so a run may stop anywhere and the next one skips what is
  // done. Only called on an engine made without Init.
  Result<ReembedProgress> ReembedAll(const ReembedOptions& opts,
                                  const std::function<void(const ReembedProgress&)>& progress) {
    if (opts.batch_size < 0 || opts.max_batches < 0) {
      return Status::InvalidArgument("reembed batch_size and max_batches must be >= 0");
    }
    const auto started = std::chrono::steady_clock::now();
    ReembedProgress p;
    p.to_embedder = embedder_->id();
    MSP_ASSIGN_OR_RETURN(std::optional<std::string> recorded, store_->GetMeta(kEmbedderMetaKey));
    MSP_ASSIGN_OR_RETURN(std::optional<std::string> target, store_->GetMeta(kReembedTargetMetaKey));
    p.from_embedder = recorded.value_or("");
    const size_t batch_size = static_cast<size_t>(
        opts.batch_size > 0 ? opts.batch_size : std::max(1, options_.embedder.batch_size));
    auto report = [&]() {
      p.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                          started)
                         .count();
      if (progress) progress(p);
    };
    std::map<std::string, int64_t> by_tenant;  // records re-embedded per tenant, for the audit
    int batches = 0;
    // Records written meanwhile by a process still on the old embedder are
    // caught by the next pass; a few passes settle it.
    constexpr int kPasses = 3;
    for (int pass = 0;; ++pass) {
      std::vector<std::string> todo;
      int64_t total = 0;
      MSP_RETURN_IF_ERROR(store_->Scan([&](const Memory& m) {
        ++total;
        if (m.embedder_id != p.to_embedder) todo.push_back(m.id);
        return true;
      }));
      p.total = total;
      p.done = total - static_cast<int64_t>(todo.size());
      if (todo.empty()) break;
      if (pass == kPasses) {
        return Status::Unavailable(
            "reembed: records made by the old embedder kept arriving from another process; stop the other "
            "msp processes on " + store_->Describe() + " and run `msp reembed` again to finish");
      }
      if (!target || *target != p.to_embedder) {
        WriteBatch mark;
        mark.meta.emplace_back(kReembedTargetMetaKey, p.to_embedder);
        MSP_RETURN_IF_ERROR(ApplyBatch(mark));
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
    const TimeMs now = clock_->NowMs();
    WriteBatch finish;
    finish.meta.emplace_back(kEmbedderMetaKey, p.to_embedder);
    finish.meta.emplace_back(kReembedTargetMetaKey, "");
    for (const auto& [tenant, n] : by_tenant) {
      finish.audit.push_back(MakeAudit(now, ActorOf(""), AuditAction::kUpdate, "", tenant,
                                       "re-embedded " + std::to_string(n) + " records with " + p.to_embedder,
                                       json{{"from", p.from_embedder}, {"to", p.to_embedder}, {"records", n}}));
    }
    MSP_RETURN_IF_ERROR(ApplyBatch(finish));
    // The vector index holds the new vectors only, and is persisted for
    // the new embedder (the old file no longer fits the store).
    MSP_RETURN_IF_ERROR(EnsureStoreUid());
    MSP_RETURN_IF_ERROR(index_sync_.Open());
    MSP_RETURN_IF_ERROR(index_sync_.Rebuild(/*lexical_too=*/false));
    p.finished = true;
    report();
    return p;
  }

  // Stores the records `ids` (those that still exist and are not done) with
  // this engine's vectors, in one write that holds only if none of them
  // changed since it was read (compare-and-swap on seq); a record another
  // process changed meanwhile is read and, if its text changed, embedded
  // again. Returns the records stored.
  Result<std::vector<Memory>> ReembedBatch(const std::vector<std::string>& ids) {
    const std::string id = embedder_->id();
    std::map<std::string, std::pair<std::string, std::vector<float>>> made;  // id -> (text, vector)
    constexpr int kAttempts = 5;
    for (int attempt = 1;; ++attempt) {
      MSP_ASSIGN_OR_RETURN(auto records, store_->GetMany(ids, /*with_embeddings=*/false));
      records.erase(std::remove_if(records.begin(), records.end(),
                                   [&](const Memory& m) { return m.embedder_id == id; }),
                    records.end());
      std::vector<Memory> fresh;
      for (const Memory& m : records) {
        auto it = made.find(m.id);
        if (it == made.end() || it->second.first != m.text) fresh.push_back(m);
      }
      MSP_RETURN_IF_ERROR(EmbedRecords(*embedder_, &fresh));
      for (Memory& m : fresh) made[m.id] = {m.text, std::move(m.embedding)};
      WriteBatch batch;
      for (Memory& m : records) {
        batch.expect_seq.emplace_back(m.id, m.seq);
        m.embedding = made[m.id].second;
        m.embedder_id = id;
        batch.puts.push_back(std::move(m));
      }
      if (batch.puts.empty()) return batch.puts;
      Status applied = ApplyBatch(batch);
      if (applied.ok()) return std::move(batch.puts);
      if (applied.code() != StatusCode::kConflict || attempt == kAttempts) return applied;
    }
  }

  // ---- writes ---------------------------------------------------------

  Result<WriteResult> Write(const WriteRequest& r) override {
    MSP_ASSIGN_OR_RETURN(auto results, WriteMany({r}));
    return std::move(results.front());
  }

  Result<std::vector<WriteResult>> WriteMany(const std::vector<WriteRequest>& requests) override {
    const TimeMs now = clock_->NowMs();
    std::vector<Memory> records;
    records.reserve(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      auto m = PrepareWrite(requests[i], now);
      if (!m.ok()) {
        if (requests.size() == 1) return m.status();
        return Status(m.status().code(), "request " + std::to_string(i) + ": " + m.status().message() +
                                             " (nothing in this batch was stored)");
      }
      records.push_back(std::move(m).value());
    }
    MSP_RETURN_IF_ERROR(EmbedRecords(*embedder_, &records));
    WriteJob job{&requests, std::move(records), now};
    std::unique_lock<std::mutex> lock(group_mu_);
    group_queue_.push_back(&job);
    while (!job.done && group_leader_) group_cv_.wait(lock);
    if (!job.done) {
      // No commit under way: lead until this call's own job is done.
      group_leader_ = true;
      while (!job.done) {
        std::vector<WriteJob*> group;
        size_t records_in_group = 0;
        while (!group_queue_.empty() && (group.empty() || records_in_group < kMaxGroupRecords)) {
          records_in_group += group_queue_.front()->records.size();
          group.push_back(group_queue_.front());
          group_queue_.pop_front();
        }
        lock.unlock();
        RunWriteGroup(group);
        lock.lock();
        for (WriteJob* j : group) j->done = true;
        group_cv_.notify_all();
      }
      group_leader_ = false;
      group_cv_.notify_all();
    }
    return std::move(job.result);
  }

  // ---- group commit -----------------------------------------------------
  //
  // Concurrent WriteMany calls in one process share a transaction and its
  // fsync (leveldb's writer queue is the model): the first caller to find no
  // commit under way leads; it plans every queued call in turn into one
  // batch (so a call sees the facts of the calls before it, as records of one
  // WriteMany do: a twin merges), plans evictions for the whole batch, and
  // applies it once. If that batch fails, each call is planned and applied
  // alone, so one call's conflict or refusal never fails another's.

  struct WriteJob {
    const std::vector<WriteRequest>* requests;
    std::vector<Memory> records;  // prepared and embedded
    TimeMs now = 0;
    Result<std::vector<WriteResult>> result = Status::Internal("write not run");
    bool done = false;  // guarded by group_mu_
  };

  // Plans `records` (of `requests`) into `batch`: facts through PlanFact
  // (twins in the store or in `pending` merge), the rest as puts.
  // REQUIRES: write_mu_ held.
  Result<std::vector<WriteResult>> PlanWrites(const std::vector<WriteRequest>& requests,
                                              std::vector<Memory> records, TimeMs now, WriteBatch* batch,
                                              std::vector<Memory>* pending) {
    std::vector<WriteResult> results(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      const std::string actor = ActorOf(requests[i].actor);
      if (records[i].kind == Kind::kFact) {
        MSP_ASSIGN_OR_RETURN(auto placed, PlanFact(std::move(records[i]), actor, now, batch, pending));
        results[i].id = placed.first;
        results[i].merged = placed.second;
        continue;
      }
      results[i].id = records[i].id;
      batch->audit.push_back(MakeAudit(now, actor, AuditAction::kWrite, records[i].id,
                                       records[i].ns.tenant, "write"));
      batch->puts.push_back(std::move(records[i]));
    }
    return results;
  }

  // One call on its own: plan, evictions, apply. Takes the job's records
  // (nothing reads them after). REQUIRES: write_mu_ held.
  Result<std::vector<WriteResult>> WriteAlone(WriteJob& job) {
    WriteBatch batch;
    std::vector<Memory> pending;
    MSP_ASSIGN_OR_RETURN(auto results,
                         PlanWrites(*job.requests, std::move(job.records), job.now, &batch, &pending));
    MSP_ASSIGN_OR_RETURN(auto evicted, PlanEvictions(&batch, ActorOf(""), job.now));
    if (!results.empty()) results.back().evicted_ids = std::move(evicted);
    MSP_RETURN_IF_ERROR(ApplyBatch(batch));
    return results;
  }

  void RunWriteGroup(const std::vector<WriteJob*>& group) {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (group.size() > 1) {
      WriteBatch batch;
      std::vector<Memory> pending;
      std::vector<std::vector<WriteResult>> results;
      bool planned = true;
      TimeMs now = 0;
      // Copies of the records: if the shared batch fails, each call is
      // planned again alone from its own.
      for (WriteJob* job : group) {
        auto r = PlanWrites(*job->requests, job->records, job->now, &batch, &pending);
        if (!r.ok()) {
          planned = false;
          break;
        }
        results.push_back(std::move(r).value());
        now = std::max(now, job->now);
      }
      // Evictions for the whole batch; each user's go to the last call that
      // wrote a fact of that user.
      std::map<std::pair<std::string, std::string>, std::vector<std::string>> evicted;
      if (planned && PlanEvictions(&batch, ActorOf(""), now, &evicted).ok() && ApplyBatch(batch).ok()) {
        for (size_t i = group.size(); i-- > 0;) {
          for (const Memory& m : group[i]->records) {
            auto it = evicted.find({m.ns.tenant, m.ns.user});
            if (m.kind != Kind::kFact || it == evicted.end() || results[i].empty()) continue;
            auto& out = results[i].back().evicted_ids;
            out.insert(out.end(), it->second.begin(), it->second.end());
            evicted.erase(it);
          }
          group[i]->result = std::move(results[i]);
        }
        return;
      }
    }
    for (WriteJob* job : group) job->result = WriteAlone(*job);
  }

  Result<Memory> AddEpisode(const EpisodeStep& step) override {
    if (step.ns.session.empty()) return Status::InvalidArgument("session is required for an episode");
    json content = json::object();
    if (!step.content_json.empty()) {
      content = json::parse(step.content_json, nullptr, false);
      if (content.is_discarded()) return Status::InvalidArgument("content is not valid JSON");
      if (!content.is_object()) return Status::InvalidArgument("content must be a JSON object");
    }
    const std::string text = EpisodeText(step, content);
    MSP_RETURN_IF_ERROR(ValidateText("text", text, options_.policy.max_text_bytes));
    MSP_RETURN_IF_ERROR(ValidateCommon(step.ns, step.tags, step.source, 1.0, "", {}));
    if (step.step_number < 0) return Status::InvalidArgument("step_number must be >= 0");
    if (step.duration_ms < 0 || step.token_count < 0) {
      return Status::InvalidArgument("duration_ms and token_count must be >= 0");
    }
    if (!step.tool_name.empty()) {
      MSP_RETURN_IF_ERROR(ValidateCommon(step.ns, {step.tool_name}, "", 1.0, "", {})
                              .WithContext("tool_name"));
    }
    const TimeMs now = clock_->NowMs();
    const std::string actor = ActorOf(step.actor);
    if (Status s = CheckStructural(step.sensitivity, options_.policy); !s.ok()) {
      return RefuseAndAudit(s, step.ns.tenant, actor, now, text);
    }
    if (content.empty() && !step.text.empty()) content["text"] = step.text;
    Memory m = NewRecord(step.ns, Kind::kEpisode, Layer::kEpisodic, text, now);
    if (step.timestamp > 0) m.created_at = m.updated_at = step.timestamp;
    json metadata = json::object();
    if (!step.tool_name.empty()) metadata["tool_name"] = step.tool_name;
    if (step.duration_ms > 0) metadata["duration_ms"] = step.duration_ms;
    if (step.token_count > 0) metadata["token_count"] = step.token_count;
    m.body_json = json{{"type", std::string(EpisodeTypeName(step.type))},
                       {"content", content},
                       {"metadata", metadata}}
                      .dump();
    m.tags = step.tags;
    m.source = step.source;
    m.sensitivity = step.sensitivity;
    MSP_RETURN_IF_ERROR(Embed(&m));
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      // The store keeps a session's steps unique; another process may take
      // the next step between our read and our write, so an automatic step
      // number is retried, an explicit one is the caller's to fix.
      constexpr int kAttempts = 50;
      for (int attempt = 1;; ++attempt) {
        if (step.step_number == 0) {
          MSP_ASSIGN_OR_RETURN(int64_t last_step, LastStepNumber(step.ns, step.ns.session));
          m.step_number = last_step + 1;
        } else {
          m.step_number = step.step_number;
        }
        WriteBatch batch;
        batch.audit.push_back(MakeAudit(now, actor, AuditAction::kWrite, m.id, m.ns.tenant, "episode"));
        batch.puts.push_back(m);
        FlushAccess();
        auto seqs = store_->Apply(batch);
        if (seqs.ok()) {
          m.seq = seqs->empty() ? 0 : seqs->front();
          break;
        }
        if (seqs.status().code() != StatusCode::kAlreadyExists) return seqs.status();
        if (step.step_number != 0) {
          return Status::AlreadyExists("session '" + step.ns.session + "' already has step " +
                                       std::to_string(step.step_number));
        }
        if (attempt == kAttempts) {
          return Status::Unavailable("session '" + step.ns.session + "': no free step number after " +
                                     std::to_string(kAttempts) + " attempts under concurrent writers");
        }
      }
    }
    // Consolidate when the session has gathered every_n_episodes new steps
    // (on the worker when consolidation.background is set).
    const int every = options_.consolidation.every_n_episodes;
    if (every > 0) {
      MSP_ASSIGN_OR_RETURN(int64_t done, ConsolidatedUpTo(step.ns, step.ns.session));
      if (m.step_number - done >= every) {
        if (worker_) {
          MSP_RETURN_IF_ERROR(QueueConsolidation(step.ns, step.ns.session));
        } else if (auto report = ConsolidateSession(step.ns, step.ns.session, actor); !report.ok()) {
          // The step is stored: say so, so that the caller does not add it again.
          return report.status().WithContext("episode " + m.id + " stored as step " +
                                             std::to_string(m.step_number) + ", but consolidation failed");
        }
      }
    }

    return m;
  }

  Result<std::vector<Memory>> LastSteps(const Namespace& scope, const std::string& session,
                                        int k) override {
    if (session.empty()) return Status::InvalidArgument("session is required");
    if (k < 0) return Status::InvalidArgument("k must be >= 0");
    RecordQuery q;
    q.scope = scope;
    q.kinds = {Kind::kEpisode};
    q.session = session;
    q.order = RecordQuery::Order::kStepDesc;
    q.limit = k;
    q.not_expired_at = clock_->NowMs();
    q.with_embeddings = false;
    MSP_ASSIGN_OR_RETURN(auto steps, store_->List(q));
    std::reverse(steps.begin(), steps.end());
    return steps;
  }

  // With a background worker the session is only queued (an empty report).
  Result<ConsolidationReport> EndSession(const Namespace& scope, const std::string& session) override {
    if (session.empty()) return Status::InvalidArgument("session is required");
    if (worker_) {
      MSP_RETURN_IF_ERROR(ValidateCommon(scope, {}, "", 1.0, "", {}));
      MSP_RETURN_IF_ERROR(QueueConsolidation(scope, session));
      return ConsolidationReport{};
    }
    return Consolidate(scope, session);
  }

  Result<WriteResult> AddFact(const FactRequest& r) override {
    MSP_RETURN_IF_ERROR(ValidateText("text", r.text, options_.policy.max_text_bytes));
    MSP_RETURN_IF_ERROR(ValidateCommon(r.ns, r.tags, r.source, r.confidence, "", r.provenance));
    const TimeMs now = clock_->NowMs();
    const std::string actor = ActorOf(r.actor);
    if (Status s = CheckStructural(r.sensitivity, options_.policy); !s.ok()) {
      return RefuseAndAudit(s, r.ns.tenant, actor, now, r.text);
    }
    MSP_ASSIGN_OR_RETURN(Memory m, FactRecord(r, now));
    std::lock_guard<std::mutex> lock(write_mu_);
    return StoreFact(std::move(m), actor, now);
  }

  Result<WriteResult> SupersedeFact(const Namespace& scope, const std::string& old_id,
                                    const FactRequest& r) override {
    MSP_RETURN_IF_ERROR(ValidateText("text", r.text, options_.policy.max_text_bytes));
    MSP_RETURN_IF_ERROR(ValidateCommon(scope, r.tags, r.source, r.confidence, "", r.provenance));
    const TimeMs now = clock_->NowMs();
    const std::string actor = ActorOf(r.actor);
    if (Status s = CheckStructural(r.sensitivity, options_.policy); !s.ok()) {
      return RefuseAndAudit(s, scope.tenant, actor, now, r.text);
    }
    std::lock_guard<std::mutex> lock(write_mu_);
    MSP_ASSIGN_OR_RETURN(Memory old, GetVisible(scope, old_id, /*allow_expired=*/true));
    if (old.kind != Kind::kFact) {
      return Status::InvalidArgument("record " + old_id + " is a " + std::string(KindName(old.kind)) +
                                     ", not a fact");
    }
    if (old.state == RecordState::kSuperseded) {
      return Status::FailedPrecondition("fact " + old_id + " was already superseded by " +
                                        old.superseded_by + "; supersede that one");
    }
    FactRequest req = r;
    req.ns = old.ns;
    MSP_ASSIGN_OR_RETURN(Memory next, FactRecord(req, now));
    next.supersedes = old.id;
    old.state = RecordState::kSuperseded;
    old.superseded_by = next.id;
    old.invalid_at = r.valid_at > 0 ? r.valid_at : now;
    old.updated_at = now;
    WriteBatch batch;
    batch.audit.push_back(MakeAudit(now, actor, AuditAction::kSupersede, old.id, old.ns.tenant,
                                    "superseded", json{{"successor", next.id}}));
    batch.audit.push_back(MakeAudit(now, actor, AuditAction::kWrite, next.id, next.ns.tenant,
                                    "supersedes " + old.id));
    batch.puts.push_back(old);
    batch.puts.push_back(next);
    MSP_RETURN_IF_ERROR(ApplyBatch(batch));
    WriteResult out;
    out.id = next.id;
    return out;
  }

  Result<std::vector<Memory>> History(const Namespace& scope, const std::string& id) override {
    FlushAccess();
    MSP_ASSIGN_OR_RETURN(Memory m, GetVisible(scope, id, /*allow_expired=*/true));
    std::set<std::string> seen{m.id};
    std::vector<Memory> back;  // predecessors, newest first
    Memory cur = m;
    while (!cur.supersedes.empty() && !seen.count(cur.supersedes)) {
      MSP_ASSIGN_OR_RETURN(auto prev, store_->Get(cur.supersedes));
      if (!prev || !scope.Contains(prev->ns)) break;
      seen.insert(prev->id);
      back.push_back(*prev);
      cur = *prev;
    }
    std::vector<Memory> out(back.rbegin(), back.rend());
    out.push_back(m);
    cur = m;
    while (!cur.superseded_by.empty() && !seen.count(cur.superseded_by)) {
      MSP_ASSIGN_OR_RETURN(auto next, store_->Get(cur.superseded_by));
      if (!next || !scope.Contains(next->ns)) break;
      seen.insert(next->id);
      out.push_back(*next);
      cur = *next;
    }
    for (auto& r : out) r.embedding.clear();
    return out;
  }

  // ---- reads ------------------------------------------------------------

  // Fills signals[1], the vector signal of a retrieval whose lexical signal
  // is signals[0] (scores on [0, 1] when `by_score`). Returns whether the
  // vector index's own top candidates were searched.
  //
  // With score fusion every lexical candidate gets its exact cosine
  // (VectorIndex::Score), and the index's own top candidates are searched
  // only when one of them could still reach the top k: a record found by
  // the vector signal alone scores at most w_v / (w_l + w_v), so when k
  // lexical candidates already score above that, the search cannot change
  // the top k (exact, not an approximation; it runs anyway with explain,
  // as of a time, when forced, and for rank fusion). Candidates under
  // vector_min_cosine get no vector score.
  //
  // When the search is skipped, the fused ranking follows from the lexical
  // candidates and their cosines alone: it is set in *direct
  // (FuseAlignedScores, the same as FuseScores of the two signals) and
  // vector.hits is left empty. Otherwise *direct is left unset.
  Result<bool> VectorSignal(const std::vector<float>& query_vector, const IndexQuery& q, const RetrieveRequest& r,
                            bool by_score, bool force_scan, std::vector<RankedSignal>& signals,
                            std::optional<std::vector<FusedHit>>* direct) const {
    const RetrievalOptions& ro = options_.retrieval;
    const RankedSignal& lexical = signals[0];
    RankedSignal& vector = signals[1];
    vector.hits.clear();
    if (!(ro.vector_weight > 0)) return false;
    const double min_cos = ro.vector_min_cosine;
    bool scan = force_scan || !by_score || r.explain || r.as_of > 0;
    if (by_score) {
      std::vector<std::string_view> ids;
      ids.reserve(lexical.hits.size());
      for (const IndexHit& h : lexical.hits) ids.push_back(h.id);
      MSP_ASSIGN_OR_RETURN(std::vector<float> cosines, vector_->Score(query_vector, ids, q));
      const double total = ro.lexical_weight + ro.vector_weight;
      std::vector<double> fused;
      fused.reserve(ids.size());
      AlignedScores aligned{ro.vector_weight, std::vector<double>(ids.size(), std::nan(""))};
      for (size_t i = 0; i < ids.size(); ++i) {
        const double c = cosines[i] >= min_cos ? std::clamp(static_cast<double>(cosines[i]), 0.0, 1.0) : 0.0;
        fused.push_back((ro.lexical_weight * std::clamp(lexical.hits[i].score, 0.0, 1.0) + ro.vector_weight * c) /
                        total);
        if (cosines[i] >= min_cos) aligned.scores[i] = cosines[i];
      }
      const size_t k = static_cast<size_t>(r.top_k);
      if (!scan && fused.size() >= k) {
        std::nth_element(fused.begin(), fused.begin() + static_cast<std::ptrdiff_t>(k - 1), fused.end(),
                         std::greater<double>());
        scan = !(fused[k - 1] > ro.vector_weight / total);
      } else {
        scan = true;
      }
      if (!scan) {
        *direct = FuseAlignedScores(lexical, {std::move(aligned)});
        return false;
      }
      for (size_t i = 0; i < ids.size(); ++i) {
        if (!std::isnan(aligned.scores[i])) vector.hits.push_back(IndexHit{lexical.hits[i].id, aligned.scores[i]});
      }
    }
    if (scan) {
      IndexQuery vq = q;
      if (ro.vector_candidates > 0) vq.limit = std::max(ro.vector_candidates, r.top_k);
      MSP_ASSIGN_OR_RETURN(std::vector<IndexHit> found, vector_->Search(query_vector, vq));
      std::unordered_set<std::string_view> have;
      for (const IndexHit& h : vector.hits) have.insert(h.id);
      for (IndexHit& h : found) {
        if (h.score >= min_cos && !have.count(h.id)) vector.hits.push_back(std::move(h));
      }
    }
    // Best first (ties: first seen), so ranks read as ranks among the
    // candidates the vector signal scored.
    std::stable_sort(vector.hits.begin(), vector.hits.end(),
                     [](const IndexHit& a, const IndexHit& b) { return a.score > b.score; });
    return scan;
  }

  Result<std::vector<SearchHit>> Retrieve(const RetrieveRequest& r) override {
    MSP_RETURN_IF_ERROR(ValidateText("query", r.query, options_.policy.max_text_bytes));
    MSP_RETURN_IF_ERROR(ValidateCommon(r.scope, r.filter.tags, "", 1.0, "", {}));
    if (r.top_k < 1 || r.top_k > 1000) {
      return Status::InvalidArgument("top_k must be between 1 and 1000, got " + std::to_string(r.top_k));
    }
    if (!(r.min_score >= 0.0 && r.min_score <= 1.0)) {
      return Status::InvalidArgument("min_score must be between 0 and 1");
    }
    if (r.as_of < 0) return Status::InvalidArgument("as_of must be >= 0");
    MSP_RETURN_IF_ERROR(CatchUp());
    const TimeMs now = clock_->NowMs();
    IndexQuery q;
    q.scope = r.scope;
    q.filter = r.filter;
    if (r.as_of > 0) q.filter.include_superseded = true;  // HeldAt decides
    q.now = now;
    q.text = r.query;
    q.limit = std::max(options_.retrieval.candidates, r.top_k);

    const RetrievalOptions& ro = options_.retrieval;
    MSP_ASSIGN_OR_RETURN(auto lexical_hits, lexical_->SearchEpisodes(q));
    // The session BM25 of the first sessions the hits reach, over their
    // episodes that match the query: it picks the context sessions and
    // feeds the session boost. `match` views the strings of `matched`.
    std::vector<LexicalHit> matched;
    SessionScores match;
    if (ro.context_sessions > 0 || (ro.session_weight > 0 && ro.session_mix > 0)) {
      IndexQuery in_sessions = q;
      in_sessions.sessions = HitSessions(lexical_hits, kMatchSessions);
      in_sessions.session_terms = true;
      if (!in_sessions.sessions.empty()) {
        MSP_ASSIGN_OR_RETURN(matched, lexical_->SearchEpisodes(in_sessions));
        match = SessionBm25(matched, ro.bm25_k1);
      }
      if (ro.context_sessions > 0) {
        IndexQuery around = q;
        around.sessions = TopSessions(in_sessions.sessions, match, ro.context_sessions);
        if (!around.sessions.empty()) {
          MSP_ASSIGN_OR_RETURN(auto more, lexical_->SearchEpisodes(around));
          lexical_hits.insert(lexical_hits.end(), std::make_move_iterator(more.begin()),
                              std::make_move_iterator(more.end()));
        }
      }
    }
    const EpisodeContextOptions context_options{ro.neighbour_weight_1, ro.neighbour_weight_2, ro.session_weight,
                                                ro.session_mix};
    const bool with_neighbours = context_options.neighbour_weight_1 > 0 || context_options.neighbour_weight_2 > 0;
    std::vector<ContextScore> context = ScoreEpisodeContext(lexical_hits, context_options, &match);
    std::vector<RankedSignal> signals(2);
    RankedSignal& lexical = signals[0];
    lexical = RankedSignal{"bm25", ro.lexical_weight, {}};
    lexical.hits.reserve(context.size());
    // The ids move out of the candidates (context[i].id, a view, is not used again).
    for (ContextScore& c : context) {
      lexical.hits.push_back(IndexHit{std::move(lexical_hits[c.candidate].hit.id), c.bm25});
    }
    lexical_hits.clear();
    std::vector<float> query_vector = r.query_embedding;
    if (query_vector.empty()) {
      MSP_ASSIGN_OR_RETURN(auto vecs, embedder_->Embed({r.query}));
      query_vector = std::move(vecs.front());
    } else if (static_cast<int>(query_vector.size()) != embedder_->dimension()) {
      return Status::InvalidArgument("query_embedding has " + std::to_string(query_vector.size()) +
                                     " dimensions; the embedder '" + embedder_->id() + "' makes " +
                                     std::to_string(embedder_->dimension()));
    }
    RankedSignal& vector = signals[1];
    vector = RankedSignal{"cosine", ro.vector_weight, {}};
    const bool by_score = ro.fusion != "rrf";
    if (by_score) {
      // The lexical signal on [0, 1]: the context score over the best one.
      double best = 0.0;
      for (const ContextScore& c : context) best = std::max(best, c.score);
      for (size_t i = 0; i < context.size(); ++i) lexical.hits[i].score = best > 0 ? context[i].score / best : 0.0;
    }
    // Whether the vector index's own top candidates were searched; see
    // VectorSignal. Forced after a stale hit when they were not.
    std::optional<std::vector<FusedHit>> direct;
    MSP_ASSIGN_OR_RETURN(bool scanned,
                         VectorSignal(query_vector, q, r, by_score, /*force_scan=*/false, signals, &direct));
    std::vector<FusedHit> fused = direct     ? std::move(*direct)
                                  : by_score ? FuseScores(signals, r.explain)
                                             : FuseReciprocalRank(signals, std::max(1, ro.rrf_k), r.explain);
    std::unordered_map<std::string_view, const ContextScore*> context_by_id;
    if (r.explain) {
      for (size_t i = 0; i < context.size(); ++i) context_by_id.emplace(lexical.hits[i].id, &context[i]);
    }
    // The records of the best hits, read a batch at a time: a hit the store
    // no longer shows this query (the index may lag a concurrent writer) is
    // skipped and the next one read. As of a time, one batch of every
    // candidate, since many may not have held then.
    const size_t batch = r.as_of > 0 ? static_cast<size_t>(q.limit) : static_cast<size_t>(r.top_k);
    std::vector<SearchHit> out;
    out.reserve(static_cast<size_t>(r.top_k));
    size_t next = 0;
    bool stale = false;
    while (static_cast<int>(out.size()) < r.top_k && next < fused.size()) {
      if (stale && !scanned) {
        // A hit was dropped, so hits past the first top_k count, where the
        // vector index's own candidates may rank: search them, fuse again
        // and go on from the same place (the hits served stay first).
        MSP_ASSIGN_OR_RETURN(scanned,
                             VectorSignal(query_vector, q, r, by_score, /*force_scan=*/true, signals, &direct));
        std::vector<FusedHit> again = by_score ? FuseScores(signals, r.explain)
                                               : FuseReciprocalRank(signals, std::max(1, ro.rrf_k), r.explain);
        std::unordered_set<std::string_view> done;
        for (size_t i = 0; i < next; ++i) done.insert(fused[i].id);
        std::vector<FusedHit> rest;
        for (FusedHit& f : again) {
          if (!done.count(f.id)) rest.push_back(std::move(f));
        }
        fused.resize(next);
        for (FusedHit& f : rest) fused.push_back(std::move(f));
        continue;
      }
      std::vector<std::string> ids;
      size_t end = next;
      for (; end < fused.size() && ids.size() < batch; ++end) {
        if (fused[end].score + 1e-12 < r.min_score) break;  // sorted: the rest score lower
        ids.emplace_back(fused[end].id);
      }
      if (ids.empty()) break;
      MSP_ASSIGN_OR_RETURN(auto records, store_->GetMany(ids, /*with_embeddings=*/false));
      std::unordered_map<std::string_view, Memory*> by_id;
      by_id.reserve(records.size());
      for (auto& m : records) by_id.emplace(m.id, &m);
      for (; next < end && static_cast<int>(out.size()) < r.top_k; ++next) {
        const FusedHit& f = fused[next];
        auto it = by_id.find(f.id);
        // Re-check against the record as stored now: the index may lag a
        // concurrent writer, and visibility must never depend on it.
        if (it == by_id.end() || !MatchesQuery(*it->second, q) || (r.as_of > 0 && !HeldAt(*it->second, r.as_of))) {
          stale = true;
          continue;
        }
        SearchHit hit;
        hit.memory = std::move(*it->second);
        hit.score = f.score;
        if (r.explain) {
          for (SignalContribution c : f.contributions) {
            auto ctx = context_by_id.find(f.id);
            if (c.signal != lexical.name || ctx == context_by_id.end()) {
              hit.explain.push_back(c);
              continue;
            }
            c.raw = ctx->second->bm25;  // the BM25 weight, whatever the fusion saw
            for (auto& part : ExplainContext(c, *ctx->second, with_neighbours, ro.session_weight > 0)) {
              hit.explain.push_back(std::move(part));
            }
          }
        }
        out.push_back(std::move(hit));
      }
      if (end < fused.size() && fused[end].score + 1e-12 < r.min_score) break;
      if (r.as_of > 0) break;  // every candidate was read
      next = end;
    }
    if (r.record_access && !out.empty()) {
      std::vector<std::string> served;
      for (auto& h : out) {
        served.push_back(h.memory.id);
        h.memory.access_count += 1;
        h.memory.last_accessed = now;
      }
      NoteAccess(served, now);
    }
    return out;
  }

  Result<Memory> Get(const Namespace& scope, const std::string& id) override {
    FlushAccess();
    MSP_ASSIGN_OR_RETURN(Memory m, GetVisible(scope, id, /*allow_expired=*/false));
    m.embedding.clear();
    return m;
  }

  Result<std::vector<Memory>> List(const ListRequest& r) override {
    if (r.limit < 0 || r.offset < 0) return Status::InvalidArgument("limit and offset must be >= 0");
    FlushAccess();
    if (r.as_of < 0) return Status::InvalidArgument("as_of must be >= 0");
    RecordQuery q;
    q.scope = r.scope;
    q.kinds = r.filter.kinds;
    q.layers = r.filter.layers;
    q.session = r.session;
    q.created_from = r.filter.created_from;
    q.created_to = r.filter.created_to;
    q.max_access_level = r.filter.max_access_level;
    if (!r.filter.include_superseded && r.as_of == 0) q.state = RecordState::kActive;
    if (!r.include_expired) q.not_expired_at = clock_->NowMs();
    q.order = !r.session.empty()
                  ? (r.newest_first ? RecordQuery::Order::kStepDesc : RecordQuery::Order::kStepAsc)
                  : (r.newest_first ? RecordQuery::Order::kCreatedDesc : RecordQuery::Order::kCreatedAsc);
    q.with_embeddings = false;
    // Tags, sources and criticalities are filtered here: page until full.
    const bool post_filter = !r.filter.tags.empty() || !r.filter.sources.empty() ||
                             !r.filter.criticalities.empty() || r.as_of > 0;
    if (!post_filter) {
      q.limit = r.limit;
      q.offset = r.offset;
      return store_->List(q);
    }
    IndexQuery match;
    match.scope = r.scope;
    match.filter = r.filter;
    if (r.as_of > 0) match.filter.include_superseded = true;
    match.now = r.include_expired ? 0 : clock_->NowMs();
    std::vector<Memory> out;
    int skipped = 0;
    q.limit = 1000;
    for (q.offset = 0;; q.offset += q.limit) {
      MSP_ASSIGN_OR_RETURN(auto page, store_->List(q));
      for (auto& m : page) {
        if (!MatchesQuery(m, match)) continue;
        if (r.as_of > 0 && !HeldAt(m, r.as_of)) continue;
        if (skipped < r.offset) {
          ++skipped;
          continue;
        }
        out.push_back(std::move(m));
        if (r.limit > 0 && static_cast<int>(out.size()) >= r.limit) return out;
      }
      if (static_cast<int>(page.size()) < q.limit) break;
    }
    return out;
  }

  Result<int64_t> LastChangeSeq() override { return store_->LastSeq(); }

  Result<RecordChanges> ChangesSince(const Namespace& scope, int64_t after, int limit) override {
    if (after < 0 || limit < 1) return Status::InvalidArgument("changes since: after must be >= 0 and limit >= 1");
    MSP_ASSIGN_OR_RETURN(std::vector<Change> changes, store_->ChangesSince(after, limit));
    RecordChanges out;
    out.up_to = changes.empty() ? after : changes.back().seq;
    out.more = static_cast<int>(changes.size()) == limit;
    std::vector<std::string> ids;
    std::set<std::string> seen;
    for (const Change& c : changes) {
      if (seen.insert(c.record_id).second) ids.push_back(c.record_id);
    }
    if (ids.empty()) return out;
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, store_->GetMany(ids, /*with_embeddings=*/false));
    std::set<std::string> present;
    for (Memory& m : records) {
      present.insert(m.id);
      if (scope.Contains(m.ns)) out.records.push_back(std::move(m));
    }
    for (std::string& id : ids) {
      if (!present.contains(id)) out.gone.push_back(std::move(id));
    }
    return out;
  }

  Result<std::vector<Memory>> Commit(const RecordBatch& b) override {
    if (!b.expected_seq.empty() && b.expected_seq.size() != b.puts.size()) {
      return Status::InvalidArgument("commit: expected_seq has " + std::to_string(b.expected_seq.size()) +
                                     " entries for " + std::to_string(b.puts.size()) +
                                     " puts; give one per put or none");
    }
    if (b.puts.empty() && b.deletes.empty()) return std::vector<Memory>{};
    MSP_RETURN_IF_ERROR(ValidateCommon(b.scope, {}, "", 1.0, "", {}));
    const TimeMs now = clock_->NowMs();
    const std::string actor = ActorOf(b.actor);
    std::vector<Memory> records = b.puts;
    for (size_t i = 0; i < records.size(); ++i) {
      Memory& m = records[i];
      const std::string at = "commit: put " + std::to_string(i);
      if (m.kind == Kind::kEpisode) {
        return Status::InvalidArgument(at + ": episodes are added with AddEpisode, not Commit");
      }
      if (!b.scope.Contains(m.ns)) {
        return Status::InvalidArgument(at + ": namespace " + m.ns.ToString() + " lies outside the scope " +
                                       b.scope.ToString());
      }
      // Records that only carry a body (logs) may have empty text: they
      // never match a search.
      if (!m.text.empty()) {
        MSP_RETURN_IF_ERROR(ValidateText("text", m.text, options_.policy.max_text_bytes).WithContext(at));
      }
      MSP_RETURN_IF_ERROR(
          ValidateCommon(m.ns, m.tags, m.source, m.confidence, m.body_json, m.provenance).WithContext(at));
      if (m.access_level < 0 || m.access_level > kMaxAccessLevel) {
        return Status::InvalidArgument(at + ": access_level " + std::to_string(m.access_level) +
                                       " is outside 0.." + std::to_string(kMaxAccessLevel));
      }
      if (!b.expected_seq.empty() && b.expected_seq[i] < -1) {
        return Status::InvalidArgument(at + ": expected_seq must be -1, 0 or a seq, got " +
                                       std::to_string(b.expected_seq[i]));
      }
      if (m.id.empty()) m.id = NewUuid(now);
      if (m.created_at == 0) m.created_at = now;
      m.updated_at = now;
      m.body_json = m.body_json.empty() ? "{}" : json::parse(m.body_json).dump();
      m.embedding.clear();
      m.embedder_id.clear();
      m.seq = 0;
    }
    std::vector<Memory> to_embed;
    std::vector<size_t> embed_at;
    for (size_t i = 0; i < records.size(); ++i) {
      if (records[i].text.empty()) continue;
      to_embed.push_back(records[i]);
      embed_at.push_back(i);
    }
    MSP_RETURN_IF_ERROR(EmbedRecords(*embedder_, &to_embed));
    for (size_t j = 0; j < to_embed.size(); ++j) {
      records[embed_at[j]].embedding = std::move(to_embed[j].embedding);
      records[embed_at[j]].embedder_id = std::move(to_embed[j].embedder_id);
    }

    std::lock_guard<std::mutex> lock(write_mu_);
    WriteBatch batch;
    std::vector<std::string> ids;
    for (const Memory& m : records) ids.push_back(m.id);
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> existing, store_->GetMany(ids, /*with_embeddings=*/false));
    for (size_t i = 0; i < records.size(); ++i) {
      const Memory& m = records[i];
      auto old = std::find_if(existing.begin(), existing.end(), [&](const Memory& e) { return e.id == m.id; });
      if (old != existing.end() && !b.scope.Contains(old->ns)) {
        // Never overwrite (or reveal) another namespace's record.
        return Status::NotFound("commit: put " + std::to_string(i) + ": no record " + m.id + " in " +
                                b.scope.ToString());
      }
      if (!b.expected_seq.empty() && b.expected_seq[i] >= 0) batch.expect_seq.emplace_back(m.id, b.expected_seq[i]);
      batch.audit.push_back(MakeAudit(now, actor, old == existing.end() ? AuditAction::kWrite : AuditAction::kUpdate,
                                      m.id, m.ns.tenant, b.reason.empty() ? "commit" : b.reason,
                                      json{{"kind", KindName(m.kind)}}));
    }
    for (const std::string& id : b.deletes) {
      MSP_ASSIGN_OR_RETURN(Memory m, GetVisible(b.scope, id, /*allow_expired=*/true));
      batch.deletes.push_back(m.id);
      batch.audit.push_back(MakeAudit(now, actor, AuditAction::kDelete, m.id, m.ns.tenant,
                                      b.reason.empty() ? "commit" : b.reason, json{{"kind", KindName(m.kind)}}));
    }
    batch.puts = records;
    FlushAccess();
    MSP_ASSIGN_OR_RETURN(std::vector<int64_t> seqs, store_->Apply(batch));
    for (size_t i = 0; i < records.size(); ++i) {
      records[i].seq = seqs[i];
      records[i].embedding.clear();
    }
    return records;
  }

  Status Delete(const Namespace& scope, const std::string& id, const std::string& reason,
                const std::string& actor) override {
    std::lock_guard<std::mutex> lock(write_mu_);
    MSP_ASSIGN_OR_RETURN(Memory m, GetVisible(scope, id, /*allow_expired=*/true));
    WriteBatch batch;
    batch.deletes.push_back(m.id);
    batch.audit.push_back(MakeAudit(clock_->NowMs(), ActorOf(actor), AuditAction::kDelete, m.id,
                                    m.ns.tenant, reason.empty() ? "deleted on request" : reason,
                                    json{{"kind", KindName(m.kind)}}));
    return ApplyBatch(batch);
  }

  // ---- consolidation ----------------------------------------------------

  Result<ConsolidationReport> Consolidate(const Namespace& scope, const std::string& session) override {
    MSP_RETURN_IF_ERROR(ValidateCommon(scope, {}, "", 1.0, "", {}));
    const std::string actor = options_.actor.empty() ? "consolidation" : options_.actor;
    if (!session.empty()) return ConsolidateSession(scope, session, actor);
    // Every (namespace, session) in scope with episodes.
    std::map<std::string, std::pair<Namespace, std::string>> sessions;
    RecordQuery q;
    q.scope = scope;
    q.kinds = {Kind::kEpisode};
    q.with_embeddings = false;
    q.limit = 2000;
    for (q.offset = 0;; q.offset += q.limit) {
      MSP_ASSIGN_OR_RETURN(auto page, store_->List(q));
      for (const auto& m : page) {
        sessions.try_emplace(ConsolidationKey(m.ns, m.ns.session), m.ns, m.ns.session);
      }
      if (static_cast<int>(page.size()) < q.limit) break;
    }
    ConsolidationReport total;
    for (const auto& [key, where] : sessions) {
      MSP_ASSIGN_OR_RETURN(auto one, ConsolidateSession(where.first, where.second, actor));
      total.episodes_read += one.episodes_read;
      total.candidates += one.candidates;
      total.facts_added += one.facts_added;
      total.facts_merged += one.facts_merged;
      total.facts_superseded += one.facts_superseded;
      total.fact_ids.insert(total.fact_ids.end(), one.fact_ids.begin(), one.fact_ids.end());
    }
    return total;
  }

  Status Reindex() override { return index_sync_.Rebuild(/*lexical_too=*/true); }
  Status CatchUpIndexes() override { return CatchUp(); }

  // Leaves both indexes caught up and the vector index persisted, so the
  // first query after an import does not pay for indexing it.
  Result<ImportReport> Import(std::istream& in, const std::string& actor) override {
    std::lock_guard<std::mutex> lock(write_mu_);
    MSP_ASSIGN_OR_RETURN(ImportReport report,
                         ImportJsonl(in, *store_, *embedder_, options_, clock_->NowMs(), ActorOf(actor)));
    MSP_RETURN_IF_ERROR(index_sync_.CatchUpAndPersist());
    return report;
  }

  Result<int64_t> Export(const Namespace& scope, std::ostream& out) override {
    MSP_RETURN_IF_ERROR(ValidateCommon(scope, {}, "", 1.0, "", {}));
    FlushAccess();
    return ExportJsonl(*store_, scope, out);
  }

  Status CheckStore() override { return store_->LastSeq().status(); }

  Result<Stats> GetStats(const Namespace& scope, std::optional<int> max_access_level) override {
    if (max_access_level && (*max_access_level < 0 || *max_access_level > kMaxAccessLevel)) {
      return Status::InvalidArgument("max_access_level must be between 0 and " + std::to_string(kMaxAccessLevel) +
                                     ", got " + std::to_string(*max_access_level));
    }
    MSP_RETURN_IF_ERROR(CatchUp());
    const TimeMs now = clock_->NowMs();
    Stats s;
    RecordQuery q;
    q.scope = scope;
    q.max_access_level = max_access_level;
    q.with_embeddings = false;
    MSP_ASSIGN_OR_RETURN(s.records, store_->Count(q));
    RecordQuery live = q;
    live.state = RecordState::kActive;
    live.not_expired_at = now;
    MSP_ASSIGN_OR_RETURN(s.active, store_->Count(live));
    RecordQuery unexpired = q;
    unexpired.not_expired_at = now;
    MSP_ASSIGN_OR_RETURN(int64_t not_expired, store_->Count(unexpired));
    s.expired = s.records - not_expired;
    for (Kind k : AllKinds()) {
      RecordQuery byk = q;
      byk.kinds = {k};
      MSP_ASSIGN_OR_RETURN(int64_t n, store_->Count(byk));
      if (n > 0) s.by_kind.emplace_back(std::string(KindName(k)), n);
    }
    for (Layer l : {Layer::kEpisodic, Layer::kSemantic, Layer::kProcedural, Layer::kDomain, Layer::kWorkflow,
                    Layer::kPractitioner}) {
      RecordQuery byl = q;
      byl.layers = {l};
      MSP_ASSIGN_OR_RETURN(int64_t n, store_->Count(byl));
      if (n > 0) s.by_layer.emplace_back(std::string(LayerName(l)), n);
    }
    MSP_ASSIGN_OR_RETURN(s.last_seq, store_->LastSeq());
    MSP_ASSIGN_OR_RETURN(s.lexical_applied_seq, lexical_->AppliedSeq());
    s.vector_applied_seq = vector_->AppliedSeq();
    s.vector_rows = static_cast<int64_t>(vector_->size());
    if (const VectorGraphInfo g = vector_->graph_info(); g.built) {
      s.vector_graph_placed = static_cast<int64_t>(g.placed - g.removed);
      s.vector_graph_pending = static_cast<int64_t>(g.pending);
    }
    MSP_ASSIGN_OR_RETURN(s.audit_events, store_->CountAudit(scope.tenant));
    s.embedder_id = embedder_->id();
    s.store_path = store_->Describe();
    return s;
  }

  Result<std::vector<AuditEvent>> Audit(const Namespace& scope, const std::string& record_id,
                                        int limit) override {
    if (limit < 1) return Status::InvalidArgument("limit must be >= 1");
    AuditQuery q;
    q.tenant = scope.tenant;
    q.record_id = record_id;
    q.limit = limit;
    return store_->ListAudit(q);
  }

 private:
  std::string ActorOf(const std::string& actor) const { return actor.empty() ? options_.actor : actor; }

  Memory NewRecord(const Namespace& ns, Kind kind, Layer layer, const std::string& text, TimeMs now) {
    Memory m;
    m.id = NewUuid(now);
    m.ns = ns;
    m.kind = kind;
    m.layer = layer;
    m.text = text;
    m.created_at = m.updated_at = now;
    return m;
  }

  // The fields WriteRequest and FactRequest share, onto a new record.
  template <typename Request>
  static void CopyRequestFields(const Request& r, Memory* m) {
    m->tags = r.tags;
    m->source = r.source;
    m->sensitivity = r.sensitivity;
    m->criticality = r.criticality;
    m->confidence = r.confidence;
    m->valid_at = r.valid_at;
    m->provenance = r.provenance;
  }

  Result<Memory> FactRecord(const FactRequest& r, TimeMs now) {
    Memory m = NewRecord(r.ns, Kind::kFact, Layer::kSemantic, r.text, now);
    CopyRequestFields(r, &m);
    for (const auto& ep : r.source_episodes) {
      ProvenanceRef ref{"episode", ep, ""};
      if (std::find(m.provenance.begin(), m.provenance.end(), ref) == m.provenance.end()) {
        m.provenance.push_back(ref);
      }
    }
    MSP_RETURN_IF_ERROR(Embed(&m));
    return m;
  }

  // Validates `r`, applies the write policy (auditing a refusal) and builds
  // the record, without its vector.
  Result<Memory> PrepareWrite(const WriteRequest& r, TimeMs now) {
    if (r.kind == Kind::kEpisode) {
      return Status::InvalidArgument("kind episode is written with episode add (AddEpisode), not write");
    }
    if (r.kind == Kind::kCorrection) {
      // A correction is only ever its structured abstraction, never raw text
      // (seed 003); mission memory validates it (msp correction add).
      return Status::InvalidArgument(
          "kind correction is recorded with `msp correction add` (a structured abstraction: class, "
          "category, component, outcome, one-sentence summary), not write");
    }
    MSP_RETURN_IF_ERROR(ValidateText("text", r.text, options_.policy.max_text_bytes));
    MSP_RETURN_IF_ERROR(ValidateCommon(r.ns, r.tags, r.source, r.confidence, r.body_json, r.provenance));
    if (r.ttl_days < 0) return Status::InvalidArgument("ttl_days must be >= 0, got " + std::to_string(r.ttl_days));
    if (Status policy = CheckWorthStoring(r, options_.policy); !policy.ok()) {
      return RefuseAndAudit(policy, r.ns.tenant, ActorOf(r.actor), now, r.text);
    }
    Memory m = NewRecord(r.ns, r.kind, r.layer.value_or(DefaultLayer(r.kind)), r.text, now);
    m.body_json = r.body_json.empty() ? "{}" : json::parse(r.body_json).dump();
    CopyRequestFields(r, &m);
    const int ttl = r.ttl_days != 0 ? r.ttl_days : options_.policy.default_ttl_days;
    if (ttl > 0) m.expires_at = now + ttl * kMsPerDay;
    return m;
  }

  Status Embed(Memory* m) {
    MSP_ASSIGN_OR_RETURN(auto vecs, embedder_->Embed({m->text}));
    m->embedding = std::move(vecs.front());
    m->embedder_id = embedder_->id();
    return Status::Ok();
  }

  // Audits a refusal. The refused text is not kept (it may be the very
  // thing that must not be stored); only its size is.
  Status RefuseAndAudit(const Status& refusal, const std::string& tenant, const std::string& actor,
                        TimeMs now, const std::string& text) {
    WriteBatch batch;
    batch.audit.push_back(MakeAudit(now, actor, AuditAction::kRefuse, "", tenant, refusal.message(),
                                    json{{"text_bytes", text.size()}}));
    MSP_RETURN_IF_ERROR(ApplyBatch(batch));
    return refusal;
  }

  Status ApplyBatch(const WriteBatch& batch) {
    FlushAccess();
    MSP_ASSIGN_OR_RETURN(auto seqs, store_->Apply(batch));
    (void)seqs;
    return Status::Ok();
  }

  Result<Memory> GetVisible(const Namespace& scope, const std::string& id, bool allow_expired) {
    if (id.empty()) return Status::InvalidArgument("id is empty");
    MSP_ASSIGN_OR_RETURN(auto m, store_->Get(id));
    if (!m || !scope.Contains(m->ns)) {
      return Status::NotFound("no record " + id + " in " + scope.ToString());
    }
    if (!allow_expired && m->expires_at > 0 && m->expires_at <= clock_->NowMs()) {
      return Status::NotFound("record " + id + " expired at " + FormatIso8601(m->expires_at));
    }
    return *std::move(m);
  }

  // The active fact in exactly `ns` most similar to `m`, if above the dedup
  // threshold. `pending` holds facts of the same batch not yet stored. Only
  // a fact of m's own access level is a twin: a write must not learn of, or
  // change, a fact held above its level (policy writes store level 0).
  Result<std::optional<Memory>> FindTwin(const Memory& m, const std::vector<Memory>& pending) {
    const double threshold = options_.facts.dedup_cosine;
    std::optional<Memory> best;
    double best_sim = threshold;
    auto consider = [&](const Memory& c) {
      if (c.id == m.id || c.kind != Kind::kFact || c.state != RecordState::kActive || !(c.ns == m.ns) ||
          c.access_level != m.access_level || c.embedding.size() != m.embedding.size()) {
        return;
      }
      const double sim = Dot(c.embedding.data(), m.embedding.data(), m.embedding.size());
      if (sim > best_sim) {
        best_sim = sim;
        best = c;
      }
    };
    for (const auto& p : pending) consider(p);
    MSP_RETURN_IF_ERROR(index_sync_.CatchUpVectors());
    IndexQuery q;
    q.scope = m.ns;
    q.filter.kinds = {Kind::kFact};
    q.filter.max_access_level = m.access_level;
    q.now = clock_->NowMs();
    q.limit = 8;
    MSP_ASSIGN_OR_RETURN(auto hits, vector_->Search(m.embedding, q));
    std::vector<std::string> ids;
    for (const auto& h : hits) {
      if (h.score > threshold) ids.push_back(h.id);
    }
    MSP_ASSIGN_OR_RETURN(auto found, store_->GetMany(ids, /*with_embeddings=*/true));
    for (const auto& c : found) {
      // A record already changed in this batch counts as changed (merged, superseded).
      const bool in_batch = std::any_of(pending.begin(), pending.end(), [&](const Memory& p) { return p.id == c.id; });
      if (!in_batch) consider(c);
    }
    return best;
  }

  // Adds `m` (a new fact) to `batch`, or merges it into its twin. Returns the
  // stored id and whether it merged. REQUIRES: write_mu_ held.
  Result<std::pair<std::string, bool>> PlanFact(Memory m, const std::string& actor, TimeMs now,
                                               WriteBatch* batch, std::vector<Memory>* pending) {
    MSP_ASSIGN_OR_RETURN(auto twin, FindTwin(m, *pending));
    if (twin) return std::make_pair(PlanMerge(std::move(*twin), m, "near-duplicate fact merged", actor, now, batch, pending), true);
    batch->audit.push_back(MakeAudit(now, actor, AuditAction::kWrite, m.id, m.ns.tenant, "fact"));
    batch->puts.push_back(m);
    pending->push_back(m);
    return std::make_pair(m.id, false);
  }

  // Merges fact `m` into the stored fact `t` (confidence, provenance, tags,
  // expiry) in `batch`, replacing an earlier put of `t` there. Returns t's id.
  std::string PlanMerge(Memory t, const Memory& m, const std::string& reason, const std::string& actor, TimeMs now,
                        WriteBatch* batch, std::vector<Memory>* pending) {
    json details{{"candidate", m.text}, {"confidence_before", t.confidence}};
    if (t.embedding.size() == m.embedding.size() && !m.embedding.empty()) {
      details["similarity"] = Dot(t.embedding.data(), m.embedding.data(), m.embedding.size());
    }
    t.confidence = std::max(t.confidence, m.confidence);
    t.provenance = UnionRefs(t.provenance, m.provenance);
    t.tags = Union(t.tags, m.tags);
    t.updated_at = now;
    if (m.expires_at == 0 || (t.expires_at != 0 && m.expires_at > t.expires_at)) t.expires_at = m.expires_at;
    batch->audit.push_back(MakeAudit(now, actor, AuditAction::kMerge, t.id, t.ns.tenant, reason, details));
    ReplaceInBatch(t, batch, pending);
    return t.id;
  }

  // Puts `r` into `batch` and `pending`, replacing an earlier put of its id.
  static void ReplaceInBatch(const Memory& r, WriteBatch* batch, std::vector<Memory>* pending) {
    auto same = [&](const Memory& x) { return x.id == r.id; };
    batch->puts.erase(std::remove_if(batch->puts.begin(), batch->puts.end(), same), batch->puts.end());
    pending->erase(std::remove_if(pending->begin(), pending->end(), same), pending->end());
    batch->puts.push_back(r);
    pending->push_back(r);
  }

  // The active fact `id` a consolidation candidate names as its merge or
  // supersede target, as this batch left it; nullopt when it is gone, not
  // an active fact, or outside `scope` (the candidate is then added).
  Result<std::optional<Memory>> CandidateTarget(const std::string& id, const Namespace& scope,
                                                const std::vector<Memory>& pending) {
    std::optional<Memory> t;
    auto in_batch = std::find_if(pending.begin(), pending.end(), [&](const Memory& p) { return p.id == id; });
    if (in_batch != pending.end()) {
      t = *in_batch;
    } else {
      MSP_ASSIGN_OR_RETURN(t, store_->Get(id));
    }
    if (!t || t->kind != Kind::kFact || t->state != RecordState::kActive || !scope.Contains(t->ns)) {
      return std::optional<Memory>();
    }
    return t;
  }

  // Adds evictions to `batch` for every user whose active facts would pass
  // max_items_per_user once `batch` lands. REQUIRES: write_mu_ held.
  Result<std::vector<std::string>> PlanEvictions(
      WriteBatch* batch, const std::string& actor, TimeMs now,
      std::map<std::pair<std::string, std::string>, std::vector<std::string>>* by_user = nullptr) {
    const size_t limit = options_.policy.max_items_per_user;
    std::vector<std::string> evicted;
    if (limit == 0) return evicted;
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> new_by_user;
    for (const auto& p : batch->puts) {
      if (p.kind == Kind::kFact && !p.ns.user.empty() && p.state == RecordState::kActive) {
        new_by_user[{p.ns.tenant, p.ns.user}].push_back(p.id);
      }
    }
    for (const auto& [user, new_ids] : new_by_user) {
      RecordQuery q;
      q.scope.tenant = user.first;
      q.scope.user = user.second;
      q.kinds = {Kind::kFact};
      q.state = RecordState::kActive;
      q.with_embeddings = false;
      MSP_ASSIGN_OR_RETURN(auto existing, store_->List(q));
      size_t adding = 0;
      for (const auto& id : new_ids) {
        bool stored = std::any_of(existing.begin(), existing.end(), [&](const Memory& e) { return e.id == id; });
        if (!stored) ++adding;
      }
      for (const auto& id : SelectEvictions(existing, adding, limit, now, new_ids)) {
        batch->deletes.push_back(id);
        batch->audit.push_back(MakeAudit(now, actor, AuditAction::kEvict, id, user.first,
                                         "per-user limit of " + std::to_string(limit) + " facts reached"));
        evicted.push_back(id);
        if (by_user != nullptr) (*by_user)[user].push_back(id);
      }
    }
    return evicted;
  }

  // REQUIRES: write_mu_ held.
  Result<WriteResult> StoreFact(Memory m, const std::string& actor, TimeMs now) {
    WriteBatch batch;
    std::vector<Memory> pending;
    MSP_ASSIGN_OR_RETURN(auto placed, PlanFact(std::move(m), actor, now, &batch, &pending));
    WriteResult out;
    out.id = placed.first;
    out.merged = placed.second;
    MSP_ASSIGN_OR_RETURN(out.evicted_ids, PlanEvictions(&batch, actor, now));
    MSP_RETURN_IF_ERROR(ApplyBatch(batch));
    return out;
  }

  Result<int64_t> LastStepNumber(const Namespace& ns, const std::string& session) {
    RecordQuery q;
    q.scope = ns;
    q.kinds = {Kind::kEpisode};
    q.session = session;
    q.order = RecordQuery::Order::kStepDesc;
    q.limit = 1;
    q.with_embeddings = false;
    MSP_ASSIGN_OR_RETURN(auto last, store_->List(q));
    return last.empty() ? int64_t{0} : last.front().step_number;
  }

  Result<int64_t> ConsolidatedUpTo(const Namespace& ns, const std::string& session) {
    MSP_ASSIGN_OR_RETURN(auto v, store_->GetMeta(ConsolidationKey(ns, session)));
    if (!v) return int64_t{0};
    try {
      return static_cast<int64_t>(std::stoll(*v));
    } catch (...) {
      return Status::Corruption("consolidation progress for session '" + session + "' is not a number: " + *v);
    }
  }

  // The stored facts of one namespace, as consolidation shows them to the
  // extractor: the active facts most similar to a text, by Retrieve.
  class ScopedFacts final : public FactLookup {
   public:
    ScopedFacts(Engine* engine, Namespace scope) : engine_(engine), scope_(std::move(scope)) {}
    Result<std::vector<Memory>> SimilarFacts(const std::string& text, int k) override {
      RetrieveRequest r;
      r.scope = scope_;
      r.query = text;
      r.top_k = std::clamp(k, 1, 100);
      r.filter.kinds = {Kind::kFact};
      r.record_access = false;
      MSP_ASSIGN_OR_RETURN(auto hits, engine_->Retrieve(r));
      std::vector<Memory> out;
      for (auto& h : hits) out.push_back(std::move(h.memory));
      return out;
    }

   private:
    Engine* engine_;
    Namespace scope_;
  };

  // Facts from the session's episodes after the last consolidated step.
  // The extractor (perhaps a model) runs without the write lock, so writes
  // never wait for it; the facts and the new progress mark then land in one
  // batch, so a crash neither loses nor duplicates facts. Should the mark
  // have moved meanwhile (another process consolidated the session), the
  // work is redone from the new mark.
  Result<ConsolidationReport> ConsolidateSession(const Namespace& ns, const std::string& session,
                                                 const std::string& actor) {
    std::lock_guard<std::mutex> serial(consolidate_mu_);
    // Servers sharing the store consolidate a session one at a time: while
    // another holds it, it lands what it read; later episodes wait for the
    // next trigger.
    MSP_ASSIGN_OR_RETURN(std::unique_ptr<StoreLease> lease, store_->TryLease(ConsolidationKey(ns, session)));
    if (!lease) return ConsolidationReport{};
    constexpr int kAttempts = 3;
    for (int attempt = 1;; ++attempt) {
      ConsolidationReport report;
      MSP_ASSIGN_OR_RETURN(int64_t scope_done, ConsolidatedUpTo(ns, session));
      RecordQuery q;
      q.scope = ns;
      q.kinds = {Kind::kEpisode};
      q.session = session;
      q.min_step = scope_done + 1;
      q.order = RecordQuery::Order::kStepAsc;
      q.with_embeddings = false;
      MSP_ASSIGN_OR_RETURN(auto episodes, store_->List(q));
      if (episodes.empty()) return report;
      // Episodes of one session may come from several namespaces only when
      // the scope is wider than the session's owner; consolidate each owner
      // alone, from its own progress mark.
      const Namespace owner = episodes.front().ns;
      MSP_ASSIGN_OR_RETURN(int64_t done, ConsolidatedUpTo(owner, session));
      episodes.erase(std::remove_if(episodes.begin(), episodes.end(),
                                    [&](const Memory& e) { return !(e.ns == owner) || e.step_number <= done; }),
                     episodes.end());
      if (episodes.empty()) return report;
      report.episodes_read = static_cast<int>(episodes.size());
      Namespace fact_ns = owner;
      fact_ns.session.clear();  // facts outlive the session they came from
      ScopedFacts facts(this, fact_ns);
      MSP_ASSIGN_OR_RETURN(auto candidates, extractor_->ExtractWithFacts(episodes, facts));
      report.candidates = static_cast<int>(candidates.size());
      const TimeMs now = clock_->NowMs();
      std::vector<std::pair<Memory, const FactCandidate*>> records;
      for (const auto& c : candidates) {
        if (!ValidateText("fact", c.text, options_.policy.max_text_bytes).ok()) continue;
        FactRequest r;
        r.ns = fact_ns;
        r.text = c.text;
        r.confidence = std::clamp(c.confidence, 0.0, 1.0);
        r.source_episodes = c.source_episodes;
        r.tags = c.tags;
        r.source = "consolidation";
        r.valid_at = c.valid_at;
        MSP_ASSIGN_OR_RETURN(Memory m, FactRecord(r, now));
        records.emplace_back(std::move(m), &c);
      }

      std::lock_guard<std::mutex> lock(write_mu_);
      MSP_ASSIGN_OR_RETURN(int64_t done_now, ConsolidatedUpTo(owner, session));
      if (done_now != done) {
        if (attempt < kAttempts) continue;
        return Status::Conflict("session '" + session + "' is being consolidated by another process (progress moved from step " +
                                std::to_string(done) + " to " + std::to_string(done_now) + "); try again");
      }
      WriteBatch batch;
      std::vector<Memory> pending;
      for (auto& [m, c] : records) {
        std::optional<Memory> target;
        if (c->action != FactAction::kAdd && !c->target_id.empty()) {
          MSP_ASSIGN_OR_RETURN(target, CandidateTarget(c->target_id, fact_ns, pending));
        }
        if (target && c->action == FactAction::kMerge) {
          report.fact_ids.push_back(
              PlanMerge(std::move(*target), m, "restates this fact (consolidation)", actor, now, &batch, &pending));
          ++report.facts_merged;
        } else if (target && c->action == FactAction::kSupersede) {
          Memory old = std::move(*target);
          old.state = RecordState::kSuperseded;
          old.superseded_by = m.id;
          old.invalid_at = m.valid_at > 0 ? m.valid_at : now;
          old.updated_at = now;
          m.supersedes = old.id;
          batch.audit.push_back(MakeAudit(now, actor, AuditAction::kSupersede, old.id, old.ns.tenant,
                                          "contradicted by a newer fact (consolidation)",
                                          json{{"successor", m.id}, {"successor_text", m.text}}));
          batch.audit.push_back(MakeAudit(now, actor, AuditAction::kWrite, m.id, m.ns.tenant, "supersedes " + old.id));
          ReplaceInBatch(old, &batch, &pending);
          ReplaceInBatch(m, &batch, &pending);
          report.fact_ids.push_back(m.id);
          ++report.facts_superseded;
        } else {
          MSP_ASSIGN_OR_RETURN(auto placed, PlanFact(std::move(m), actor, now, &batch, &pending));
          if (placed.second) {
            ++report.facts_merged;
          } else {
            ++report.facts_added;
          }
          report.fact_ids.push_back(placed.first);
        }
      }
      MSP_ASSIGN_OR_RETURN(auto evicted, PlanEvictions(&batch, actor, now));
      (void)evicted;
      batch.meta.emplace_back(ConsolidationKey(owner, session), std::to_string(episodes.back().step_number));
      MSP_RETURN_IF_ERROR(ApplyBatch(batch));
      return report;
    }
  }

  // ---- background consolidation ------------------------------------------

  // Starts the worker and queues the sessions a previous run left queued.
  Status StartWorker() {
    const std::string actor = options_.actor.empty() ? "consolidation" : options_.actor;
    worker_ = std::make_unique<ConsolidationWorker>(
        [this, actor](const Namespace& ns, const std::string& session) {
          auto report = ConsolidateSession(ns, session, actor);
          if (!report.ok()) return report.status();
          return UnqueueConsolidation(ns, session);
        });
    MSP_ASSIGN_OR_RETURN(auto queued, store_->GetMeta(kConsolidationQueueMetaKey));
    if (!queued) return Status::Ok();
    json q = json::parse(*queued, nullptr, false);
    if (!q.is_object()) return Status::Ok();  // a damaged hint: the next trigger queues again
    for (auto it = q.begin(); it != q.end(); ++it) {
      if (it->is_object()) {
        Namespace ns = NamespaceFromJson(*it);
        worker_->Enqueue(ns, ns.session);
      }
    }
    return Status::Ok();
  }

  // Notes the session in the store's queue (so a restart finds it), then
  // hands it to the worker.
  Status QueueConsolidation(const Namespace& ns, const std::string& session) {
    Namespace where = ns;
    where.session = session;
    {
      std::lock_guard<std::mutex> lock(queue_meta_mu_);
      MSP_ASSIGN_OR_RETURN(json q, ReadQueueMeta());
      const std::string key = ConsolidationKey(ns, session);
      if (!q.contains(key)) {
        q[key] = NamespaceJson(where);
        WriteBatch batch;
        batch.meta.emplace_back(kConsolidationQueueMetaKey, q.dump());
        MSP_RETURN_IF_ERROR(ApplyBatch(batch));
      }
    }
    worker_->Enqueue(where, session);
    return Status::Ok();
  }

  Status UnqueueConsolidation(const Namespace& ns, const std::string& session) {
    std::lock_guard<std::mutex> lock(queue_meta_mu_);
    MSP_ASSIGN_OR_RETURN(json q, ReadQueueMeta());
    if (q.erase(ConsolidationKey(ns, session)) == 0) return Status::Ok();
    WriteBatch batch;
    batch.meta.emplace_back(kConsolidationQueueMetaKey, q.dump());
    return ApplyBatch(batch);
  }

  Result<json> ReadQueueMeta() {
    MSP_ASSIGN_OR_RETURN(auto v, store_->GetMeta(kConsolidationQueueMetaKey));
    json q = v ? json::parse(*v, nullptr, false) : json::object();
    if (!q.is_object()) q = json::object();
    return q;
  }

  Status WaitForConsolidation() override {
    if (worker_) worker_->Drain();
    return Status::Ok();
  }

  // ---- access bookkeeping ----------------------------------------------
  //
  // Retrieve's bumps of access_count / last_accessed are kept in memory and
  // written in one Store::RecordAccess (bookkeeping: not fsynced) by the
  // first retrieval a second or more after the oldest one, before any write
  // (eviction reads the counts) and any read that returns records, and when
  // the engine closes. So a search writes nothing itself, a short-lived
  // process writes once at exit, and a server once a second at most. A
  // flush records the batch's latest access time as last_accessed; a failed
  // flush drops its bumps (a read-only store never fills memory with them).

  void NoteAccess(const std::vector<std::string>& ids, TimeMs at) {
    {
      std::lock_guard<std::mutex> lock(access_mu_);
      if (pending_access_.empty()) first_access_at_ = at;
      pending_access_.insert(pending_access_.end(), ids.begin(), ids.end());
      pending_access_at_ = std::max(pending_access_at_, at);
      if (at - first_access_at_ < kAccessFlushIntervalMs) return;
    }
    FlushAccess();
  }

  void FlushAccess() {
    std::vector<std::string> ids;
    TimeMs at = 0;
    {
      std::lock_guard<std::mutex> lock(access_mu_);
      if (pending_access_.empty()) return;
      ids.swap(pending_access_);
      at = std::exchange(pending_access_at_, 0);
    }
    (void)store_->RecordAccess(ids, at);
  }

  // ---- index catch-up ---------------------------------------------------

  Status CatchUp() { return index_sync_.CatchUp(); }

  // True when the store holds no record at all (any tenant).
  Result<bool> StoreIsEmpty() {
    bool empty = true;
    MSP_RETURN_IF_ERROR(store_->Scan([&](const Memory&) {
      empty = false;
      return false;
    }));
    return empty;
  }

  const Options options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Embedder> embedder_;
  std::unique_ptr<LexicalIndex> lexical_;
  std::unique_ptr<VectorIndex> vector_;
  std::unique_ptr<Extractor> extractor_;
  std::shared_ptr<Clock> clock_;
  IndexSync index_sync_;  // after the parts it keeps in step
  // Serialises this process's read-modify-write sequences (dedup, step
  // numbers, eviction). Other processes are serialised by the store.
  std::mutex write_mu_;
  static constexpr size_t kMaxGroupRecords = 1000;  // a group stops growing past this many
  std::mutex group_mu_;
  std::condition_variable group_cv_;
  std::deque<WriteJob*> group_queue_;  // guarded by group_mu_
  bool group_leader_ = false;          // guarded by group_mu_
  static constexpr TimeMs kAccessFlushIntervalMs = 1000;  // by clock_
  std::mutex access_mu_;
  std::vector<std::string> pending_access_;  // an id once per bump; guarded by access_mu_
  TimeMs pending_access_at_ = 0;             // the latest bump's time; guarded by access_mu_
  TimeMs first_access_at_ = 0;  // the oldest pending bump's time; guarded by access_mu_
  // One consolidation at a time in this process (the worker's and callers').
  std::mutex consolidate_mu_;
  std::mutex queue_meta_mu_;  // the read-modify-write of the stored queue
  // Last, so it stops (finishing its job) before the parts it uses go away.
  std::unique_ptr<ConsolidationWorker> worker_;
  // Stopped first of all (declared last): it uses the store and the indexes.
  std::unique_ptr<StoppableThread> follower_;
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
  if (options.store.backend == "postgres") engine->StartFollowingChanges();
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
  MSP_ASSIGN_OR_RETURN(parts.embedder, OpenEmbedder(options.embedder));
  MSP_ASSIGN_OR_RETURN(parts.lexical, OpenLexicalIndex(options.store.data_dir + "/lexical", options.retrieval));
  // Exact scan below 50,000 rows a tenant, the graph above; both are
  // persisted with the vectors (index_sync.h), and the graph is extended
  // only at save points, never by a process that replays a few changes.
  parts.vector = MakeVectorIndex(parts.embedder->dimension(), VectorIndexOptions{});
  parts.vector_file = options.store.data_dir + "/vector/index.msv";
  // $OPENAI_API_KEY: the llm extractor's key fallback, for api.openai.com only.
  const char* openai_key = std::getenv("OPENAI_API_KEY");
  MSP_ASSIGN_OR_RETURN(parts.extractor, MakeConfiguredExtractor(options, openai_key != nullptr ? openai_key : ""));
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
