// WritePlanner: validation, policy, twin search, merge, eviction and group
// commit of the engine's writes.
#include "core/write_planner.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/idempotency.h"
#include "core/import_export.h"
#include "core/write_policy.h"
#include "util/time.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

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

// The fields WriteRequest and FactRequest share, onto a new record.
template <typename Request>
void CopyRequestFields(const Request& r, Memory* m) {
  m->tags = r.tags;
  m->source = r.source;
  m->sensitivity = r.sensitivity;
  m->criticality = r.criticality;
  m->confidence = r.confidence;
  m->valid_at = r.valid_at;
  m->provenance = r.provenance;
}

}  // namespace

// A WriteMany call waiting in the group-commit queue.
struct WritePlanner::WriteJob {
  WriteJob(const std::vector<WriteRequest>* r, std::vector<Memory> prepared, TimeMs at)
      : requests(r), records(std::move(prepared)), now(at) {}

  const std::vector<WriteRequest>* requests;
  std::vector<Memory> records;  // prepared and embedded
  TimeMs now;
  Result<std::vector<WriteResult>> result = Status::Internal("write not run");
  bool done = false;  // guarded by group_mu_
  // Woken alone: when its write is done, or when it is to lead the next
  // group (a shared condition woke every waiting writer after each group,
  // most of them to sleep again: a futex wake and a mutex handoff each).
  std::condition_variable turn;
};

Result<std::vector<WriteResult>> WritePlanner::WriteMany(const std::vector<WriteRequest>& requests) {
  for (const WriteRequest& r : requests) {
    if (r.request_id.empty()) continue;
    if (requests.size() != 1) {
      return Status::InvalidArgument("a request_id applies to a write on its own, not to a batch of " +
                                     std::to_string(requests.size()) + " (nothing in this batch was stored)");
    }
    MSP_ASSIGN_OR_RETURN(WriteResult result, WriteKeyed(r));
    return std::vector<WriteResult>{std::move(result)};
  }
  const TimeMs now = ctx_.clock.NowMs();
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
  MSP_RETURN_IF_ERROR(EmbedRecords(ctx_.embedder, &records));
  WriteJob job{&requests, std::move(records), now};
  std::unique_lock<std::mutex> lock(group_mu_);
  group_queue_.push_back(&job);
  while (!job.done && group_leader_) job.turn.wait(lock);
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
      // Under the lock: a job woken returns and is gone once it has it.
      for (WriteJob* j : group) {
        j->done = true;
        if (j != &job) j->turn.notify_one();
      }
    }
    group_leader_ = false;
    // The writer that queued first since leads the next group.
    if (!group_queue_.empty()) group_queue_.front()->turn.notify_one();
  }
  return std::move(job.result);
}

