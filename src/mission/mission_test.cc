// Mission records over a real engine (SQLite store, Xapian, hashing
// embedder) in a temp directory: decisions, supersede links, ADR import,
// principles with compare-and-swap (threads of the same race through a
// second engine), operators and clearance filtering, corrections.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ingest/fixtures.h"
#include "mission/records.h"
#include "msp/memory.h"
#include "msp/mission.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

using testing::Contains;

using testing::FakeClock;

// A MemoryLayer that forwards to another and runs `before_commit` once,
// just before the first Commit: the exact moment a concurrent writer would
// slip in between a read and a compare-and-swap write.
class RacingLayer final : public MemoryLayer {
 public:
  RacingLayer(MemoryLayer* inner, std::function<void()> before_commit)
      : inner_(inner), before_commit_(std::move(before_commit)) {}
  Result<WriteResult> Write(const WriteRequest& r) override { return inner_->Write(r); }
  Result<std::vector<WriteResult>> WriteMany(const std::vector<WriteRequest>& r) override {
    return inner_->WriteMany(r);
  }
  Result<Memory> AddEpisode(const EpisodeStep& s) override { return inner_->AddEpisode(s); }
  Result<std::vector<Memory>> LastSteps(const Namespace& s, const std::string& x, int k) override {
    return inner_->LastSteps(s, x, k);
  }
  Result<ConsolidationReport> EndSession(const Namespace& s, const std::string& x) override {
    return inner_->EndSession(s, x);
  }
  Result<WriteResult> AddFact(const FactRequest& r) override { return inner_->AddFact(r); }
  Result<WriteResult> SupersedeFact(const Namespace& s, const std::string& id, const FactRequest& r) override {
    return inner_->SupersedeFact(s, id, r);
  }
  Result<std::vector<Memory>> History(const Namespace& s, const std::string& id) override {
    return inner_->History(s, id);
  }
  Result<std::vector<SearchHit>> Retrieve(const RetrieveRequest& r) override { return inner_->Retrieve(r); }
  Result<Memory> Get(const Namespace& s, const std::string& id) override { return inner_->Get(s, id); }
  Result<std::vector<Memory>> List(const ListRequest& r) override { return inner_->List(r); }
  Status Delete(const Namespace& s, const std::string& id, const std::string& reason,
                const std::string& actor) override {
    return inner_->Delete(s, id, reason, actor);
  }
  Result<std::vector<Memory>> Commit(const RecordBatch& b) override {
    if (before_commit_) {
      auto f = std::move(before_commit_);
      before_commit_ = nullptr;
      f();
    }
    return inner_->Commit(b);
  }
  Result<ConsolidationReport> Consolidate(const Namespace& s, const std::string& x) override {
    return inner_->Consolidate(s, x);
  }
  Status Reindex() override { return inner_->Reindex(); }
  Result<ImportReport> Import(std::istream& in, const std::string& actor) override {
    return inner_->Import(in, actor);
  }
  Result<int64_t> Export(const Namespace& s, std::ostream& out) override { return inner_->Export(s, out); }
  Result<Stats> GetStats(const Namespace& s, std::optional<int> level) override { return inner_->GetStats(s, level); }
  Result<std::vector<AuditEvent>> Audit(const Namespace& s, const std::string& id, int limit) override {
    return inner_->Audit(s, id, limit);
  }

 private:
  MemoryLayer* inner_;
  std::function<void()> before_commit_;
};

class MissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    clock_ = std::make_shared<FakeClock>(*ParseIso8601("2026-01-01T09:00:00Z"));
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    options_.actor = "tester";
    auto e = MemoryLayer::Open(options_, clock_);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    scope_.tenant = "acme";
    scope_.mission = "mars";
  }

  std::unique_ptr<MemoryLayer> OpenAnother() {
    auto e = MemoryLayer::Open(options_, clock_);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  Decision NewDecision(const std::string& title, const std::string& component = "nav") {
    Decision d;
    d.title = title;
    d.context = "Context of " + title + ".";
    d.decision = "We do " + title + ".";
    d.alternatives = {{"do nothing", "the risk stays"}};
    d.component = component;
    d.decided_by = "ann";
    return d;
  }

  Decision Add(const Decision& d) {
    auto r = AddDecision(*engine_, scope_, d, "ann");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Decision{};
  }

  void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }

  static Asker Admin() { return Asker{"", kMaxAccessLevel}; }

  static OperatorRecord Op(const std::string& id, int clearance, const std::string& name) {
    OperatorRecord op;
    op.operator_id = id;
    op.clearance = clearance;
    op.name = name;
    return op;
  }

  testing::TempDir dir_{"mission"};
  std::shared_ptr<FakeClock> clock_;
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
  Namespace scope_;
};

// ------------------------------------------------------------- decisions

TEST_F(MissionTest, AddGetAndCyrillicRoundTrip) {
  Decision d = NewDecision("Маршрут через північний сектор", "навігація");
  d.context = "Південний сектор під радіоелектронним придушенням.";
  d.alternatives = {{"Південний маршрут", "канал зв'язку втрачається"}};
  d.provenance = {{"commit", "9f2c1e0", ""}, {"document", "orders.pdf", "page 3"}};
  d.criticality = Criticality::kCritical;
  d.decided_at = *ParseIso8601("2025-12-31T20:00:00Z");
  const Decision stored = Add(d);
  ASSERT_FALSE(stored.id.empty());
  EXPECT_GT(stored.seq, 0);
  EXPECT_EQ(stored.ns.mission, "mars");

  ASSERT_OK_AND_ASSIGN(Decision got, GetDecision(*engine_, scope_, stored.id, Admin()));
  EXPECT_EQ(got.title, d.title);
  EXPECT_EQ(got.context, d.context);
  EXPECT_EQ(got.alternatives, d.alternatives);
  EXPECT_EQ(got.component, "навігація");
  EXPECT_EQ(got.provenance, d.provenance);
  EXPECT_EQ(got.criticality, Criticality::kCritical);
  EXPECT_EQ(got.decided_at, d.decided_at);
  EXPECT_EQ(got.status, DecisionStatus::kAccepted);

  // Found by a Cyrillic query, and the raw record is an ordinary Memory.
  DecisionFilter f;
  f.query = "північний сектор";
  ASSERT_OK_AND_ASSIGN(auto hits, ListDecisions(*engine_, scope_, f, Admin()));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].id, stored.id);
  ASSERT_OK_AND_ASSIGN(Memory raw, engine_->Get(scope_, stored.id));
  EXPECT_EQ(raw.kind, Kind::kDecision);
  EXPECT_EQ(raw.layer, Layer::kWorkflow);
  EXPECT_TRUE(Contains(raw.text, "Південний маршрут: канал зв'язку втрачається"));
}

