// The Store conformance tests (see store_conformance.h).
#include "tests/conformance/store_conformance.h"
#include "tests/support/test_util.h"
#include "index/index.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace msp::conformance {

void StoreConformanceTest::SetUp() {
  dir_ = ::msp::testing::MakeTestDir("msp-store");
  ASSERT_FALSE(dir_.empty()) << "cannot make a scratch directory";
  auto opened = GetParam().open(dir_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store_ = std::move(opened).value();
}

void StoreConformanceTest::TearDown() {
  store_.reset();
  ::msp::testing::RemoveTestDir(dir_);
}

namespace {


// A small valid record.
Memory Rec(const std::string& id, TimeMs created_at, Kind kind = Kind::kFact,
           const std::string& tenant = "t1") {
  Memory m;
  m.id = id;
  m.ns.tenant = tenant;
  m.kind = kind;
  m.layer = DefaultLayer(kind);
  m.text = "text of " + id;
  m.created_at = created_at;
  m.updated_at = created_at;
  return m;
}

WriteBatch Puts(std::vector<Memory> records) {
  WriteBatch b;
  b.puts = std::move(records);
  return b;
}

WriteBatch Deletes(std::vector<std::string> ids) {
  WriteBatch b;
  b.deletes = std::move(ids);
  return b;
}

std::vector<std::string> Ids(const std::vector<Memory>& records) {
  std::vector<std::string> ids;
  for (const Memory& m : records) ids.push_back(m.id);
  return ids;
}

// A record with every field set to something other than its default.
Memory FullRecord(const std::string& id) {
  Memory m;
  m.id = id;
  m.ns = Namespace{"tenant-ä", "ann", "agent-7", "sess-1", "mission-x", "op-9"};
  m.layer = Layer::kPractitioner;
  m.kind = Kind::kCorrection;
  m.text = "Zürich → 東京 🚀 \"quoted\" and 'single' \\ back\nnew line\ttab";
  m.body_json = R"({"class":"naming","nested":{"a":[1,2,3]},"s":"ünï"})";
  for (int i = 0; i < 60; ++i) m.tags.push_back("tag-" + std::to_string(i));
  m.tags.push_back("ünïcode-tag 🏷");
  m.tags.push_back("");
  m.source = "consolidation";
  m.sensitivity = Sensitivity::kMedium;
  m.criticality = Criticality::kCritical;
  m.confidence = 0.123456789012345;
  m.created_at = 1764496800123;
  m.updated_at = 1764496800999;
  m.expires_at = 1796032800000;
  m.valid_at = 1700000000000;
  m.invalid_at = 1800000000000;
  m.access_count = 42;
  m.last_accessed = 1764496801000;
  m.provenance = {{"episode", "0190-abc", ""},
                  {"commit", "deadbeef", "src/main.cc:10"},
                  {"url", "https://example.com/ü?q=1&r=2", "section 3"}};
  m.state = RecordState::kSuperseded;
  m.supersedes = "older-id";
  m.superseded_by = "newer-id";
  m.step_number = 17;
  m.access_level = 7;
  for (int i = 0; i < 384; ++i) {
    m.embedding.push_back(std::sin(static_cast<float>(i)) * (i % 2 == 0 ? 1.0f : -1e-30f));
  }
  m.embedding.push_back(3.4e38f);
  m.embedder_id = "hashing-384";
  return m;
}

// ---- Round trips ----

TEST_P(StoreConformanceTest, RoundTripsEveryField) {
  Memory full = FullRecord("full-1");
  Memory bare = Rec("bare-1", 5);  // empty tags, provenance, embedding; default body
  bare.body_json = "{}";
  Memory empty_text = Rec("empty-text", 6);
  empty_text.text = "";
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts({full, bare, empty_text})));
  ASSERT_EQ(seqs.size(), 3u);

  full.seq = seqs[0];
  bare.seq = seqs[1];
  empty_text.seq = seqs[2];
  for (const Memory* want : {&full, &bare, &empty_text}) {
    ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get(want->id));
    ASSERT_TRUE(got.has_value()) << want->id;
    EXPECT_EQ(*got, *want) << want->id;
  }
  // Bit-exact embedding, including the tiny negative values.
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get("full-1"));
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->embedding.size(), full.embedding.size());
  EXPECT_EQ(0, std::memcmp(got->embedding.data(), full.embedding.data(),
                           full.embedding.size() * sizeof(float)));
}

