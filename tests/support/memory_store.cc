// MemoryStore (see memory_store.h). Apply stages a batch in an overlay over
// the committed tables, checks it whole, and only then commits it, so a
// batch that fails leaves nothing behind.
#include "tests/support/memory_store.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "store/record_row.h"

namespace msp::testing {
namespace {

// What makes an episode's step unique (the SQLite store's index
// records_episode_step): the whole namespace and the step number.
using StepKey = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, int64_t>;

std::optional<StepKey> StepKeyOf(const Memory& m) {
  if (m.kind != Kind::kEpisode || m.step_number <= 0) return std::nullopt;
  return StepKey{m.ns.tenant, m.ns.user, m.ns.agent, m.ns.session, m.ns.mission, m.ns.operator_id, m.step_number};
}

bool AnyOf(const auto& wanted, const auto& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

// The filter of a RecordQuery (as the SQLite store's BuildFilter).
bool Matches(const RecordQuery& q, const Memory& m) {
  if (!q.scope.Contains(m.ns)) return false;
  if (!AnyOf(q.kinds, m.kind) || !AnyOf(q.layers, m.layer) || !AnyOf(q.sources, m.source)) return false;
  if (!q.session.empty() && m.ns.session != q.session) return false;
  if (q.min_step > 0 && m.step_number < q.min_step) return false;
  if (q.state && m.state != *q.state) return false;
  if (q.created_from > 0 && m.created_at < q.created_from) return false;
  if (q.created_to > 0 && m.created_at >= q.created_to) return false;
  if (q.not_expired_at > 0 && m.expires_at != 0 && m.expires_at <= q.not_expired_at) return false;
  if (q.max_access_level && m.access_level > *q.max_access_level) return false;
  return true;
}

// Strict "a before b" for a query's order; ties broken by id, as
// record_row::OrderBy orders the SQL stores' rows.
bool Before(RecordQuery::Order order, const Memory& a, const Memory& b) {
  switch (order) {
    case RecordQuery::Order::kCreatedAsc:
      return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
    case RecordQuery::Order::kCreatedDesc:
      return std::tie(a.created_at, a.id) > std::tie(b.created_at, b.id);
    case RecordQuery::Order::kStepAsc:
      return std::tie(a.step_number, a.created_at, a.id) < std::tie(b.step_number, b.created_at, b.id);
    case RecordQuery::Order::kStepDesc:
      return std::tie(a.step_number, a.created_at, a.id) > std::tie(b.step_number, b.created_at, b.id);
  }
  return false;
}

// The rows of a page: `total` rows, skipping `offset`, at most `limit` (0: all).
size_t PageSize(size_t total, int limit, int offset) {
  const size_t skipped = std::min(total, static_cast<size_t>(offset));
  const size_t left = total - skipped;
  return limit > 0 ? std::min(left, static_cast<size_t>(limit)) : left;
}

Memory Copy(const Memory& m, bool with_embeddings) {
  Memory out = m;
  if (!with_embeddings) out.embedding.clear();
  return out;
}

}  // namespace

struct MemoryStore::Tables {
  std::mutex mu;
  std::map<std::string, Memory> records;  // by id: Scan's order
  std::map<StepKey, std::string> steps;   // episode step -> record id
  std::vector<Change> changes;            // ascending seq
  int64_t last_seq = 0;
  std::vector<AuditEvent> audit;          // ascending seq
  int64_t last_audit_seq = 0;
  std::map<std::string, std::string> meta;
  std::map<std::pair<std::string, std::string>, IdempotencyKey> idempotency;  // by (tenant, key)
};

MemoryStore::MemoryStore() : tables_(std::make_shared<Tables>()) {}
MemoryStore::MemoryStore(std::shared_ptr<Tables> tables) : tables_(std::move(tables)) {}
MemoryStore::~MemoryStore() = default;

std::unique_ptr<MemoryStore> MemoryStore::NewHandle() const {
  return std::unique_ptr<MemoryStore>(new MemoryStore(tables_));
}

Result<std::vector<int64_t>> MemoryStore::Apply(const WriteBatch& batch) {
  std::vector<int64_t> seqs;
  if (batch.empty()) return seqs;
  for (const Memory& m : batch.puts) {
    MSP_RETURN_IF_ERROR(record_row::ValidatePut(m));
    MSP_RETURN_IF_ERROR(record_row::EncodePut(m).status());
  }
  for (const std::string& id : batch.deletes) {
    if (id.empty()) return Status::InvalidArgument("delete: an id in the batch is empty");
  }
  for (const auto& [key, value] : batch.meta) {
    if (key.empty()) return Status::InvalidArgument("meta: a key in the batch is empty");
  }

  Tables& t = *tables_;
  std::lock_guard<std::mutex> lock(t.mu);
  for (const auto& [id, expected] : batch.expect_seq) {
    const auto it = t.records.find(id);
    const int64_t actual = it == t.records.end() ? 0 : it->second.seq;
    if (actual != expected) {
      return Status::Conflict(
          "record " + id + (it != t.records.end() ? " is at seq " + std::to_string(actual) : " does not exist") +
          (expected == 0 ? ", expected it not to exist" : ", expected seq " + std::to_string(expected)) +
          "; it was changed concurrently: read it again and retry");
    }
  }
  if (batch.idempotency) {
    const IdempotencyKey& k = *batch.idempotency;
    const auto it = t.idempotency.find({k.tenant, k.key});
    if (it != t.idempotency.end() && it->second.expires_at > k.created_at) {
      return Status::AlreadyExists("idempotency key '" + k.key + "' of tenant '" + k.tenant +
                                   "' is already used; nothing in the batch was applied");
    }
  }

  // The batch, staged: records by id (nullopt: deleted) over t.records, and
  // the steps of staged episodes over t.steps.
  std::map<std::string, std::optional<Memory>> staged;
  std::map<StepKey, std::string> staged_steps;
  const auto current = [&](const std::string& id) -> const Memory* {
    if (const auto it = staged.find(id); it != staged.end()) return it->second ? &*it->second : nullptr;
    const auto it = t.records.find(id);
    return it == t.records.end() ? nullptr : &it->second;
  };
  const auto step_owner = [&](const StepKey& key) -> const std::string* {
    if (const auto it = staged_steps.find(key); it != staged_steps.end()) return &it->second;
    const auto it = t.steps.find(key);
    return it != t.steps.end() && !staged.count(it->second) ? &it->second : nullptr;
  };
  const auto unstage_step = [&](const Memory* old) {
    if (old == nullptr) return;
    const std::optional<StepKey> key = StepKeyOf(*old);
    if (const auto it = key ? staged_steps.find(*key) : staged_steps.end();
        it != staged_steps.end() && it->second == old->id) {
      staged_steps.erase(it);
    }
  };

  std::vector<Change> changes;
  int64_t seq = t.last_seq;
  for (const Memory& m : batch.puts) {
    const std::optional<StepKey> key = StepKeyOf(m);
    if (key) {
      if (const std::string* owner = step_owner(*key); owner != nullptr && *owner != m.id) {
        return Status::AlreadyExists("put: record " + m.id + " would give session '" + m.ns.session +
                                     "' a second step " + std::to_string(m.step_number) + " (record " + *owner +
                                     " has it); nothing in the batch was applied");
      }
    }
    const Memory* before = current(m.id);
    const bool neutral = HoldsNothingToIndex(m) && (before == nullptr || HoldsNothingToIndex(*before));
    unstage_step(before);
    Memory put = m;
    put.seq = ++seq;
    staged[m.id] = std::move(put);
    if (key) staged_steps[*key] = m.id;
    changes.push_back(Change{seq, m.id, ChangeOp::kPut, m.ns.tenant, neutral});
  }
  for (const std::string& id : batch.deletes) {
    const Memory* old = current(id);
    if (old == nullptr) {
      return Status::NotFound("delete: no record with id " + id + " in memory; nothing in the batch was applied");
    }
    const std::string tenant = old->ns.tenant;  // `old` may point into `staged`
    unstage_step(old);
    staged[id] = std::nullopt;
    changes.push_back(Change{++seq, id, ChangeOp::kDelete, tenant});
  }

  // Commit: every staged record's old step first, then the new records.
  for (const auto& [id, record] : staged) {
    const auto it = t.records.find(id);
    if (it == t.records.end()) continue;
    if (const std::optional<StepKey> key = StepKeyOf(it->second)) {
      if (const auto owner = t.steps.find(*key); owner != t.steps.end() && owner->second == id) {
        t.steps.erase(owner);
      }
    }
    t.records.erase(it);
  }
  for (auto& [id, record] : staged) {
    if (!record) continue;
    if (const std::optional<StepKey> key = StepKeyOf(*record)) t.steps[*key] = id;
    t.records[id] = std::move(*record);
  }
  for (const Change& c : changes) seqs.push_back(c.seq);
  t.changes.insert(t.changes.end(), changes.begin(), changes.end());
  t.last_seq = seq;
  for (AuditEvent e : batch.audit) {
    e.seq = ++t.last_audit_seq;
    t.audit.push_back(std::move(e));
  }
  for (const auto& [key, value] : batch.meta) t.meta[key] = value;
  if (batch.idempotency) {
    const TimeMs now = batch.idempotency->created_at;
    std::erase_if(t.idempotency, [now](const auto& e) { return e.second.expires_at <= now; });
    t.idempotency[{batch.idempotency->tenant, batch.idempotency->key}] = *batch.idempotency;
  }
  return seqs;
}

Result<std::optional<Memory>> MemoryStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(tables_->mu);
  const auto it = tables_->records.find(id);
  if (it == tables_->records.end()) return std::optional<Memory>();
  return std::optional<Memory>(it->second);
}

Result<std::vector<Memory>> MemoryStore::GetMany(const std::vector<std::string>& ids, bool with_embeddings) {
  std::vector<Memory> out;
  std::lock_guard<std::mutex> lock(tables_->mu);
  for (const std::string& id : ids) {
    const auto it = tables_->records.find(id);
    if (it != tables_->records.end()) out.push_back(Copy(it->second, with_embeddings));
  }
  return out;
}

std::vector<const Memory*> MemoryStore::Select(const RecordQuery& query) const {
  std::vector<const Memory*> out;
  for (const auto& [id, m] : tables_->records) {
    if (Matches(query, m)) out.push_back(&m);
  }
  std::sort(out.begin(), out.end(),
            [&](const Memory* a, const Memory* b) { return Before(query.order, *a, *b); });
  return out;
}

Result<std::vector<Memory>> MemoryStore::List(const RecordQuery& query) {
  MSP_RETURN_IF_ERROR(record_row::ValidateQuery(query, "list"));
  std::lock_guard<std::mutex> lock(tables_->mu);
  const std::vector<const Memory*> selected = Select(query);
  const size_t size = PageSize(selected.size(), query.limit, query.offset);
  std::vector<Memory> out;
  out.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(Copy(*selected[static_cast<size_t>(query.offset) + i], query.with_embeddings));
  }
  return out;
}

