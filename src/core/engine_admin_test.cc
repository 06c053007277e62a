// Engine tests of the administrative side, over the real parts
// (engine_fixture.h): two openers of one store, reindex, export and import,
// another embedder refused, typed Commit writes with compare-and-swap, and
// what access levels let retrieval, lists and stats show.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/engine_fixture.h"
#include "msp/memory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

using testing::FakeClock;

TEST_F(EngineTest, TwoOpenersSeeEachOthersWrites) {
  auto other = Open(options_);
  ASSERT_NE(other, nullptr);
  auto w = other->Write(Req("The staging database password rotates monthly", Ns()));
  ASSERT_TRUE(w.ok());
  auto hits = Search(*engine_, Ns(), "staging database rotation");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].memory.id, w->id);
  ASSERT_TRUE(engine_->Delete(Ns(), w->id, "obsolete", "").ok());
  EXPECT_TRUE(Search(*other, Ns(), "staging database rotation").empty());
}

TEST_F(EngineTest, ReindexGivesTheSameResults) {
  for (const char* t : {"Quarterly report is due on the fifth", "The VPN needs the new certificate",
                        "Lunch orders go in the shared sheet"}) {
    ASSERT_TRUE(engine_->Write(Req(t, Ns())).ok());
  }
  auto before = Search(*engine_, Ns(), "VPN certificate");
  ASSERT_TRUE(engine_->Reindex().ok());
  auto after = Search(*engine_, Ns(), "VPN certificate");
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].memory.id, after[i].memory.id);
  std::filesystem::remove_all(options_.store.data_dir + "/lexical");
  auto fresh = Open(options_);
  ASSERT_NE(fresh, nullptr);
  auto rebuilt = Search(*fresh, Ns(), "VPN certificate");
  ASSERT_FALSE(rebuilt.empty());
  EXPECT_EQ(rebuilt[0].memory.id, before[0].memory.id);
}

TEST_F(EngineTest, ExportImportRoundTrip) {
  ASSERT_TRUE(engine_->Write(Req("Ann prefers tea over coffee after lunch", Ns())).ok());
  EpisodeStep s;
  s.ns = Ns();
  s.ns.session = "s9";
  s.content_json = R"({"text":"hello there, Привіт","extra":[1,2]})";
  s.tool_name = "search";
  ASSERT_TRUE(engine_->AddEpisode(s).ok());
  Namespace acme;
  acme.tenant = "acme";
  std::ostringstream out1;
  auto n = engine_->Export(acme, out1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2);
  Options o2 = options_;
  o2.store.data_dir = dir_ + "/copy";
  auto copy = Open(o2);
  ASSERT_NE(copy, nullptr);
  std::istringstream in(out1.str());
  auto rep = copy->Import(in, "restorer");
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  EXPECT_EQ(rep->applied, 2);
  std::ostringstream out2;
  ASSERT_TRUE(copy->Export(acme, out2).ok());
  EXPECT_EQ(out1.str(), out2.str());
  EXPECT_EQ(Search(*copy, Ns(), "tea or coffee").size(), 1u);
}

TEST_F(EngineTest, ImportIsAllOrNothing) {
  std::istringstream in(
      "{\"text\":\"a valid record of sufficient length\",\"namespace\":{\"tenant\":\"acme\"}}\n"
      "{\"text\":\"second\",\"kind\":\"gossip\"}\n");
  auto before = engine_->GetStats(Namespace{});
  ASSERT_TRUE(before.ok());
  auto rep = engine_->Import(in, "");
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rep.status().message().find("line 2"), std::string::npos) << rep.status().message();
  auto after = engine_->GetStats(Namespace{});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->last_seq, before->last_seq);
}

TEST_F(EngineTest, ImportNeverReplacesAnotherTenantsRecord) {
  ASSERT_OK_AND_ASSIGN(WriteResult theirs, engine_->Write(Req("Ann keeps the launch codes in the blue binder", Ns("acme"))));
  Namespace acme;
  acme.tenant = "acme";
  // Re-importing one's own record by id replaces it.
  std::istringstream own("{\"id\":\"" + theirs.id +
                         "\",\"text\":\"Ann keeps the launch codes in the red binder\",\"namespace\":{\"tenant\":\"acme\"}}\n");
  ASSERT_OK(engine_->Import(own, "restorer").status());
  ASSERT_OK_AND_ASSIGN(Memory replaced, engine_->Get(acme, theirs.id));
  EXPECT_EQ(replaced.text, "Ann keeps the launch codes in the red binder");

  // Another tenant naming the same id gets the answer an unknown id gets
  // (no existence oracle): its line lands under a fresh id of its own, and
  // the first tenant's record is untouched.
  std::istringstream other(
      "{\"text\":\"an innocent record of another tenant\",\"namespace\":{\"tenant\":\"evil\"}}\n"
      "{\"id\":\"" + theirs.id +
      "\",\"text\":\"overwritten by another tenant\",\"namespace\":{\"tenant\":\"evil\"}}\n");
  ASSERT_OK_AND_ASSIGN(ImportReport rep, engine_->Import(other, "evil"));
  EXPECT_EQ(rep.lines, 2);
  EXPECT_EQ(rep.applied, 2);
  ASSERT_OK_AND_ASSIGN(Memory kept, engine_->Get(acme, theirs.id));
  EXPECT_EQ(kept.text, "Ann keeps the launch codes in the red binder");
  EXPECT_EQ(kept.ns.tenant, "acme");
  Namespace evil;
  evil.tenant = "evil";
  ASSERT_OK_AND_ASSIGN(auto stats, engine_->GetStats(evil));
  EXPECT_EQ(stats.records, 2);
}

