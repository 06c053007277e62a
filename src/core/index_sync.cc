// IndexSync: catch-up of the derived indexes from the change sequence, and
// the vector index's file.
#include "core/index_sync.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <set>
#include <utility>

namespace msp {
namespace {

constexpr int kCatchUpPage = 5000;
// Neutral changes (Change::neutral) the lexical index may lag behind before
// a replay writes its mark past them anyway.
constexpr int64_t kNeutralLag = 2048;

}  // namespace

IndexSync::IndexSync(Store& store, LexicalIndex& lexical, VectorIndex& vector, std::string embedder_id,
                     std::string vector_file, WarnFn warn)
    : store_(store),
      lexical_(lexical),
      vector_(vector),
      embedder_id_(std::move(embedder_id)),
      vector_file_(std::move(vector_file)),
      warn_(std::move(warn)) {}

IndexSync::~IndexSync() {
  if (follower_.joinable()) {
    stop_following_ = true;
    follower_.join();
  }
  if (maintainer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_maintaining_ = true;
    }
    maintenance_cv_.notify_all();
    maintainer_.join();
  }
}

void IndexSync::StartFollowing() {
  follower_ = std::thread([this] {
    constexpr int kWaitMs = 100;  // also how long stopping may take
    int64_t seen = 0;
    while (!stop_following_.load()) {
      auto last = store_.WaitForChange(seen, kWaitMs);
      if (!last.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kWaitMs));  // the store is down
      } else if (*last > seen && CatchUp().ok()) {
        seen = *last;
      }
    }
  });
}

Result<std::string> IndexSync::Identity() {
  MSP_ASSIGN_OR_RETURN(std::optional<std::string> uid, store_.GetMeta(kStoreUidMetaKey));
  if (!uid || uid->empty()) return std::string();
  return "store=" + *uid + ";embedder=" + embedder_id_ + ";dimension=" + std::to_string(vector_.dimension());
}

Status IndexSync::Open() {
  std::lock_guard<std::mutex> lock(mu_);
  if (vector_file_.empty()) {
    open_note_ = "not persisted";
    return Status::Ok();
  }
  MSP_ASSIGN_OR_RETURN(identity_, Identity());
  if (identity_.empty()) {
    open_note_ = "not persisted (the store has no uid yet)";
    return Status::Ok();
  }
  // Unverified vectors: checking their checksum reads every page, which
  // would cost a short-lived process more than the rest of its work; the
  // header and metadata are checked, and a garbled vector ranks nothing.
  const Status loaded = vector_.Load(vector_file_, identity_, /*verify_vectors=*/false);
  if (loaded.ok()) {
    MSP_ASSIGN_OR_RETURN(int64_t last, store_.LastSeq());
    if (vector_.AppliedSeq() <= last) {
      open_note_ = "loaded";
      return Status::Ok();
    }
    // Newer than the store (a store restored from a backup): rebuild.
    open_note_ = "set aside: it reflects change " + std::to_string(vector_.AppliedSeq()) +
                 " but the store ends at " + std::to_string(last);
    vector_.Clear();
  } else if (loaded.IsNotFound()) {
    open_note_ = "none";
    return Status::Ok();
  } else {
    open_note_ = "set aside: " + loaded.message();
  }
  // Kept for a look, out of the way of the next save (a read-only store's
  // is left where it is: the index is rebuilt in memory).
  const bool set_aside = !store_.read_only();
  if (set_aside) std::rename(vector_file_.c_str(), (vector_file_ + ".set-aside").c_str());
  ++rebuilds_.vector;
  Warn("vector index " + vector_file_ + " " + open_note_ +
       (set_aside ? " (kept as " + vector_file_ + ".set-aside)" : std::string()) + "; it is rebuilt from the store");
  return Status::Ok();
}

Status IndexSync::CatchUp() {
  std::lock_guard<std::mutex> lock(mu_);
  MSP_RETURN_IF_ERROR(CatchUpLocked());
  if (unsaved_ >= SaveThreshold()) RequestMaintenanceLocked();
  return Status::Ok();
}

