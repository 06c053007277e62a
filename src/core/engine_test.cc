// Engine tests over the real parts: SQLite store, Xapian index, exact vector
// index, hashing embedder and the rule-based extractor, in a temp directory.
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

#include "msp/memory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

using testing::FakeClock;

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("engine");
    ASSERT_FALSE(dir_.empty());
    clock_ = std::make_shared<FakeClock>(*ParseIso8601("2026-01-01T09:00:00Z"));
    options_.store.data_dir = dir_ + "/data";
    options_.store.synchronous = "normal";
    options_.consolidation.every_n_episodes = 4;
    options_.actor = "tester";
    engine_ = Open(options_);
  }
  void TearDown() override {
    engine_.reset();
    testing::RemoveTestDir(dir_);
  }

  std::unique_ptr<MemoryLayer> Open(const Options& o) {
    auto r = MemoryLayer::Open(o, clock_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  Namespace Ns(const std::string& tenant = "acme", const std::string& user = "ann") {
    Namespace ns;
    ns.tenant = tenant;
    ns.user = user;
    return ns;
  }

  WriteRequest Req(const std::string& text, const Namespace& ns) {
    WriteRequest r;
    r.ns = ns;
    r.text = text;
    r.tags = {"preference"};
    return r;
  }

  std::vector<SearchHit> Search(MemoryLayer& e, const Namespace& scope, const std::string& q, int k = 5) {
    RetrieveRequest r;
    r.scope = scope;
    r.query = q;
    r.top_k = k;
    auto hits = e.Retrieve(r);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<SearchHit>{};
  }

  std::string dir_;
  std::shared_ptr<FakeClock> clock_;
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
};

TEST_F(EngineTest, WriteThenRetrieveFindsIt) {
  auto w = engine_->Write(Req("Ann prefers dark roast coffee in the morning", Ns()));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(engine_->Write(Req("Ann is allergic to peanuts and avoids them", Ns())).ok());
  auto hits = Search(*engine_, Ns(), "what coffee does she like?");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].memory.id, w->id);
  EXPECT_GT(hits[0].score, 0.0);
  EXPECT_LE(hits[0].score, 1.0);
  EXPECT_EQ(hits[0].memory.access_count, 1);
  auto got = engine_->Get(Ns(), w->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->access_count, 1);
  EXPECT_EQ(got->text, "Ann prefers dark roast coffee in the morning");
}

// Access bookkeeping is buffered: searches write nothing themselves; the
// bumps reach the store when the engine closes (or before a write, or a
// read that returns records, or a second after the first), each counted.
TEST_F(EngineTest, AccessBumpsAreBatchedAndWrittenWhenTheEngineCloses) {
  auto w = engine_->Write(Req("Ann prefers dark roast coffee in the morning", Ns()));
  ASSERT_TRUE(w.ok());
  auto other = Open(options_);  // another process's view of the store
  ASSERT_NE(other, nullptr);
  auto count_seen_by = [&](MemoryLayer& e) {
    ListRequest l;
    l.scope = Ns();
    auto listed = e.List(l);
    EXPECT_TRUE(listed.ok());
    for (const Memory& m : listed.ok() ? *listed : std::vector<Memory>{}) {
      if (m.id == w->id) return m.access_count;
    }
    return int64_t{-1};
  };
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Search(*engine_, Ns(), "coffee").size(), 1u);
  EXPECT_EQ(count_seen_by(*other), 0);  // nothing written yet
  engine_.reset();
  EXPECT_EQ(count_seen_by(*other), 3);
  auto got = other->Get(Ns(), w->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->last_accessed, clock_->NowMs());
  // A write flushes the bumps before it.
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  engine_ = Open(options_);
  EXPECT_EQ(count_seen_by(*engine_), 3);
  ASSERT_TRUE(other->Write(Req("Ann is allergic to peanuts and avoids them", Ns())).ok());
  EXPECT_EQ(count_seen_by(*engine_), 4);
  // A search a second (of the engine's clock) after the oldest pending bump
  // flushes them all.
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  clock_->Advance(999);
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  EXPECT_EQ(count_seen_by(*engine_), 4);
  clock_->Advance(1);
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  EXPECT_EQ(count_seen_by(*engine_), 7);
}

