// The access rule (msp/caller.h) at the engine, over the real parts (SQLite,
// Xapian, the hashing embedder): one tenant never reaches another's records,
// a record above the caller's clearance does not exist for it on any call,
// and the caller's actor is the actor of every write.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "msp/caller.h"
#include "msp/memory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

using testing::Contains;
using testing::FakeClock;

Namespace Ns(const std::string& tenant) {
  Namespace ns;
  ns.tenant = tenant;
  return ns;
}

Memory Typed(const std::string& tenant, const std::string& text, int access_level) {
  Memory m;
  m.ns = Ns(tenant);
  m.kind = Kind::kDecision;
  m.layer = Layer::kWorkflow;
  m.text = text;
  m.body_json = R"({"type":"test"})";
  m.access_level = access_level;
  return m;
}

Caller As(const std::string& tenant, std::optional<int> clearance, const std::string& actor = "") {
  Caller c;
  c.tenant = tenant;
  c.clearance = clearance;
  c.actor = actor;
  return c;
}

class CallerLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Options o;
    o.store.data_dir = dir_.path() + "/data";
    o.store.synchronous = "normal";
    o.actor = "configured";
    auto opened = MemoryLayer::Open(o, std::make_shared<FakeClock>(*ParseIso8601("2026-01-01T09:00:00Z")));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    engine_ = std::move(opened).value();
    RecordBatch b;
    b.scope = Ns("acme");
    b.puts = {Typed("acme", "billing ledger decision open to every operator", 0),
              Typed("acme", "billing ledger decision for cleared operators", 5)};
    ASSERT_OK_AND_ASSIGN(std::vector<Memory> stored, engine_->Commit(b));
    open_ = stored[0];
    secret_ = stored[1];
    RecordBatch theirs;
    theirs.scope = Ns("globex");
    theirs.puts = {Typed("globex", "billing ledger decision of another tenant", 0)};
    ASSERT_OK_AND_ASSIGN(stored, engine_->Commit(theirs));
    theirs_ = stored[0];
  }

  // The ids a caller gets from each read: Retrieve, List, Export, and the
  // records counted by GetStats.
  struct Seen {
    std::vector<std::string> retrieved, listed, exported;
    int64_t counted = 0;
  };
  Seen Read(MemoryLayer& layer, const std::string& tenant) {
    Seen seen;
    RetrieveRequest r;
    r.scope = Ns(tenant);
    r.query = "billing ledger decision";
    auto hits = layer.Retrieve(r);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    if (hits.ok()) for (const SearchHit& h : *hits) seen.retrieved.push_back(h.memory.id);
    // Search serves the same hits under the same rule.
    auto found = layer.Search(r);
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    std::vector<std::string> searched;
    if (found.ok()) for (const SearchHit& h : found->hits) searched.push_back(h.memory.id);
    EXPECT_EQ(searched, seen.retrieved);
    ListRequest l;
    l.scope = Ns(tenant);
    auto listed = layer.List(l);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (listed.ok()) for (const Memory& m : *listed) seen.listed.push_back(m.id);
    std::ostringstream out;
    auto n = layer.Export(Ns(tenant), out);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    std::istringstream lines(out.str());
    for (std::string line; std::getline(lines, line);) {
      const size_t at = line.find("\"id\":\"");
      if (at != std::string::npos) seen.exported.push_back(line.substr(at + 6, 36));
    }
    EXPECT_EQ(n.ok() ? static_cast<size_t>(*n) : 0u, seen.exported.size());
    auto stats = layer.GetStats(Ns(tenant));
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    seen.counted = stats.ok() ? stats->records : -1;
    return seen;
  }

  int64_t AuditCount() {
    auto events = engine_->Audit(Ns("acme"), "", 1000);
    EXPECT_TRUE(events.ok());
    return events.ok() ? static_cast<int64_t>(events->size()) : -1;
  }

  testing::TempDir dir_{"caller"};
  std::unique_ptr<MemoryLayer> engine_;
  Memory open_, secret_, theirs_;
};

