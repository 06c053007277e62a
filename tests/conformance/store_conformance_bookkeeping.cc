// The Store conformance tests of what a store keeps beside its records (see
// store_conformance.h): access statistics, the audit log, meta values and
// idempotency keys.
#include "tests/conformance/store_conformance.h"
#include "tests/conformance/store_conformance_util.h"
#include "tests/support/test_util.h"

#include <string>
#include <tuple>
#include <vector>

namespace msp::conformance {
namespace {

// ---- Access statistics ----

TEST_P(StoreConformanceTest, RecordAccessBumpsCountWithoutAChange) {
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts({Rec("a", 1), Rec("b", 2)})));
  ASSERT_OK_AND_ASSIGN(int64_t last_before, store_->LastSeq());
  ASSERT_OK(store_->RecordAccess({"a", "missing"}, 5000));
  ASSERT_OK(store_->RecordAccess({"a"}, 6000));
  ASSERT_OK(store_->RecordAccess({}, 7000));

  ASSERT_OK_AND_ASSIGN(std::optional<Memory> a, store_->Get("a"));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->access_count, 2);
  EXPECT_EQ(a->last_accessed, 6000);
  EXPECT_EQ(a->seq, seqs[0]);  // not a change
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> b, store_->Get("b"));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->access_count, 0);
  EXPECT_EQ(b->last_accessed, 0);
  ASSERT_OK_AND_ASSIGN(int64_t last_after, store_->LastSeq());
  EXPECT_EQ(last_after, last_before);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(last_before, 0));
  EXPECT_TRUE(changes.empty());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> missing, store_->Get("missing"));
  EXPECT_FALSE(missing.has_value());
}

TEST_P(StoreConformanceTest, RecordAccessCountsEveryTimeABatchNamesARecord) {
  ASSERT_OK(store_->Apply(Puts({Rec("a", 1), Rec("b", 2), Rec("c", 3)})).status());
  ASSERT_OK(store_->RecordAccess({"b", "a", "b", "missing", "b", "a"}, 5000));
  ASSERT_OK(store_->RecordAccess({"a"}, 6000));
  for (const auto& [id, count, last] : std::vector<std::tuple<std::string, int64_t, TimeMs>>{
           {"a", 3, 6000}, {"b", 3, 5000}, {"c", 0, 0}}) {
    ASSERT_OK_AND_ASSIGN(std::optional<Memory> m, store_->Get(id));
    ASSERT_TRUE(m.has_value()) << id;
    EXPECT_EQ(m->access_count, count) << id;
    EXPECT_EQ(m->last_accessed, last) << id;
  }
}

// ---- Audit ----

AuditEvent Event(const std::string& tenant, const std::string& record_id, AuditAction action,
                 TimeMs at) {
  AuditEvent e;
  e.tenant = tenant;
  e.record_id = record_id;
  e.action = action;
  e.at = at;
  e.actor = "actor-" + tenant;
  e.reason = "because ü";
  e.details_json = R"({"rule":"min_chars"})";
  return e;
}

TEST_P(StoreConformanceTest, AuditIsAppendedAndListedPerTenantNewestFirst) {
  WriteBatch b1;
  b1.audit = {Event("t1", "r1", AuditAction::kWrite, 10), Event("t2", "r9", AuditAction::kDelete, 11),
              Event("t1", "", AuditAction::kRefuse, 12)};
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> none, store_->Apply(b1));
  EXPECT_TRUE(none.empty());  // audit events are not changes
  WriteBatch b2 = Puts({Rec("r1", 1)});
  b2.audit = {Event("t1", "r1", AuditAction::kUpdate, 13)};
  ASSERT_OK(store_->Apply(b2).status());

  AuditQuery q;
  q.tenant = "t1";
  ASSERT_OK_AND_ASSIGN(std::vector<AuditEvent> t1, store_->ListAudit(q));
  ASSERT_EQ(t1.size(), 3u);
  EXPECT_EQ(t1[0].action, AuditAction::kUpdate);
  EXPECT_EQ(t1[1].action, AuditAction::kRefuse);
  EXPECT_EQ(t1[2].action, AuditAction::kWrite);
  EXPECT_GT(t1[0].seq, t1[1].seq);
  EXPECT_GT(t1[1].seq, t1[2].seq);
  AuditEvent want = Event("t1", "r1", AuditAction::kWrite, 10);
  want.seq = t1[2].seq;
  EXPECT_EQ(t1[2].at, want.at);
  EXPECT_EQ(t1[2].actor, want.actor);
  EXPECT_EQ(t1[2].record_id, want.record_id);
  EXPECT_EQ(t1[2].tenant, want.tenant);
  EXPECT_EQ(t1[2].reason, want.reason);
  EXPECT_EQ(t1[2].details_json, want.details_json);

  q.record_id = "r1";
  ASSERT_OK_AND_ASSIGN(std::vector<AuditEvent> r1, store_->ListAudit(q));
  ASSERT_EQ(r1.size(), 2u);
  for (const AuditEvent& e : r1) EXPECT_EQ(e.record_id, "r1");
  q.record_id.clear();
  q.limit = 1;
  ASSERT_OK_AND_ASSIGN(std::vector<AuditEvent> newest, store_->ListAudit(q));
  ASSERT_EQ(newest.size(), 1u);
  EXPECT_EQ(newest[0].action, AuditAction::kUpdate);

  AuditQuery q2;
  q2.tenant = "t2";
  q2.record_id = "r1";
  ASSERT_OK_AND_ASSIGN(std::vector<AuditEvent> cross, store_->ListAudit(q2));
  EXPECT_TRUE(cross.empty());
  ASSERT_OK_AND_ASSIGN(int64_t n1, store_->CountAudit("t1"));
  ASSERT_OK_AND_ASSIGN(int64_t n2, store_->CountAudit("t2"));
  ASSERT_OK_AND_ASSIGN(int64_t n3, store_->CountAudit("t3"));
  EXPECT_EQ(n1, 3);
  EXPECT_EQ(n2, 1);
  EXPECT_EQ(n3, 0);
}