Status IndexSync::CatchUpVectors() {
  std::lock_guard<std::mutex> lock(mu_);
  MSP_RETURN_IF_ERROR(CatchUpLocked(/*lexical=*/false));
  if (unsaved_ >= SaveThreshold()) RequestMaintenanceLocked();
  return Status::Ok();
}

void IndexSync::PersistSoon() {
  std::lock_guard<std::mutex> lock(mu_);
  if (unsaved_ > 0 && !store_.read_only() && !vector_file_.empty()) RequestMaintenanceLocked();
}

void IndexSync::FinishMaintenance() {
  std::unique_lock<std::mutex> lock(mu_);
  maintenance_cv_.wait(lock, [this] { return !maintenance_asked_ && busy_ == 0; });
}

void IndexSync::RequestMaintenanceLocked() {
  maintenance_asked_ = true;
  if (!maintainer_.joinable()) {
    maintainer_ = std::thread([this] { Maintain(); });
  } else {
    maintenance_cv_.notify_all();
  }
}

// Rows placed in the graph at a time: about a millisecond each at 100,000
// rows, so queries and writes wait at most a few tens of milliseconds.
constexpr size_t kGraphSlice = 32;

void IndexSync::Maintain() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // A save another thread is committing would refuse this one's: wait.
    maintenance_cv_.wait(lock, [this] { return (maintenance_asked_ && busy_ == 0) || stop_maintaining_; });
    if (!maintenance_asked_) return;  // stopped with nothing asked for
    maintenance_asked_ = false;
    ++busy_;
    // The graph first, a slice at a time, letting the lock go in between.
    for (size_t budget = GraphBudget(); budget > 0;) {
      const size_t slice = std::min(budget, kGraphSlice);
      if (const Status g = vector_.ExtendGraph(slice); !g.ok()) {
        save_error_ = g.ToString();
        break;
      }
      budget -= slice;
      if (vector_.graph_info().pending == 0) break;
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
    // Then the file.
    SaveLocked(lock, /*graph_budget=*/0);
    --busy_;
    maintenance_cv_.notify_all();
  }
}

Status IndexSync::Rebuild(bool lexical_too) {
  std::unique_lock<std::mutex> lock(mu_);
  maintenance_cv_.wait(lock, [this] { return busy_ == 0; });  // a save in flight would refuse ours
  if (lexical_too) {
    const Status cleared = lexical_.Clear();
    if (cleared.code() == StatusCode::kCorruption) {
      MSP_RETURN_IF_ERROR(ResetLexicalLocked(cleared));
    } else {
      MSP_RETURN_IF_ERROR(cleared);
    }
  }
  vector_.Clear();
  MSP_RETURN_IF_ERROR(CatchUpLocked());
  SaveLocked(lock, SIZE_MAX);
  return Status::Ok();
}

Status IndexSync::CatchUpAndPersist() {
  std::unique_lock<std::mutex> lock(mu_);
  maintenance_cv_.wait(lock, [this] { return busy_ == 0; });  // a save in flight would refuse ours
  MSP_RETURN_IF_ERROR(CatchUpLocked());
  // Every row placed in the graph; the file is written when that or the
  // replay changed anything.
  const VectorGraphInfo before = vector_.graph_info();
  if (const Status g = vector_.ExtendGraph(SIZE_MAX); !g.ok()) save_error_ = g.ToString();
  const VectorGraphInfo after = vector_.graph_info();
  const bool graph_changed = after.built != before.built || after.placed != before.placed ||
                             after.removed != before.removed;
  if (unsaved_ > 0 || graph_changed) SaveLocked(lock, /*graph_budget=*/0);
  return Status::Ok();
}

Status IndexSync::RepairLexical(const Status& cause, int64_t seen) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rebuilds_.lexical == seen) MSP_RETURN_IF_ERROR(ResetLexicalLocked(cause));
  return CatchUpLocked();
}

