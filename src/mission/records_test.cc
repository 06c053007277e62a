// Mission record formats without a store: validation rules, identifier and
// summary rules, deterministic ids, Memory and JSON round trips, and the
// refusal of raw text in corrections.
#include "mission/records.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/test_util.h"
#include "util/time.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

using testing::Contains;

Decision ValidDecision() {
  Decision d;
  d.title = "Use SQLite as the store";
  d.context = "We need an embedded store with transactions.";
  d.decision = "SQLite in WAL mode.";
  d.alternatives = {{"PostgreSQL", "a server to run"}, {"flat files", "no transactions"}};
  d.consequences = "One writer at a time.";
  d.principles = {"P-1"};
  d.component = "store";
  d.criticality = Criticality::kHigh;
  d.status = DecisionStatus::kAccepted;
  d.decided_by = "ann";
  d.decided_at = *ParseIso8601("2026-03-01");
  d.provenance = {{"commit", "abc123", ""}, {"document", "docs/design.pdf", "page 4"}};
  d.access_level = 3;
  d.tags = {"storage"};
  return d;
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(DecisionValidationTest, ValidPasses) { ASSERT_OK(ValidateDecision(ValidDecision())); }

TEST(DecisionValidationTest, EachRuleNamesItsField) {
  struct Case {
    std::function<void(Decision&)> change;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](Decision& d) { d.title.clear(); }, "title is required"},
      {[](Decision& d) { d.title = "two\nlines"; }, "title must be one line"},
      {[](Decision& d) { d.title = Repeat("x", 201); }, "title is 201 characters"},
      {[](Decision& d) { d.context = "  "; }, "context is required"},
      {[](Decision& d) { d.decision.clear(); }, "decision is required"},
      {[](Decision& d) { d.decision = Repeat("y", kMaxDecisionBytes + 1); }, "decision is 8001 bytes"},
      {[](Decision& d) { d.context = "bad \xC3\x28 byte"; }, "context: invalid UTF-8 at byte 4"},
      {[](Decision& d) { d.context = std::string("nul \0 inside", 12); }, "context holds a control character"},
      {[](Decision& d) { d.alternatives[1].reason.clear(); }, "alternatives[1].reason is required"},
      {[](Decision& d) { d.alternatives[0].option.clear(); }, "alternatives[0].option is required"},
      {[](Decision& d) { d.alternatives.assign(kMaxAlternatives + 1, {"o", "r"}); }, "alternatives: 33 given"},
      {[](Decision& d) { d.principles = {"7"}; }, "principles: '7' is not a principle id"},
      {[](Decision& d) { d.principles = {"P-1", "P-1"}; }, "'P-1' is cited twice"},
      {[](Decision& d) { d.component = "two words"; }, "component 'two words' is not an identifier"},
      {[](Decision& d) { d.access_level = 10; }, "access_level 10 is outside 0..9"},
      {[](Decision& d) { d.access_level = -1; }, "access_level -1 is outside 0..9"},
      {[](Decision& d) { d.provenance = {{"", "abc", ""}}; }, "provenance[0].type is required"},
      {[](Decision& d) { d.provenance = {{"commit", "", ""}}; }, "provenance[0].ref is required"},
      {[](Decision& d) { d.decided_by = "ann\nbob"; }, "decided_by must be one line"},
      {[](Decision& d) { d.tags = {""}; }, "tags[0] is required"},
  };
  for (const Case& c : cases) {
    Decision d = ValidDecision();
    c.change(d);
    const Status s = ValidateDecision(d);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(Contains(s.message(), c.field)) << "want '" << c.field << "', got: " << s.message();
  }
}

TEST(DecisionValidationTest, LimitsCountCharactersNotBytesForOneLineFields) {
  Decision d = ValidDecision();
  d.title = Repeat("ж", 200);  // 400 bytes, 200 characters
  ASSERT_OK(ValidateDecision(d));
  d.title += "ж";
  EXPECT_TRUE(Contains(ValidateDecision(d).message(), "title is 201 characters"));
}