// Files at rest: the data directory and every directory msp makes in it are
// 0700; msp.db, its WAL and shared-memory files and the vector index files
// are 0600 (the lexical index's files are Xapian's, inside its 0700 folder).
TEST_F(EngineTest, DataDirectoryAndFilesArePrivate) {
  ASSERT_OK(engine_->Write(Req("Ann keeps the launch codes in the blue binder", Ns("acme"))).status());
  ASSERT_OK(engine_->Reindex());
  namespace fs = std::filesystem;
  const fs::path data(options_.store.data_dir);
  auto mode = [](const fs::path& p) { return static_cast<unsigned>(fs::status(p).permissions()) & 0777u; };
  EXPECT_EQ(mode(data), 0700u);
  EXPECT_EQ(mode(data / "msp.db"), 0600u);
  EXPECT_EQ(mode(data / "msp.db-wal"), 0600u);
  size_t files = 0;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(data)) {
    if (e.is_directory()) {
      EXPECT_EQ(mode(e.path()), 0700u) << e.path();
    } else if (e.is_regular_file() && e.path().parent_path().filename() != "lexical") {
      EXPECT_EQ(mode(e.path()), 0600u) << e.path();
      ++files;
    }
  }
  EXPECT_GE(files, 3u);  // msp.db, its WAL and shared memory at least
}

TEST_F(EngineTest, AnotherEmbedderIsRefused) {
  Options o = options_;
  o.embedder.dimension = 128;
  auto r = MemoryLayer::Open(o, clock_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("hashing"), std::string::npos);
}

TEST_F(EngineTest, WriteRefusesCorrectionsWhichOnlyMissionMemoryRecords) {
  WriteRequest r = Req("The operator said: here is my whole raw prompt, verbatim, to keep", Ns());
  r.kind = Kind::kCorrection;
  auto refused = engine_->Write(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("correction add"), std::string::npos) << refused.status().message();
  auto batch = engine_->WriteMany({Req("an ordinary preference that is fine to keep", Ns()), r});
  ASSERT_FALSE(batch.ok());
  ListRequest all;
  all.scope = Ns();
  ASSERT_OK_AND_ASSIGN(auto records, engine_->List(all));
  EXPECT_TRUE(records.empty());
}

// ---- Commit: typed administrative writes ----

Memory Typed(Kind kind, const Namespace& ns, const std::string& text, int access_level = 0) {
  Memory m;
  m.ns = ns;
  m.kind = kind;
  m.layer = DefaultLayer(kind);
  m.text = text;
  m.body_json = R"({"type":"test"})";
  m.access_level = access_level;
  return m;
}

TEST_F(EngineTest, CommitStoresTypedRecordsSearchableAndAudited) {
  RecordBatch b;
  b.scope = Ns();
  b.puts = {Typed(Kind::kDecision, Ns(), "Adopt PostgreSQL for the shared mission store"),
            Typed(Kind::kEvent, Ns(), "")};  // a log entry: no text
  b.actor = "mission";
  b.reason = "decision add";
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> stored, engine_->Commit(b));
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_FALSE(stored[0].id.empty());
  EXPECT_GT(stored[0].seq, 0);
  EXPECT_GT(stored[1].seq, stored[0].seq);
  EXPECT_EQ(stored[0].created_at, clock_->NowMs());

  auto hits = Search(*engine_, Ns(), "postgresql mission store");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].memory.id, stored[0].id);
  for (const SearchHit& h : hits) EXPECT_NE(h.memory.id, stored[1].id);

  ASSERT_OK_AND_ASSIGN(Memory log, engine_->Get(Ns(), stored[1].id));
  EXPECT_EQ(log.body_json, R"({"type":"test"})");
  ASSERT_OK_AND_ASSIGN(auto audit, engine_->Audit(Ns(), stored[0].id, 10));
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action, AuditAction::kWrite);
  EXPECT_EQ(audit[0].actor, "mission");
  EXPECT_EQ(audit[0].reason, "decision add");
}