int64_t IndexSync::lexical_resets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rebuilds_.lexical;
}

IndexRebuilds IndexSync::rebuilds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rebuilds_;
}

Status IndexSync::ResetLexicalLocked(const Status& cause) {
  MSP_RETURN_IF_ERROR(lexical_.Reset());
  ++rebuilds_.lexical;
  Warn("lexical index damaged (" + cause.message() + "); set aside and rebuilt from the store");
  return Status::Ok();
}

void IndexSync::Warn(const std::string& message) const {
  if (warn_) warn_(message);
}

int64_t IndexSync::unsaved_changes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unsaved_;
}

// Replaying c changes costs about c record reads; a save writes the whole
// index. Saving after a sixteenth of the index has been replayed (at least
// 32 changes, at most 1,024) keeps both small next to a query.
int64_t IndexSync::SaveThreshold() const {
  return std::clamp<int64_t>(static_cast<int64_t>(vector_.size() / 16), 32, 1024);
}

std::string IndexSync::open_note() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_note_;
}

std::string IndexSync::last_save_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return save_error_;
}

// Placing a row in the graph costs about a millisecond at 100,000 rows; at
// a save, twice the rows replayed since the last one plus 1,024 are placed
// (at most 4,096), so a backlog (the graph built when the index first
// reaches its threshold, or built again after a rebuild) shrinks by at
// least 1,024 rows a save, while no process pays for more than a few
// seconds of it. Rows not yet placed are scanned exactly meanwhile; `msp
// reindex` and `import` place every row.
size_t IndexSync::GraphBudget() const {
  return std::min<size_t>(2 * static_cast<size_t>(std::max<int64_t>(unsaved_, 0)) + 1024, 4096);
}

void IndexSync::SaveLocked(std::unique_lock<std::mutex>& lock, size_t graph_budget) {
  if (const Status g = vector_.ExtendGraph(graph_budget); !g.ok()) save_error_ = g.ToString();
  if (vector_file_.empty() || identity_.empty() || store_.read_only()) {
    unsaved_ = 0;  // nothing to write: the next save point is as far away again
    return;
  }
  Result<StagedVectorFile> staged = vector_.Stage(vector_file_, identity_);
  if (!staged.ok()) {
    // Unavailable: another process (or this one's other save) is writing it now.
    if (staged.status().code() != StatusCode::kUnavailable) save_error_ = staged.status().ToString();
    return;
  }
  const int64_t saved = std::exchange(unsaved_, 0);
  ++busy_;  // Rebuild, CatchUpAndPersist and the maintainer wait
  lock.unlock();
  const Status committed = staged->Commit();
  lock.lock();
  --busy_;
  maintenance_cv_.notify_all();
  if (committed.ok()) {
    save_error_.clear();
  } else {
    unsaved_ += saved;
    save_error_ = committed.ToString();
  }
}

Status IndexSync::CatchUpLocked(bool lexical) {
  Status damage;
  const Status replayed = ReplayLocked(lexical, &damage);
  if (damage.ok()) return replayed;
  MSP_RETURN_IF_ERROR(ResetLexicalLocked(damage));
  damage = Status::Ok();
  return ReplayLocked(lexical, &damage);
}