TEST_P(StoreConformanceTest, RoundTripsEveryEnumValue) {
  std::vector<Memory> records;
  const std::vector<Kind> kinds = {Kind::kEpisode,  Kind::kFact,          Kind::kProcedure,
                                   Kind::kDecision, Kind::kCorrection,    Kind::kDocumentChunk,
                                   Kind::kArtifact};
  const std::vector<Layer> layers = {Layer::kEpisodic, Layer::kSemantic, Layer::kProcedural,
                                     Layer::kDomain,   Layer::kWorkflow, Layer::kPractitioner};
  const std::vector<Sensitivity> sensitivities = {Sensitivity::kLow, Sensitivity::kMedium,
                                                  Sensitivity::kHigh};
  const std::vector<Criticality> criticalities = {Criticality::kLow, Criticality::kNormal,
                                                  Criticality::kHigh, Criticality::kCritical};
  const std::vector<RecordState> states = {RecordState::kActive, RecordState::kSuperseded};
  for (size_t i = 0; i < 12; ++i) {
    Memory m = Rec("enum-" + std::to_string(i), static_cast<TimeMs>(i + 1));
    m.kind = kinds[i % kinds.size()];
    m.layer = layers[i % layers.size()];
    m.sensitivity = sensitivities[i % sensitivities.size()];
    m.criticality = criticalities[i % criticalities.size()];
    m.state = states[i % states.size()];
    records.push_back(m);
  }
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts(records)));
  ASSERT_EQ(seqs.size(), records.size());
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> got, store_->GetMany(Ids(records)));
  ASSERT_EQ(got.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].seq = seqs[i];
    EXPECT_EQ(got[i], records[i]) << records[i].id;
  }
}

TEST_P(StoreConformanceTest, GetOfMissingIdIsEmpty) {
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get("no-such-id"));
  EXPECT_FALSE(got.has_value());
}

TEST_P(StoreConformanceTest, PutReplacesWholeRecordById) {
  Memory first = FullRecord("r1");
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> s1, store_->Apply(Puts({first})));
  Memory second = Rec("r1", 99, Kind::kDecision);
  second.text = "replaced";
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> s2, store_->Apply(Puts({second})));
  ASSERT_EQ(s1.size(), 1u);
  ASSERT_EQ(s2.size(), 1u);
  EXPECT_GT(s2[0], s1[0]);

  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get("r1"));
  ASSERT_TRUE(got.has_value());
  second.seq = s2[0];
  EXPECT_EQ(*got, second);  // nothing of the first version is left
  RecordQuery all;
  all.scope.tenant = "t1";
  ASSERT_OK_AND_ASSIGN(int64_t n, store_->Count(all));
  EXPECT_EQ(n, 1);
}

TEST_P(StoreConformanceTest, ReplaceMovesRecordBetweenTenants) {
  ASSERT_OK(store_->Apply(Puts({Rec("r1", 1, Kind::kFact, "a")})).status());
  ASSERT_OK(store_->Apply(Puts({Rec("r1", 1, Kind::kFact, "b")})).status());
  RecordQuery qa;
  qa.scope.tenant = "a";
  RecordQuery qb;
  qb.scope.tenant = "b";
  ASSERT_OK_AND_ASSIGN(int64_t na, store_->Count(qa));
  ASSERT_OK_AND_ASSIGN(int64_t nb, store_->Count(qb));
  EXPECT_EQ(na, 0);
  EXPECT_EQ(nb, 1);
}

TEST_P(StoreConformanceTest, RejectsRecordWithEmptyIdAndAppliesNothing) {
  WriteBatch b = Puts({Rec("good", 1), Rec("", 2)});
  auto result = store_->Apply(b);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get("good"));
  EXPECT_FALSE(got.has_value());
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, 0);
}

// ---- Deletes and atomicity ----

TEST_P(StoreConformanceTest, DeleteRemovesRecordAndAppendsChange) {
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> put, store_->Apply(Puts({Rec("a", 1), Rec("b", 2)})));
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> del, store_->Apply(Deletes({"a"})));
  ASSERT_EQ(del.size(), 1u);
  EXPECT_GT(del[0], put[1]);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> a, store_->Get("a"));
  EXPECT_FALSE(a.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> b, store_->Get("b"));
  EXPECT_TRUE(b.has_value());
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(put[1], 0));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].seq, del[0]);
  EXPECT_EQ(changes[0].record_id, "a");
  EXPECT_EQ(changes[0].op, ChangeOp::kDelete);
}