Result<int64_t> MemoryStore::Count(const RecordQuery& query) {
  MSP_RETURN_IF_ERROR(record_row::ValidateQuery(query, "count"));
  std::lock_guard<std::mutex> lock(tables_->mu);
  return static_cast<int64_t>(PageSize(Select(query).size(), query.limit, query.offset));
}

Status MemoryStore::Scan(const std::function<bool(const Memory&)>& fn) {
  constexpr size_t kPage = 256;
  std::string after;
  bool first = true;
  while (true) {
    // One page under the lock, then `fn` without it, so `fn` may use the store.
    std::vector<Memory> page;
    {
      std::lock_guard<std::mutex> lock(tables_->mu);
      auto it = first ? tables_->records.begin() : tables_->records.upper_bound(after);
      for (; it != tables_->records.end() && page.size() < kPage; ++it) page.push_back(it->second);
    }
    for (const Memory& m : page) {
      if (!fn(m)) return Status::Ok();
    }
    if (page.size() < kPage) return Status::Ok();
    after = page.back().id;
    first = false;
  }
}

Result<std::vector<Change>> MemoryStore::ChangesSince(int64_t after, int limit) {
  if (limit < 0) {
    return Status::InvalidArgument("changes since: limit must be >= 0 (got " + std::to_string(limit) + ")");
  }
  std::lock_guard<std::mutex> lock(tables_->mu);
  const std::vector<Change>& all = tables_->changes;
  auto begin = std::upper_bound(all.begin(), all.end(), after,
                                [](int64_t seq, const Change& c) { return seq < c.seq; });
  auto end = limit > 0 && all.end() - begin > limit ? begin + limit : all.end();
  return std::vector<Change>(begin, end);
}

