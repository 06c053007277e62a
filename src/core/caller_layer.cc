// AsCaller (msp/caller.h): the access rule of msp, in one place. Every face
// calls the engine through this layer, so a caller is served the same
// records whichever face it comes through.
#include "msp/caller.h"

#include <algorithm>
#include <utility>

#include "codec/memory_json.h"

namespace msp {
namespace {

class CallerLayer final : public MemoryLayer {
 public:
  CallerLayer(MemoryLayer& engine, Caller caller) : engine_(engine), caller_(std::move(caller)) {}
  CallerLayer(std::unique_ptr<MemoryLayer> owned, Caller caller)
      : owned_(std::move(owned)), engine_(*owned_), caller_(std::move(caller)) {}

  // ---- writes ---------------------------------------------------------

  Result<WriteResult> Write(const WriteRequest& request) override {
    return AsActor(request, "the write's namespace", [this](const WriteRequest& r) { return engine_.Write(r); });
  }

  Result<std::vector<WriteResult>> WriteMany(const std::vector<WriteRequest>& requests) override {
    MSP_RETURN_IF_ERROR(CheckCaller());
    std::vector<WriteRequest> rs = requests;
    for (size_t i = 0; i < rs.size(); ++i) {
      MSP_RETURN_IF_ERROR(CheckTenant(rs[i].ns, "write " + std::to_string(i) + "'s namespace"));
      SetActor(&rs[i].actor);
    }
    return engine_.WriteMany(rs);
  }

  Result<Memory> AddEpisode(const EpisodeStep& step) override {
    return AsActor(step, "the step's namespace", [this](const EpisodeStep& s) { return engine_.AddEpisode(s); });
  }

  Result<WriteResult> AddFact(const FactRequest& request) override {
    return AsActor(request, "the fact's namespace", [this](const FactRequest& r) { return engine_.AddFact(r); });
  }

  Result<WriteResult> SupersedeFact(const Namespace& scope, const std::string& old_id,
                                    const FactRequest& replacement) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    MSP_RETURN_IF_ERROR(CheckTenant(replacement.ns, "the fact's namespace"));
    MSP_RETURN_IF_ERROR(CheckVisibleId(scope, old_id, ""));
    FactRequest r = replacement;
    SetActor(&r.actor);
    return engine_.SupersedeFact(scope, old_id, r);
  }

  Status Delete(const Namespace& scope, const std::string& id, const std::string& reason,
                const std::string& actor) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    MSP_RETURN_IF_ERROR(CheckVisibleId(scope, id, ""));
    return engine_.Delete(scope, id, reason, ActorOr(actor));
  }

  Result<std::vector<Memory>> Commit(const RecordBatch& batch) override {
    MSP_RETURN_IF_ERROR(CheckScope(batch.scope));
    for (size_t i = 0; i < batch.puts.size(); ++i) {
      const Memory& m = batch.puts[i];
      const std::string at = "commit: put " + std::to_string(i);
      MSP_RETURN_IF_ERROR(CheckTenant(m.ns, at + "'s namespace"));
      if (caller_.clearance && m.access_level > *caller_.clearance) {
        return Status::Forbidden(at + ": access_level " + std::to_string(m.access_level) +
                                 " is above the caller's clearance " + std::to_string(*caller_.clearance) +
                                 ", which could not read the record back");
      }
      if (!m.id.empty()) MSP_RETURN_IF_ERROR(CheckVisibleId(batch.scope, m.id, at + ": "));
    }
    for (const std::string& id : batch.deletes) MSP_RETURN_IF_ERROR(CheckVisibleId(batch.scope, id, "commit: "));
    RecordBatch b = batch;
    SetActor(&b.actor);
    return engine_.Commit(b);
  }

  // ---- episodes and consolidation -------------------------------------