TEST_F(CallerLayerTest, EveryReadServesOnlyWhatTheClearanceAllows) {
  for (std::optional<int> clearance : {std::optional<int>(), std::optional<int>(0), std::optional<int>(4),
                                       std::optional<int>(5), std::optional<int>(9)}) {
    SCOPED_TRACE(clearance ? std::to_string(*clearance) : "none");
    auto layer = AsCaller(*engine_, As("acme", clearance));
    const bool sees = !clearance || *clearance >= 5;
    const std::vector<std::string> expected =
        sees ? std::vector<std::string>{open_.id, secret_.id} : std::vector<std::string>{open_.id};
    Seen seen = Read(*layer, "acme");
    std::sort(seen.retrieved.begin(), seen.retrieved.end());
    std::vector<std::string> sorted = expected;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(seen.retrieved, sorted);
    std::sort(seen.listed.begin(), seen.listed.end());  // one commit: the same created_at
    EXPECT_EQ(seen.listed, sorted);
    std::sort(seen.exported.begin(), seen.exported.end());
    EXPECT_EQ(seen.exported, sorted);
    EXPECT_EQ(seen.counted, static_cast<int64_t>(expected.size()));

    auto got = layer->Get(Ns("acme"), secret_.id);
    auto history = layer->History(Ns("acme"), secret_.id);
    if (sees) {
      ASSERT_OK(got.status());
      EXPECT_EQ(got->text, secret_.text);
      ASSERT_OK(history.status());
      EXPECT_EQ(history->size(), 1u);
    } else {
      // Word for word what a record that never existed gets.
      const std::string none = "00000000-0000-7000-8000-000000000000";
      auto missing = layer->Get(Ns("acme"), none);
      ASSERT_EQ(got.status().code(), StatusCode::kNotFound);
      ASSERT_EQ(missing.status().code(), StatusCode::kNotFound);
      std::string message = got.status().message();
      message.replace(message.find(secret_.id), secret_.id.size(), none);
      EXPECT_EQ(message, missing.status().message());
      EXPECT_EQ(history.status().code(), StatusCode::kNotFound);
    }
  }
}

TEST_F(CallerLayerTest, AHiddenRecordCannotBeChangedAndNothingChanges) {
  auto layer = AsCaller(*engine_, As("acme", 4));
  const int64_t events = AuditCount();

  Status deleted = layer->Delete(Ns("acme"), secret_.id, "cleanup", "");
  EXPECT_EQ(deleted.code(), StatusCode::kNotFound) << deleted.ToString();

  RecordBatch replace;
  replace.scope = Ns("acme");
  replace.puts = {Typed("acme", "overwritten by a caller who cannot see it", 0)};
  replace.puts[0].id = secret_.id;
  EXPECT_EQ(layer->Commit(replace).status().code(), StatusCode::kNotFound);

  RecordBatch remove;
  remove.scope = Ns("acme");
  remove.deletes = {secret_.id};
  EXPECT_EQ(layer->Commit(remove).status().code(), StatusCode::kNotFound);

  FactRequest f;
  f.ns = Ns("acme");
  f.text = "the ledger is kept in the billing service";
  f.tags = {"constraint"};
  EXPECT_EQ(layer->SupersedeFact(Ns("acme"), secret_.id, f).status().code(), StatusCode::kNotFound);

  // A record above the clearance cannot be written either: it could not be
  // read back.
  RecordBatch above;
  above.scope = Ns("acme");
  above.puts = {Typed("acme", "a decision the caller may not read", 5)};
  auto forbidden = layer->Commit(above);
  EXPECT_EQ(forbidden.status().code(), StatusCode::kForbidden);
  EXPECT_TRUE(Contains(forbidden.status().message(), "clearance 4")) << forbidden.status().message();

  ASSERT_OK_AND_ASSIGN(Memory kept, engine_->Get(Ns("acme"), secret_.id));
  EXPECT_EQ(kept.text, secret_.text);
  EXPECT_EQ(kept.seq, secret_.seq);
  ASSERT_OK_AND_ASSIGN(Stats s, engine_->GetStats(Ns("acme")));
  EXPECT_EQ(s.records, 2);
  EXPECT_EQ(AuditCount(), events);

  // A visible record is still the caller's to delete.
  ASSERT_OK(layer->Delete(Ns("acme"), open_.id, "done", ""));
  EXPECT_EQ(engine_->Get(Ns("acme"), open_.id).status().code(), StatusCode::kNotFound);
}

TEST_F(CallerLayerTest, AuditAndImportAreForbiddenToALimitedCaller) {
  auto limited = AsCaller(*engine_, As("acme", 9));
  auto audit = limited->Audit(Ns("acme"), "", 10);
  EXPECT_EQ(audit.status().code(), StatusCode::kForbidden);
  std::istringstream in("");
  EXPECT_EQ(limited->Import(in, "").status().code(), StatusCode::kForbidden);
  ASSERT_OK_AND_ASSIGN(Stats s, limited->GetStats(Ns("acme")));
  EXPECT_EQ(s.audit_events, 0);

  auto owner = AsCaller(*engine_, As("acme", std::nullopt));
  ASSERT_OK_AND_ASSIGN(auto events, owner->Audit(Ns("acme"), "", 10));
  EXPECT_FALSE(events.empty());
  ASSERT_OK_AND_ASSIGN(Stats all, owner->GetStats(Ns("acme")));
  EXPECT_GT(all.audit_events, 0);
}

