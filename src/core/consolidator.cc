// Consolidator: episodes into facts, on request, on a trigger, or on a
// background worker.
#include "core/consolidator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/write_policy.h"

namespace msp {
namespace {

using json = nlohmann::json;

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

// The stored facts of one namespace, as consolidation shows them to the
// extractor: the active facts most similar to a text, by Retrieve.
class ScopedFacts final : public FactLookup {
 public:
  ScopedFacts(Retriever& retriever, Namespace scope) : retriever_(retriever), scope_(std::move(scope)) {}
  Result<std::vector<Memory>> SimilarFacts(const std::string& text, int k) override {
    RetrieveRequest r;
    r.scope = scope_;
    r.query = text;
    r.top_k = std::clamp(k, 1, 100);
    r.filter.kinds = {Kind::kFact};
    r.record_access = false;
    MSP_ASSIGN_OR_RETURN(auto hits, retriever_.Retrieve(r));
    std::vector<Memory> out;
    for (auto& h : hits) out.push_back(std::move(h.memory));
    return out;
  }

 private:
  Retriever& retriever_;
  Namespace scope_;
};

}  // namespace

Result<ConsolidationReport> Consolidator::Consolidate(const Namespace& scope, const std::string& session) {
  MSP_RETURN_IF_ERROR(ValidateCommon(scope, {}, "", 1.0, "", {}));
  const std::string actor = ctx_.options.actor.empty() ? "consolidation" : ctx_.options.actor;
  if (!session.empty()) return ConsolidateSession(scope, session, actor);
  // Every (namespace, session) in scope with episodes.
  std::map<std::string, std::pair<Namespace, std::string>> sessions;
  RecordQuery q;
  q.scope = scope;
  q.kinds = {Kind::kEpisode};
  q.with_embeddings = false;
  q.limit = 2000;
  for (q.offset = 0;; q.offset += q.limit) {
    MSP_ASSIGN_OR_RETURN(auto page, ctx_.store.List(q));
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

Result<ConsolidationReport> Consolidator::EndSession(const Namespace& scope, const std::string& session) {
  if (session.empty()) return Status::InvalidArgument("session is required");
  if (worker_) {
    MSP_RETURN_IF_ERROR(ValidateCommon(scope, {}, "", 1.0, "", {}));
    MSP_RETURN_IF_ERROR(Queue(scope, session));
    return ConsolidationReport{};
  }
  return Consolidate(scope, session);
}

Status Consolidator::AfterEpisode(const Memory& episode, const std::string& actor) {
  const int every = ctx_.options.consolidation.every_n_episodes;
  if (every <= 0) return Status::Ok();
  const Namespace& ns = episode.ns;
  MSP_ASSIGN_OR_RETURN(int64_t done, ConsolidatedUpTo(ns, ns.session));
  if (episode.step_number - done < every) return Status::Ok();
  if (worker_) return Queue(ns, ns.session);
  if (auto report = ConsolidateSession(ns, ns.session, actor); !report.ok()) {
    // The step is stored: say so, so that the caller does not add it again.
    return report.status().WithContext("episode " + episode.id + " stored as step " +
                                       std::to_string(episode.step_number) + ", but consolidation failed");
  }
  return Status::Ok();
}

Result<int64_t> Consolidator::ConsolidatedUpTo(const Namespace& ns, const std::string& session) {
  MSP_ASSIGN_OR_RETURN(auto v, ctx_.store.GetMeta(ConsolidationKey(ns, session)));
  if (!v) return int64_t{0};
  try {
    return static_cast<int64_t>(std::stoll(*v));
  } catch (...) {
    return Status::Corruption("consolidation progress for session '" + session + "' is not a number: " + *v);
  }
}

// Facts from the session's episodes after the last consolidated step.
// The extractor (perhaps a model) runs without the write lock, so writes
// never wait for it; the facts and the new progress mark then land in one
// batch, so a crash neither loses nor duplicates facts. Should the mark
// have moved meanwhile (another process consolidated the session), the
// work is redone from the new mark.
Result<ConsolidationReport> Consolidator::ConsolidateSession(const Namespace& ns, const std::string& session,
                                                             const std::string& actor) {
  std::lock_guard<std::mutex> serial(consolidate_mu_);
  // Servers sharing the store consolidate a session one at a time: while
  // another holds it, it lands what it read; later episodes wait for the
  // next trigger.
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<StoreLease> lease, ctx_.store.TryLease(ConsolidationKey(ns, session)));
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
    MSP_ASSIGN_OR_RETURN(auto episodes, ctx_.store.List(q));
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
    ScopedFacts facts(retriever_, fact_ns);
    MSP_ASSIGN_OR_RETURN(auto candidates, extractor_.ExtractWithFacts(episodes, facts));
    report.candidates = static_cast<int>(candidates.size());
    const TimeMs now = ctx_.clock.NowMs();
    std::vector<std::pair<Memory, const FactCandidate*>> records;
    for (const auto& c : candidates) {
      if (!ValidateText("fact", c.text, ctx_.options.policy.max_text_bytes).ok()) continue;
      FactRequest r;
      r.ns = fact_ns;
      r.text = c.text;
      r.confidence = std::clamp(c.confidence, 0.0, 1.0);
      r.source_episodes = c.source_episodes;
      r.tags = c.tags;
      r.source = "consolidation";
      r.valid_at = c.valid_at;
      MSP_ASSIGN_OR_RETURN(Memory m, writes_.FactRecord(r, now));
      records.emplace_back(std::move(m), &c);
    }

    std::lock_guard<std::mutex> lock(ctx_.write_mu);
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
        MSP_ASSIGN_OR_RETURN(target, writes_.CandidateTarget(c->target_id, fact_ns, pending));
      }
      if (target && c->action == FactAction::kMerge) {
        report.fact_ids.push_back(
            writes_.PlanMerge(std::move(*target), m, "restates this fact (consolidation)", actor, now, &batch, &pending));
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
        WritePlanner::ReplaceInBatch(old, &batch, &pending);
        WritePlanner::ReplaceInBatch(m, &batch, &pending);
        report.fact_ids.push_back(m.id);
        ++report.facts_superseded;
      } else {
        MSP_ASSIGN_OR_RETURN(auto placed, writes_.PlanFact(std::move(m), actor, now, &batch, &pending));
        if (placed.second) {
          ++report.facts_merged;
        } else {
          ++report.facts_added;
        }
        report.fact_ids.push_back(placed.first);
      }
    }
    MSP_ASSIGN_OR_RETURN(auto evicted, writes_.PlanEvictions(&batch, actor, now));
    (void)evicted;
    batch.meta.emplace_back(ConsolidationKey(owner, session), std::to_string(episodes.back().step_number));
    MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(batch));
    return report;
  }
}