// Concurrent WriteMany calls share transactions (group commit): every call
// gets its own results, every id it gets is stored, a fact written by many
// threads at once is stored once (later calls of a group merge into it),
// and each eviction past the per-user limit is reported exactly once.
TEST_F(EngineTest, ConcurrentWritersShareCommitsAndEachGetsItsOwnResults) {
  engine_.reset();
  options_.policy.max_items_per_user = 5;
  engine_ = Open(options_);
  constexpr int kThreads = 16;
  constexpr int kCalls = 12;
  std::mutex mu;
  std::vector<std::string> artifact_ids, shared_fact_ids;
  size_t evicted_reported = 0;
  std::set<std::string> evicted_ids;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        std::vector<WriteRequest> reqs;
        WriteRequest a = Req("artifact number " + std::to_string(c) + " of writer thread " + std::to_string(t), Ns());
        a.kind = Kind::kArtifact;
        reqs.push_back(a);
        // A fact of the thread's own user: past 5 of them, evictions.
        reqs.push_back(Req("writer " + std::to_string(t) + " fact number " + std::to_string(c) +
                               " zq" + std::to_string(t * 100 + c) + " unique",
                           Ns("acme", "u" + std::to_string(t))));
        // The same fact from every thread.
        reqs.push_back(Req("Everyone on the team agrees the release ships on Thursday", Ns("acme", "shared")));
        auto r = engine_->WriteMany(reqs);
        if (!r.ok() || r->size() != reqs.size()) {
          ++failures;
          continue;
        }
        std::lock_guard<std::mutex> lock(mu);
        artifact_ids.push_back((*r)[0].id);
        shared_fact_ids.push_back((*r)[2].id);
        for (const auto& w : *r) {
          evicted_reported += w.evicted_ids.size();
          evicted_ids.insert(w.evicted_ids.begin(), w.evicted_ids.end());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(artifact_ids.size(), static_cast<size_t>(kThreads * kCalls));
  EXPECT_EQ(std::set<std::string>(artifact_ids.begin(), artifact_ids.end()).size(), artifact_ids.size());
  for (const auto& id : artifact_ids) EXPECT_TRUE(engine_->Get(Ns(), id).ok()) << id;
  // One shared fact, and every call was told its id.
  EXPECT_EQ(std::set<std::string>(shared_fact_ids.begin(), shared_fact_ids.end()).size(), 1u);
  ListRequest shared;
  shared.scope = Ns("acme", "shared");
  shared.filter.kinds = {Kind::kFact};
  auto listed = engine_->List(shared);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, shared_fact_ids[0]);
  // Each thread's user keeps 5 facts; the rest were evicted, each reported once.
  EXPECT_EQ(evicted_reported, evicted_ids.size());
  EXPECT_EQ(evicted_ids.size(), static_cast<size_t>(kThreads * (kCalls - 5)));
  for (int t = 0; t < kThreads; ++t) {
    ListRequest own;
    own.scope = Ns("acme", "u" + std::to_string(t));
    own.filter.kinds = {Kind::kFact};
    auto facts = engine_->List(own);
    ASSERT_TRUE(facts.ok());
    EXPECT_EQ(facts->size(), 5u) << "user u" << t;
    for (const auto& f : *facts) EXPECT_FALSE(evicted_ids.count(f.id)) << f.id;
  }
}

TEST_F(EngineTest, ExplainShowsEachSignal) {
  ASSERT_TRUE(engine_->Write(Req("The deployment runbook lives in the ops wiki", Ns())).ok());
  RetrieveRequest r;
  r.scope = Ns();
  r.query = "deployment runbook";
  r.explain = true;
  auto hits = engine_->Retrieve(r);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  ASSERT_EQ((*hits)[0].explain.size(), 2u);
  EXPECT_EQ((*hits)[0].explain[0].signal, "bm25");
  EXPECT_EQ((*hits)[0].explain[0].rank, 1);
  EXPECT_GT((*hits)[0].explain[0].raw, 0.0);
  EXPECT_EQ((*hits)[0].explain[1].signal, "cosine");
  // Score fusion (the default): the best lexical hit counts 1, the cosine
  // its value, weighted 1 and 0.1; the parts sum to the score.
  const double cosine = (*hits)[0].explain[1].raw;
  EXPECT_GT(cosine, 0.0);
  EXPECT_DOUBLE_EQ((*hits)[0].score, (1.0 + 0.1 * cosine) / 1.1);
  EXPECT_DOUBLE_EQ((*hits)[0].explain[0].contribution + (*hits)[0].explain[1].contribution, (*hits)[0].score);
}