TEST_F(EngineTest, CommitCompareAndSwapRefusesAStaleEdit) {
  RecordBatch create;
  create.scope = Ns();
  create.puts = {Typed(Kind::kPrinciple, Ns(), "Prefer boring technology, version one")};
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> v1, engine_->Commit(create));

  RecordBatch edit;
  edit.scope = Ns();
  edit.puts = {v1[0]};
  edit.puts[0].text = "Prefer boring technology, version two";
  edit.expected_seq = {v1[0].seq};
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> v2, engine_->Commit(edit));
  EXPECT_EQ(v2[0].id, v1[0].id);
  EXPECT_EQ(v2[0].created_at, v1[0].created_at);

  RecordBatch stale = edit;
  stale.puts[0].text = "Prefer shiny technology";
  auto refused = engine_->Commit(stale);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kConflict);
  EXPECT_NE(refused.status().message().find(std::to_string(v2[0].seq)), std::string::npos)
      << refused.status().message();
  ASSERT_OK_AND_ASSIGN(Memory now, engine_->Get(Ns(), v1[0].id));
  EXPECT_EQ(now.text, "Prefer boring technology, version two");

  ASSERT_OK_AND_ASSIGN(auto audit, engine_->Audit(Ns(), v1[0].id, 10));
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[0].action, AuditAction::kUpdate);
}

TEST_F(EngineTest, CommitRefusesBadBatchesAndWritesNothing) {
  const Namespace other = Ns("other-tenant");
  struct Case {
    const char* name;
    RecordBatch batch;
    StatusCode code;
    const char* message;
  };
  auto one = [&](Memory m) {
    RecordBatch b;
    b.scope = Ns();
    b.puts = {Typed(Kind::kDecision, Ns(), "a good record that must not land"), std::move(m)};
    return b;
  };
  std::vector<Case> cases;
  cases.push_back({"outside scope", one(Typed(Kind::kDecision, other, "not mine")),
                   StatusCode::kInvalidArgument, "outside the scope"});
  cases.push_back({"episode", one(Typed(Kind::kEpisode, Ns(), "a step")), StatusCode::kInvalidArgument,
                   "AddEpisode"});
  Memory bad_level = Typed(Kind::kDecision, Ns(), "too secret", kMaxAccessLevel + 1);
  cases.push_back({"access level", one(bad_level), StatusCode::kInvalidArgument, "access_level"});
  Memory bad_body = Typed(Kind::kDecision, Ns(), "bad body");
  bad_body.body_json = "[1,2]";
  cases.push_back({"body", one(bad_body), StatusCode::kInvalidArgument, "body"});
  Memory bad_utf8 = Typed(Kind::kDecision, Ns(), "bad \xc3\x28 text");
  cases.push_back({"utf8", one(bad_utf8), StatusCode::kInvalidArgument, "UTF-8"});
  RecordBatch mismatched = one(Typed(Kind::kDecision, Ns(), "fine"));
  mismatched.expected_seq = {0};
  cases.push_back({"expected_seq size", mismatched, StatusCode::kInvalidArgument, "expected_seq"});
  RecordBatch missing_delete = one(Typed(Kind::kDecision, Ns(), "fine"));
  missing_delete.deletes = {"no-such-id"};
  cases.push_back({"delete missing", missing_delete, StatusCode::kNotFound, "no-such-id"});

  for (const Case& c : cases) {
    auto r = engine_->Commit(c.batch);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), c.code) << c.name << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.name << ": " << r.status().message();
  }
  ListRequest all;
  all.scope.tenant = "acme";
  all.limit = 0;
  ASSERT_OK_AND_ASSIGN(auto records, engine_->List(all));
  EXPECT_TRUE(records.empty());
}

TEST_F(EngineTest, CommitNeverReplacesAnotherTenantsRecord) {
  RecordBatch theirs;
  theirs.scope = Ns("other-tenant");
  theirs.puts = {Typed(Kind::kEntity, Ns("other-tenant"), "their entity")};
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> stored, engine_->Commit(theirs));

  RecordBatch mine;
  mine.scope = Ns();
  mine.puts = {Typed(Kind::kEntity, Ns(), "overwrite attempt")};
  mine.puts[0].id = stored[0].id;
  auto r = engine_->Commit(mine);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(Memory kept, engine_->Get(Ns("other-tenant"), stored[0].id));
  EXPECT_EQ(kept.text, "their entity");
}

