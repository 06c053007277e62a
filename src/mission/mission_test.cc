// Mission records over a real engine (SQLite store, Xapian, hashing
// embedder) in a temp directory: decisions, supersede links, principles with
// compare-and-swap (threads of the same race through a second engine),
// operators and clearance filtering, corrections. The ADR import's tests
// are in adr_import_test.cc; the fixture is mission_fixture.h.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ingest/fixtures.h"
#include "mission/mission_fixture.h"
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