Status Consolidator::StartBackground() {
  const std::string actor = ctx_.options.actor.empty() ? "consolidation" : ctx_.options.actor;
  worker_ = std::make_unique<ConsolidationWorker>(
      [this, actor](const Namespace& ns, const std::string& session) {
        auto report = ConsolidateSession(ns, session, actor);
        if (!report.ok()) return report.status();
        return Unqueue(ns, session);
      });
  MSP_ASSIGN_OR_RETURN(auto queued, ctx_.store.GetMeta(kConsolidationQueueMetaKey));
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
Status Consolidator::Queue(const Namespace& ns, const std::string& session) {
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
      MSP_RETURN_IF_ERROR(ctx_.ApplyBatch(batch));
    }
  }
  worker_->Enqueue(where, session);
  return Status::Ok();
}

Status Consolidator::Unqueue(const Namespace& ns, const std::string& session) {
  std::lock_guard<std::mutex> lock(queue_meta_mu_);
  MSP_ASSIGN_OR_RETURN(json q, ReadQueueMeta());
  if (q.erase(ConsolidationKey(ns, session)) == 0) return Status::Ok();
  WriteBatch batch;
  batch.meta.emplace_back(kConsolidationQueueMetaKey, q.dump());
  return ctx_.ApplyBatch(batch);
}

Result<json> Consolidator::ReadQueueMeta() {
  MSP_ASSIGN_OR_RETURN(auto v, ctx_.store.GetMeta(kConsolidationQueueMetaKey));
  json q = v ? json::parse(*v, nullptr, false) : json::object();
  if (!q.is_object()) q = json::object();
  return q;
}

Status Consolidator::Wait() {
  if (worker_) worker_->Drain();
  return Status::Ok();
}

}  // namespace msp
