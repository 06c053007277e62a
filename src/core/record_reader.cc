// RecordReader: reads of records straight from the store.
#include "core/record_reader.h"

#include <algorithm>
#include <set>
#include <utility>

namespace msp {

Result<Memory> RecordReader::Get(const Namespace& scope, const std::string& id) {
  ctx_.access.Flush();
  MSP_ASSIGN_OR_RETURN(Memory m, ctx_.GetVisible(scope, id, /*allow_expired=*/false));
  m.embedding.clear();
  return m;
}

Result<std::vector<Memory>> RecordReader::List(const ListRequest& r) {
  if (r.limit < 0 || r.offset < 0) return Status::InvalidArgument("limit and offset must be >= 0");
  ctx_.access.Flush();
  if (r.as_of < 0) return Status::InvalidArgument("as_of must be >= 0");
  RecordQuery q;
  q.scope = r.scope;
  q.kinds = r.filter.kinds;
  q.layers = r.filter.layers;
  q.sources = r.filter.sources;
  q.session = r.session;
  q.created_from = r.filter.created_from;
  q.created_to = r.filter.created_to;
  q.max_access_level = r.filter.max_access_level;
  if (!r.filter.include_superseded && r.as_of == 0) q.state = RecordState::kActive;
  if (!r.include_expired) q.not_expired_at = ctx_.clock.NowMs();
  q.order = !r.session.empty()
                ? (r.newest_first ? RecordQuery::Order::kStepDesc : RecordQuery::Order::kStepAsc)
                : (r.newest_first ? RecordQuery::Order::kCreatedDesc : RecordQuery::Order::kCreatedAsc);
  q.with_embeddings = false;
  // Tags and criticalities are filtered here (sources by the store too, so
  // that rows of other sources are not read into records): page until full.
  const bool post_filter = !r.filter.tags.empty() || !r.filter.criticalities.empty() || r.as_of > 0;
  if (!post_filter) {
    q.limit = r.limit;
    q.offset = r.offset;
    return ctx_.store.List(q);
  }
  IndexQuery match;
  match.scope = r.scope;
  match.filter = r.filter;
  if (r.as_of > 0) match.filter.include_superseded = true;
  match.now = r.include_expired ? 0 : ctx_.clock.NowMs();
  std::vector<Memory> out;
  int skipped = 0;
  // Pages of the store grow from a few times what is asked (a short answer
  // reads few rows) to 1,000.
  constexpr int kMaxPage = 1000;
  q.limit = r.limit > 0 ? std::clamp(4 * (r.offset + r.limit), 32, kMaxPage) : kMaxPage;
  for (q.offset = 0;; q.offset += q.limit, q.limit = std::min(2 * q.limit, kMaxPage)) {
    MSP_ASSIGN_OR_RETURN(auto page, ctx_.store.List(q));
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

Result<std::vector<Memory>> RecordReader::History(const Namespace& scope, const std::string& id) {
  ctx_.access.Flush();
  MSP_ASSIGN_OR_RETURN(Memory m, ctx_.GetVisible(scope, id, /*allow_expired=*/true));
  std::set<std::string> seen{m.id};
  std::vector<Memory> back;  // predecessors, newest first
  Memory cur = m;
  while (!cur.supersedes.empty() && !seen.count(cur.supersedes)) {
    MSP_ASSIGN_OR_RETURN(auto prev, ctx_.store.Get(cur.supersedes));
    if (!prev || !scope.Contains(prev->ns)) break;
    seen.insert(prev->id);
    back.push_back(*prev);
    cur = *prev;
  }
  std::vector<Memory> out(back.rbegin(), back.rend());
  out.push_back(m);
  cur = m;
  while (!cur.superseded_by.empty() && !seen.count(cur.superseded_by)) {
    MSP_ASSIGN_OR_RETURN(auto next, ctx_.store.Get(cur.superseded_by));
    if (!next || !scope.Contains(next->ns)) break;
    seen.insert(next->id);
    out.push_back(*next);
    cur = *next;
  }
  for (auto& r : out) r.embedding.clear();
  return out;
}

Result<RecordChanges> RecordReader::ChangesSince(const Namespace& scope, int64_t after, int limit) {
  if (after < 0 || limit < 1) return Status::InvalidArgument("changes since: after must be >= 0 and limit >= 1");
  MSP_ASSIGN_OR_RETURN(std::vector<Change> changes, ctx_.store.ChangesSince(after, limit));
  RecordChanges out;
  out.up_to = changes.empty() ? after : changes.back().seq;
  out.more = static_cast<int>(changes.size()) == limit;
  std::vector<std::string> ids;
  std::set<std::string> seen;
  // Ids whose change names the scope's tenant: only those may be reported
  // gone, so that one tenant never learns another's record ids (a change
  // logged before the log kept tenants names none and is never reported).
  std::set<std::string, std::less<>> ours;
  for (const Change& c : changes) {
    if (seen.insert(c.record_id).second) ids.push_back(c.record_id);
    if (c.tenant == scope.tenant) ours.insert(c.record_id);
  }
  if (ids.empty()) return out;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, ctx_.store.GetMany(ids, /*with_embeddings=*/false));
  std::set<std::string> present;
  for (Memory& m : records) {
    present.insert(m.id);
    if (scope.Contains(m.ns)) out.records.push_back(std::move(m));
  }
  for (std::string& id : ids) {
    if (!present.contains(id) && ours.contains(id)) out.gone.push_back(std::move(id));
  }
  return out;
}

Result<std::vector<AuditEvent>> RecordReader::Audit(const Namespace& scope, const std::string& record_id,
                                                   int limit) {
  if (limit < 1) return Status::InvalidArgument("limit must be >= 1");
  AuditQuery q;
  q.tenant = scope.tenant;
  q.record_id = record_id;
  q.limit = limit;
  return ctx_.store.ListAudit(q);
}

}  // namespace msp