TEST_P(StoreConformanceTest, ChangesNameTheTenantOfTheirRecordDeletesIncluded) {
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> put,
                       store_->Apply(Puts({Rec("x", 1, Kind::kFact, "ta"), Rec("y", 2, Kind::kFact, "tb")})));
  WriteBatch both = Deletes({"y", "x"});
  ASSERT_OK(store_->Apply(both).status());
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].record_id, "x");
  EXPECT_EQ(changes[0].tenant, "ta");
  EXPECT_EQ(changes[1].record_id, "y");
  EXPECT_EQ(changes[1].tenant, "tb");
  EXPECT_EQ(changes[2].op, ChangeOp::kDelete);
  EXPECT_EQ(changes[2].record_id, "y");
  EXPECT_EQ(changes[2].tenant, "tb");
  EXPECT_EQ(changes[3].op, ChangeOp::kDelete);
  EXPECT_EQ(changes[3].record_id, "x");
  EXPECT_EQ(changes[3].tenant, "ta");
}

// A put is neutral when the record holds nothing to index (no text, no
// vector) and held nothing before the batch; deletes never are.
TEST_P(StoreConformanceTest, ChangesSayWhichPutsHoldNothingToIndex) {
  auto bare = [](const std::string& id) {
    Memory m = Rec(id, 1, Kind::kEvent);
    m.text.clear();
    return m;
  };
  Memory vector_only = bare("v");
  vector_only.embedding = {0.5f, 0.25f};
  Memory texted = Rec("t", 1, Kind::kEvent);
  ASSERT_OK(store_->Apply(Puts({bare("log"), vector_only, texted})).status());
  ASSERT_OK(store_->Apply(Puts({bare("log"), bare("t")})).status());  // again; text taken away
  ASSERT_OK(store_->Apply(Puts({bare("t")})).status());                // held nothing since
  ASSERT_OK(store_->Apply(Puts({bare("v")})).status());                // its vector taken away
  ASSERT_OK(store_->Apply(Deletes({"log"})).status());
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  std::vector<std::pair<std::string, bool>> got;
  for (const Change& c : changes) got.emplace_back(c.record_id, c.neutral);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, bool>>{{"log", true},
                                                            {"v", false},
                                                            {"t", false},
                                                            {"log", true},
                                                            {"t", false},
                                                            {"t", true},
                                                            {"v", false},
                                                            {"log", false}}));
}

TEST_P(StoreConformanceTest, DeletingMissingIdFailsAndChangesNothing) {
  ASSERT_OK(store_->Apply(Puts({Rec("kept", 1)})).status());
  ASSERT_OK_AND_ASSIGN(int64_t seq_before, store_->LastSeq());
  ASSERT_OK_AND_ASSIGN(int64_t audit_before, store_->CountAudit("t1"));

  WriteBatch b;
  Memory replaced = Rec("kept", 1);
  replaced.text = "should not land";
  b.puts = {Rec("new-good", 2), replaced};
  b.deletes = {"kept", "no-such-id"};
  AuditEvent e;
  e.tenant = "t1";
  e.record_id = "new-good";
  b.audit = {e};
  b.meta = {{"cursor", "7"}};
  auto result = store_->Apply(b);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("no-such-id"), std::string::npos)
      << result.status().message();

  ASSERT_OK_AND_ASSIGN(std::optional<Memory> good, store_->Get("new-good"));
  EXPECT_FALSE(good.has_value());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> kept, store_->Get("kept"));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->text, "text of kept");
  ASSERT_OK_AND_ASSIGN(int64_t seq_after, store_->LastSeq());
  EXPECT_EQ(seq_after, seq_before);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(seq_before, 0));
  EXPECT_TRUE(changes.empty());
  ASSERT_OK_AND_ASSIGN(int64_t audit_after, store_->CountAudit("t1"));
  EXPECT_EQ(audit_after, audit_before);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> cursor, store_->GetMeta("cursor"));
  EXPECT_FALSE(cursor.has_value());

  // The next successful batch continues right after the old last seq.
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> next, store_->Apply(Puts({Rec("later", 3)})));
  ASSERT_EQ(next.size(), 1u);
  EXPECT_GT(next[0], seq_before);
}