TEST_F(CallerLayerTest, ChangesAboveTheClearanceReadAsGone) {
  auto layer = AsCaller(*engine_, As("acme", 0));
  ASSERT_OK_AND_ASSIGN(RecordChanges page, layer->ChangesSince(Ns("acme"), 0, 100));
  ASSERT_EQ(page.records.size(), 1u);
  EXPECT_EQ(page.records[0].id, open_.id);
  EXPECT_NE(std::find(page.gone.begin(), page.gone.end(), secret_.id), page.gone.end());
}

TEST_F(CallerLayerTest, OneTenantNeverReachesAnothersRecords) {
  auto acme = AsCaller(*engine_, As("acme", std::nullopt));
  // Naming the other tenant is refused before anything is read or written.
  auto got = acme->Get(Ns("globex"), theirs_.id);
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(got.status().message(), "tenant 'globex'")) << got.status().message();
  RetrieveRequest r;
  r.scope = Ns("globex");
  r.query = "billing ledger decision";
  EXPECT_EQ(acme->Retrieve(r).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(acme->Search(r).status().code(), StatusCode::kInvalidArgument);
  std::ostringstream out;
  EXPECT_EQ(acme->Export(Ns("globex"), out).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(out.str().empty());
  EXPECT_EQ(acme->Delete(Ns("globex"), theirs_.id, "", "").code(), StatusCode::kInvalidArgument);
  WriteRequest w;
  w.ns = Ns("globex");
  w.text = "a preference written into another tenant";
  w.tags = {"preference"};
  EXPECT_EQ(acme->Write(w).status().code(), StatusCode::kInvalidArgument);
  RecordBatch b;
  b.scope = Ns("acme");
  b.puts = {Typed("globex", "a record put into another tenant", 0)};
  EXPECT_EQ(acme->Commit(b).status().code(), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(Stats s, engine_->GetStats(Ns("globex")));
  EXPECT_EQ(s.records, 1);

  // In its own tenant, the other tenant's id is simply not there.
  EXPECT_EQ(acme->Get(Ns("acme"), theirs_.id).status().code(), StatusCode::kNotFound);
  Seen seen = Read(*acme, "acme");
  for (const auto* ids : {&seen.retrieved, &seen.listed, &seen.exported}) {
    EXPECT_EQ(std::find(ids->begin(), ids->end(), theirs_.id), ids->end());
  }
}

TEST_F(CallerLayerTest, TheCallersActorIsTheActorOfEveryWrite) {
  auto layer = AsCaller(*engine_, As("acme", std::nullopt, "op-ann"));
  WriteRequest w;
  w.ns = Ns("acme");
  w.text = "prefers the billing ledger in euros";
  w.tags = {"preference"};
  w.actor = "someone-else";
  ASSERT_OK_AND_ASSIGN(WriteResult written, layer->Write(w));
  RecordBatch b;
  b.scope = Ns("acme");
  b.puts = {Typed("acme", "a committed decision", 0)};
  ASSERT_OK_AND_ASSIGN(std::vector<Memory> committed, layer->Commit(b));
  ASSERT_OK(layer->Delete(Ns("acme"), open_.id, "done", "someone-else"));

  ASSERT_OK_AND_ASSIGN(auto events, engine_->Audit(Ns("acme"), "", 100));
  int by_caller = 0;
  for (const AuditEvent& e : events) {
    if (e.record_id == written.id || e.record_id == committed[0].id ||
        (e.record_id == open_.id && e.action == AuditAction::kDelete)) {
      EXPECT_EQ(e.actor, "op-ann") << AuditActionName(e.action);
      ++by_caller;
    }
  }
  EXPECT_EQ(by_caller, 3);

  // Without an actor of its own, the request's (else options.actor) stays.
  auto anonymous = AsCaller(*engine_, As("acme", std::nullopt));
  w.text = "prefers the billing ledger in dollars";
  ASSERT_OK_AND_ASSIGN(WriteResult second, anonymous->Write(w));
  ASSERT_OK_AND_ASSIGN(events, engine_->Audit(Ns("acme"), second.id, 10));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].actor, "someone-else");
}

TEST_F(CallerLayerTest, AClearanceOutOfRangeIsRefusedOnEveryCall) {
  auto layer = AsCaller(*engine_, As("acme", kMaxAccessLevel + 1));
  auto got = layer->Get(Ns("acme"), open_.id);
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(got.status().message(), "clearance")) << got.status().message();
  ListRequest l;
  l.scope = Ns("acme");
  EXPECT_EQ(layer->List(l).status().code(), StatusCode::kInvalidArgument);
  WriteRequest w;
  w.ns = Ns("acme");
  w.text = "prefers the billing ledger in euros";
  w.tags = {"preference"};
  EXPECT_EQ(layer->Write(w).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AsCaller(*engine_, As("acme", -1))->Get(Ns("acme"), open_.id).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace msp
