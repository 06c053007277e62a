// Stats: counts of a scope's records and the state of the derived indexes.
#include "core/stats.h"

#include <string>

namespace msp {

Result<Stats> CollectStats(const EngineContext& ctx, const Namespace& scope,
                           std::optional<int> max_access_level) {
  if (max_access_level && (*max_access_level < 0 || *max_access_level > kMaxAccessLevel)) {
    return Status::InvalidArgument("max_access_level must be between 0 and " + std::to_string(kMaxAccessLevel) +
                                   ", got " + std::to_string(*max_access_level));
  }
  MSP_RETURN_IF_ERROR(ctx.index_sync.CatchUp());
  const TimeMs now = ctx.clock.NowMs();
  Stats s;
  RecordQuery q;
  q.scope = scope;
  q.max_access_level = max_access_level;
  q.with_embeddings = false;
  MSP_ASSIGN_OR_RETURN(s.records, ctx.store.Count(q));
  RecordQuery live = q;
  live.state = RecordState::kActive;
  live.not_expired_at = now;
  MSP_ASSIGN_OR_RETURN(s.active, ctx.store.Count(live));
  RecordQuery unexpired = q;
  unexpired.not_expired_at = now;
  MSP_ASSIGN_OR_RETURN(int64_t not_expired, ctx.store.Count(unexpired));
  s.expired = s.records - not_expired;
  for (Kind k : AllKinds()) {
    RecordQuery byk = q;
    byk.kinds = {k};
    MSP_ASSIGN_OR_RETURN(int64_t n, ctx.store.Count(byk));
    if (n > 0) s.by_kind.emplace_back(std::string(KindName(k)), n);
  }
  for (Layer l : {Layer::kEpisodic, Layer::kSemantic, Layer::kProcedural, Layer::kDomain, Layer::kWorkflow,
                  Layer::kPractitioner}) {
    RecordQuery byl = q;
    byl.layers = {l};
    MSP_ASSIGN_OR_RETURN(int64_t n, ctx.store.Count(byl));
    if (n > 0) s.by_layer.emplace_back(std::string(LayerName(l)), n);
  }
  MSP_ASSIGN_OR_RETURN(s.last_seq, ctx.store.LastSeq());
  MSP_ASSIGN_OR_RETURN(s.lexical_applied_seq, ctx.lexical.AppliedSeq());
  s.vector_applied_seq = ctx.vector.AppliedSeq();
  s.vector_rows = static_cast<int64_t>(ctx.vector.size());
  if (const VectorGraphInfo g = ctx.vector.graph_info(); g.built) {
    s.vector_graph_placed = static_cast<int64_t>(g.placed - g.removed);
    s.vector_graph_pending = static_cast<int64_t>(g.pending);
  }
  const IndexRebuilds rebuilds = ctx.index_sync.rebuilds();
  s.lexical_rebuilds = rebuilds.lexical;
  s.vector_rebuilds = rebuilds.vector;
  MSP_ASSIGN_OR_RETURN(s.audit_events, ctx.store.CountAudit(scope.tenant));
  s.embedder_id = ctx.embedder.id();
  s.store_path = ctx.store.Describe();
  return s;
}

}  // namespace msp
