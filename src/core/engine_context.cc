// EngineContext: the steps every part of the engine shares.
#include "core/engine_context.h"

#include <utility>

#include "util/time.h"
#include "util/uuid.h"

namespace msp {

Status EngineContext::ApplyBatch(const WriteBatch& batch) const {
  return ApplyBatchSeqs(batch).status();
}

Result<std::vector<int64_t>> EngineContext::ApplyBatchSeqs(const WriteBatch& batch) const {
  access.Flush();
  Result<std::vector<int64_t>> seqs = store.Apply(batch);
  disk_full.After(seqs.status());
  return seqs;
}

Result<Memory> EngineContext::GetVisible(const Namespace& scope, const std::string& id,
                                         bool allow_expired) const {
  if (id.empty()) return Status::InvalidArgument("id is empty");
  MSP_ASSIGN_OR_RETURN(auto m, store.Get(id));
  if (!m || !scope.Contains(m->ns)) {
    return Status::NotFound("no record " + id + " in " + scope.ToString());
  }
  if (!allow_expired && m->expires_at > 0 && m->expires_at <= clock.NowMs()) {
    return Status::NotFound("record " + id + " expired at " + FormatIso8601(m->expires_at));
  }
  return *std::move(m);
}

Status EngineContext::Embed(Memory* m) const {
  MSP_ASSIGN_OR_RETURN(auto vecs, embedder.Embed({m->text}));
  m->embedding = std::move(vecs.front());
  m->embedder_id = embedder.id();
  return Status::Ok();
}

Status EngineContext::RefuseAndAudit(const Status& refusal, const std::string& tenant,
                                     const std::string& actor, TimeMs now, const std::string& text) const {
  WriteBatch batch;
  batch.audit.push_back(MakeAudit(now, actor, AuditAction::kRefuse, "", tenant, refusal.message(),
                                  nlohmann::json{{"text_bytes", text.size()}}));
  MSP_RETURN_IF_ERROR(ApplyBatch(batch));
  return refusal;
}

AuditEvent MakeAudit(TimeMs now, const std::string& actor, AuditAction action, const std::string& record_id,
                     const std::string& tenant, std::string reason, const nlohmann::json& details) {
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

bool HeldAt(const Memory& m, TimeMs t) {
  const TimeMs from = m.valid_at > 0 ? m.valid_at : m.created_at;
  if (t < from) return false;
  TimeMs until = m.invalid_at;
  if (until == 0 && m.state == RecordState::kSuperseded) until = m.updated_at;
  return until == 0 || t < until;
}

}  // namespace msp
