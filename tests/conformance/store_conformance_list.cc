// The Store conformance tests of List and Count (see store_conformance.h):
// the scope, the filters (kinds, layers, sources, session and step, state,
// creation range, expiry, access level), order, limit and offset.
#include "tests/conformance/store_conformance.h"
#include "tests/conformance/store_conformance_util.h"
#include "tests/support/test_util.h"

#include <string>
#include <vector>

namespace msp::conformance {
namespace {

// ---- List and Count ----

// A small world for List: two tenants, several users, sessions and kinds.
::testing::AssertionResult Populate(Store* store) {
  std::vector<Memory> records;
  auto add = [&](const std::string& id, TimeMs created, Kind kind, const std::string& tenant,
                 const std::string& user, const std::string& session, int64_t step) {
    Memory m = Rec(id, created, kind, tenant);
    m.ns.user = user;
    m.ns.session = session;
    m.step_number = step;
    records.push_back(m);
  };
  add("e1", 100, Kind::kEpisode, "t1", "ann", "s1", 1);
  add("e2", 110, Kind::kEpisode, "t1", "ann", "s1", 2);
  add("e3", 105, Kind::kEpisode, "t1", "ann", "s1", 3);  // created out of step order
  add("e4", 120, Kind::kEpisode, "t1", "bob", "s2", 1);
  add("f1", 200, Kind::kFact, "t1", "ann", "", 0);
  add("f2", 210, Kind::kFact, "t1", "bob", "", 0);
  add("d1", 300, Kind::kDecision, "t1", "", "", 0);
  add("x1", 150, Kind::kFact, "t2", "ann", "s1", 0);  // another tenant, same user and session
  records[5].state = RecordState::kSuperseded;         // f2
  records[4].expires_at = 1000;                        // f1 expires at 1000
  records[6].expires_at = 5000;                        // d1 expires at 5000
  records[6].ns.agent = "ag";
  records[6].ns.mission = "m1";
  records[6].ns.operator_id = "op";
  records[6].embedding = {1.0f, 2.0f};
  records[6].embedder_id = "hashing-2";
  auto applied = store->Apply(Puts(records));
  if (!applied.ok()) return ::testing::AssertionFailure() << applied.status().ToString();
  return ::testing::AssertionSuccess();
}

// The ids List returns for `q`, after checking that Count agrees.
std::vector<std::string> ListIds(Store* store, const RecordQuery& q) {
  auto listed = store->List(q);
  EXPECT_TRUE(listed.ok()) << listed.status().ToString();
  if (!listed.ok()) return {"<list failed>"};
  auto counted = store->Count(q);
  EXPECT_TRUE(counted.ok()) << counted.status().ToString();
  if (counted.ok()) {
    EXPECT_EQ(*counted, static_cast<int64_t>(listed->size()));
  }
  return Ids(*listed);
}

RecordQuery Query(const std::string& tenant = "t1") {
  RecordQuery q;
  q.scope.tenant = tenant;
  return q;
}

using Strings = std::vector<std::string>;

TEST_P(StoreConformanceTest, ListScopeIsTenantAndEveryNonEmptyPart) {
  ASSERT_TRUE(Populate(store_.get()));
  EXPECT_EQ(ListIds(store_.get(), Query("t1")), (Strings{"e1", "e3", "e2", "e4", "f1", "f2", "d1"}));
  EXPECT_EQ(ListIds(store_.get(), Query("t2")), (Strings{"x1"}));
  EXPECT_EQ(ListIds(store_.get(), Query("t3")), (Strings{}));

  RecordQuery q = Query();
  q.scope.user = "ann";
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e1", "e3", "e2", "f1"}));
  q.scope.session = "s1";
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e1", "e3", "e2"}));

  for (auto part : {&Namespace::agent, &Namespace::mission, &Namespace::operator_id}) {
    RecordQuery p = Query();
    p.scope.*part = "nope";
    EXPECT_EQ(ListIds(store_.get(), p), (Strings{}));
  }
  RecordQuery full = Query();
  full.scope.agent = "ag";
  full.scope.mission = "m1";
  full.scope.operator_id = "op";
  EXPECT_EQ(ListIds(store_.get(), full), (Strings{"d1"}));
}

TEST_P(StoreConformanceTest, ListTenantsAreIsolated) {
  ASSERT_TRUE(Populate(store_.get()));
  // Same user and session exist in t2; a t1 scope never sees x1, and t2 never sees t1's.
  RecordQuery q = Query("t1");
  q.scope.user = "ann";
  q.scope.session = "s1";
  for (const std::string& id : ListIds(store_.get(), q)) EXPECT_NE(id, "x1");
  RecordQuery q2 = Query("t2");
  q2.kinds = {Kind::kEpisode};
  EXPECT_EQ(ListIds(store_.get(), q2), (Strings{}));
  RecordQuery empty_tenant = Query("");
  EXPECT_EQ(ListIds(store_.get(), empty_tenant), (Strings{}));
}

TEST_P(StoreConformanceTest, ListKindsAndLayersAreAnyOf) {
  ASSERT_TRUE(Populate(store_.get()));
  RecordQuery q = Query();
  q.kinds = {Kind::kFact, Kind::kDecision};
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"f1", "f2", "d1"}));
  q.kinds = {Kind::kProcedure};
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{}));
  RecordQuery l = Query();
  l.layers = {Layer::kEpisodic, Layer::kWorkflow};
  EXPECT_EQ(ListIds(store_.get(), l), (Strings{"e1", "e3", "e2", "e4", "d1"}));
  l.kinds = {Kind::kDecision};
  EXPECT_EQ(ListIds(store_.get(), l), (Strings{"d1"}));
}