Result<int64_t> MemoryStore::LastSeq() {
  std::lock_guard<std::mutex> lock(tables_->mu);
  return tables_->last_seq;
}

Status MemoryStore::RecordAccess(const std::vector<std::string>& ids, TimeMs at) {
  std::lock_guard<std::mutex> lock(tables_->mu);
  for (const std::string& id : ids) {
    const auto it = tables_->records.find(id);
    if (it == tables_->records.end()) continue;
    ++it->second.access_count;
    it->second.last_accessed = at;
  }
  return Status::Ok();
}

Result<std::vector<AuditEvent>> MemoryStore::ListAudit(const AuditQuery& query) {
  if (query.tenant.empty()) return Status::InvalidArgument("list audit: tenant is required");
  if (query.limit < 0) {
    return Status::InvalidArgument("list audit: limit must be >= 0 (got " + std::to_string(query.limit) + ")");
  }
  std::vector<AuditEvent> out;
  std::lock_guard<std::mutex> lock(tables_->mu);
  for (auto it = tables_->audit.rbegin(); it != tables_->audit.rend(); ++it) {
    if (query.limit > 0 && out.size() == static_cast<size_t>(query.limit)) break;
    if (it->tenant != query.tenant) continue;
    if (!query.record_id.empty() && it->record_id != query.record_id) continue;
    out.push_back(*it);
  }
  return out;
}

Result<int64_t> MemoryStore::CountAudit(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(tables_->mu);
  return static_cast<int64_t>(std::count_if(tables_->audit.begin(), tables_->audit.end(),
                                            [&](const AuditEvent& e) { return e.tenant == tenant; }));
}

Result<std::optional<IdempotencyKey>> MemoryStore::GetIdempotencyKey(const std::string& tenant,
                                                                     const std::string& key, TimeMs now) {
  std::lock_guard<std::mutex> lock(tables_->mu);
  const auto it = tables_->idempotency.find({tenant, key});
  if (it == tables_->idempotency.end() || it->second.expires_at <= now) return std::optional<IdempotencyKey>();
  return std::optional<IdempotencyKey>(it->second);
}

Result<std::optional<std::string>> MemoryStore::GetMeta(const std::string& key) {
  std::lock_guard<std::mutex> lock(tables_->mu);
  const auto it = tables_->meta.find(key);
  if (it == tables_->meta.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

}  // namespace msp::testing