// With score fusion the vector index's own top candidates are searched only
// when one could still reach the top k; explain always searches them, so it
// must see the same ranking. When few records share words with the query,
// records found by the vector signal alone fill the rest.
TEST_F(EngineTest, SkippingTheVectorSearchNeverChangesTheTopK) {
  std::vector<WriteRequest> batch;
  for (int i = 0; i < 40; ++i) {
    batch.push_back(Req("coffee order " + std::to_string(i) + (i % 3 == 0 ? " with oat milk" : " black") +
                            (i % 5 == 0 ? " at the harbour cafe" : ""),
                        Ns()));
  }
  batch.push_back(Req("the harbor cafeteria opens early", Ns()));
  ASSERT_TRUE(engine_->WriteMany(batch).ok());
  for (const std::string query : {"coffee with oat milk", "harbour cafe coffee", "black coffee order 7"}) {
    RetrieveRequest r;
    r.scope = Ns();
    r.query = query;
    r.top_k = 8;
    r.record_access = false;
    auto plain = engine_->Retrieve(r);
    r.explain = true;
    auto explained = engine_->Retrieve(r);
    ASSERT_TRUE(plain.ok() && explained.ok());
    ASSERT_EQ(plain->size(), explained->size()) << query;
    for (size_t i = 0; i < plain->size(); ++i) {
      EXPECT_EQ((*plain)[i].memory.id, (*explained)[i].memory.id) << query << " " << i;
      EXPECT_DOUBLE_EQ((*plain)[i].score, (*explained)[i].score) << query << " " << i;
    }
  }
  RetrieveRequest few;
  few.scope = Ns();
  few.query = "cafeterias";  // one record shares the word; others only its n-grams
  few.top_k = 5;
  few.record_access = false;
  auto hits = engine_->Retrieve(few);
  ASSERT_TRUE(hits.ok());
  ASSERT_GE(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].memory.text, "the harbor cafeteria opens early");
  EXPECT_GT((*hits)[0].score, 0.5);
  for (size_t i = 1; i < hits->size(); ++i) EXPECT_LE((*hits)[i].score, 0.1 / 1.1 + 1e-12);
}

TEST_F(EngineTest, RankFusionScoresFirstEverywhereAsOne) {
  Options o = options_;
  o.retrieval.fusion = "rrf";
  ASSERT_TRUE(engine_->Write(Req("The deployment runbook lives in the ops wiki", Ns())).ok());
  engine_.reset();
  engine_ = Open(o);
  RetrieveRequest r;
  r.scope = Ns();
  r.query = "deployment runbook";
  r.explain = true;
  auto hits = engine_->Retrieve(r);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_DOUBLE_EQ((*hits)[0].score, 1.0);
  EXPECT_EQ((*hits)[0].explain[1].rank, 1);
}

TEST_F(EngineTest, RefusalIsAuditedAndStoresNothing) {
  auto before = engine_->GetStats(Ns());
  ASSERT_TRUE(before.ok());
  WriteRequest r = Req("a secret password: hunter2 is mine", Ns());
  r.sensitivity = Sensitivity::kHigh;
  auto w = engine_->Write(r);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kRefused);
  EXPECT_NE(w.status().message().find("sensitivity"), std::string::npos);
  auto after = engine_->GetStats(Ns());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->records, before->records);
  EXPECT_EQ(after->last_seq, before->last_seq);
  auto audit = engine_->Audit(Ns(), "", 10);
  ASSERT_TRUE(audit.ok());
  ASSERT_FALSE(audit->empty());
  EXPECT_EQ(audit->front().action, AuditAction::kRefuse);
  EXPECT_EQ(audit->front().actor, "tester");
  // The refused text itself is not kept anywhere, the audit log included.
  EXPECT_EQ(audit->front().details_json.find("hunter2"), std::string::npos);
}