TEST_P(StoreConformanceTest, ListSourcesAreAnyOfAndLimitCountsOnlyMatches) {
  std::vector<Memory> records;
  for (int i = 0; i < 6; ++i) {
    Memory m = Rec("s" + std::to_string(i), 100 + i, Kind::kEvent, "t1");
    m.source = i % 3 == 0 ? "mission-event" : (i % 3 == 1 ? "retrieval-log" : "");
    records.push_back(m);
  }
  ASSERT_OK(store_->Apply(Puts(records)).status());
  RecordQuery q = Query();
  q.sources = {"mission-event"};
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"s0", "s3"}));
  q.sources = {"retrieval-log", "mission-event"};
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"s0", "s1", "s3", "s4"}));
  q.sources = {""};  // no source
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"s2", "s5"}));
  q.sources = {"Mission-Event"};  // exact, case included
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{}));
  // The limit is of matching rows: the newest two mission events, not the
  // newest two rows filtered afterwards.
  q.sources = {"mission-event", "retrieval-log"};
  q.order = RecordQuery::Order::kCreatedDesc;
  q.limit = 3;
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> newest, store_->List(q));
  EXPECT_EQ(Ids(newest), (Strings{"s4", "s3", "s1"}));
}

TEST_P(StoreConformanceTest, ListSessionAndMinStepInStepOrder) {
  ASSERT_TRUE(Populate(store_.get()));
  RecordQuery q = Query();
  q.session = "s1";
  q.order = RecordQuery::Order::kStepAsc;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e1", "e2", "e3"}));
  q.order = RecordQuery::Order::kStepDesc;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e3", "e2", "e1"}));
  q.order = RecordQuery::Order::kStepAsc;
  q.min_step = 2;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e2", "e3"}));
  q.session = "s2";
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{}));
}

TEST_P(StoreConformanceTest, EpisodeStepsAreUniqueWithinASession) {
  auto episode = [](const std::string& id, const std::string& session, int64_t step,
                    const std::string& user) {
    Memory m = Rec(id, 100, Kind::kEpisode);
    m.ns.session = session;
    m.ns.user = user;
    m.step_number = step;
    return m;
  };
  ASSERT_OK(store_->Apply(Puts({episode("a", "s1", 1, "ann")})).status());
  ASSERT_OK_AND_ASSIGN(int64_t before, store_->LastSeq());
  // The same step in the same session: the whole batch fails, nothing lands.
  auto dup = store_->Apply(Puts({episode("b", "s2", 1, "ann"), episode("c", "s1", 1, "ann")}));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists) << dup.status().ToString();
  ASSERT_OK_AND_ASSIGN(int64_t after, store_->LastSeq());
  EXPECT_EQ(after, before);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> b, store_->Get("b"));
  EXPECT_FALSE(b.has_value());
  // Another session, another user's session of the same name, or a replace
  // of the same record are fine; so are non-episodes with any step.
  ASSERT_OK(store_->Apply(Puts({episode("b", "s2", 1, "ann"), episode("d", "s1", 1, "bob"),
                                episode("a", "s1", 1, "ann")}))
                .status());
  Memory f1 = Rec("f1", 100);
  Memory f2 = Rec("f2", 100);
  f1.ns.session = f2.ns.session = "s1";
  ASSERT_OK(store_->Apply(Puts({f1, f2})).status());
}

TEST_P(StoreConformanceTest, ListStateFilter) {
  ASSERT_TRUE(Populate(store_.get()));
  RecordQuery q = Query();
  q.kinds = {Kind::kFact};
  q.state = RecordState::kActive;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"f1"}));
  q.state = RecordState::kSuperseded;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"f2"}));
}