  Result<std::vector<Memory>> LastSteps(const Namespace& scope, const std::string& session, int k) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> steps, engine_.LastSteps(scope, session, k));
    Hide(&steps);
    return steps;
  }

  Result<ConsolidationReport> EndSession(const Namespace& scope, const std::string& session) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    return engine_.EndSession(scope, session);
  }

  Result<ConsolidationReport> Consolidate(const Namespace& scope, const std::string& session) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    return engine_.Consolidate(scope, session);
  }

  Status WaitForConsolidation() override { return engine_.WaitForConsolidation(); }

  // ---- reads ----------------------------------------------------------

  Result<std::vector<SearchHit>> Retrieve(const RetrieveRequest& request) override {
    MSP_RETURN_IF_ERROR(CheckScope(request.scope));
    RetrieveRequest r = request;
    Cap(&r.filter.max_access_level);
    return engine_.Retrieve(r);
  }

  Result<RetrieveResult> Search(const RetrieveRequest& request) override {
    MSP_RETURN_IF_ERROR(CheckScope(request.scope));
    RetrieveRequest r = request;
    Cap(&r.filter.max_access_level);
    return engine_.Search(r);
  }

  Result<Memory> Get(const Namespace& scope, const std::string& id) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    Result<Memory> m = engine_.Get(scope, id);
    // Not even "expired" is said of a record above the clearance.
    if (caller_.clearance && m.status().IsNotFound()) return Missing(scope, id, "");
    if (m.ok() && !Visible(*m)) return Missing(scope, id, "");
    return m;
  }

  Result<std::vector<Memory>> List(const ListRequest& request) override {
    MSP_RETURN_IF_ERROR(CheckScope(request.scope));
    ListRequest r = request;
    Cap(&r.filter.max_access_level);
    return engine_.List(r);
  }

  Result<std::vector<Memory>> History(const Namespace& scope, const std::string& id) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> versions, engine_.History(scope, id));
    for (const Memory& m : versions) {
      if (m.id == id && !Visible(m)) return Missing(scope, id, "");
    }
    Hide(&versions);
    return versions;
  }

  Result<int64_t> LastChangeSeq() override {
    MSP_RETURN_IF_ERROR(CheckCaller());
    return engine_.LastChangeSeq();
  }

  Result<RecordChanges> ChangesSince(const Namespace& scope, int64_t after, int limit) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    MSP_ASSIGN_OR_RETURN(RecordChanges page, engine_.ChangesSince(scope, after, limit));
    // A record raised above the clearance is gone for the caller: a view
    // built from earlier pages drops it.
    for (const Memory& m : page.records) {
      if (!Visible(m)) page.gone.push_back(m.id);
    }
    Hide(&page.records);
    return page;
  }

  Result<std::vector<AuditEvent>> Audit(const Namespace& scope, const std::string& record_id, int limit) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    if (caller_.clearance) return Limited("the audit log (it names records of every access level)");
    return engine_.Audit(scope, record_id, limit);
  }

  // ---- the store and the indexes as a whole ---------------------------

  Status Reindex() override {
    MSP_RETURN_IF_ERROR(CheckCaller());
    return engine_.Reindex();
  }
  Status CatchUpIndexes() override { return engine_.CatchUpIndexes(); }
  Status PersistIndexes() override { return engine_.PersistIndexes(); }
  Status WarmUp() override { return engine_.WarmUp(); }
  Status FlushAccessLog() override { return engine_.FlushAccessLog(); }
  Status CheckStore() override { return engine_.CheckStore(); }

  Result<ImportReport> Import(std::istream& in, const std::string& actor) override {
    MSP_RETURN_IF_ERROR(CheckCaller());
    if (caller_.clearance) return Limited("an import (it may replace any record by id)");
    return engine_.Import(in, ActorOr(actor));
  }

  // The owner's export is the engine's (the store's order); a caller with
  // a clearance gets the records it may read, oldest first.
  Result<int64_t> Export(const Namespace& scope, std::ostream& out) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    if (!caller_.clearance) return engine_.Export(scope, out);
    ListRequest all;
    all.scope = scope;
    all.limit = 0;
    all.include_expired = true;
    all.filter.include_superseded = true;
    all.filter.max_access_level = caller_.clearance;
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, engine_.List(all));
    for (const Memory& m : records) out << MemoryToJson(m, /*with_embedding=*/false).dump() << '\n';
    if (!out) return Status::IoError("writing the export failed");
    return static_cast<int64_t>(records.size());
  }

  Result<Stats> GetStats(const Namespace& scope, std::optional<int> max_access_level) override {
    MSP_RETURN_IF_ERROR(CheckScope(scope));
    Cap(&max_access_level);
    MSP_ASSIGN_OR_RETURN(Stats s, engine_.GetStats(scope, max_access_level));
    if (caller_.clearance) s.audit_events = 0;  // the log is not the caller's to count
    return s;
  }

 private:
  // `write(request)` with the caller checked, the request's tenant the
  // caller's and its actor the caller's.
  template <typename Request, typename Write>
  auto AsActor(const Request& request, const std::string& what, Write write) -> decltype(write(request)) {
    MSP_RETURN_IF_ERROR(CheckCaller());
    MSP_RETURN_IF_ERROR(CheckTenant(request.ns, what));
    Request r = request;
    SetActor(&r.actor);
    return write(r);
  }

  Status CheckCaller() const {
    if (caller_.clearance && (*caller_.clearance < 0 || *caller_.clearance > kMaxAccessLevel)) {
      return Status::InvalidArgument("the caller's clearance must be between 0 and " +
                                     std::to_string(kMaxAccessLevel) + ", got " +
                                     std::to_string(*caller_.clearance));
    }
    return Status::Ok();
  }

  Status CheckTenant(const Namespace& ns, const std::string& what) const {
    if (ns.tenant == caller_.tenant) return Status::Ok();
    return Status::InvalidArgument(what + " names tenant '" + ns.tenant + "', but the caller belongs to tenant '" +
                                   caller_.tenant + "'");
  }

  Status CheckScope(const Namespace& scope) const {
    MSP_RETURN_IF_ERROR(CheckCaller());
    return CheckTenant(scope, "the scope");
  }

  bool Visible(const Memory& m) const { return !caller_.clearance || m.access_level <= *caller_.clearance; }

  void Hide(std::vector<Memory>* records) const {
    std::erase_if(*records, [this](const Memory& m) { return !Visible(m); });
  }

  // The tighter of a request's own limit and the caller's clearance.
  void Cap(std::optional<int>* limit) const {
    if (caller_.clearance) *limit = *limit ? std::min(**limit, *caller_.clearance) : *caller_.clearance;
  }

  // What a missing record reads as (EngineContext::GetVisible's words), so
  // a record above the clearance is not told apart from none.
  static Status Missing(const Namespace& scope, const std::string& id, const std::string& prefix) {
    return Status::NotFound(prefix + "no record " + id + " in " + scope.ToString());
  }

  // NotFound when record `id` exists in scope above the clearance; OK when
  // it is visible or does not exist (the engine then says so itself).
  Status CheckVisibleId(const Namespace& scope, const std::string& id, const std::string& prefix) {
    if (!caller_.clearance || id.empty()) return Status::Ok();
    Result<std::vector<Memory>> history = engine_.History(scope, id);
    if (!history.ok()) return history.status().IsNotFound() ? Status::Ok() : history.status();
    for (const Memory& m : *history) {
      if (m.id == id && !Visible(m)) return Missing(scope, id, prefix);
    }
    return Status::Ok();
  }

  Status Limited(const std::string& what) const {
    return Status::Forbidden(what + " is not served to a caller limited to clearance " +
                             std::to_string(*caller_.clearance) + "; ask without a clearance limit");
  }

  void SetActor(std::string* actor) const {
    if (!caller_.actor.empty()) *actor = caller_.actor;
  }
  std::string ActorOr(const std::string& actor) const { return caller_.actor.empty() ? actor : caller_.actor; }

  std::unique_ptr<MemoryLayer> owned_;  // set when the layer owns the engine
  MemoryLayer& engine_;
  const Caller caller_;
};

}  // namespace

std::unique_ptr<MemoryLayer> AsCaller(MemoryLayer& engine, Caller caller) {
  return std::make_unique<CallerLayer>(engine, std::move(caller));
}

std::unique_ptr<MemoryLayer> AsCaller(std::unique_ptr<MemoryLayer> engine, Caller caller) {
  return std::make_unique<CallerLayer>(std::move(engine), std::move(caller));
}

}  // namespace msp