TEST_F(EngineTest, BadInputChangesNothing) {
  auto before = engine_->GetStats(Ns());
  ASSERT_TRUE(before.ok());
  WriteRequest r = Req("valid text that is long enough", Ns());
  r.body_json = "[not an object";
  EXPECT_EQ(engine_->Write(r).status().code(), StatusCode::kInvalidArgument);
  r = Req("bad utf8 \xc3\x28 inside this text", Ns());
  EXPECT_EQ(engine_->Write(r).status().code(), StatusCode::kInvalidArgument);
  r = Req("valid text that is long enough", Ns());
  r.confidence = 2;
  EXPECT_EQ(engine_->Write(r).status().code(), StatusCode::kInvalidArgument);
  r.confidence = 1;
  r.ttl_days = -3;
  EXPECT_EQ(engine_->Write(r).status().code(), StatusCode::kInvalidArgument);
  EpisodeStep step;
  step.ns = Ns();
  step.text = "no session given";
  EXPECT_EQ(engine_->AddEpisode(step).status().code(), StatusCode::kInvalidArgument);
  auto after = engine_->GetStats(Ns());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->last_seq, before->last_seq);
  EXPECT_EQ(after->audit_events, before->audit_events);
}

TEST_F(EngineTest, TenantsNeverSeeEachOther) {
  auto w = engine_->Write(Req("Acme's build server runs Debian bookworm", Ns("acme")));
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(Search(*engine_, Ns("globex", "ann"), "build server Debian bookworm").empty());
  Namespace globex_tenant;
  globex_tenant.tenant = "globex";
  EXPECT_TRUE(Search(*engine_, globex_tenant, "build server Debian bookworm").empty());
  EXPECT_TRUE(engine_->Get(Ns("globex"), w->id).status().IsNotFound());
  EXPECT_TRUE(engine_->Delete(Ns("globex"), w->id, "", "").IsNotFound());
  EXPECT_EQ(Search(*engine_, Ns("acme"), "build server Debian bookworm").size(), 1u);
  // Another user of the same tenant is not in a user-scoped search either.
  EXPECT_TRUE(Search(*engine_, Ns("acme", "bob"), "build server Debian bookworm").empty());
}

// The change log is shared by every tenant: a page shows one tenant only its
// own records, and only its own deleted ids in `gone`.
TEST_F(EngineTest, ChangesShowATenantOnlyItsOwnRecordsAndDeletions) {
  ASSERT_OK_AND_ASSIGN(int64_t start, engine_->LastChangeSeq());
  auto mine = engine_->Write(Req("Acme deploys on Fridays", Ns("acme")));
  auto theirs = engine_->Write(Req("Globex deploys on Mondays", Ns("globex")));
  ASSERT_TRUE(mine.ok() && theirs.ok());
  ASSERT_OK(engine_->Delete(Ns("globex"), theirs->id, "test", ""));
  ASSERT_OK(engine_->Delete(Ns("acme"), mine->id, "test", ""));
  for (const std::string tenant : {"acme", "globex"}) {
    Namespace scope;
    scope.tenant = tenant;
    ASSERT_OK_AND_ASSIGN(RecordChanges page, engine_->ChangesSince(scope, start, 100));
    EXPECT_TRUE(page.records.empty());
    const std::string& own = tenant == "acme" ? mine->id : theirs->id;
    EXPECT_EQ(page.gone, std::vector<std::string>{own}) << tenant;
  }
}

TEST_F(EngineTest, ExpiredRecordsAreNeverReturned) {
  WriteRequest r = Req("Ann is travelling in Lisbon this week", Ns());
  r.ttl_days = 1;
  auto w = engine_->Write(r);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(Search(*engine_, Ns(), "Lisbon travel").size(), 1u);
  clock_->Advance(2 * kMsPerDay);
  EXPECT_TRUE(Search(*engine_, Ns(), "Lisbon travel").empty());
  EXPECT_TRUE(engine_->Get(Ns(), w->id).status().IsNotFound());
  auto stats = engine_->GetStats(Ns());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->expired, 1);
}

