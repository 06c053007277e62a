// Session summaries (rules, written once, stable id, provenance) and the
// SessionStart session index (within its budget, ids that open the record).
#include "coding/session_summary.h"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "coding/hooks.h"
#include "tests/support/test_util.h"
#include "working/tokens.h"

namespace msp {
namespace {

CapturedPrompt Prompt(const std::string& text, TimeMs at, const std::string& id) {
  CapturedPrompt p;
  p.text = text;
  p.at = at;
  p.id = id;
  p.session_id = "sess-a";
  p.repository = "/home/u/webapp";
  p.branch = "feature/login";
  return p;
}

Observation Obs(const std::string& tool, TimeMs at) {
  Observation o;
  o.at = at;
  o.session_id = "sess-a";
  o.tool = tool;
  o.repository = "/home/u/webapp";
  o.branch = "feature/login";
  return o;
}

Memory EpisodeOf(const Observation& o, const std::string& id) {
  Memory m;
  m.id = id;
  m.kind = Kind::kEpisode;
  m.body_json = nlohmann::json{{"type", "tool_call"}, {"content", nlohmann::json::parse(ObservationJson(o))}}.dump();
  return m;
}

std::vector<Memory> Episodes() {
  Observation edit = Obs("Edit", 2000);
  edit.files = {"src/login.ts"};
  edit.changed_files = true;
  Observation read = Obs("Read", 2500);
  read.files = {"src/login.ts"};
  Observation read2 = Obs("Read", 2600);
  read2.files = {"README.md"};
  Observation test = Obs("Bash", 3000);
  test.command = "npm test";
  test.exit_code = 1;
  test.failed = true;
  Observation again = Obs("Bash", 4000);
  again.command = "npm test -- --watch=false";
  again.exit_code = 0;
  Memory other;  // not an observation: skipped
  other.id = "e-x";
  other.body_json = R"({"type":"user_message","content":{"text":"hi"}})";
  return {EpisodeOf(edit, "e-1"), EpisodeOf(read, "e-2"), EpisodeOf(read2, "e-3"), EpisodeOf(test, "e-4"),
          EpisodeOf(again, "e-5"), other};
}

TEST(SessionSummaryTest, DecisionSentences) {
  EXPECT_EQ(DecisionSentences("Fix the login. We decided to use JWT instead of sessions. Thanks!"),
            std::vector<std::string>{"We decided to use JWT instead of sessions."});
  EXPECT_EQ(DecisionSentences("let's use pnpm from now on\nrun the tests"),
            std::vector<std::string>{"let's use pnpm from now on"});
  EXPECT_TRUE(DecisionSentences("Add a dark mode toggle to the settings page.").empty());
}

TEST(SessionSummaryTest, RulesFromPromptsAndObservations) {
  const std::vector<CapturedPrompt> prompts = {Prompt("Fix the login form validation", 1000, "c1"),
                                               Prompt("Tests fail. Let's use vitest instead of jest.", 2800, "c2")};
  SessionSummary s = SummarizeSession("sess-a", prompts, Episodes(), 5000);
  EXPECT_EQ(s.repository, "/home/u/webapp");
  EXPECT_EQ(s.branch, "feature/login");
  EXPECT_EQ(s.started_at, 1000);
  EXPECT_EQ(s.ended_at, 5000);
  EXPECT_EQ(s.asked.size(), 2u);
  EXPECT_EQ(s.files_changed, std::vector<std::string>{"src/login.ts"});
  EXPECT_EQ(s.files_read, std::vector<std::string>{"README.md"});  // login.ts counted as changed
  ASSERT_EQ(s.commands.size(), 2u);
  EXPECT_EQ(s.commands[0].command, "npm test");
  EXPECT_TRUE(s.commands[0].failed);
  EXPECT_EQ(s.tool_uses, 5u);
  EXPECT_EQ(s.failures, 1u);
  EXPECT_EQ(s.outcome, "1 failed tool use, the last command succeeded");
  EXPECT_EQ(s.decisions, std::vector<std::string>{"Let's use vitest instead of jest."});
  // Provenance: both prompt commits and the five observation episodes.
  EXPECT_EQ(s.provenance.size(), 7u);
  EXPECT_EQ(s.provenance[0], (ProvenanceRef{"commit", "c1", "prompt"}));
  EXPECT_EQ(s.provenance.back(), (ProvenanceRef{"episode", "e-5", "Bash"}));
  const std::string text = SessionSummaryText(s);
  EXPECT_NE(text.find("## Files changed\nsrc/login.ts"), std::string::npos) << text;
  EXPECT_NE(text.find("- `npm test` (exit 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("Let's use vitest instead of jest."), std::string::npos);

  // Ending on a failing command is the outcome.
  std::vector<Memory> eps = Episodes();
  eps.pop_back();
  eps.pop_back();
  EXPECT_EQ(SummarizeSession("sess-a", {}, eps, 5000).outcome, "ended after a failing command (npm test)");
  EXPECT_EQ(SummarizeSession("sess-a", {}, {}, 5000).outcome, "nothing recorded");
}

TEST(SessionSummaryTest, WrittenOnceUnderAStableIdAndIndexedWithinBudget) {
  testing::TempDir dir("coding-summary");
  ASSERT_TRUE(dir.ok());
  Options options;
  options.store.data_dir = dir.path() + "/store";
  ASSERT_OK_AND_ASSIGN(auto engine, MemoryLayer::Open(options));
  Namespace scope;
  scope.tenant = "t";
  scope.user = "ann";
  SessionSummary s = SummarizeSession("sess-a", {Prompt("Fix the login form validation", 1000, "c1")}, Episodes(), 5000);
  bool written = false;
  ASSERT_OK_AND_ASSIGN(Memory first, WriteSessionSummary(*engine, scope, s, "test", &written));
  EXPECT_TRUE(written);
  EXPECT_EQ(first.id, SessionSummaryId("t", "sess-a"));
  EXPECT_EQ(SessionSummaryId("t", "sess-a"), SessionSummaryId("t", "sess-a"));
  EXPECT_NE(SessionSummaryId("t", "sess-a"), SessionSummaryId("t", "sess-b"));
  // The hook fires again (Stop, then SessionEnd; or a retry): nothing new.
  SessionSummary later = s;
  later.outcome = "something else";
  ASSERT_OK_AND_ASSIGN(Memory second, WriteSessionSummary(*engine, scope, later, "test", &written));
  EXPECT_FALSE(written);
  EXPECT_EQ(second.id, first.id);
  ASSERT_OK_AND_ASSIGN(Memory got, engine->Get(scope, first.id));
  EXPECT_EQ(nlohmann::json::parse(got.body_json)["outcome"], s.outcome);
  EXPECT_EQ(got.provenance.size(), s.provenance.size());
  ASSERT_OK_AND_ASSIGN(auto hist, engine->History(scope, first.id));
  EXPECT_EQ(hist.size(), 1u);

  // Another session on another branch, and one in another repository.
  SessionSummary other = s;
  other.session_id = "sess-b";
  other.branch = "main";
  ASSERT_OK(WriteSessionSummary(*engine, scope, other, "test", nullptr).status());
  SessionSummary elsewhere = s;
  elsewhere.session_id = "sess-c";
  elsewhere.repository = "/home/u/other";
  ASSERT_OK(WriteSessionSummary(*engine, scope, elsewhere, "test", nullptr).status());
  ASSERT_OK_AND_ASSIGN(auto on_branch, RecentSessionSummaries(*engine, scope, "/home/u/webapp", "feature/login", 5));
  ASSERT_EQ(on_branch.size(), 1u);
  EXPECT_EQ(on_branch[0].id, first.id);
  ASSERT_OK_AND_ASSIGN(auto in_repo, RecentSessionSummaries(*engine, scope, "/home/u/webapp", "", 5));
  EXPECT_EQ(in_repo.size(), 2u);

  ASSERT_OK_AND_ASSIGN(auto counter, MakeTokenCounter(options.tokens));
  const std::string line = SessionIndexLine(first, counter->Count(first.text));
  EXPECT_NE(line.find("[session sess-a · record " + first.id + "]"), std::string::npos) << line;
  EXPECT_NE(line.find("asked: \"Fix the login form validation\""), std::string::npos) << line;
  EXPECT_NE(line.find("files: src/login.ts"), std::string::npos) << line;
  EXPECT_NE(line.find("details ~" + std::to_string(counter->Count(first.text)) + " tokens"), std::string::npos);
  const std::string section = SessionIndexSection(in_repo, *counter, 1000);
  EXPECT_NE(section.find(in_repo[0].id), std::string::npos);
  EXPECT_NE(section.find(in_repo[1].id), std::string::npos);
  // A budget for the heading and one line keeps the newest only.
  const int64_t one = static_cast<int64_t>(counter->Count(SessionIndexSection({in_repo[0]}, *counter, 1000)));
  const std::string cut = SessionIndexSection(in_repo, *counter, one);
  EXPECT_NE(cut.find(in_repo[0].id), std::string::npos);
  EXPECT_EQ(cut.find(in_repo[1].id), std::string::npos);
  EXPECT_EQ(SessionIndexSection(in_repo, *counter, 5), "");

  // In the SessionStart context, within the budget.
  HookInput in;
  in.session_id = "sess-new";
  in.cwd = dir.path();
  for (int64_t budget : {1500, 300}) {
    ASSERT_OK_AND_ASSIGN(std::string context,
                         SessionStartDigest(*engine, options, in, scope, budget, "test", {}, in_repo));
    EXPECT_NE(context.find(in_repo[0].id), std::string::npos) << context;
    EXPECT_LE(static_cast<int64_t>(counter->Count(context)), budget);
  }
}

}  // namespace
}  // namespace msp
