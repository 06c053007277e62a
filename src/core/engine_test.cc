// Engine tests over the real parts: SQLite store, Xapian index, exact vector
// index, hashing embedder and the rule-based extractor, in a temp directory:
// writes and retrieval, access bookkeeping, group commit, explain and
// fusion, refusals, tenants, expiry, fact merges, supersede, episodes and
// the per-user limit. The administrative side (a second opener, reindex,
// export and import, typed Commit writes, clearance) is in
// engine_admin_test.cc; the fixture is engine_fixture.h.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
// bumps reach the store before a write, or a read that returns records, or
// a second after the first, each counted. A closing engine appends what is
// pending to the spool beside the store instead (no write to the store:
// a short-lived search does no fsync), and the next flush of any engine on
// the store folds it in, skipping a batch torn by a killed process.
TEST_F(EngineTest, AccessBumpsAreBatchedAndSpooledWhenTheEngineCloses) {
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
  const std::string spool = options_.store.data_dir + "/access.spool";
  auto spool_bytes = [&] {
    std::error_code ec;
    const auto size = std::filesystem::file_size(spool, ec);
    return ec ? uintmax_t{0} : size;
  };
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Search(*engine_, Ns(), "coffee").size(), 1u);
  EXPECT_EQ(count_seen_by(*other), 0);  // nothing written yet
  clock_->Advance(5000);
  engine_.reset();
  EXPECT_GT(spool_bytes(), 0u);
  {  // garbage, then a batch torn by a kill (no newline yet): both skipped
    std::ofstream torn(spool, std::ios::app);
    torn << "\nnot json\n{\"at\": 1, \"ids\": [\"" << w->id;
  }
  engine_ = Open(options_);
  ASSERT_EQ(Search(*engine_, Ns(), "coffee").size(), 1u);
  engine_.reset();  // its batch goes after the torn one, on a line of its own
  EXPECT_EQ(count_seen_by(*other), 4);  // folded by the read
  EXPECT_EQ(spool_bytes(), 0u);
  auto got = other->Get(Ns(), w->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->last_accessed, clock_->NowMs());
  // A write flushes the bumps before it.
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  engine_ = Open(options_);
  EXPECT_EQ(count_seen_by(*engine_), 4);
  ASSERT_TRUE(other->Write(Req("Ann is allergic to peanuts and avoids them", Ns())).ok());
  EXPECT_EQ(count_seen_by(*engine_), 5);
  // A search a second (of the engine's clock) after the oldest pending bump
  // flushes them all.
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  clock_->Advance(999);
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  EXPECT_EQ(count_seen_by(*engine_), 5);
  clock_->Advance(1);
  ASSERT_EQ(Search(*other, Ns(), "coffee").size(), 1u);
  EXPECT_EQ(count_seen_by(*engine_), 8);
}

// A long-lived process writes the batch from a thread of its own
// (FlushAccessLog) before any search finds it a second old and waits for
// the write itself.
TEST_F(EngineTest, FlushAccessLogWritesTheBatchAtOnce) {
  auto w = engine_->Write(Req("Ann prefers dark roast coffee in the morning", Ns()));
  ASSERT_TRUE(w.ok());
  auto other = Open(options_);  // another process's view of the store
  ASSERT_NE(other, nullptr);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(Search(*engine_, Ns(), "coffee").size(), 1u);
  auto before = other->Get(Ns(), w->id);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->access_count, 0);
  clock_->Advance(10);
  ASSERT_TRUE(engine_->FlushAccessLog().ok());
  auto after = other->Get(Ns(), w->id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->access_count, 2);
  EXPECT_EQ(after->last_accessed, clock_->NowMs() - 10);  // the batch's own time
  ASSERT_TRUE(engine_->FlushAccessLog().ok());  // nothing pending: nothing written
  EXPECT_EQ(other->Get(Ns(), w->id)->access_count, 2);
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