TEST_P(StoreConformanceTest, DeletingSameIdTwiceInOneBatchFails) {
  ASSERT_OK(store_->Apply(Puts({Rec("a", 1)})).status());
  auto result = store_->Apply(Deletes({"a", "a"}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> a, store_->Get("a"));
  EXPECT_TRUE(a.has_value());
}

TEST_P(StoreConformanceTest, PutThenDeleteOfSameIdInOneBatch) {
  WriteBatch b = Puts({Rec("tmp", 1)});
  b.deletes = {"tmp"};
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(b));
  ASSERT_EQ(seqs.size(), 2u);
  EXPECT_LT(seqs[0], seqs[1]);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get("tmp"));
  EXPECT_FALSE(got.has_value());
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].op, ChangeOp::kPut);
  EXPECT_EQ(changes[1].op, ChangeOp::kDelete);
}

// ---- The change sequence ----

TEST_P(StoreConformanceTest, ChangeSequenceIsStrictlyIncreasingOverPutsAndDeletes) {
  std::vector<int64_t> all;
  std::vector<std::pair<std::string, ChangeOp>> expected;
  for (int round = 0; round < 5; ++round) {
    WriteBatch b;
    for (int i = 0; i < 3; ++i) {
      b.puts.push_back(Rec("r" + std::to_string(round) + "-" + std::to_string(i), round * 10 + i));
      expected.emplace_back(b.puts.back().id, ChangeOp::kPut);
    }
    if (round > 0) {
      b.deletes.push_back("r" + std::to_string(round - 1) + "-0");
      expected.emplace_back(b.deletes.back(), ChangeOp::kDelete);
    }
    ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(b));
    ASSERT_EQ(seqs.size(), b.puts.size() + b.deletes.size());
    all.insert(all.end(), seqs.begin(), seqs.end());
    // Each put's stored seq is the number its change got.
    for (size_t i = 0; i < b.puts.size(); ++i) {
      ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get(b.puts[i].id));
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->seq, seqs[i]);
    }
  }
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1], all[i]) << i;

  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  ASSERT_EQ(changes.size(), expected.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    EXPECT_EQ(changes[i].seq, all[i]);
    EXPECT_EQ(changes[i].record_id, expected[i].first);
    EXPECT_EQ(changes[i].op, expected[i].second);
  }
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, all.back());
}

TEST_P(StoreConformanceTest, ChangesSinceHonoursAfterAndLimit) {
  std::vector<Memory> records;
  for (int i = 0; i < 10; ++i) records.push_back(Rec("c" + std::to_string(i), i));
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts(records)));
  ASSERT_EQ(seqs.size(), 10u);

  ASSERT_OK_AND_ASSIGN(std::vector<Change> page, store_->ChangesSince(seqs[2], 4));
  ASSERT_EQ(page.size(), 4u);
  for (size_t i = 0; i < page.size(); ++i) {
    EXPECT_EQ(page[i].seq, seqs[3 + i]);
    EXPECT_EQ(page[i].record_id, "c" + std::to_string(3 + i));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<Change> rest, store_->ChangesSince(seqs[7], 0));
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[1].seq, seqs[9]);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> none, store_->ChangesSince(seqs[9], 0));
  EXPECT_TRUE(none.empty());
}

TEST_P(StoreConformanceTest, EmptyStoreHasNoChanges) {
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, 0);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  EXPECT_TRUE(changes.empty());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(WriteBatch{}));
  EXPECT_TRUE(seqs.empty());
  ASSERT_OK_AND_ASSIGN(last, store_->LastSeq());
  EXPECT_EQ(last, 0);
}

TEST_P(StoreConformanceTest, LargeBatchLandsWhole) {
  std::vector<Memory> records;
  for (int i = 0; i < 10000; ++i) {
    Memory m = Rec("big-" + std::to_string(100000 + i), i);
    m.tags = {"a", "b"};
    records.push_back(std::move(m));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts(records)));
  ASSERT_EQ(seqs.size(), records.size());
  EXPECT_EQ(seqs.back() - seqs.front(), 9999);
  RecordQuery q;
  q.scope.tenant = "t1";
  ASSERT_OK_AND_ASSIGN(int64_t n, store_->Count(q));
  EXPECT_EQ(n, 10000);
}

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

// ---- Compare-and-swap ----