TEST_F(EngineTest, NearDuplicateFactsMerge) {
  FactRequest f;
  f.ns = Ns();
  f.text = "User runs Windows 11 on the office laptop";
  f.confidence = 0.6;
  f.source_episodes = {"ep-1"};
  auto a = engine_->AddFact(f);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->merged);
  f.confidence = 0.9;
  f.source_episodes = {"ep-2"};
  auto b = engine_->AddFact(f);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->merged);
  EXPECT_EQ(b->id, a->id);
  auto got = engine_->Get(Ns(), a->id);
  ASSERT_TRUE(got.ok());
  EXPECT_DOUBLE_EQ(got->confidence, 0.9);
  ASSERT_EQ(got->provenance.size(), 2u);
  EXPECT_EQ(got->provenance[1].ref, "ep-2");
  f.text = "User's favourite editor is Neovim";
  auto c = engine_->AddFact(f);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->merged);
  // The same text in another namespace is another fact.
  f.ns = Ns("acme", "bob");
  f.text = "User runs Windows 11 on the office laptop";
  auto d = engine_->AddFact(f);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->merged);
}

// A fact held above level 0 is no twin of a policy write (level 0): the
// write neither learns its id nor changes it.
TEST_F(EngineTest, FactsMergeOnlyIntoTwinsOfTheirOwnAccessLevel) {
  Memory hidden;
  hidden.ns = Ns();
  hidden.kind = Kind::kFact;
  hidden.layer = Layer::kSemantic;
  hidden.text = "User runs Windows 11 on the office laptop";
  hidden.access_level = 5;
  RecordBatch b;
  b.scope = Ns();
  b.puts = {hidden};
  b.actor = "admin";
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> stored, engine_->Commit(b));
  ASSERT_EQ(stored.size(), 1u);

  FactRequest f;
  f.ns = Ns();
  f.text = hidden.text;
  f.confidence = 0.5;
  ASSERT_OK_AND_ASSIGN(WriteResult open, engine_->AddFact(f));
  EXPECT_FALSE(open.merged);
  EXPECT_NE(open.id, stored[0].id);
  ASSERT_OK_AND_ASSIGN(Memory still, engine_->Get(Ns(), stored[0].id));
  EXPECT_EQ(still.seq, stored[0].seq);
  EXPECT_TRUE(still.provenance.empty());
  // Facts of the same level still merge.
  ASSERT_OK_AND_ASSIGN(WriteResult again, engine_->AddFact(f));
  EXPECT_TRUE(again.merged);
  EXPECT_EQ(again.id, open.id);
}