TEST_F(EngineTest, AccessLevelLimitsRetrieveAndList) {
  RecordBatch b;
  b.scope = Ns();
  b.puts = {Typed(Kind::kDecision, Ns(), "reactor shutdown procedure open to all", 0),
            Typed(Kind::kDecision, Ns(), "reactor shutdown procedure for cleared staff", 5),
            Typed(Kind::kDecision, Ns(), "reactor shutdown procedure top secret", 9)};
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> stored, engine_->Commit(b));

  for (int clearance : {0, 5, 9}) {
    RetrieveRequest r;
    r.scope = Ns();
    r.query = "reactor shutdown procedure";
    r.top_k = 10;
    r.filter.max_access_level = clearance;
    ASSERT_OK_AND_ASSIGN(auto hits, engine_->Retrieve(r));
    for (const SearchHit& h : hits) EXPECT_LE(h.memory.access_level, clearance);
    EXPECT_EQ(hits.size(), clearance == 0 ? 1u : clearance == 5 ? 2u : 3u) << clearance;

    ListRequest l;
    l.scope = Ns();
    l.filter.max_access_level = clearance;
    ASSERT_OK_AND_ASSIGN(auto listed, engine_->List(l));
    EXPECT_EQ(listed.size(), hits.size()) << clearance;
    l.filter.tags = {"none"};  // the post-filtered path honours it too
    ASSERT_OK_AND_ASSIGN(listed, engine_->List(l));
    EXPECT_TRUE(listed.empty());
  }
  RetrieveRequest unlimited;
  unlimited.scope = Ns();
  unlimited.query = "reactor shutdown procedure";
  ASSERT_OK_AND_ASSIGN(auto all, engine_->Retrieve(unlimited));
  EXPECT_EQ(all.size(), 3u);
}

// A tag filter is applied to the store's rows page by page, the pages growing
// from a few times what is asked: records far past the first page are found,
// and limit and offset count matching records only.
TEST_F(EngineTest, ListWithATagFindsRecordsManyPagesDeep) {
  std::vector<std::string> rare;
  for (int i = 0; i < 150; ++i) {
    RecordBatch b;
    b.scope = Ns();
    b.puts = {Typed(Kind::kEvent, Ns(), "event " + std::to_string(i), 0)};
    if (i == 0 || i == 60 || i == 149) b.puts[0].tags = {"rare"};
    ASSERT_OK_AND_ASSIGN(std::vector<Memory> stored, engine_->Commit(b));
    if (i == 0 || i == 60 || i == 149) rare.push_back(stored[0].id);
    clock_->Advance(1000);
  }
  ListRequest l;
  l.scope = Ns();
  l.filter.tags = {"rare"};
  auto ids = [](const std::vector<Memory>& ms) {
    std::vector<std::string> out;
    for (const Memory& m : ms) out.push_back(m.id);
    return out;
  };
  ASSERT_OK_AND_ASSIGN(auto all, engine_->List(l));
  EXPECT_EQ(ids(all), rare);
  l.limit = 1;
  l.offset = 1;
  ASSERT_OK_AND_ASSIGN(auto second, engine_->List(l));
  EXPECT_EQ(ids(second), std::vector<std::string>{rare[1]});
  l.newest_first = true;
  l.limit = 2;
  l.offset = 0;
  ASSERT_OK_AND_ASSIGN(auto newest, engine_->List(l));
  EXPECT_EQ(ids(newest), (std::vector<std::string>{rare[2], rare[1]}));
  l.offset = 2;
  ASSERT_OK_AND_ASSIGN(auto oldest, engine_->List(l));
  EXPECT_EQ(ids(oldest), std::vector<std::string>{rare[0]});
}

TEST_F(EngineTest, StatsCountOnlyWhatTheClearanceSees) {
  RecordBatch b;
  b.scope = Ns();
  b.puts = {Typed(Kind::kDecision, Ns(), "open decision", 0), Typed(Kind::kDecision, Ns(), "cleared decision", 5),
            Typed(Kind::kProcedure, Ns(), "top secret procedure", 9)};
  ASSERT_OK(engine_->Commit(b).status());
  ASSERT_OK_AND_ASSIGN(Stats all, engine_->GetStats(Ns()));
  EXPECT_EQ(all.records, 3);
  for (auto [clearance, records] : {std::pair{0, 1}, std::pair{5, 2}, std::pair{9, 3}}) {
    ASSERT_OK_AND_ASSIGN(Stats s, engine_->GetStats(Ns(), clearance));
    EXPECT_EQ(s.records, records) << clearance;
    EXPECT_EQ(s.active, records) << clearance;
    int64_t by_kind = 0;
    for (const auto& [kind, n] : s.by_kind) {
      by_kind += n;
      if (clearance < 9) {
        EXPECT_NE(kind, "procedure") << clearance;  // the kind is not even named
      }
    }
    EXPECT_EQ(by_kind, records) << clearance;
  }
  auto bad = engine_->GetStats(Ns(), kMaxAccessLevel + 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("max_access_level"), std::string::npos);
}

}  // namespace
}  // namespace msp