TEST(IdentifierTest, Pattern) {
  for (const char* ok : {"store", "nav/gps-1", "api.v2:auth", "навігація", "Компонент_1", "a"}) {
    EXPECT_TRUE(IsMissionIdentifier(ok)) << ok;
  }
  const std::string long_id(65, 'a');
  for (const std::string& bad : {std::string(""), std::string("two words"), std::string("a,b"),
                                 std::string("tab\there"), std::string("nb\xC2\xA0sp"), std::string("em\xE2\x80\x94"),
                                 long_id, std::string("\xC3\x28"), std::string("quote\"")}) {
    EXPECT_FALSE(IsMissionIdentifier(bad)) << bad;
  }
  EXPECT_TRUE(IsMissionIdentifier(std::string(64, 'a')));
  EXPECT_TRUE(IsPrincipleId("P-7"));
  EXPECT_TRUE(IsPrincipleId("SEC.2_a"));
  EXPECT_FALSE(IsPrincipleId("7"));
  EXPECT_FALSE(IsPrincipleId("P 7"));
  EXPECT_FALSE(IsPrincipleId("П-7"));
  EXPECT_FALSE(IsPrincipleId(std::string(33, 'P')));
}

TEST(SummaryTest, OneSentenceOnly) {
  for (const char* ok : {"Retrieval missed the auth decision.", "Version 1.2 was served instead of 1.3!",
                         "Дайджест пропустив рішення про маршрут.", "Was the store wrong?", "No final stop"}) {
    EXPECT_TRUE(CheckSummary(ok).ok()) << ok << ": " << CheckSummary(ok).ToString();
  }
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"First sentence. Second sentence.", "more than one sentence"},
      {"Що сталося? Ось що.", "more than one sentence"},
      {"Line one\nline two", "line break"},
      {"with a\ttab", "tab or control"},
      {"see ```code```", "code fence"},
      {Repeat("a", 201), "201 characters"},
  };
  for (const auto& [text, why] : refused) {
    const Status s = CheckSummary(text);
    EXPECT_EQ(s.code(), StatusCode::kRefused) << text;
    EXPECT_TRUE(Contains(s.message(), why)) << s.message();
    EXPECT_TRUE(Contains(s.message(), "never raw prompt or output text")) << s.message();
  }
  EXPECT_EQ(CheckSummary("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckSummary("bad \xC3\x28").code(), StatusCode::kInvalidArgument);
}

TEST(RecordIdTest, DeterministicAndDistinct) {
  Namespace a;
  a.tenant = "t";
  a.mission = "m1";
  Namespace b = a;
  b.mission = "m2";
  Namespace c = a;
  c.tenant = "u";
  const std::string id = PrincipleRecordId(a, "P-1", 1);
  EXPECT_TRUE(IsUuid(id));
  EXPECT_EQ(id[14], '8');  // version nibble
  EXPECT_EQ(id, PrincipleRecordId(a, "P-1", 1));
  std::set<std::string> ids = {id,
                               PrincipleRecordId(a, "P-1", 2),
                               PrincipleRecordId(a, "P-11", 1),
                               PrincipleRecordId(b, "P-1", 1),
                               PrincipleRecordId(c, "P-1", 1),
                               OperatorRecordId(a, "P-1"),
                               AdrRecordId(a, "/x/0001-a.md"),
                               AdrRecordId(a, "/x/0001-b.md"),
                               MissionRecordId(a, {"ab", "c"}),
                               MissionRecordId(a, {"a", "bc"})};
  EXPECT_EQ(ids.size(), 10u);
}

TEST(RecordIdTest, StableAcrossVersions) {
  // Record ids are stored: these values were computed before the hash and
  // the UUID formatting moved to util/ and must never change.
  Namespace a;
  a.tenant = "acme";
  a.mission = "apollo";
  EXPECT_EQ(PrincipleRecordId(a, "P-7", 1), "3a514c03-f331-8087-bbe6-a8505d641de0");
  EXPECT_EQ(AdrRecordId(a, "/repo/docs/adr/0001-use-postgres.md"), "109198a6-92db-8294-a55e-9e7035ee6ea3");
  Namespace t;
  t.tenant = "t";
  EXPECT_EQ(OperatorRecordId(t, "alice"), "6fa7355c-c572-8a08-a703-0a577d2b6bca");
  EXPECT_EQ(MissionRecordId(t, {}), "0b519c97-297d-8fa6-9854-a3190f53c3f2");
}

TEST(DecisionMemoryTest, RoundTripWithCyrillic) {
  Namespace scope;
  scope.tenant = "t";
  scope.mission = "місія";
  scope.operator_id = "ignored";
  Decision d = ValidDecision();
  d.title = "Маршрут через північний сектор";
  d.context = "Південний сектор під спостереженням.\nДругий рядок.";
  d.alternatives = {{"Південний маршрут", "виявлення"}};
  d.component = "навігація";
  Memory m = DecisionToMemory(scope, d, kMissionSource);
  EXPECT_EQ(m.kind, Kind::kDecision);
  EXPECT_EQ(m.layer, Layer::kWorkflow);
  EXPECT_EQ(m.ns.mission, "місія");
  EXPECT_TRUE(m.ns.operator_id.empty());
  EXPECT_EQ(m.access_level, 3);
  EXPECT_EQ(m.criticality, Criticality::kHigh);
  EXPECT_EQ(m.valid_at, d.decided_at);
  EXPECT_TRUE(Contains(m.text, "Decision: Маршрут через північний сектор"));
  EXPECT_TRUE(Contains(m.text, "- Південний маршрут: виявлення"));
  EXPECT_FALSE(Contains(m.text, "One writer at a time"));  // consequences are not indexed

  m.id = "0190e5c2-0000-7000-8000-000000000001";
  m.created_at = 5;
  m.updated_at = 6;
  m.seq = 7;
  m.ns = MissionNamespace(scope);
  ASSERT_OK_AND_ASSIGN(Decision back, DecisionFromMemory(m));
  Decision want = d;
  want.id = m.id;
  want.ns = m.ns;
  want.created_at = 5;
  want.updated_at = 6;
  want.seq = 7;
  want.source = m.source;  // a decision carries its record's source (the fence's trust label)
  EXPECT_EQ(back, want);

  const json body = json::parse(m.body_json);
  EXPECT_EQ(body["type"], "decision");
  EXPECT_EQ(body["status"], "accepted");
  EXPECT_EQ(body["decided_at"], "2026-03-01T00:00:00.000Z");
  EXPECT_FALSE(body.contains("access_level"));  // lives on the Memory
}

TEST(DecisionMemoryTest, SupersededStateAndWrongKind) {
  Namespace scope;
  scope.mission = "m";
  Decision d = ValidDecision();
  d.status = DecisionStatus::kSuperseded;
  d.superseded_by = "x";
  Memory m = DecisionToMemory(scope, d, kMissionSource);
  EXPECT_EQ(m.state, RecordState::kSuperseded);
  EXPECT_EQ(m.superseded_by, "x");
  m.kind = Kind::kFact;
  EXPECT_EQ(DecisionFromMemory(m).status().code(), StatusCode::kInvalidArgument);
  m.kind = Kind::kDecision;
  m.body_json = R"({"type":"principle"})";
  EXPECT_TRUE(Contains(DecisionFromMemory(m).status().message(), "no decision body"));
}

TEST(DecisionJsonTest, StrictInput) {
  const json in = {{"title", "T"},
                   {"context", "C"},
                   {"decision", "D"},
                   {"alternatives", {{{"option", "O"}, {"reason", "R"}}}},
                   {"principle", "P-2"},
                   {"principles", {"P-1"}},
                   {"component", "api"},
                   {"criticality", "critical"},
                   {"status", "proposed"},
                   {"decided_at", "2026-02-03T04:05:06Z"},
                   {"provenance", {{{"type", "issue"}, {"ref", "https://x/1"}}}},
                   {"access_level", 4},
                   {"tags", {"a"}}};
  ASSERT_OK_AND_ASSIGN(Decision d, DecisionFromJson(in));
  EXPECT_EQ(d.principles, (std::vector<std::string>{"P-1", "P-2"}));
  EXPECT_EQ(d.alternatives, (std::vector<Alternative>{{"O", "R"}}));
  EXPECT_EQ(d.criticality, Criticality::kCritical);
  EXPECT_EQ(d.status, DecisionStatus::kProposed);
  EXPECT_EQ(d.decided_at, *ParseIso8601("2026-02-03T04:05:06Z"));
  EXPECT_EQ(d.provenance[0].ref, "https://x/1");
  EXPECT_EQ(d.access_level, 4);

  json bad = in;
  bad["id"] = "x";
  EXPECT_TRUE(Contains(DecisionFromJson(bad).status().message(), "unknown field 'id'"));
  bad = in;
  bad["status"] = "maybe";
  EXPECT_TRUE(Contains(DecisionFromJson(bad).status().message(), "status: unknown value 'maybe'"));
  bad = in;
  bad["access_level"] = "high";
  EXPECT_TRUE(Contains(DecisionFromJson(bad).status().message(), "access_level: expected an integer"));
  bad = in;
  bad["alternatives"] = {{{"option", "O"}, {"why", "R"}}};
  EXPECT_TRUE(Contains(DecisionFromJson(bad).status().message(), "unknown field 'why'"));
  bad = in;
  bad["provenance"] = {{{"type", "x"}, {"ref", "y"}, {"page", 3}}};
  EXPECT_TRUE(Contains(DecisionFromJson(bad).status().message(), "unknown field 'page'"));

  // Output carries every field under its name.
  d.id = "id-1";
  const json out = DecisionToJson(d);
  for (const char* key : {"id", "title", "context", "decision", "alternatives", "consequences", "principles",
                          "component", "criticality", "status", "decided_by", "decided_at", "provenance",
                          "access_level", "tags", "supersedes", "superseded_by", "namespace", "created_at"}) {
    EXPECT_TRUE(out.contains(key)) << key;
  }
  EXPECT_FALSE(out.contains("type"));
}

TEST(CorrectionJsonTest, RawTextFieldsAreRefused) {
  const json base = {{"class", "missing_context"},
                     {"category", "api_contract"},
                     {"component", "auth"},
                     {"outcome", "modified"},
                     {"summary", "The digest left out the token rotation decision."}};
  ASSERT_OK_AND_ASSIGN(Correction c, CorrectionFromJson(base));
  EXPECT_EQ(c.correction_class, "missing_context");
  EXPECT_EQ(c.outcome, CorrectionOutcome::kModified);
  ASSERT_OK(ValidateCorrection(c));

  for (const char* raw : {"prompt", "output", "raw", "Prompt", "RESPONSE", "text", "content", "diff", "completion"}) {
    json j = base;
    j[raw] = "the whole prompt ...";
    const Status s = CorrectionFromJson(j).status();
    EXPECT_EQ(s.code(), StatusCode::kRefused) << raw;
    EXPECT_TRUE(Contains(s.message(), "never raw prompt or output text")) << s.message();
  }
  json j = base;
  j["colour"] = "red";
  EXPECT_EQ(CorrectionFromJson(j).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(CorrectionFromJson(j).status().message(), "unknown field 'colour'"));
  j = base;
  j.erase("outcome");
  EXPECT_TRUE(Contains(CorrectionFromJson(j).status().message(), "outcome is required"));
  j = base;
  j["outcome"] = "ignored";
  EXPECT_TRUE(Contains(CorrectionFromJson(j).status().message(), "outcome: unknown value 'ignored'"));
  j = base;
  j["summary"] = json::array({"a"});
  EXPECT_TRUE(Contains(CorrectionFromJson(j).status().message(), "summary: expected a string"));
}

TEST(CorrectionValidationTest, OnlyIdentifiersAndOneSentence) {
  Correction c;
  c.correction_class = "missing_context";
  c.category = "маршрут";
  c.component = "nav";
  c.summary = "Попереджень про РЕБ не було в дайджесті.";
  ASSERT_OK(ValidateCorrection(c));
  Correction bad = c;
  bad.correction_class = "the model ignored my instruction to keep the cache";
  EXPECT_TRUE(Contains(ValidateCorrection(bad).message(), "class '"));
  bad = c;
  bad.component.clear();
  EXPECT_TRUE(Contains(ValidateCorrection(bad).message(), "component is required"));
  bad = c;
  bad.summary = "User: fix the bug.\nAssistant: done.";
  EXPECT_EQ(ValidateCorrection(bad).code(), StatusCode::kRefused);
  bad = c;
  bad.retrieval_id = "r-42";
  EXPECT_TRUE(Contains(ValidateCorrection(bad).message(), "retrieval_id 'r-42' is not a retrieval id"));
  bad.retrieval_id = "0190e5c2-0000-7000-8000-000000000001";
  ASSERT_OK(ValidateCorrection(bad));

  Namespace scope;
  scope.tenant = "t";
  scope.mission = "m";
  scope.operator_id = "ann";
  const Memory m = CorrectionToMemory(scope, bad);
  EXPECT_EQ(m.layer, Layer::kPractitioner);
  EXPECT_EQ(m.ns.operator_id, "ann");
  const json body = json::parse(m.body_json);
  std::set<std::string> keys;
  for (auto it = body.begin(); it != body.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"type", "class", "category", "component", "outcome", "summary",
                                         "retrieval_id"}));
  ASSERT_OK_AND_ASSIGN(Correction back, CorrectionFromMemory(m));
  EXPECT_EQ(back.summary, bad.summary);
  EXPECT_EQ(back.category, "маршрут");
  EXPECT_EQ(back.operator_id, "ann");
  EXPECT_EQ(back.retrieval_id, bad.retrieval_id);
}

