// The Store conformance tests of records (see store_conformance.h): every
// field and enum value round-trips, a put replaces the whole record, deletes
// and the atomicity of a batch, GetMany and Scan, and long records.
#include "tests/conformance/store_conformance.h"
#include "tests/conformance/store_conformance_util.h"
#include "tests/support/test_util.h"
#include "index/index.h"

#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace msp::conformance {
namespace {

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

}  // namespace
}  // namespace msp::conformance