// Calls that fail while they prepare (here: an empty text), among
// concurrent writers sharing commits: each failure is its own, every other
// call is stored, and no writer is left waiting.
TEST_F(EngineTest, ConcurrentWritersWithFailingCallsAllReturn) {
  constexpr int kThreads = 12;
  constexpr int kCalls = 20;
  std::atomic<int> stored{0}, refused{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        WriteRequest r = Req("artifact " + std::to_string(c) + " of writer " + std::to_string(t), Ns());
        r.kind = Kind::kArtifact;
        if ((t + c) % 3 == 0) r.text.clear();
        auto w = engine_->WriteMany({r});
        if (r.text.empty()) {
          (!w.ok() && w.status().code() == StatusCode::kInvalidArgument ? refused : wrong)++;
        } else if (w.ok() && w->size() == 1 && engine_->Get(Ns(), (*w)[0].id).ok()) {
          ++stored;
        } else {
          ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  int empty = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int c = 0; c < kCalls; ++c) empty += (t + c) % 3 == 0;
  }
  EXPECT_EQ(refused.load(), empty);
  EXPECT_EQ(stored.load(), kThreads * kCalls - empty);
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

// A search of a store without episodes of sessions ranks a few candidates
// first and takes all of them only when one left out could still reach the
// top k (Retriever::Ranked); explain always takes them all, so it must see
// the same hits, scores and passages, for queries whose top k stands apart
// and for those (ties, flat scores) where the first candidates cannot tell.
TEST_F(EngineTest, AFewCandidatesFirstNeverChangeTheHits) {
  Options o = options_;
  o.retrieval.passage_bytes = 80;  // long records are ranked by passages
  o.retrieval.scores = "calibrated";
  engine_.reset();
  engine_ = Open(o);
  const std::vector<std::string> words = {"harbour", "ferry",  "ticket", "pier",    "storm", "lantern",
                                          "keeper",  "timetable", "north", "anchor", "tide",  "gull"};
  uint64_t seed = 12345;
  auto next = [&]() {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>(seed >> 33);
  };
  std::vector<WriteRequest> batch;
  for (int i = 0; i < 300; ++i) {
    std::string text = "record " + std::to_string(i);
    const size_t n = 3 + next() % (i % 10 == 0 ? 60 : 9);  // a tenth are long: passages
    for (size_t w = 0; w < n; ++w) text += " " + words[next() % words.size()];
    batch.push_back(Req(text, Ns()));
  }
  for (int i = 0; i < 80; ++i) batch.push_back(Req("same words harbour ferry " + std::to_string(i % 2), Ns()));
  // Equal BM25 (the same words, as long), unequal cosines: a record far
  // down the lexical ranking can lead the fused one.
  for (int i = 0; i < 150; ++i) {
    batch.push_back(Req("evening crossing " + words[next() % words.size()] + " " + words[next() % words.size()], Ns()));
  }
  ASSERT_TRUE(engine_->WriteMany(batch).ok());
  for (const std::string query : {"harbour ferry", "storm lantern keeper", "north pier timetable tide",
                                  "gull", "anchor ticket harbour storm", "same words", "record 17 harbour",
                                  "evening crossing", "evening crossing storm"}) {
    for (int k : {1, 3, 10, 25}) {
      RetrieveRequest r;
      r.scope = Ns();
      r.query = query;
      r.top_k = k;
      r.record_access = false;
      auto plain = engine_->Retrieve(r);
      r.explain = true;
      auto every = engine_->Retrieve(r);
      ASSERT_TRUE(plain.ok() && every.ok()) << query;
      ASSERT_EQ(plain->size(), every->size()) << query << " " << k;
      for (size_t i = 0; i < plain->size(); ++i) {
        EXPECT_EQ((*plain)[i].memory.id, (*every)[i].memory.id) << query << " " << k << " " << i;
        EXPECT_DOUBLE_EQ((*plain)[i].score, (*every)[i].score) << query << " " << k << " " << i;
        EXPECT_EQ((*plain)[i].passage, (*every)[i].passage) << query << " " << k << " " << i;
      }
    }
  }
}

TEST_F(EngineTest, RankFusionScoresFirstEverywhereAsOne) {
  Options o = options_;
  o.retrieval.fusion = Fusion::kRrf;
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

TEST_F(EngineTest, AStepWithARequestIdIsAddedOnce) {
  Namespace ns = Ns();
  ns.session = "s-idem";
  EpisodeStep s;
  s.ns = ns;
  s.type = EpisodeType::kToolCall;
  s.tool_name = "Bash";
  s.text = "npm test exited 1";
  s.request_id = "observation-spool:1700000000000-ab12";
  ASSERT_OK_AND_ASSIGN(Memory first, engine_->AddEpisode(s));
  // The same step again (an importer that stopped before removing its file):
  // the first record is the answer, and the session still has one step.
  ASSERT_OK_AND_ASSIGN(Memory again, engine_->AddEpisode(s));
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(again.step_number, 1);
  ASSERT_OK_AND_ASSIGN(auto steps, engine_->LastSteps(ns, "s-idem", 10));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].id, first.id);
  // The key with another step: Conflict, nothing added.
  EpisodeStep other = s;
  other.text = "npm test passed";
  EXPECT_EQ(engine_->AddEpisode(other).status().code(), StatusCode::kConflict);
  // A key that is not one: refused before anything is written.
  EpisodeStep bad = s;
  bad.request_id = "has a space";
  EXPECT_EQ(engine_->AddEpisode(bad).status().code(), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(steps, engine_->LastSteps(ns, "s-idem", 10));
  EXPECT_EQ(steps.size(), 1u);
  // Keys are per tenant: another tenant's step with the same key is its own.
  EpisodeStep elsewhere = s;
  elsewhere.ns.tenant = "other-tenant";
  ASSERT_OK_AND_ASSIGN(Memory theirs, engine_->AddEpisode(elsewhere));
  EXPECT_NE(theirs.id, first.id);
  // Without a key the same step is a new step.
  EpisodeStep plain = s;
  plain.request_id.clear();
  ASSERT_OK_AND_ASSIGN(Memory second, engine_->AddEpisode(plain));
  EXPECT_EQ(second.step_number, 2);
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

// An episode longer than policy.max_text_bytes (up to max_record_bytes) is
// stored whole; the index holds it as passages, so a hit shows the passage
// that matched, with its offsets, and max_tokens_per_hit bounds what it shows.
TEST_F(EngineTest, LongEpisodesAreStoredWholeAndHitsShowThePassageThatMatched) {
  std::string text;
  for (int i = 0; text.size() < 80000; ++i) {
    text += "Filler sentence number " + std::to_string(i) + " talks about the weather again. ";
    if (i == 700) text += "The zebra named Quillon ate blue apples by the canal. ";
  }
  EpisodeStep step;
  step.ns = Ns();
  step.ns.session = "long";
  step.text = text;
  ASSERT_OK_AND_ASSIGN(Memory stored, engine_->AddEpisode(step));
  ASSERT_OK_AND_ASSIGN(Memory whole, engine_->Get(Ns(), stored.id));
  EXPECT_EQ(whole.text, text);
  ASSERT_TRUE(engine_->Write(Req("Quillon is a name Ann likes for pets", Ns())).ok());

  std::vector<SearchHit> hits = Search(*engine_, Ns(), "zebra Quillon blue apples");
  ASSERT_EQ(hits.size(), 2u);
  const SearchHit& hit = hits[0];
  ASSERT_EQ(hit.memory.id, stored.id);
  EXPECT_EQ(hit.memory.text, text);  // the library keeps the whole record
  ASSERT_FALSE(hit.passage.empty());
  EXPECT_EQ(text.substr(hit.passage_begin, hit.passage_end - hit.passage_begin), hit.passage);
  EXPECT_NE(hit.passage.find("zebra named Quillon"), std::string::npos) << hit.passage;
  EXPECT_LE(hit.passage.size(), 256u);  // the default passage size
  EXPECT_TRUE(hits[1].passage.empty());  // a short record shows itself whole
  EXPECT_EQ(hits[1].passage_end, 0);

  // A bound of 4 tokens a hit: a prefix of the same passage, and the short
  // record (more than 4 tokens) cut from its start.
  engine_.reset();
  Options o = options_;
  o.retrieval.max_tokens_per_hit = 4;
  engine_ = Open(o);
  std::vector<SearchHit> cut = Search(*engine_, Ns(), "zebra Quillon blue apples");
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0].passage_begin, hit.passage_begin);
  EXPECT_LT(cut[0].passage_end, hit.passage_end);
  EXPECT_FALSE(cut[0].passage.empty());
  EXPECT_EQ(hit.passage.find(cut[0].passage), 0u);
  EXPECT_EQ(cut[1].passage_begin, 0);
  EXPECT_FALSE(cut[1].passage.empty());
  EXPECT_EQ(cut[1].memory.text.find(cut[1].passage), 0u);
  EXPECT_LT(cut[1].passage.size(), cut[1].memory.text.size());

  // Over max_record_bytes an episode is refused, naming the setting.
  step.text = std::string(o.policy.max_record_bytes + 1, 'x');
  auto refused = engine_->AddEpisode(step);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("policy.max_record_bytes"), std::string::npos)
      << refused.status().message();
}