TEST(PrincipleTest, ValidationAndRoundTrip) {
  Principle p;
  p.principle_id = "P-7";
  p.statement = "Людина підтверджує кожну зміну цілі.";
  p.rationale = "Accountability.";
  p.author = "ann";
  p.version = 2;
  p.access_level = 1;
  ASSERT_OK(ValidatePrinciple(p));
  Namespace scope;
  scope.tenant = "t";
  scope.mission = "m";
  Memory m = PrincipleToMemory(scope, p);
  EXPECT_EQ(m.id, PrincipleRecordId(scope, "P-7", 2));
  EXPECT_EQ(m.kind, Kind::kPrinciple);
  EXPECT_EQ(m.tags, (std::vector<std::string>{"principle:P-7"}));
  EXPECT_TRUE(Contains(m.text, "Principle P-7 (v2): Людина"));
  ASSERT_OK_AND_ASSIGN(Principle back, PrincipleFromMemory(m));
  EXPECT_EQ(back.statement, p.statement);
  EXPECT_EQ(back.version, 2);
  EXPECT_TRUE(back.current);

  Principle bad = p;
  bad.statement.clear();
  EXPECT_TRUE(Contains(ValidatePrinciple(bad).message(), "statement is required"));
  bad = p;
  bad.principle_id = "seven";
  ASSERT_OK(ValidatePrinciple(bad));
  bad.principle_id = "-7";
  EXPECT_TRUE(Contains(ValidatePrinciple(bad).message(), "is not a principle id"));
  EXPECT_TRUE(Contains(PrincipleFromJson(json{{"version", 3}}).status().message(), "unknown field 'version'"));
}

TEST(OperatorTest, RecordShape) {
  OperatorRecord op;
  op.operator_id = "ann";
  op.clearance = 5;
  op.name = "Ann Lee";
  ASSERT_OK(ValidateOperator(op));
  Namespace scope;
  scope.tenant = "t";
  scope.mission = "m";
  scope.user = "ignored";
  const Memory m = OperatorToMemory(scope, op);
  EXPECT_EQ(m.kind, Kind::kEntity);
  EXPECT_EQ(m.ns.user, "");
  EXPECT_EQ(m.tags, (std::vector<std::string>{std::string(kOperatorTag)}));
  EXPECT_EQ(json::parse(m.body_json)["type"], "operator");
  ASSERT_OK_AND_ASSIGN(OperatorRecord back, OperatorFromMemory(m));
  EXPECT_EQ(back.clearance, 5);
  EXPECT_EQ(back.name, "Ann Lee");
  op.clearance = 10;
  EXPECT_TRUE(Contains(ValidateOperator(op).message(), "clearance 10 is outside 0..9"));
}

}  // namespace
}  // namespace msp