TEST_F(EngineTest, SupersedeKeepsHistoryAndRetrievesOnlyTheNewest) {
  FactRequest f;
  f.ns = Ns();
  f.text = "The team deploys on Fridays at noon";
  auto a = engine_->AddFact(f);
  ASSERT_TRUE(a.ok());
  clock_->Advance(1000);
  f.text = "The team deploys on Tuesdays at noon";
  auto b = engine_->SupersedeFact(Ns(), a->id, f);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto hist = engine_->History(Ns(), b->id);
  ASSERT_TRUE(hist.ok());
  ASSERT_EQ(hist->size(), 2u);
  EXPECT_EQ((*hist)[0].id, a->id);
  EXPECT_EQ((*hist)[0].state, RecordState::kSuperseded);
  EXPECT_EQ((*hist)[0].superseded_by, b->id);
  EXPECT_GT((*hist)[0].invalid_at, 0);
  EXPECT_EQ((*hist)[1].supersedes, a->id);
  auto hits = Search(*engine_, Ns(), "when does the team deploy");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].memory.id, b->id);
  EXPECT_EQ(engine_->SupersedeFact(Ns(), a->id, f).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(EngineTest, EpisodesNumberStepsAndConsolidateEveryN) {
  Namespace ns = Ns();
  ns.session = "s1";
  const char* turns[] = {"I use Python 3.11 on Windows 11", "Searching the web for the error",
                         "pip install numpy fails with an error", "Try upgrading pip first"};
  EpisodeType types[] = {EpisodeType::kUserMessage, EpisodeType::kToolCall, EpisodeType::kUserMessage,
                         EpisodeType::kAgentResponse};
  for (int i = 0; i < 4; ++i) {
    EpisodeStep s;
    s.ns = ns;
    s.type = types[i];
    s.text = turns[i];
    auto e = engine_->AddEpisode(s);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e->step_number, i + 1);
    EXPECT_EQ(e->kind, Kind::kEpisode);
  }
  auto last2 = engine_->LastSteps(ns, "s1", 2);
  ASSERT_TRUE(last2.ok());
  ASSERT_EQ(last2->size(), 2u);
  EXPECT_EQ((*last2)[0].step_number, 3);
  EXPECT_EQ((*last2)[1].text, "Try upgrading pip first");
  // Four steps reached every_n_episodes: facts exist at user level, citing episodes.
  ListRequest lr;
  lr.scope = Ns();
  lr.filter.kinds = {Kind::kFact};
  auto facts = engine_->List(lr);
  ASSERT_TRUE(facts.ok());
  ASSERT_FALSE(facts->empty());
  for (const auto& f : *facts) {
    EXPECT_TRUE(f.ns.session.empty());
    EXPECT_EQ(f.source, "consolidation");
    ASSERT_FALSE(f.provenance.empty());
    EXPECT_EQ(f.provenance[0].type, "episode");
  }
  // Nothing new to consolidate: a second run adds nothing.
  auto again = engine_->EndSession(ns, "s1");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->episodes_read, 0);
  // An explicit step number that exists is refused.
  EpisodeStep dup;
  dup.ns = ns;
  dup.step_number = 2;
  dup.text = "duplicate step";
  EXPECT_EQ(engine_->AddEpisode(dup).status().code(), StatusCode::kAlreadyExists);
}

TEST_F(EngineTest, PerUserLimitEvictsLeastValuable) {
  Options o = options_;
  o.policy.max_items_per_user = 3;
  engine_.reset();
  engine_ = Open(o);
  std::vector<std::string> ids;
  const char* texts[] = {"Ann likes hiking in the Alps", "Ann drives an electric car",
                         "Ann reads science fiction novels", "Ann plays the cello on weekends"};
  for (int i = 0; i < 4; ++i) {
    FactRequest f;
    f.ns = Ns();
    f.text = texts[i];
    f.confidence = i == 1 ? 0.2 : 0.9;
    auto w = engine_->AddFact(f);
    ASSERT_TRUE(w.ok());
    ids.push_back(w->id);
    if (i == 3) {
      ASSERT_EQ(w->evicted_ids.size(), 1u);
      EXPECT_EQ(w->evicted_ids[0], ids[1]);
    }
  }
  EXPECT_TRUE(engine_->Get(Ns(), ids[1]).status().IsNotFound());
  auto audit = engine_->Audit(Ns(), ids[1], 10);
  ASSERT_TRUE(audit.ok());
  ASSERT_FALSE(audit->empty());
  EXPECT_EQ(audit->front().action, AuditAction::kEvict);
}

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

  // Another tenant naming the same id is refused, and nothing lands.
  std::istringstream other(
      "{\"text\":\"an innocent record of another tenant\",\"namespace\":{\"tenant\":\"evil\"}}\n"
      "{\"id\":\"" + theirs.id +
      "\",\"text\":\"overwritten by another tenant\",\"namespace\":{\"tenant\":\"evil\"}}\n");
  auto before = engine_->GetStats(Namespace{});
  ASSERT_TRUE(before.ok());
  auto rep = engine_->Import(other, "evil");
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rep.status().message().find("line 2"), std::string::npos) << rep.status().message();
  ASSERT_OK_AND_ASSIGN(Memory kept, engine_->Get(acme, theirs.id));
  EXPECT_EQ(kept.text, "Ann keeps the launch codes in the red binder");
  EXPECT_EQ(kept.ns.tenant, "acme");
  auto after = engine_->GetStats(Namespace{});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->last_seq, before->last_seq);
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