TEST_P(StoreConformanceTest, ListCreatedRangeIsFromInclusiveToExclusive) {
  ASSERT_TRUE(Populate(store_.get()));
  RecordQuery q = Query();
  q.created_from = 105;
  q.created_to = 200;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e3", "e2", "e4"}));
  q.created_to = 201;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e3", "e2", "e4", "f1"}));
  q.created_from = 0;
  q.created_to = 105;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e1"}));
}

TEST_P(StoreConformanceTest, ListNotExpiredAtExcludesExpiredRecords) {
  ASSERT_TRUE(Populate(store_.get()));
  RecordQuery q = Query();
  q.kinds = {Kind::kFact, Kind::kDecision};
  q.not_expired_at = 999;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"f1", "f2", "d1"}));
  q.not_expired_at = 1000;  // expires_at <= this is expired
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"f2", "d1"}));
  q.not_expired_at = 6000;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"f2"}));  // expires_at 0 never expires
}

TEST_P(StoreConformanceTest, ListAndCountHonourMaxAccessLevel) {
  std::vector<Memory> records;
  for (int level : {0, 3, 5, 9}) {
    Memory m = Rec("a" + std::to_string(level), 100 + level);
    m.access_level = level;
    records.push_back(m);
  }
  ASSERT_OK(store_->Apply(Puts(records)).status());
  RecordQuery q = Query();
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"a0", "a3", "a5", "a9"}));
  q.max_access_level = 4;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"a0", "a3"}));
  ASSERT_OK_AND_ASSIGN(int64_t n, store_->Count(q));
  EXPECT_EQ(n, 2);
  q.max_access_level = 0;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"a0"}));
  q.max_access_level = 9;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"a0", "a3", "a5", "a9"}));
}

TEST_P(StoreConformanceTest, RejectsAccessLevelOutsideRangeAndAppliesNothing) {
  for (int level : {-1, kMaxAccessLevel + 1}) {
    Memory bad = Rec("bad", 100);
    bad.access_level = level;
    auto applied = store_->Apply(Puts({Rec("good", 100), bad}));
    ASSERT_FALSE(applied.ok());
    EXPECT_EQ(applied.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(applied.status().message().find("access level"), std::string::npos)
        << applied.status().message();
  }
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> good, store_->Get("good"));
  EXPECT_FALSE(good.has_value());
}

TEST_P(StoreConformanceTest, ListOrdersLimitAndOffset) {
  ASSERT_TRUE(Populate(store_.get()));
  RecordQuery q = Query();
  q.order = RecordQuery::Order::kCreatedDesc;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"d1", "f2", "f1", "e4", "e2", "e3", "e1"}));
  q.limit = 3;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"d1", "f2", "f1"}));
  q.offset = 2;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"f1", "e4", "e2"}));
  q.limit = 0;
  q.offset = 5;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"e3", "e1"}));
  q.offset = 50;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{}));
}

TEST_P(StoreConformanceTest, ListEqualCreationTimesOrderById) {
  ASSERT_OK(store_->Apply(Puts({Rec("b", 7), Rec("c", 7), Rec("a", 7)})).status());
  RecordQuery q = Query();
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"a", "b", "c"}));
  q.order = RecordQuery::Order::kCreatedDesc;
  EXPECT_EQ(ListIds(store_.get(), q), (Strings{"c", "b", "a"}));
}

TEST_P(StoreConformanceTest, ListWithoutEmbeddingsSkipsTheVectorOnly) {
  ASSERT_TRUE(Populate(store_.get()));
  RecordQuery q = Query();
  q.kinds = {Kind::kDecision};
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> with, store_->List(q));
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0].embedding, (std::vector<float>{1.0f, 2.0f}));
  q.with_embeddings = false;
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> without, store_->List(q));
  ASSERT_EQ(without.size(), 1u);
  EXPECT_TRUE(without[0].embedding.empty());
  EXPECT_EQ(without[0].embedder_id, "hashing-2");
  Memory expected = with[0];
  expected.embedding.clear();
  EXPECT_EQ(without[0], expected);
}

TEST_P(StoreConformanceTest, ListRejectsNegativeLimitOrOffset) {
  RecordQuery q = Query();
  q.limit = -1;
  auto listed = store_->List(q);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), StatusCode::kInvalidArgument);
  q.limit = 0;
  q.offset = -3;
  auto counted = store_->Count(q);
  ASSERT_FALSE(counted.ok());
  EXPECT_EQ(counted.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace msp::conformance