// Plans `records` (of `requests`) into `batch`: facts through PlanFact
// (twins in the store or in `pending` merge), the rest as puts.
// REQUIRES: ctx_.write_mu held.
Result<std::vector<WriteResult>> WritePlanner::PlanWrites(const std::vector<WriteRequest>& requests,
                                                          std::vector<Memory> records, TimeMs now,
                                                          WriteBatch* batch, std::vector<Memory>* pending) {
  std::vector<WriteResult> results(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string actor = ctx_.ActorOf(requests[i].actor);
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
// (nothing reads them after). REQUIRES: ctx_.write_mu held.
Result<std::vector<WriteResult>> WritePlanner::WriteAlone(WriteJob& job) {
  WriteBatch batch;
  std::vector<Memory> pending;
  MSP_ASSIGN_OR_RETURN(auto results,
                       PlanWrites(*job.requests, std::move(job.records), job.now, &batch, &pending));
  MSP_ASSIGN_OR_RETURN(auto evicted, PlanEvictions(&batch, ctx_.ActorOf(""), job.now));
  if (!results.empty()) results.back().evicted_ids = std::move(evicted);
  MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(batch));
  return results;
}

Result<WriteResult> WritePlanner::WriteKeyed(const WriteRequest& r) {
  MSP_RETURN_IF_ERROR(ValidateRequestId(r.request_id));
  const TimeMs now = ctx_.clock.NowMs();
  const std::string hash = WriteRequestHash(r);
  // A repeat is answered before anything else is checked or embedded.
  const std::string& tenant = r.ns.tenant;
  auto held = [&]() { return ctx_.store.GetIdempotencyKey(tenant, r.request_id, now); };
  MSP_ASSIGN_OR_RETURN(std::optional<IdempotencyKey> first, held());
  if (first) return AnswerRepeat(*first, hash);
  MSP_ASSIGN_OR_RETURN(Memory m, PrepareWrite(r, now));
  std::vector<Memory> records{std::move(m)};
  MSP_RETURN_IF_ERROR(EmbedRecords(ctx_.embedder, &records));
  std::lock_guard<std::mutex> lock(ctx_.write_mu);
  MSP_ASSIGN_OR_RETURN(first, held());  // a repeat that raced this one in this process
  if (first) return AnswerRepeat(*first, hash);
  WriteBatch batch;
  std::vector<Memory> pending;
  const std::vector<WriteRequest> requests{r};
  MSP_ASSIGN_OR_RETURN(auto results, PlanWrites(requests, std::move(records), now, &batch, &pending));
  MSP_ASSIGN_OR_RETURN(auto evicted, PlanEvictions(&batch, ctx_.ActorOf(""), now));
  results.back().evicted_ids = std::move(evicted);
  IdempotencyKey key;
  key.tenant = tenant;
  key.key = r.request_id;
  key.request_hash = hash;
  key.reply = WriteReplyJson(results.back());
  key.created_at = now;
  key.expires_at = now + static_cast<TimeMs>(ctx_.options.store.idempotency_ttl_hours) * 3600 * 1000;
  batch.idempotency = std::move(key);
  Status applied = ctx_.ApplyBatch(batch);
  if (applied.code() == StatusCode::kAlreadyExists) {
    // Another process claimed the key first: answer as a repeat of its write.
    MSP_ASSIGN_OR_RETURN(first, held());
    if (first) return AnswerRepeat(*first, hash);
  }
  MSP_RETURN_IF_ERROR(applied);
  return std::move(results.back());
}

void WritePlanner::RunWriteGroup(const std::vector<WriteJob*>& group) {
  std::lock_guard<std::mutex> lock(ctx_.write_mu);
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
    if (planned && PlanEvictions(&batch, ctx_.ActorOf(""), now, &evicted).ok() && ctx_.ApplyBatch(batch).ok()) {
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
Result<WriteResult> WritePlanner::AddFact(const FactRequest& r) {
  MSP_RETURN_IF_ERROR(ValidateText("text", r.text, ctx_.options.policy.max_text_bytes));
  MSP_RETURN_IF_ERROR(ValidateCommon(r.ns, r.tags, r.source, r.confidence, "", r.provenance));
  const TimeMs now = ctx_.clock.NowMs();
  const std::string actor = ctx_.ActorOf(r.actor);
  if (Status s = CheckStructural(r.sensitivity, ctx_.options.policy); !s.ok()) {
    return ctx_.RefuseAndAudit(s, r.ns.tenant, actor, now, r.text);
  }
  MSP_ASSIGN_OR_RETURN(Memory m, FactRecord(r, now));
  std::lock_guard<std::mutex> lock(ctx_.write_mu);
  return StoreFact(std::move(m), actor, now);
}

Result<WriteResult> WritePlanner::SupersedeFact(const Namespace& scope, const std::string& old_id,
                                                const FactRequest& r) {
  MSP_RETURN_IF_ERROR(ValidateText("text", r.text, ctx_.options.policy.max_text_bytes));
  MSP_RETURN_IF_ERROR(ValidateCommon(scope, r.tags, r.source, r.confidence, "", r.provenance));
  const TimeMs now = ctx_.clock.NowMs();
  const std::string actor = ctx_.ActorOf(r.actor);
  if (Status s = CheckStructural(r.sensitivity, ctx_.options.policy); !s.ok()) {
    return ctx_.RefuseAndAudit(s, scope.tenant, actor, now, r.text);
  }
  std::lock_guard<std::mutex> lock(ctx_.write_mu);
  MSP_ASSIGN_OR_RETURN(Memory old, ctx_.GetVisible(scope, old_id, /*allow_expired=*/true));
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
  MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(batch));
  WriteResult out;
  out.id = next.id;
  return out;
}
Result<std::vector<Memory>> WritePlanner::Commit(const RecordBatch& b) {
  if (!b.expected_seq.empty() && b.expected_seq.size() != b.puts.size()) {
    return Status::InvalidArgument("commit: expected_seq has " + std::to_string(b.expected_seq.size()) +
                                   " entries for " + std::to_string(b.puts.size()) +
                                   " puts; give one per put or none");
  }
  if (b.puts.empty() && b.deletes.empty()) return std::vector<Memory>{};
  MSP_RETURN_IF_ERROR(ValidateCommon(b.scope, {}, "", 1.0, "", {}));
  const TimeMs now = ctx_.clock.NowMs();
  const std::string actor = ctx_.ActorOf(b.actor);
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
      MSP_RETURN_IF_ERROR(ValidateText("text", m.text, ctx_.options.policy.max_text_bytes).WithContext(at));
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
  MSP_RETURN_IF_ERROR(EmbedRecords(ctx_.embedder, &to_embed));
  for (size_t j = 0; j < to_embed.size(); ++j) {
    records[embed_at[j]].embedding = std::move(to_embed[j].embedding);
    records[embed_at[j]].embedder_id = std::move(to_embed[j].embedder_id);
  }

  std::lock_guard<std::mutex> lock(ctx_.write_mu);
  WriteBatch batch;
  std::vector<std::string> ids;
  for (const Memory& m : records) ids.push_back(m.id);
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> existing, ctx_.store.GetMany(ids, /*with_embeddings=*/false));
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
    MSP_ASSIGN_OR_RETURN(Memory m, ctx_.GetVisible(b.scope, id, /*allow_expired=*/true));
    batch.deletes.push_back(m.id);
    batch.audit.push_back(MakeAudit(now, actor, AuditAction::kDelete, m.id, m.ns.tenant,
                                    b.reason.empty() ? "commit" : b.reason, json{{"kind", KindName(m.kind)}}));
  }
  batch.puts = records;
  MSP_ASSIGN_OR_RETURN(std::vector<int64_t> seqs, ctx_.ApplyBatchSeqs(batch));
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].seq = seqs[i];
    records[i].embedding.clear();
  }
  return records;
}