TEST_F(MissionTest, DecidedAtDefaultsToCreation) {
  const Decision stored = Add(NewDecision("default time"));
  EXPECT_EQ(stored.decided_at, *ParseIso8601("2026-01-01T09:00:00Z"));
  EXPECT_EQ(stored.decided_at, stored.created_at);
}

TEST_F(MissionTest, AddRefusesBadInput) {
  Decision d = NewDecision("x");
  d.context.clear();
  EXPECT_TRUE(Contains(AddDecision(*engine_, scope_, d, "ann").status().message(), "context is required"));
  Namespace no_mission;
  no_mission.tenant = "acme";
  EXPECT_TRUE(Contains(AddDecision(*engine_, no_mission, NewDecision("x"), "ann").status().message(),
                       "need a mission"));
  d = NewDecision("x");
  d.status = DecisionStatus::kSuperseded;
  EXPECT_EQ(AddDecision(*engine_, scope_, d, "ann").status().code(), StatusCode::kInvalidArgument);
  d = NewDecision("x");
  d.id = "0190e5c2-0000-7000-8000-000000000001";
  EXPECT_EQ(AddDecision(*engine_, scope_, d, "ann").status().code(), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_TRUE(all.empty());
}

TEST_F(MissionTest, CitedPrincipleMustExist) {
  Decision d = NewDecision("cites P-1");
  d.principles = {"P-1"};
  const Status s = AddDecision(*engine_, scope_, d, "ann").status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'P-1' is not in the registry of mission 'mars'"));
  Principle p;
  p.principle_id = "P-1";
  p.statement = "Keep a human in the loop.";
  ASSERT_OK(AddPrinciple(*engine_, scope_, p, "ann").status());
  ASSERT_OK_AND_ASSIGN(Decision stored, AddDecision(*engine_, scope_, d, "ann"));
  EXPECT_EQ(stored.principles, (std::vector<std::string>{"P-1"}));
  // Another mission's registry does not count.
  Namespace other = scope_;
  other.mission = "venus";
  EXPECT_EQ(AddDecision(*engine_, other, d, "ann").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(MissionTest, ListFilters) {
  Decision a = NewDecision("alpha", "nav");
  a.decided_at = *ParseIso8601("2026-01-01");
  a.criticality = Criticality::kHigh;
  Decision b = NewDecision("bravo", "comms");
  b.decided_at = *ParseIso8601("2026-02-01");
  b.status = DecisionStatus::kProposed;
  Decision c = NewDecision("charlie", "nav");
  c.decided_at = *ParseIso8601("2026-03-01");
  const std::string ia = Add(a).id, ib = Add(b).id, ic = Add(c).id;
  auto ids = [&](const DecisionFilter& f) {
    std::vector<std::string> out;
    auto r = ListDecisions(*engine_, scope_, f, Admin());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      for (const Decision& d : *r) out.push_back(d.id);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(ids({}), (V{ia, ib, ic}));
  DecisionFilter f;
  f.components = {"nav"};
  EXPECT_EQ(ids(f), (V{ia, ic}));
  f = {};
  f.statuses = {DecisionStatus::kProposed};
  EXPECT_EQ(ids(f), (V{ib}));
  f = {};
  f.criticalities = {Criticality::kHigh};
  EXPECT_EQ(ids(f), (V{ia}));
  f = {};
  f.from = *ParseIso8601("2026-01-15");
  f.to = *ParseIso8601("2026-03-01");
  EXPECT_EQ(ids(f), (V{ib}));
  f = {};
  f.newest_first = true;
  f.limit = 2;
  EXPECT_EQ(ids(f), (V{ic, ib}));
  f = {};
  f.query = "bravo";
  EXPECT_EQ(ids(f).at(0), ib);
  // Another mission sees none of them.
  Namespace other = scope_;
  other.mission = "venus";
  ASSERT_OK_AND_ASSIGN(auto none, ListDecisions(*engine_, other, {}, Admin()));
  EXPECT_TRUE(none.empty());
}

TEST_F(MissionTest, StatusChanges) {
  Decision d = NewDecision("proposal");
  d.status = DecisionStatus::kProposed;
  const Decision stored = Add(d);
  ASSERT_OK_AND_ASSIGN(Decision accepted,
                       SetDecisionStatus(*engine_, scope_, stored.id, DecisionStatus::kAccepted, "bob"));
  EXPECT_EQ(accepted.status, DecisionStatus::kAccepted);
  EXPECT_GT(accepted.seq, stored.seq);
  EXPECT_EQ(accepted.title, "proposal");
  EXPECT_EQ(SetDecisionStatus(*engine_, scope_, stored.id, DecisionStatus::kSuperseded, "bob").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SetDecisionStatus(*engine_, scope_, "0190e5c2-0000-7000-8000-000000000001", DecisionStatus::kAccepted,
                              "bob")
                .status()
                .code(),
            StatusCode::kNotFound);
}

TEST_F(MissionTest, SupersedeLinksBothWaysAndKeepsHistory) {
  const Decision old_d = Add(NewDecision("use radio A"));
  const Decision new_d = Add(NewDecision("use radio B"));
  ASSERT_OK_AND_ASSIGN(SupersedeResult r, SupersedeDecision(*engine_, scope_, old_d.id, new_d.id, "bob"));
  EXPECT_EQ(r.old_decision.status, DecisionStatus::kSuperseded);
  EXPECT_EQ(r.old_decision.superseded_by, new_d.id);
  EXPECT_EQ(r.new_decision.supersedes, old_d.id);
  EXPECT_EQ(r.new_decision.status, DecisionStatus::kAccepted);

  ASSERT_OK_AND_ASSIGN(Decision old_again, GetDecision(*engine_, scope_, old_d.id, Admin()));
  EXPECT_EQ(old_again.title, "use radio A");  // content kept
  EXPECT_EQ(old_again.superseded_by, new_d.id);
  ASSERT_OK_AND_ASSIGN(Memory raw, engine_->Get(scope_, old_d.id));
  EXPECT_EQ(raw.state, RecordState::kSuperseded);
  ASSERT_OK_AND_ASSIGN(auto history, engine_->History(scope_, new_d.id));
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].id, old_d.id);
  EXPECT_EQ(history[1].id, new_d.id);

  // Search serves the current decision only; the list by status still has both.
  DecisionFilter f;
  f.query = "radio";
  ASSERT_OK_AND_ASSIGN(auto hits, ListDecisions(*engine_, scope_, f, Admin()));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].id, new_d.id);
  f.statuses = {DecisionStatus::kSuperseded};
  ASSERT_OK_AND_ASSIGN(auto old_hits, ListDecisions(*engine_, scope_, f, Admin()));
  ASSERT_EQ(old_hits.size(), 1u);
  EXPECT_EQ(old_hits[0].id, old_d.id);

  // The rules.
  const Decision third = Add(NewDecision("use radio C"));
  Status s = SupersedeDecision(*engine_, scope_, old_d.id, third.id, "bob").status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(s.message(), "already superseded by " + new_d.id));
  s = SupersedeDecision(*engine_, scope_, third.id, old_d.id, "bob").status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(s.message(), "itself superseded"));
  EXPECT_EQ(SupersedeDecision(*engine_, scope_, third.id, third.id, "bob").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SetDecisionStatus(*engine_, scope_, old_d.id, DecisionStatus::kAccepted, "bob").status().code(),
            StatusCode::kFailedPrecondition);
}