TEST_P(StoreConformanceTest, ExpectSeqZeroMeansTheIdMustNotExist) {
  WriteBatch create = Puts({Rec("cas", 100)});
  create.expect_seq = {{"cas", 0}};
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(create));
  ASSERT_EQ(seqs.size(), 1u);

  Memory again = Rec("cas", 200);
  again.text = "second create";
  WriteBatch twice = Puts({again, Rec("other", 100)});
  twice.expect_seq = {{"cas", 0}};
  auto second = store_->Apply(twice);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kConflict);
  EXPECT_NE(second.status().message().find(std::to_string(seqs[0])), std::string::npos)
      << second.status().message();
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> kept, store_->Get("cas"));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->text, "text of cas");
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> other, store_->Get("other"));
  EXPECT_FALSE(other.has_value());  // the whole batch was refused
}

TEST_P(StoreConformanceTest, ExpectSeqMustMatchTheCurrentSeq) {
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> first, store_->Apply(Puts({Rec("v", 100)})));
  Memory edit = Rec("v", 100);
  edit.text = "edit one";
  WriteBatch one = Puts({edit});
  one.expect_seq = {{"v", first[0]}};
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> second, store_->Apply(one));

  Memory stale = Rec("v", 100);
  stale.text = "edit from a stale read";
  WriteBatch two = Puts({stale});
  two.expect_seq = {{"v", first[0]}};
  auto refused = store_->Apply(two);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kConflict);
  EXPECT_NE(refused.status().message().find(std::to_string(second[0])), std::string::npos)
      << refused.status().message();
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> now, store_->Get("v"));
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->text, "edit one");
  EXPECT_EQ(now->seq, second[0]);

  WriteBatch missing = Puts({Rec("w", 100)});
  missing.expect_seq = {{"w", 5}};  // w does not exist
  auto absent = store_->Apply(missing);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kConflict);
}

TEST_P(StoreConformanceTest, ConcurrentCompareAndSwapLetsExactlyOneWinEachRound) {
  Memory counter = Rec("counter", 100);
  counter.text = "0";
  ASSERT_OK(store_->Apply(Puts({counter})).status());
  constexpr int kThreads = 4;
  constexpr int kIncrements = 25;
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int done = 0; done < kIncrements;) {
        auto got = store_->Get("counter");
        if (!got.ok() || !got->has_value()) return;
        Memory m = **got;
        m.text = std::to_string(std::stoi(m.text) + 1);
        WriteBatch b = Puts({m});
        b.expect_seq = {{m.id, m.seq}};
        auto applied = store_->Apply(b);
        if (applied.ok()) {
          ++done;
        } else if (applied.status().code() == StatusCode::kConflict) {
          ++conflicts;
        } else {
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> final_record, store_->Get("counter"));
  ASSERT_TRUE(final_record.has_value());
  EXPECT_EQ(final_record->text, std::to_string(kThreads * kIncrements));
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

// A long record (policy.max_record_bytes, 1 MiB by default) is stored whole,
// and a lexical index rebuilt from the store's scan (as reindex and the
// repair of a damaged index do) holds it as passages: found once, by the
// passage that holds the words asked for.
TEST_P(StoreConformanceTest, LongRecordsRoundTripAndReindexAsPassages) {
  Memory m = Rec("long-1", 1000, Kind::kEpisode);
  m.ns.session = "s1";
  m.step_number = 1;
  m.text.clear();
  for (int i = 0; m.text.size() < (size_t{1} << 20) - 200; ++i) {
    m.text += "Sentence " + std::to_string(i) + " of a very long turn, ünïcode included. ";
    if (i == 9000) m.text += "The heron waded past the lighthouse. ";
  }
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> seqs, store_->Apply(Puts({m})));
  m.seq = seqs[0];
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get(m.id));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, m);

  std::vector<Memory> scanned;
  ASSERT_OK(store_->Scan([&](const Memory& r) {
    scanned.push_back(r);
    return true;
  }));
  ASSERT_OK_AND_ASSIGN(auto index, OpenLexicalIndex(dir_ + "/lexical", RetrievalOptions{}));
  ASSERT_OK(index->Apply(scanned, {}, seqs[0]));
  IndexQuery q;
  q.scope.tenant = "t1";
  q.text = "heron lighthouse";
  q.limit = 10;
  ASSERT_OK_AND_ASSIGN(std::vector<LexicalHit> hits, index->SearchEpisodes(q));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].hit.id, m.id);
  const std::string passage = m.text.substr(hits[0].passage_begin, hits[0].passage_end - hits[0].passage_begin);
  EXPECT_NE(passage.find("The heron waded past the lighthouse."), std::string::npos) << passage;
}

// ---- GetMany, Scan ----