// Replays the change sequence into both indexes, a page at a time. Each
// page applies the records' current state (a put of a record since deleted
// becomes a delete), so replaying is idempotent.
Status IndexSync::ReplayLocked(bool lexical, Status* lexical_damage) {
  const auto lexical_failed = [&](const Status& s) {
    if (s.code() == StatusCode::kCorruption) *lexical_damage = s;
    return s;
  };
  MSP_ASSIGN_OR_RETURN(int64_t last, store_.LastSeq());
  int64_t vec_at = vector_.AppliedSeq();
  int64_t lex_at = vec_at;  // not caught up: treated as in step with the vectors
  if (lexical) {
    Result<int64_t> applied = lexical_.AppliedSeq();
    if (!applied.ok()) return lexical_failed(applied.status());
    lex_at = *applied;
  }
  int64_t from = std::min(lex_at, vec_at);
  while (from < last) {
    MSP_ASSIGN_OR_RETURN(auto changes, store_.ChangesSince(from, kCatchUpPage));
    if (changes.empty()) break;
    // Each index takes the records of the changes past its own mark, read
    // back once; neutral changes (Change::neutral: a put of a record that
    // holds and held nothing to index, such as a retrieval log) are not
    // read at all.
    const int64_t up_to = changes.back().seq;
    std::vector<std::string> ids;
    std::set<std::string> seen, for_lexical, for_vectors;
    for (const auto& c : changes) {
      if (c.neutral) continue;
      if (seen.insert(c.record_id).second) ids.push_back(c.record_id);
      if (c.seq > lex_at) for_lexical.insert(c.record_id);
      if (c.seq > vec_at) for_vectors.insert(c.record_id);
    }
    std::vector<Memory> records;
    if (!ids.empty()) {
      MSP_ASSIGN_OR_RETURN(records, store_.GetMany(ids, /*with_embeddings=*/true));
    }
    std::set<std::string> present;
    for (const auto& r : records) present.insert(r.id);
    auto part = [&](const std::set<std::string>& wanted, std::vector<Memory>* puts, std::vector<std::string>* gone) {
      for (const Memory& r : records) {
        if (wanted.count(r.id)) puts->push_back(r);
      }
      for (const std::string& id : wanted) {
        if (!present.count(id)) gone->push_back(id);
      }
    };
    // The lexical index is not written just to move its mark past changes
    // that give it nothing: a later process reads those change rows again
    // (cheap) until a change with something to index moves the mark — or
    // until they are so many that reading them costs more than the write.
    if (lexical && lex_at < up_to && (!for_lexical.empty() || up_to - lex_at >= kNeutralLag)) {
      std::vector<Memory> puts;
      std::vector<std::string> gone;
      part(for_lexical, &puts, &gone);
      if (Status st = lexical_.Apply(puts, gone, up_to); !st.ok()) return lexical_failed(st);
      lex_at = up_to;
    }
    if (vec_at < up_to) {
      std::vector<Memory> puts;
      std::vector<std::string> gone;
      part(for_vectors, &puts, &gone);
      MSP_RETURN_IF_ERROR(ApplyVectors(puts, std::move(gone), up_to));
      unsaved_ += static_cast<int64_t>(for_vectors.size());
      vec_at = up_to;
    }
    from = up_to;
  }
  return Status::Ok();
}

// The vector index takes only vectors of this engine's embedder: a record
// whose vector another embedder made (written by a process configured
// otherwise, or during a reembed) leaves the vector index instead of being
// compared with vectors of another model.
Status IndexSync::ApplyVectors(const std::vector<Memory>& records, std::vector<std::string> deletes,
                               int64_t up_to) {
  // A record of this embedder without a vector of the index's dimension
  // (a malformed embedding in the store, read as none) is left out.
  const size_t dim = static_cast<size_t>(vector_.dimension());
  for (const Memory& m : records) {
    if (m.embedder_id == embedder_id_ && m.embedding.size() != dim) {
      Warn("record " + m.id + " has no usable vector in the store (" + std::to_string(m.embedding.size()) +
           " floats where " + std::to_string(dim) + " are expected: a malformed embedding); it is left out of "
           "vector search until `msp reembed` makes its vector again");
    }
  }
  const auto foreign = [&](const Memory& m) { return m.embedder_id != embedder_id_; };
  if (std::none_of(records.begin(), records.end(), foreign)) return vector_.Apply(records, deletes, up_to);
  std::vector<Memory> own;
  for (const Memory& m : records) {
    if (foreign(m)) {
      deletes.push_back(m.id);
    } else {
      own.push_back(m);
    }
  }
  return vector_.Apply(own, deletes, up_to);
}

}  // namespace msp