// ------------------------------------------------------------ ADR import

AdrFile TextFile(const std::string& name, const std::string& text) {
  AdrFile f;
  f.name = name;
  f.text = text;
  return f;
}

class AdrImportTest : public MissionTest {
 protected:
  void SetUp() override {
    MissionTest::SetUp();
    adr_dir_ = dir_.path() + "/adr";
    fs::create_directories(adr_dir_);
    WriteFile(adr_dir_ + "/0001-record-architecture-decisions.md",
              "# 1. Record architecture decisions\n\nDate: 2016-02-12\n\n## Status\n\nAccepted\n\n## Context\n\n"
              "We need to record decisions.\n\n## Decision\n\nWe will use ADRs.\n\n## Consequences\n\nSee Nygard.\n");
    WriteFile(adr_dir_ + "/0002-use-mysql.md",
              "# 2. Use MySQL\n\n## Status\n\nSuperseded by [3. Use Postgres](0003-use-postgres.md)\n\n"
              "## Context\n\nWe need a database.\n\n## Decision\n\nMySQL.\n\n## Consequences\n\nNone.\n");
    WriteFile(adr_dir_ + "/0003-use-postgres.md",
              "# 3. Use Postgres\n\n## Status\n\nAccepted\n\nSupersedes [2. Use MySQL](0002-use-mysql.md)\n\n"
              "## Context\n\nMySQL lacked transactional DDL.\n\n## Decision\n\nPostgres.\n\n"
              "## Alternatives\n\n- SQLite: no server-side concurrency\n");
    WriteFile(adr_dir_ + "/0004-маршрут.md",
              "# 4. Маршрут через північ\n\n## Status\n\nProposed\n\n## Context\n\nПівденний сектор закритий.\n\n"
              "## Decision\n\nЙдемо північним маршрутом.\n");
    WriteFile(adr_dir_ + "/README.md", "# Decisions\n\nThis folder holds ADRs.\n");
  }

  Result<AdrImportReport> Import(const AdrImportOptions& o = {}) {
    return ImportAdrDirectory(*engine_, scope_, adr_dir_, o, "importer");
  }

  std::string adr_dir_;
};