TEST_P(StoreConformanceTest, GetManyKeepsRequestOrderAndSkipsMissing) {
  Memory c = Rec("c", 3);
  c.embedding = {0.5f};
  c.embedder_id = "e";
  ASSERT_OK(store_->Apply(Puts({Rec("a", 1), Rec("b", 2), c})).status());
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> got,
                       store_->GetMany({"c", "missing", "a", "also-missing"}));
  EXPECT_EQ(Ids(got), (Strings{"c", "a"}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].embedding, (std::vector<float>{0.5f}));
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> bare, store_->GetMany({"c"}, false));
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_TRUE(bare[0].embedding.empty());
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> none, store_->GetMany({}));
  EXPECT_TRUE(none.empty());
}

TEST_P(StoreConformanceTest, ScanVisitsEveryRecordInIdOrder) {
  std::vector<Memory> records;
  for (int i = 999; i >= 0; --i) {  // inserted in reverse id order
    char id[16];
    std::snprintf(id, sizeof(id), "s%04d", i);
    records.push_back(Rec(id, i, Kind::kFact, i % 2 == 0 ? "t1" : "t2"));
  }
  ASSERT_OK(store_->Apply(Puts(records)).status());
  std::vector<std::string> seen;
  ASSERT_OK(store_->Scan([&](const Memory& m) {
    seen.push_back(m.id);
    return true;
  }));
  ASSERT_EQ(seen.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 1000u);
}

TEST_P(StoreConformanceTest, ScanStopsWhenAskedAndMayUseTheStore) {
  std::vector<Memory> records;
  for (int i = 0; i < 50; ++i) records.push_back(Rec("k" + std::to_string(100 + i), i));
  ASSERT_OK(store_->Apply(Puts(records)).status());
  int visited = 0;
  bool lookups_ok = true;
  ASSERT_OK(store_->Scan([&](const Memory& m) {
    auto again = store_->Get(m.id);  // calling back into the store must not deadlock
    lookups_ok = lookups_ok && again.ok() && again->has_value();
    return ++visited < 10;
  }));
  EXPECT_EQ(visited, 10);
  EXPECT_TRUE(lookups_ok);
}

TEST_P(StoreConformanceTest, ScanOfEmptyStoreVisitsNothing) {
  int visited = 0;
  ASSERT_OK(store_->Scan([&](const Memory&) {
    ++visited;
    return true;
  }));
  EXPECT_EQ(visited, 0);
}

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

// ---- Several handles ----

TEST_P(StoreConformanceTest, SecondHandleSeesWrites) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> other, OpenAgain());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> s1, store_->Apply(Puts({Rec("from-first", 1)})));
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> seen, other->Get("from-first"));
  EXPECT_TRUE(seen.has_value());
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> s2, other->Apply(Puts({Rec("from-second", 2)})));
  EXPECT_GT(s2[0], s1[0]);
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> back, store_->Get("from-second"));
  EXPECT_TRUE(back.has_value());
  ASSERT_OK_AND_ASSIGN(int64_t last, store_->LastSeq());
  EXPECT_EQ(last, s2[0]);
}

TEST_P(StoreConformanceTest, WritesSurviveReopen) {
  ASSERT_OK(store_->Apply(Puts({FullRecord("durable")})).status());
  store_.reset();
  ASSERT_OK_AND_ASSIGN(store_, OpenAgain());
  ASSERT_OK_AND_ASSIGN(std::optional<Memory> got, store_->Get("durable"));
  ASSERT_TRUE(got.has_value());
  Memory want = FullRecord("durable");
  want.seq = got->seq;
  EXPECT_EQ(*got, want);
}

TEST_P(StoreConformanceTest, ConcurrentThreadsLoseNoWrites) {
  constexpr int kThreads = 4;
  constexpr int kBatches = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        auto applied = store_->Apply(Puts({Rec("th" + std::to_string(t) + "-" + std::to_string(b), b)}));
        if (!applied.ok()) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  RecordQuery q;
  q.scope.tenant = "t1";
  ASSERT_OK_AND_ASSIGN(int64_t n, store_->Count(q));
  EXPECT_EQ(n, kThreads * kBatches);
  ASSERT_OK_AND_ASSIGN(std::vector<Change> changes, store_->ChangesSince(0, 0));
  EXPECT_EQ(changes.size(), static_cast<size_t>(kThreads * kBatches));
}

}  // namespace

}  // namespace msp::conformance