TEST_P(StoreConformanceTest, AuditRoundTripsEveryAction) {
  const std::vector<AuditAction> actions = {
      AuditAction::kWrite,     AuditAction::kRefuse, AuditAction::kUpdate, AuditAction::kMerge,
      AuditAction::kSupersede, AuditAction::kDelete, AuditAction::kEvict,  AuditAction::kImport};
  WriteBatch b;
  for (size_t i = 0; i < actions.size(); ++i) {
    b.audit.push_back(Event("t1", "r" + std::to_string(i), actions[i], static_cast<TimeMs>(i)));
  }
  ASSERT_OK(store_->Apply(b).status());
  AuditQuery q;
  q.tenant = "t1";
  q.limit = 0;  // all
  ASSERT_OK_AND_ASSIGN(std::vector<AuditEvent> got, store_->ListAudit(q));
  ASSERT_EQ(got.size(), actions.size());
  for (size_t i = 0; i < actions.size(); ++i) {
    EXPECT_EQ(got[actions.size() - 1 - i].action, actions[i]);
  }
}

TEST_P(StoreConformanceTest, ListAuditRequiresTenant) {
  AuditQuery q;
  auto listed = store_->ListAudit(q);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), StatusCode::kInvalidArgument);
}

// ---- Meta ----

TEST_P(StoreConformanceTest, MetaIsUpserted) {
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> missing, store_->GetMeta("k"));
  EXPECT_FALSE(missing.has_value());
  WriteBatch b;
  b.meta = {{"k", "v1"}, {"other", ""}};
  ASSERT_OK(store_->Apply(b).status());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> v1, store_->GetMeta("k"));
  EXPECT_EQ(v1, std::optional<std::string>("v1"));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> empty, store_->GetMeta("other"));
  EXPECT_EQ(empty, std::optional<std::string>(""));
  WriteBatch b2;
  b2.meta = {{"k", "v2 ünï"}};
  ASSERT_OK(store_->Apply(b2).status());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> v2, store_->GetMeta("k"));
  EXPECT_EQ(v2, std::optional<std::string>("v2 ünï"));
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, 0);  // meta is not a change
}

// ---- Idempotency keys ----

// A key is claimed in the batch's transaction: while it is held (per tenant,
// until it expires) a second claim writes nothing; an expired key is pruned
// and may be claimed again.
TEST_P(StoreConformanceTest, IdempotencyKeysAreClaimedWithTheWriteOncePerTenant) {
  auto keyed = [](const std::string& id, const std::string& tenant, const std::string& key, TimeMs at) {
    WriteBatch b = Puts({Rec(id, at, Kind::kFact, tenant)});
    IdempotencyKey k;
    k.tenant = tenant;
    k.key = key;
    k.request_hash = "hash of " + id;
    k.reply = "{\"id\":\"" + id + "\"}";
    k.created_at = at;
    k.expires_at = at + 1000;
    b.idempotency = k;
    return b;
  };
  ASSERT_OK_AND_ASSIGN(std::optional<IdempotencyKey> none, store_->GetIdempotencyKey("t1", "req-1", 100));
  EXPECT_FALSE(none.has_value());
  ASSERT_OK(store_->Apply(keyed("idem-1", "t1", "req-1", 100)).status());
  ASSERT_OK_AND_ASSIGN(std::optional<IdempotencyKey> got, store_->GetIdempotencyKey("t1", "req-1", 500));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->request_hash, "hash of idem-1");
  EXPECT_EQ(got->reply, "{\"id\":\"idem-1\"}");
  EXPECT_EQ(got->created_at, 100);
  EXPECT_EQ(got->expires_at, 1100);

  // Held: a second claim fails and writes nothing, records included.
  ASSERT_OK_AND_ASSIGN(int64_t before, store_->LastSeq());
  Result<std::vector<int64_t>> again = store_->Apply(keyed("idem-2", "t1", "req-1", 200));
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> second, store_->Get("idem-2"));
  EXPECT_FALSE(second.has_value());
  ASSERT_OK_AND_ASSIGN(int64_t after, store_->LastSeq());
  EXPECT_EQ(after, before);

  // Another tenant's key of the same name is its own.
  ASSERT_OK(store_->Apply(keyed("idem-3", "t2", "req-1", 200)).status());
  ASSERT_OK_AND_ASSIGN(std::optional<IdempotencyKey> other, store_->GetIdempotencyKey("t2", "req-1", 500));
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->request_hash, "hash of idem-3");

  // Expired: not found, and pruned by the next claim, which may reuse it.
  ASSERT_OK_AND_ASSIGN(std::optional<IdempotencyKey> expired, store_->GetIdempotencyKey("t1", "req-1", 1100));
  EXPECT_FALSE(expired.has_value());
  ASSERT_OK(store_->Apply(keyed("idem-4", "t1", "req-1", 1200)).status());
  ASSERT_OK_AND_ASSIGN(std::optional<IdempotencyKey> reused, store_->GetIdempotencyKey("t1", "req-1", 1300));
  ASSERT_TRUE(reused.has_value());
  EXPECT_EQ(reused->request_hash, "hash of idem-4");
}

}  // namespace
}  // namespace msp::conformance