// An imported record over policy.max_record_bytes: refused by default (the
// error names --on-oversize, nothing lands), else split into records that
// name the first, or truncated.
TEST_F(EngineTest, ImportOfAnOversizedRecordRefusesSplitsOrTruncates) {
  std::string text;
  while (text.size() < 2500) text += "A long imported turn about harbour cranes and tides. ";
  const std::string line = "{\"id\":\"0190a0b0-0000-7000-8000-000000000001\",\"kind\":\"episode\",\"step_number\":3,"
                           "\"namespace\":{\"tenant\":\"acme\",\"user\":\"ann\",\"session\":\"s1\"},\"text\":\"" +
                           text + "\"}\n";
  Options o = options_;
  o.policy.max_record_bytes = 1000;
  engine_.reset();
  engine_ = Open(o);
  ASSERT_OK_AND_ASSIGN(Stats before, engine_->GetStats(Namespace{}));
  std::istringstream refuse_in(line);
  auto refused = engine_->Import(refuse_in, "restorer");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--on-oversize"), std::string::npos) << refused.status().message();
  ASSERT_OK_AND_ASSIGN(Stats after, engine_->GetStats(Namespace{}));
  EXPECT_EQ(after.last_seq, before.last_seq);

  o.policy.on_oversize = "split";
  engine_.reset();
  engine_ = Open(o);
  std::istringstream split_in(line);
  ASSERT_OK_AND_ASSIGN(ImportReport split, engine_->Import(split_in, "restorer"));
  EXPECT_EQ(split.split, 1);
  EXPECT_EQ(split.applied, 3);  // 2,500 bytes in parts of at most 1,000
  Namespace acme;
  acme.tenant = "acme";
  std::ostringstream exported;
  ASSERT_TRUE(engine_->Export(acme, exported).ok());
  std::string joined;
  std::istringstream lines(exported.str());
  int parts = 0, naming_first = 0;
  for (std::string l; std::getline(lines, l);) {
    ++parts;
    naming_first += l.find("\"split_from\"") != std::string::npos &&
                    l.find("\"ref\":\"0190a0b0-0000-7000-8000-000000000001\"") != std::string::npos;
  }
  EXPECT_EQ(parts, 3);
  EXPECT_EQ(naming_first, 2);
  ASSERT_OK_AND_ASSIGN(Memory first, engine_->Get(acme, "0190a0b0-0000-7000-8000-000000000001"));
  EXPECT_LE(first.text.size(), 1000u);
  EXPECT_EQ(text.find(first.text), 0u);

  o.policy.on_oversize = "truncate";
  engine_.reset();
  engine_ = Open(o);
  std::istringstream truncate_in(line);
  ASSERT_OK_AND_ASSIGN(ImportReport truncated, engine_->Import(truncate_in, "restorer"));
  EXPECT_EQ(truncated.truncated, 1);
  EXPECT_EQ(truncated.applied, 1);
  ASSERT_OK_AND_ASSIGN(Memory cut, engine_->Get(acme, "0190a0b0-0000-7000-8000-000000000001"));
  EXPECT_LE(cut.text.size(), 1000u);
  EXPECT_EQ(text.find(cut.text), 0u);
}