TEST_F(AdrImportTest, ImportsLinksAndIsIdempotent) {
  AdrImportOptions o;
  o.component = "platform";
  ASSERT_OK_AND_ASSIGN(AdrImportReport first, Import(o));
  EXPECT_EQ(first.added, 4);
  EXPECT_EQ(first.updated, 0);
  ASSERT_EQ(first.entries.size(), 4u);  // README skipped
  EXPECT_EQ(first.entries[0].title, "Record architecture decisions");
  bool warned_consequences = false;
  for (const std::string& w : first.warnings) warned_consequences |= Contains(w, "0004-маршрут.md: no Consequences");
  EXPECT_TRUE(warned_consequences);

  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  ASSERT_EQ(all.size(), 4u);
  std::map<int, Decision> by_number;
  for (const Decision& d : all) by_number[d.adr_number] = d;
  EXPECT_EQ(by_number[1].decided_at, *ParseIso8601("2016-02-12"));
  EXPECT_EQ(by_number[1].component, "platform");
  ASSERT_EQ(by_number[1].provenance.size(), 1u);
  EXPECT_EQ(by_number[1].provenance[0].type, "document");
  EXPECT_EQ(by_number[1].provenance[0].ref,
            fs::weakly_canonical(adr_dir_ + "/0001-record-architecture-decisions.md").string());
  EXPECT_EQ(by_number[2].status, DecisionStatus::kSuperseded);
  EXPECT_EQ(by_number[2].superseded_by, by_number[3].id);
  EXPECT_EQ(by_number[3].supersedes, by_number[2].id);
  EXPECT_EQ(by_number[3].alternatives, (std::vector<Alternative>{{"SQLite", "no server-side concurrency"}}));
  EXPECT_EQ(by_number[4].title, "Маршрут через північ");
  EXPECT_EQ(by_number[4].status, DecisionStatus::kProposed);

  // Re-import: nothing new, nothing changed, the same ids.
  ASSERT_OK_AND_ASSIGN(AdrImportReport second, Import(o));
  EXPECT_EQ(second.added, 0);
  EXPECT_EQ(second.updated, 0);
  EXPECT_EQ(second.unchanged, 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(second.entries[i].id, first.entries[i].id);
  ASSERT_OK_AND_ASSIGN(auto again, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(again.size(), 4u);
  for (const Decision& d : again) EXPECT_EQ(d.seq, by_number[d.adr_number].seq) << d.title;

  // A changed file is updated in place.
  WriteFile(adr_dir_ + "/0004-маршрут.md",
            "# 4. Маршрут через північ\n\n## Status\n\nAccepted\n\n## Context\n\nПівденний сектор закритий.\n\n"
            "## Decision\n\nЙдемо північним маршрутом.\n\n## Consequences\n\nДовше на 20 хвилин.\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport third, Import(o));
  EXPECT_EQ(third.added, 0);
  EXPECT_EQ(third.updated, 1);
  EXPECT_EQ(third.unchanged, 3);
  ASSERT_OK_AND_ASSIGN(Decision four, GetDecision(*engine_, scope_, by_number[4].id, Admin()));
  EXPECT_EQ(four.status, DecisionStatus::kAccepted);
  EXPECT_EQ(four.consequences, "Довше на 20 хвилин.");
  EXPECT_EQ(four.created_at, by_number[4].created_at);
  ASSERT_OK_AND_ASSIGN(auto after, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(after.size(), 4u);
}

// Issue 19: one bad file no longer fails the folder. The rest is imported;
// each failure names its file and reason; the bad file changes nothing.
TEST_F(AdrImportTest, ABadFileFailsAloneNamingItsReason) {
  WriteFile(adr_dir_ + "/0005-broken.md", "# 5. Broken\n\n## Context\n\nbad \xFF byte\n\n## Decision\n\nd\n");
  WriteFile(adr_dir_ + "/0006-empty.md", "# 6. Only a title\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import());
  EXPECT_EQ(r.added, 4);
  EXPECT_EQ(r.failed, 2);
  std::map<std::string, AdrImportEntry> by_name;
  for (const AdrImportEntry& e : r.entries) by_name[fs::path(e.file).filename().string()] = e;
  EXPECT_EQ(by_name["0005-broken.md"].action, "failed");
  EXPECT_TRUE(Contains(by_name["0005-broken.md"].error, "invalid UTF-8")) << by_name["0005-broken.md"].error;
  EXPECT_EQ(by_name["0006-empty.md"].action, "failed");
  EXPECT_TRUE(Contains(by_name["0006-empty.md"].error, "no text to take a decision from"));
  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(all.size(), 4u);
  const nlohmann::json j = AdrImportReportToJson(r);
  EXPECT_EQ(j["failed"], 2);

  // A file that imported once and then breaks keeps its record as it was.
  const std::string one = adr_dir_ + "/0001-record-architecture-decisions.md";
  ASSERT_OK_AND_ASSIGN(Decision before, GetDecision(*engine_, scope_, by_name["0001-record-architecture-decisions.md"].id, Admin()));
  WriteFile(one, "# 1. Broken now\n\xC3\x28\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport again, Import());
  EXPECT_EQ(again.failed, 3);
  EXPECT_EQ(again.updated, 0);
  ASSERT_OK_AND_ASSIGN(Decision after, GetDecision(*engine_, scope_, before.id, Admin()));
  EXPECT_EQ(after.seq, before.seq);
  EXPECT_EQ(after.title, "Record architecture decisions");
}

// Re-importing unchanged files with another operator changes nothing (not
// even who decided); a changed file is the next revision, with who imported
// it.
TEST_F(AdrImportTest, ReimportKeepsDeciderAndCountsRevisions) {
  AdrImportOptions ann;
  ann.decided_by = "ann";
  ASSERT_OK_AND_ASSIGN(AdrImportReport first, ImportAdrDirectory(*engine_, scope_, adr_dir_, ann, "ann"));
  EXPECT_EQ(first.added, 4);
  AdrImportOptions bob;
  bob.decided_by = "bob";
  ASSERT_OK_AND_ASSIGN(AdrImportReport second, ImportAdrDirectory(*engine_, scope_, adr_dir_, bob, "bob"));
  EXPECT_EQ(second.unchanged, 4);
  EXPECT_EQ(second.updated, 0);
  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  for (const Decision& d : all) {
    EXPECT_EQ(d.decided_by, "ann") << d.title;
    ASSERT_EQ(d.revisions.size(), 1u) << d.title;
    EXPECT_EQ(d.revisions[0].revision, 1);
    EXPECT_EQ(d.revisions[0].by, "ann");
  }
  WriteFile(adr_dir_ + "/0004-маршрут.md",
            "# 4. Маршрут через північ\n\n## Status\n\nAccepted\n\n## Context\n\nПівденний сектор закритий.\n\n"
            "## Decision\n\nЙдемо північним маршрутом.\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport third, ImportAdrDirectory(*engine_, scope_, adr_dir_, bob, "bob"));
  EXPECT_EQ(third.updated, 1);
  EXPECT_EQ(third.unchanged, 3);
  ASSERT_OK_AND_ASSIGN(Decision four, GetDecision(*engine_, scope_, third.entries[3].id, Admin()));
  EXPECT_EQ(four.status, DecisionStatus::kAccepted);
  EXPECT_EQ(four.decided_by, "ann");  // the ADR names none; the first import's stays
  ASSERT_EQ(four.revisions.size(), 2u);
  EXPECT_EQ(four.revisions[1].revision, 2);
  EXPECT_EQ(four.revisions[1].by, "bob");
}

// Supersede links written in the ways real collections write them, linked
// both ways; one that names no file of the folder is a warning.
TEST_F(AdrImportTest, SupersedeFormsAreLinkedBothWays) {
  const std::string dir = dir_.path() + "/decisions";
  fs::create_directories(dir);
  WriteFile(dir + "/adr013-use-node-fetch.md",
            "---\nid: adrs-adr013\ntitle: 'ADR013: Proper use of HTTP fetching libraries'\n---\n\n"
            ":::note Superseded\n\nThis ADR has been superseded by [ADR014](./adr014-use-fetch.md) and no longer "
            "applies.\n\n:::\n\n## Context\n\nMany HTTP packages.\n\n## Decision\n\nUse node-fetch.\n");
  WriteFile(dir + "/adr014-use-fetch.md",
            "---\nid: adrs-adr014\ntitle: 'ADR014: Use fetch'\n---\n\n## Context\n\nNode has fetch now.\n\n"
            "## Decision\n\nUse the native fetch.\n");
  WriteFile(dir + "/0020-old-cache.md", "# [Superseded] Old cache\n\n## Context\n\nc\n\n## Decision\n\nd\n");
  WriteFile(dir + "/0021-new-cache.md",
            "---\nstatus: accepted\nsupersedes: 0020-old-cache.md\n---\n# New cache\n\n## Context\n\nc\n\n"
            "## Decision\n\nd\n");
  WriteFile(dir + "/0030-gone.md", "# Gone\n\n## Status\n\nSuperseded by [ADR 99](0099-missing.md)\n\n"
                                  "## Context\n\nc\n\n## Decision\n\nd\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, ImportAdrDirectory(*engine_, scope_, dir, {}, "importer"));
  EXPECT_EQ(r.added, 5);
  std::map<std::string, std::string> id;
  for (const AdrImportEntry& e : r.entries) id[fs::path(e.file).filename().string()] = e.id;
  ASSERT_OK_AND_ASSIGN(Decision d13, GetDecision(*engine_, scope_, id["adr013-use-node-fetch.md"], Admin()));
  ASSERT_OK_AND_ASSIGN(Decision d14, GetDecision(*engine_, scope_, id["adr014-use-fetch.md"], Admin()));
  EXPECT_EQ(d13.title, "Proper use of HTTP fetching libraries");
  EXPECT_EQ(d13.status, DecisionStatus::kSuperseded);
  EXPECT_EQ(d13.superseded_by, d14.id);
  EXPECT_EQ(d14.supersedes, d13.id);
  EXPECT_EQ(d14.status, DecisionStatus::kProposed);
  ASSERT_OK_AND_ASSIGN(Decision d20, GetDecision(*engine_, scope_, id["0020-old-cache.md"], Admin()));
  ASSERT_OK_AND_ASSIGN(Decision d21, GetDecision(*engine_, scope_, id["0021-new-cache.md"], Admin()));
  EXPECT_EQ(d20.status, DecisionStatus::kSuperseded);
  EXPECT_EQ(d20.superseded_by, d21.id);
  EXPECT_EQ(d21.supersedes, d20.id);
  EXPECT_EQ(d21.status, DecisionStatus::kAccepted);
  ASSERT_OK_AND_ASSIGN(Decision d30, GetDecision(*engine_, scope_, id["0030-gone.md"], Admin()));
  EXPECT_EQ(d30.status, DecisionStatus::kSuperseded);
  EXPECT_TRUE(d30.superseded_by.empty());
  bool warned = false;
  for (const std::string& w : r.warnings) {
    warned |= Contains(w, "0030-gone.md: superseded by '0099-missing.md', which is not an imported ADR");
  }
  EXPECT_TRUE(warned);
  // Search serves the successor, not the superseded one.
  DecisionFilter f;
  f.query = "HTTP fetch library";
  ASSERT_OK_AND_ASSIGN(auto hits, ListDecisions(*engine_, scope_, f, Admin()));
  for (const Decision& d : hits) EXPECT_NE(d.id, d13.id);
}

// An ADR that writes no date is dated by its file's first commit when the
// folder is in a git repository; a revision names the latest commit's author.
TEST_F(AdrImportTest, DatesFromTheFirstCommitWhenTheAdrHasNone) {
  ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(dir_.path() + "/repo"));
  const int64_t t1 = *ParseIso8601("2021-01-04") / 1000, t2 = *ParseIso8601("2021-06-01") / 1000;
  ASSERT_OK(repo.Commit({{"docs/adr/0001-undated.md", "# 1. Undated\n\n## Context\n\nc\n\n## Decision\n\nd\n"},
                         {"docs/adr/0002-dated.md",
                          "# 2. Dated\n\nDate: 2019-05-05\n\n## Context\n\nc\n\n## Decision\n\nd\n"}},
                        "add ADRs", "Ann", t1)
                .status());
  ASSERT_OK(repo.Commit({{"docs/adr/0001-undated.md", "# 1. Undated\n\n## Context\n\nc2\n\n## Decision\n\nd\n"}},
                        "edit ADR 1", "Bob", t2)
                .status());
  // A file never committed has no git date.
  WriteFile(dir_.path() + "/repo/docs/adr/0003-new.md", "# 3. New\n\n## Context\n\nc\n\n## Decision\n\nd\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r,
                       ImportAdrDirectory(*engine_, scope_, dir_.path() + "/repo/docs/adr", {}, "importer"));
  ASSERT_EQ(r.added, 3);
  ASSERT_OK_AND_ASSIGN(Decision one, GetDecision(*engine_, scope_, r.entries[0].id, Admin()));
  ASSERT_OK_AND_ASSIGN(Decision two, GetDecision(*engine_, scope_, r.entries[1].id, Admin()));
  ASSERT_OK_AND_ASSIGN(Decision three, GetDecision(*engine_, scope_, r.entries[2].id, Admin()));
  EXPECT_EQ(one.decided_at, t1 * 1000);
  EXPECT_EQ(two.decided_at, *ParseIso8601("2019-05-05"));
  EXPECT_NE(three.decided_at, t1 * 1000);
  ASSERT_EQ(one.revisions.size(), 1u);
  EXPECT_EQ(one.revisions[0].author, "Bob");
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= Contains(w, "0003-new.md: no date");
  EXPECT_TRUE(warned);
}

// One ADR a folder (FOLDER/index.md, as Docusaurus and Hugo sites keep them):
// each folder's index file is an ADR named after the folder, and links to
// "../FOLDER/index.md" resolve.
TEST_F(AdrImportTest, AnAdrInAFolderOfItsOwn) {
  const std::string dir = dir_.path() + "/site";
  fs::create_directories(dir + "/0001-use-rest");
  fs::create_directories(dir + "/0002-use-grpc");
  fs::create_directories(dir + "/assets");
  WriteFile(dir + "/0001-use-rest/index.md", "---\nstatus: accepted\n---\n\n## Context\n\nc\n\n## Decision\n\nREST.\n");
  WriteFile(dir + "/0002-use-grpc/index.md",
            "# Use gRPC\n\nStatus: accepted\n\nSupersedes [ADR 1](../0001-use-rest/index.md)\n\n## Context\n\nc\n\n"
            "## Decision\n\ngRPC.\n");
  WriteFile(dir + "/assets/diagram.txt", "not an ADR");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, ImportAdrDirectory(*engine_, scope_, dir, {}, "importer"));
  ASSERT_EQ(r.added, 2) << (r.entries.empty() ? "" : r.entries[0].error);
  ASSERT_OK_AND_ASSIGN(Decision rest, GetDecision(*engine_, scope_, r.entries[0].id, Admin()));
  ASSERT_OK_AND_ASSIGN(Decision grpc, GetDecision(*engine_, scope_, r.entries[1].id, Admin()));
  EXPECT_EQ(rest.title, "Use rest");  // from the folder's name
  EXPECT_EQ(rest.adr_number, 1);
  EXPECT_EQ(rest.provenance[0].ref, fs::weakly_canonical(dir).string() + "/0001-use-rest/index.md");
  EXPECT_EQ(grpc.adr_number, 2);
  EXPECT_EQ(rest.superseded_by, grpc.id);
  EXPECT_EQ(grpc.supersedes, rest.id);
  // Names sent as text follow the same rule.
  ASSERT_OK(ImportAdrFiles(*engine_, scope_, "site", {TextFile("0003-x/README.md", "# X\n\n## Decision\n\nd\n")},
                           {}, "api")
                .status());
  EXPECT_EQ(ImportAdrFiles(*engine_, scope_, "site", {TextFile("0003-x/notes.md", "# X\n\n## Decision\n\nd\n")}, {},
                           "api")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

// A section the importer does not map is kept in the decision, and search
// finds it.
TEST_F(AdrImportTest, UnmappedSectionsAreKeptAndSearchable) {
  WriteFile(adr_dir_ + "/0009-entity-references.md",
            "# 9. Entity references\n\n## Status\n\nAccepted\n\n## Context\n\nEntities point at each other.\n\n"
            "## Decision\n\nUse kind:namespace/name strings.\n\n## Entity References in URLs\n\n"
            "Percent-encode the colon and slash when a reference travels in a query parameter.\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import());
  EXPECT_EQ(r.added, 5);
  ASSERT_OK_AND_ASSIGN(Decision d, GetDecision(*engine_, scope_, r.entries[4].id, Admin()));
  ASSERT_EQ(d.sections.size(), 1u);
  EXPECT_EQ(d.sections[0].heading, "Entity References in URLs");
  EXPECT_TRUE(Contains(d.sections[0].text, "Percent-encode the colon"));
  DecisionFilter f;
  f.query = "percent-encode query parameter";
  f.limit = 1;
  ASSERT_OK_AND_ASSIGN(auto hits, ListDecisions(*engine_, scope_, f, Admin()));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].id, d.id);
}

TEST_F(AdrImportTest, DryRunWritesNothingAndMissingDirIsNotFound) {
  AdrImportOptions o;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import(o));
  EXPECT_EQ(r.added, 4);
  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_TRUE(all.empty());
  EXPECT_EQ(ImportAdrDirectory(*engine_, scope_, dir_.path() + "/nope", {}, "x").status().code(),
            StatusCode::kNotFound);
}

TEST_F(AdrImportTest, AccessLevelAppliesToImportedDecisions) {
  AdrImportOptions o;
  o.access_level = 6;
  ASSERT_OK(Import(o).status());
  ASSERT_OK_AND_ASSIGN(auto low, ListDecisions(*engine_, scope_, {}, Asker{"", 5}));
  EXPECT_TRUE(low.empty());
  ASSERT_OK_AND_ASSIGN(auto high, ListDecisions(*engine_, scope_, {}, Asker{"", 6}));
  EXPECT_EQ(high.size(), 4u);
}

// Files given as text (the REST and MCP faces) import as the folder's files
// would: the same ids, so a later import of either kind updates them.
// A link out of the folder is not followed (issue 24: a link to /etc/passwd
// was parsed as an ADR); the import warns and takes the rest.
TEST_F(AdrImportTest, LinksOutOfTheFolderAreNotFollowed) {
  const std::string outside = dir_.path() + "/elsewhere.md";
  WriteFile(outside, "# 9. Leaked\n\n## Status\n\nAccepted\n\n## Decision\n\nSecrets.\n");
  fs::create_symlink(outside, adr_dir_ + "/0009-leaked.md");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import());
  EXPECT_EQ(r.added, 4);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("0009-leaked.md: a symbolic link to"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("not followed"), std::string::npos);
  for (const auto& e : r.entries) EXPECT_EQ(e.file.find("0009"), std::string::npos) << e.file;
}

TEST_F(AdrImportTest, FilesAsTextMatchTheFolderImport) {
  ASSERT_OK_AND_ASSIGN(AdrImportReport from_dir, Import());
  ASSERT_EQ(from_dir.added, 4);
  std::vector<AdrFile> files;
  for (const auto& entry : fs::directory_iterator(adr_dir_)) {
    if (entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    AdrFile file;
    file.name = entry.path().filename().string();
    file.text = text.str();
    files.push_back(std::move(file));
  }
  const std::string folder = fs::weakly_canonical(adr_dir_).string();
  ASSERT_OK_AND_ASSIGN(AdrImportReport as_text, ImportAdrFiles(*engine_, scope_, folder, files, {}, "api"));
  EXPECT_EQ(as_text.added, 0);
  EXPECT_EQ(as_text.unchanged, 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(as_text.entries[i].id, from_dir.entries[i].id);
  ASSERT_OK_AND_ASSIGN(AdrImportReport elsewhere, ImportAdrFiles(*engine_, scope_, "repo/docs/adr", files, {}, "api"));
  EXPECT_EQ(elsewhere.added, 4);  // another folder: other decisions
  EXPECT_EQ(elsewhere.entries[0].file, "repo/docs/adr/0001-record-architecture-decisions.md");

  // Bad names fail the whole import and write nothing.
  ASSERT_OK_AND_ASSIGN(auto before, ListDecisions(*engine_, scope_, {}, Admin()));
  for (const std::vector<AdrFile>& bad :
       {std::vector<AdrFile>{TextFile("../0009-x.md", files[0].text)}, std::vector<AdrFile>{TextFile("", files[0].text)},
        std::vector<AdrFile>{TextFile("a.md", files[0].text), TextFile("a.md", files[1].text)}}) {
    const Status st = ImportAdrFiles(*engine_, scope_, "other", bad, {}, "api").status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  }
  EXPECT_EQ(ImportAdrFiles(*engine_, scope_, "", files, {}, "api").status().code(), StatusCode::kInvalidArgument);
  // A folder is checked as the names are (issue 24: "../../../etc" was stored
  // as provenance).
  for (const char* bad_folder : {"../../../etc", "docs/../../etc", "./adr", "docs//adr", "/etc/..", "docs\\adr",
                                 "adr\n", ".."}) {
    const Status st = ImportAdrFiles(*engine_, scope_, bad_folder, files, {}, "api").status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad_folder;
    EXPECT_NE(st.message().find("plain names"), std::string::npos) << st.message();
  }
  ASSERT_OK_AND_ASSIGN(auto after, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(after.size(), before.size());
}

// ------------------------------------------------------------ principles

TEST_F(MissionTest, PrincipleVersionsAndStaleEdits) {
  Principle p;
  p.principle_id = "P-7";
  p.statement = "Оператор підтверджує кожну зміну цілі.";
  p.rationale = "Відповідальність.";
  p.author = "ann";
  ASSERT_OK_AND_ASSIGN(Principle v1, AddPrinciple(*engine_, scope_, p, "ann"));
  EXPECT_EQ(v1.version, 1);
  EXPECT_TRUE(v1.current);

  Status dup = AddPrinciple(*engine_, scope_, p, "bob").status();
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(Contains(dup.message(), "current version 1"));

  PrincipleEdit e;
  e.principle_id = "P-7";
  e.base_version = 1;
  e.statement = "The operator confirms every target change within 30 s.";
  e.author = "bob";
  ASSERT_OK_AND_ASSIGN(Principle v2, EditPrinciple(*engine_, scope_, e, "bob"));
  EXPECT_EQ(v2.version, 2);
  EXPECT_EQ(v2.rationale, "Відповідальність.");  // kept
  EXPECT_EQ(v2.author, "bob");

  // A second edit of version 1 is stale: Conflict with the current version.
  e.statement = "Something else.";
  e.author = "carol";
  Status stale = EditPrinciple(*engine_, scope_, e, "carol").status();
  EXPECT_EQ(stale.code(), StatusCode::kConflict);
  EXPECT_TRUE(Contains(stale.message(), "the current version is 2")) << stale.message();

  ASSERT_OK_AND_ASSIGN(auto versions, PrincipleVersions(*engine_, scope_, "P-7", Admin()));
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].statement, p.statement);
  EXPECT_FALSE(versions[0].current);
  EXPECT_EQ(versions[1].statement, "The operator confirms every target change within 30 s.");
  EXPECT_TRUE(versions[1].current);
  ASSERT_OK_AND_ASSIGN(Principle current, GetPrinciple(*engine_, scope_, "P-7", 0, Admin()));
  EXPECT_EQ(current.version, 2);
  ASSERT_OK_AND_ASSIGN(Principle first, GetPrinciple(*engine_, scope_, "P-7", 1, Admin()));
  EXPECT_EQ(first.statement, p.statement);
  ASSERT_OK_AND_ASSIGN(auto listed, ListPrinciples(*engine_, scope_, Admin()));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].version, 2);
  ASSERT_OK_AND_ASSIGN(auto history, engine_->History(scope_, v2.id));
  EXPECT_EQ(history.size(), 2u);

  e.base_version = 5;
  EXPECT_TRUE(Contains(EditPrinciple(*engine_, scope_, e, "x").status().message(), "has no version 5"));
  e.base_version = 0;
  EXPECT_TRUE(Contains(EditPrinciple(*engine_, scope_, e, "x").status().message(), "base_version is required"));
  e.principle_id = "P-8";
  e.base_version = 1;
  EXPECT_EQ(EditPrinciple(*engine_, scope_, e, "x").status().code(), StatusCode::kNotFound);
}

TEST_F(MissionTest, ConcurrentEditLosesAtTheCompareAndSwap) {
  Principle p;
  p.principle_id = "P-1";
  p.statement = "First statement.";
  ASSERT_OK(AddPrinciple(*engine_, scope_, p, "ann").status());
  // Bob's edit reads version 1; just before it writes, Carol's edit of
  // version 1 lands through a second engine on the same data directory.
  std::unique_ptr<MemoryLayer> other = OpenAnother();
  ASSERT_NE(other, nullptr);
  Status carol_status;
  RacingLayer racing(engine_.get(), [&] {
    PrincipleEdit carol;
    carol.principle_id = "P-1";
    carol.base_version = 1;
    carol.statement = "Carol's statement.";
    carol.author = "carol";
    carol_status = EditPrinciple(*other, scope_, carol, "carol").status();
  });
  PrincipleEdit bob;
  bob.principle_id = "P-1";
  bob.base_version = 1;
  bob.statement = "Bob's statement.";
  bob.author = "bob";
  const Status bob_status = EditPrinciple(racing, scope_, bob, "bob").status();
  ASSERT_OK(carol_status);
  EXPECT_EQ(bob_status.code(), StatusCode::kConflict);
  EXPECT_TRUE(Contains(bob_status.message(), "the current version is 2")) << bob_status.message();
  ASSERT_OK_AND_ASSIGN(auto versions, PrincipleVersions(*engine_, scope_, "P-1", Admin()));
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[1].statement, "Carol's statement.");
}

// ------------------------------------------------- operators and access

TEST_F(MissionTest, ClearanceComesFromTheRegistry) {
  ASSERT_OK_AND_ASSIGN(int unknown, ClearanceOf(*engine_, scope_, "nobody"));
  EXPECT_EQ(unknown, 0);
  ASSERT_OK_AND_ASSIGN(int empty, ClearanceOf(*engine_, scope_, ""));
  EXPECT_EQ(empty, 0);
  EXPECT_EQ(ClearanceOf(*engine_, scope_, "two words").status().code(), StatusCode::kInvalidArgument);

  Namespace tenant_wide;
  tenant_wide.tenant = "acme";
  ASSERT_OK(SetOperator(*engine_, tenant_wide, Op("ann", 3, "Ann"), "admin").status());
  ASSERT_OK_AND_ASSIGN(int ann, ClearanceOf(*engine_, scope_, "ann"));
  EXPECT_EQ(ann, 3);  // tenant-wide applies to every mission
  ASSERT_OK(SetOperator(*engine_, scope_, Op("ann", 7, "Ann"), "admin").status());
  ASSERT_OK_AND_ASSIGN(ann, ClearanceOf(*engine_, scope_, "ann"));
  EXPECT_EQ(ann, 7);  // the mission setting shadows it
  Namespace venus = scope_;
  venus.mission = "venus";
  ASSERT_OK_AND_ASSIGN(int ann_venus, ClearanceOf(*engine_, venus, "ann"));
  EXPECT_EQ(ann_venus, 3);
  Namespace other_tenant = scope_;
  other_tenant.tenant = "globex";
  ASSERT_OK_AND_ASSIGN(int ann_globex, ClearanceOf(*engine_, other_tenant, "ann"));
  EXPECT_EQ(ann_globex, 0);

  // Lowering replaces the setting.
  ASSERT_OK(SetOperator(*engine_, scope_, Op("ann", 2, ""), "admin").status());
  ASSERT_OK_AND_ASSIGN(ann, ClearanceOf(*engine_, scope_, "ann"));
  EXPECT_EQ(ann, 2);
  ASSERT_OK(SetOperator(*engine_, scope_, Op("bob", 9, ""), "admin").status());
  ASSERT_OK_AND_ASSIGN(auto ops, ListOperators(*engine_, scope_));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].operator_id, "ann");
  EXPECT_EQ(ops[0].clearance, 2);
  EXPECT_EQ(ops[1].operator_id, "bob");
  EXPECT_EQ(SetOperator(*engine_, scope_, Op("eve", 10, ""), "admin").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(MissionTest, ReadsServeOnlyWhatTheClearanceAllows) {
  ASSERT_OK(SetOperator(*engine_, scope_, Op("low", 2, ""), "admin").status());
  ASSERT_OK(SetOperator(*engine_, scope_, Op("high", 6, ""), "admin").status());
  Decision open = NewDecision("open convoy route");
  open.access_level = 0;
  Decision secret = NewDecision("secret convoy route");
  secret.access_level = 5;
  const std::string open_id = Add(open).id;
  const std::string secret_id = Add(secret).id;

  const Asker low{"low", std::nullopt}, high{"high", std::nullopt}, stranger{"stranger", std::nullopt};
  // get
  ASSERT_OK(GetDecision(*engine_, scope_, open_id, low).status());
  const Status hidden = GetDecision(*engine_, scope_, secret_id, low).status();
  EXPECT_EQ(hidden.code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(hidden.message(), "visible at clearance 2"));
  ASSERT_OK(GetDecision(*engine_, scope_, secret_id, high).status());
  EXPECT_EQ(GetDecision(*engine_, scope_, secret_id, stranger).status().code(), StatusCode::kNotFound);
  // list
  ASSERT_OK_AND_ASSIGN(auto low_list, ListDecisions(*engine_, scope_, {}, low));
  ASSERT_EQ(low_list.size(), 1u);
  EXPECT_EQ(low_list[0].id, open_id);
  ASSERT_OK_AND_ASSIGN(auto high_list, ListDecisions(*engine_, scope_, {}, high));
  EXPECT_EQ(high_list.size(), 2u);
  // search
  DecisionFilter f;
  f.query = "secret convoy";
  ASSERT_OK_AND_ASSIGN(auto low_hits, ListDecisions(*engine_, scope_, f, low));
  for (const Decision& d : low_hits) EXPECT_NE(d.id, secret_id);
  EXPECT_EQ(low_hits.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto high_hits, ListDecisions(*engine_, scope_, f, high));
  ASSERT_FALSE(high_hits.empty());
  EXPECT_EQ(high_hits[0].id, secret_id);
  // An explicit clearance is used as given.
  ASSERT_OK_AND_ASSIGN(auto explicit_list, ListDecisions(*engine_, scope_, {}, Asker{"low", 9}));
  EXPECT_EQ(explicit_list.size(), 2u);
  EXPECT_EQ(ListDecisions(*engine_, scope_, {}, Asker{"", 12}).status().code(), StatusCode::kInvalidArgument);

  // Principles too.
  Principle p;
  p.principle_id = "S-1";
  p.statement = "Classified principle.";
  p.access_level = 4;
  ASSERT_OK(AddPrinciple(*engine_, scope_, p, "admin").status());
  EXPECT_EQ(GetPrinciple(*engine_, scope_, "S-1", 0, low).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(GetPrinciple(*engine_, scope_, "S-1", 1, low).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(PrincipleVersions(*engine_, scope_, "S-1", low).status().code(), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(auto low_principles, ListPrinciples(*engine_, scope_, low));
  EXPECT_TRUE(low_principles.empty());
  ASSERT_OK_AND_ASSIGN(auto high_principles, ListPrinciples(*engine_, scope_, high));
  EXPECT_EQ(high_principles.size(), 1u);
}

// ------------------------------------------------------------ corrections

TEST_F(MissionTest, CorrectionsPerOperator) {
  Namespace ann = scope_;
  ann.operator_id = "ann";
  Namespace bob = scope_;
  bob.operator_id = "bob";
  Correction c;
  c.correction_class = "missing_context";
  c.category = "маршрут";
  c.component = "nav";
  c.outcome = CorrectionOutcome::kModified;
  c.summary = "  Дайджест не містив рішення про північний маршрут.  ";
  c.retrieval_id = "0190e5c2-0000-7000-8000-000000000042";
  ASSERT_OK_AND_ASSIGN(Correction stored, AddCorrection(*engine_, ann, c, "ann"));
  EXPECT_EQ(stored.operator_id, "ann");
  EXPECT_EQ(stored.summary, "Дайджест не містив рішення про північний маршрут.");
  c.component = "comms";
  c.summary = "Wrong channel plan was served.";
  c.retrieval_id.clear();
  c.access_level = 4;
  ASSERT_OK(AddCorrection(*engine_, bob, c, "bob").status());

  ASSERT_OK_AND_ASSIGN(Memory raw, engine_->Get(ann, stored.id));
  EXPECT_EQ(raw.layer, Layer::kPractitioner);
  EXPECT_EQ(raw.ns.operator_id, "ann");

  ASSERT_OK_AND_ASSIGN(auto all, ListCorrections(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(all.size(), 2u);
  CorrectionFilter f;
  f.operator_id = "ann";
  ASSERT_OK_AND_ASSIGN(auto anns, ListCorrections(*engine_, scope_, f, Admin()));
  ASSERT_EQ(anns.size(), 1u);
  EXPECT_EQ(anns[0].category, "маршрут");
  f = {};
  f.retrieval_id = "0190e5c2-0000-7000-8000-000000000042";
  ASSERT_OK_AND_ASSIGN(auto linked, ListCorrections(*engine_, scope_, f, Admin()));
  EXPECT_EQ(linked.size(), 1u);
  f = {};
  f.components = {"comms"};
  ASSERT_OK_AND_ASSIGN(auto comms, ListCorrections(*engine_, scope_, f, Admin()));
  EXPECT_EQ(comms.size(), 1u);
  ASSERT_OK_AND_ASSIGN(auto low, ListCorrections(*engine_, scope_, {}, Asker{"", 3}));
  EXPECT_EQ(low.size(), 1u);

  EXPECT_TRUE(Contains(AddCorrection(*engine_, scope_, c, "x").status().message(), "belongs to an operator"));
}

TEST_F(MissionTest, NoRawTextReachesTheStoreThroughCorrections) {
  Namespace ann = scope_;
  ann.operator_id = "ann";
  const std::string raw_prompt =
      "Please refactor src/auth.cc.\nHere is the file:\n```cpp\nint main() {}\n```\nThanks.";
  Correction c;
  c.correction_class = "missing_context";
  c.category = "api";
  c.component = "auth";
  c.summary = raw_prompt;
  EXPECT_EQ(AddCorrection(*engine_, ann, c, "ann").status().code(), StatusCode::kRefused);
  c.summary = "Short. But two sentences.";
  EXPECT_EQ(AddCorrection(*engine_, ann, c, "ann").status().code(), StatusCode::kRefused);
  c.summary = "Fine sentence.";
  c.category = raw_prompt;
  EXPECT_EQ(AddCorrection(*engine_, ann, c, "ann").status().code(), StatusCode::kInvalidArgument);
  c.category = "api";
  c.component = "Please refactor src/auth.cc";
  EXPECT_EQ(AddCorrection(*engine_, ann, c, "ann").status().code(), StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(auto stored, ListCorrections(*engine_, scope_, {}, Admin()));
  EXPECT_TRUE(stored.empty());
}

}  // namespace
}  // namespace msp