Status WritePlanner::Delete(const Namespace& scope, const std::string& id, const std::string& reason,
                            const std::string& actor) {
  std::lock_guard<std::mutex> lock(ctx_.write_mu);
  MSP_ASSIGN_OR_RETURN(Memory m, ctx_.GetVisible(scope, id, /*allow_expired=*/true));
  WriteBatch batch;
  batch.deletes.push_back(m.id);
  batch.audit.push_back(MakeAudit(ctx_.clock.NowMs(), ctx_.ActorOf(actor), AuditAction::kDelete, m.id,
                                  m.ns.tenant, reason.empty() ? "deleted on request" : reason,
                                  json{{"kind", KindName(m.kind)}}));
  return ctx_.ApplyBatch(batch);
}
Result<Memory> WritePlanner::FactRecord(const FactRequest& r, TimeMs now) {
  Memory m = NewRecord(r.ns, Kind::kFact, Layer::kSemantic, r.text, now);
  CopyRequestFields(r, &m);
  for (const auto& ep : r.source_episodes) {
    ProvenanceRef ref{"episode", ep, ""};
    if (std::find(m.provenance.begin(), m.provenance.end(), ref) == m.provenance.end()) {
      m.provenance.push_back(ref);
    }
  }
  MSP_RETURN_IF_ERROR(ctx_.Embed(&m));
  return m;
}