// Calibrated scores (the default) keep the relative ranking's order, and a
// query that nothing in memory is about scores low throughout, so min_score
// 0.7 returns nothing for it while a well-matched query keeps its best hit.
TEST_F(EngineTest, CalibratedScoresKeepTheOrderAndLetNothingRelevantReturnNothing) {
  std::vector<WriteRequest> batch;
  for (const char* t : {"Ann prefers dark roast coffee in the morning", "The deploy pipeline runs on GitHub Actions",
                        "Ann's cat is called Miso and likes tuna", "The coffee machine on floor three is broken",
                        "Quarterly planning happens in the second week of March"}) {
    batch.push_back(Req(t, Ns()));
  }
  ASSERT_TRUE(engine_->WriteMany(batch).ok());
  engine_.reset();
  Options o = options_;
  o.retrieval.scores = "calibrated";
  engine_ = Open(o);
  auto ask = [&](MemoryLayer& e, const std::string& q, double min_score) {
    RetrieveRequest r;
    r.scope = Ns();
    r.query = q;
    r.min_score = min_score;
    r.record_access = false;
    r.explain = true;
    auto hits = e.Retrieve(r);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<SearchHit>{};
  };
  const std::vector<SearchHit> calibrated = ask(*engine_, "dark roast coffee", 0.0);
  ASSERT_GE(calibrated.size(), 2u);
  for (const SearchHit& h : calibrated) {
    double sum = 0;
    for (const SignalContribution& c : h.explain) sum += c.contribution;
    EXPECT_NEAR(sum, h.score, 1e-9);  // the calibration's part is in explain
    EXPECT_EQ(h.explain.back().signal, "calibration");
  }
  EXPECT_GE(calibrated[0].score, 0.7);
  EXPECT_EQ(ask(*engine_, "dark roast coffee", 0.7).front().memory.id, calibrated[0].memory.id);
  EXPECT_TRUE(ask(*engine_, "volcanic basalt tectonics seismograph", 0.7).empty());
  // One shared word in a query about something else: a hit, but low, so
  // nothing at 0.7.
  const std::vector<SearchHit> one_word = ask(*engine_, "volcanic basalt tectonics seismograph of March", 0.0);
  ASSERT_FALSE(one_word.empty());
  EXPECT_LT(one_word[0].score, 0.5);
  EXPECT_TRUE(ask(*engine_, "volcanic basalt tectonics seismograph of March", 0.7).empty());
  engine_.reset();
  engine_ = Open(options_);  // relative
  const std::vector<SearchHit> relative = ask(*engine_, "dark roast coffee", 0.0);
  ASSERT_EQ(relative.size(), calibrated.size());
  for (size_t i = 0; i < relative.size(); ++i) {
    EXPECT_EQ(relative[i].memory.id, calibrated[i].memory.id) << i;
    EXPECT_LE(calibrated[i].score, 1.0);
  }
  EXPECT_DOUBLE_EQ(relative[0].score, (1.0 + 0.1 * relative[0].explain[1].raw) / 1.1);
}

}  // namespace
}  // namespace msp