// Validates `r`, applies the write policy (auditing a refusal) and builds
// the record, without its vector.
Result<Memory> WritePlanner::PrepareWrite(const WriteRequest& r, TimeMs now) {
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
  MSP_RETURN_IF_ERROR(ValidateText("text", r.text, ctx_.options.policy.max_text_bytes));
  MSP_RETURN_IF_ERROR(ValidateCommon(r.ns, r.tags, r.source, r.confidence, r.body_json, r.provenance));
  if (r.ttl_days < 0) return Status::InvalidArgument("ttl_days must be >= 0, got " + std::to_string(r.ttl_days));
  if (Status policy = CheckWorthStoring(r, ctx_.options.policy); !policy.ok()) {
    return ctx_.RefuseAndAudit(policy, r.ns.tenant, ctx_.ActorOf(r.actor), now, r.text);
  }
  Memory m = NewRecord(r.ns, r.kind, r.layer.value_or(DefaultLayer(r.kind)), r.text, now);
  m.body_json = r.body_json.empty() ? "{}" : json::parse(r.body_json).dump();
  CopyRequestFields(r, &m);
  const int ttl = r.ttl_days != 0 ? r.ttl_days : ctx_.options.policy.default_ttl_days;
  if (ttl > 0) m.expires_at = now + ttl * kMsPerDay;
  return m;
}
// The active fact in exactly `ns` most similar to `m`, if above the dedup
// threshold. `pending` holds facts of the same batch not yet stored. Only
// a fact of m's own access level is a twin: a write must not learn of, or
// change, a fact held above its level (policy writes store level 0).
Result<std::optional<Memory>> WritePlanner::FindTwin(const Memory& m, const std::vector<Memory>& pending) {
  const double threshold = ctx_.options.facts.dedup_cosine;
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
  MSP_RETURN_IF_ERROR(ctx_.index_sync.CatchUpVectors());
  IndexQuery q;
  q.scope = m.ns;
  q.filter.kinds = {Kind::kFact};
  q.filter.max_access_level = m.access_level;
  q.now = ctx_.clock.NowMs();
  q.limit = 8;
  MSP_ASSIGN_OR_RETURN(auto hits, ctx_.vector.Search(m.embedding, q));
  std::vector<std::string> ids;
  for (const auto& h : hits) {
    if (h.score > threshold) ids.push_back(h.id);
  }
  MSP_ASSIGN_OR_RETURN(auto found, ctx_.store.GetMany(ids, /*with_embeddings=*/true));
  for (const auto& c : found) {
    // A record already changed in this batch counts as changed (merged, superseded).
    const bool in_batch = std::any_of(pending.begin(), pending.end(), [&](const Memory& p) { return p.id == c.id; });
    if (!in_batch) consider(c);
  }
  return best;
}

Result<std::pair<std::string, bool>> WritePlanner::PlanFact(Memory m, const std::string& actor, TimeMs now,
                                                           WriteBatch* batch, std::vector<Memory>* pending) {
  MSP_ASSIGN_OR_RETURN(auto twin, FindTwin(m, *pending));
  if (twin) return std::make_pair(PlanMerge(std::move(*twin), m, "near-duplicate fact merged", actor, now, batch, pending), true);
  batch->audit.push_back(MakeAudit(now, actor, AuditAction::kWrite, m.id, m.ns.tenant, "fact"));
  batch->puts.push_back(m);
  pending->push_back(m);
  return std::make_pair(m.id, false);
}

std::string WritePlanner::PlanMerge(Memory t, const Memory& m, const std::string& reason, const std::string& actor,
                                    TimeMs now, WriteBatch* batch, std::vector<Memory>* pending) {
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

void WritePlanner::ReplaceInBatch(const Memory& r, WriteBatch* batch, std::vector<Memory>* pending) {
  auto same = [&](const Memory& x) { return x.id == r.id; };
  batch->puts.erase(std::remove_if(batch->puts.begin(), batch->puts.end(), same), batch->puts.end());
  pending->erase(std::remove_if(pending->begin(), pending->end(), same), pending->end());
  batch->puts.push_back(r);
  pending->push_back(r);
}

Result<std::optional<Memory>> WritePlanner::CandidateTarget(const std::string& id, const Namespace& scope,
                                                            const std::vector<Memory>& pending) {
  std::optional<Memory> t;
  auto in_batch = std::find_if(pending.begin(), pending.end(), [&](const Memory& p) { return p.id == id; });
  if (in_batch != pending.end()) {
    t = *in_batch;
  } else {
    MSP_ASSIGN_OR_RETURN(t, ctx_.store.Get(id));
  }
  if (!t || t->kind != Kind::kFact || t->state != RecordState::kActive || !scope.Contains(t->ns)) {
    return std::optional<Memory>();
  }
  return t;
}

Result<std::vector<std::string>> WritePlanner::PlanEvictions(
    WriteBatch* batch, const std::string& actor, TimeMs now,
    std::map<std::pair<std::string, std::string>, std::vector<std::string>>* by_user) {
  const size_t limit = ctx_.options.policy.max_items_per_user;
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
    MSP_ASSIGN_OR_RETURN(auto existing, ctx_.store.List(q));
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

// REQUIRES: ctx_.write_mu held.
Result<WriteResult> WritePlanner::StoreFact(Memory m, const std::string& actor, TimeMs now) {
  WriteBatch batch;
  std::vector<Memory> pending;
  MSP_ASSIGN_OR_RETURN(auto placed, PlanFact(std::move(m), actor, now, &batch, &pending));
  WriteResult out;
  out.id = placed.first;
  out.merged = placed.second;
  MSP_ASSIGN_OR_RETURN(out.evicted_ids, PlanEvictions(&batch, actor, now));
  MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(batch));
  return out;
}

}  // namespace msp
