// Procedural memory: versioning (every change kept with author and time),
// show / diff / restore, validation of tools and rules, compare-and-swap
// between threads and between processes, and the rule language.
#include "msp/procedural.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "procedural/line_diff.h"
#include "procedural/rules.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using nlohmann::json;

using testing::FakeClock;

constexpr TimeMs kProcedureClockStart = 1767261600000;  // 2026-01-01T10:00:00Z

Options OptionsFor(const std::string& dir) {
  Options o;
  o.store.data_dir = dir + "/data";
  o.store.synchronous = "normal";
  o.consolidation.every_n_episodes = 0;
  return o;
}

class ProceduralTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    clock_ = std::make_shared<FakeClock>(kProcedureClockStart);
    auto e = MemoryLayer::Open(OptionsFor(dir_.path()), clock_);
    ASSERT_OK(e.status());
    engine_ = std::move(e).value();
    scope_.tenant = "acme";
    scope_.agent = "helper";
  }

  ProcedureChange By(const std::string& author, int base = -1) {
    ProcedureChange c;
    c.author = author;
    c.base_version = base;
    return c;
  }

  ToolDefinition SearchTool(const std::string& description = "search the web") {
    ToolDefinition t;
    t.name = "web_search";
    t.description = description;
    t.parameters_json = R"({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})";
    return t;
  }

  testing::TempDir dir_{"procedural"};
  std::shared_ptr<FakeClock> clock_;
  std::unique_ptr<MemoryLayer> engine_;
  Namespace scope_;
};

TEST_F(ProceduralTest, EveryChangeIsAVersionWithAuthorAndTime) {
  ProceduralMemory pm(*engine_, scope_);
  ASSERT_OK_AND_ASSIGN(ProcedureVersion v1, pm.SetSystemPrompt("You are a support agent.", By("ann")));
  EXPECT_EQ(v1.version, 1);
  EXPECT_EQ(v1.author, "ann");
  clock_->Advance(60000);
  ASSERT_OK_AND_ASSIGN(ProcedureVersion v2, pm.SetSystemPrompt("You are a patient support agent.", By("bob")));
  EXPECT_EQ(v2.version, 2);
  ASSERT_OK_AND_ASSIGN(auto history, pm.History(ProcedureType::kSystemPrompt, "system"));
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].author, "ann");
  EXPECT_EQ(history[1].author, "bob");
  EXPECT_LT(history[0].created_at, history[1].created_at);
  EXPECT_FALSE(history[0].current);
  EXPECT_TRUE(history[1].current);
  ASSERT_OK_AND_ASSIGN(ProceduralSnapshot snap, pm.Snapshot());
  EXPECT_EQ(snap.system_prompt, "You are a patient support agent.");
  // The old version is still there, superseded and linked.
  ASSERT_OK_AND_ASSIGN(Memory old, engine_->Get(scope_, history[0].id));
  EXPECT_EQ(old.state, RecordState::kSuperseded);
  EXPECT_EQ(old.superseded_by, history[1].id);
  // Setting the same text again is not a change.
  ASSERT_OK_AND_ASSIGN(ProcedureVersion same, pm.SetSystemPrompt("You are a patient support agent.", By("cy")));
  EXPECT_EQ(same.version, 2);
}

TEST_F(ProceduralTest, ShowDiffAndRestore) {
  ProceduralMemory pm(*engine_, scope_);
  ASSERT_OK(pm.PutTool(SearchTool("search the web"), By("ann")).status());
  ToolDefinition t2 = SearchTool("search the public web for pages");
  ASSERT_OK(pm.PutTool(t2, By("bob")).status());
  ASSERT_OK_AND_ASSIGN(ProcedureVersion v1, pm.Get(ProcedureType::kTool, "web_search", 1));
  EXPECT_EQ(json::parse(v1.content_json)["description"], "search the web");

  ASSERT_OK_AND_ASSIGN(std::string diff, pm.Diff(ProcedureType::kTool, "web_search", 1, 2));
  EXPECT_NE(diff.find("--- tool web_search version 1 (ann"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+++ tool web_search version 2 (bob"), std::string::npos) << diff;
  EXPECT_NE(diff.find("-     \"description\": \"search the web\","), std::string::npos) << diff;
  EXPECT_NE(diff.find("+     \"description\": \"search the public web for pages\","), std::string::npos) << diff;
  EXPECT_NE(diff.find("\n      \"name\": \"web_search\","), std::string::npos) << "unchanged lines kept: " << diff;

  ASSERT_OK_AND_ASSIGN(ProcedureVersion v3, pm.Restore(ProcedureType::kTool, "web_search", 1, By("cy")));
  EXPECT_EQ(v3.version, 3);
  EXPECT_EQ(v3.content_json, v1.content_json);
  EXPECT_EQ(v3.note, "restored from version 1");
  ASSERT_OK_AND_ASSIGN(std::string same, pm.Diff(ProcedureType::kTool, "web_search", 1, 3));
  EXPECT_EQ(same.find("\n- "), std::string::npos) << same;
  EXPECT_EQ(same.find("\n+ "), std::string::npos) << same;

  EXPECT_TRUE(pm.Get(ProcedureType::kTool, "web_search", 9).status().IsNotFound());
  EXPECT_TRUE(pm.Get(ProcedureType::kTool, "other", 0).status().IsNotFound());
}

TEST_F(ProceduralTest, RemoveKeepsHistoryAndRestoreBringsItBack) {
  ProceduralMemory pm(*engine_, scope_);
  ASSERT_OK(pm.PutTool(SearchTool(), By("ann")).status());
  ASSERT_OK_AND_ASSIGN(ProcedureVersion gone, pm.Remove(ProcedureType::kTool, "web_search", By("bob")));
  EXPECT_TRUE(gone.removed);
  EXPECT_EQ(gone.version, 2);
  ASSERT_OK_AND_ASSIGN(ProceduralSnapshot snap, pm.Snapshot());
  EXPECT_TRUE(snap.tools.empty());
  EXPECT_TRUE(pm.Remove(ProcedureType::kTool, "web_search", By("bob")).status().IsNotFound());
  ASSERT_OK(pm.Restore(ProcedureType::kTool, "web_search", 1, By("cy")).status());
  ASSERT_OK_AND_ASSIGN(snap, pm.Snapshot());
  ASSERT_EQ(snap.tools.size(), 1u);
  EXPECT_EQ(snap.tools[0].name, "web_search");
  ASSERT_OK_AND_ASSIGN(auto history, pm.History(ProcedureType::kTool, "web_search"));
  EXPECT_EQ(history.size(), 3u);
}

TEST_F(ProceduralTest, StaleBaseVersionIsAConflictNamingTheCurrentOne) {
  ProceduralMemory pm(*engine_, scope_);
  ASSERT_OK(pm.PutTool(SearchTool("one"), By("ann", 0)).status());
  ASSERT_OK(pm.PutTool(SearchTool("two"), By("bob", 1)).status());
  auto stale = pm.PutTool(SearchTool("three"), By("cy", 1));
  ASSERT_EQ(stale.status().code(), StatusCode::kConflict) << stale.status().ToString();
  EXPECT_NE(stale.status().message().find("current version is 2"), std::string::npos) << stale.status().ToString();
  // A new item must not exist yet when based on version 0.
  EXPECT_EQ(pm.PutTool(SearchTool("four"), By("dan", 0)).status().code(), StatusCode::kConflict);
  ASSERT_OK_AND_ASSIGN(auto history, pm.History(ProcedureType::kTool, "web_search"));
  EXPECT_EQ(history.size(), 2u);
}

TEST_F(ProceduralTest, ConcurrentThreadsLoseNoChange) {
  ProceduralMemory pm(*engine_, scope_);
  constexpr int kThreads = 4;
  constexpr int kEach = 5;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kEach; ++k) {
        if (!pm.PutTool(SearchTool("thread " + std::to_string(t) + " edit " + std::to_string(k)),
                        By("t" + std::to_string(t)))
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(auto history, pm.History(ProcedureType::kTool, "web_search"));
  ASSERT_EQ(history.size(), static_cast<size_t>(kThreads * kEach));
  for (size_t i = 0; i < history.size(); ++i) EXPECT_EQ(history[i].version, static_cast<int>(i) + 1);
}

// Several processes change the same tool at once: every change lands as its
// own version.
TEST(ProceduralProcessTest, ConcurrentProcessesLoseNoChange) {
  testing::TempDir dir("procedural-procs");
  ASSERT_TRUE(dir.ok());
  {
    auto e = MemoryLayer::Open(OptionsFor(dir.path()));
    ASSERT_OK(e.status());
  }
  constexpr int kProcs = 3;
  constexpr int kEach = 4;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int bad = 0;
      auto e = MemoryLayer::Open(OptionsFor(dir.path()));
      if (!e.ok()) _exit(10);
      Namespace ns;
      ns.tenant = "acme";
      ns.agent = "helper";
      ProceduralMemory pm(**e, ns);
      for (int k = 0; k < kEach; ++k) {
        ToolDefinition t;
        t.name = "shared_tool";
        t.description = "process " + std::to_string(p) + " edit " + std::to_string(k);
        ProcedureChange c;
        c.author = "p" + std::to_string(p);
        if (!pm.PutTool(t, c).ok()) ++bad;
      }
      _exit(bad);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a process lost a change";
  }
  auto e = MemoryLayer::Open(OptionsFor(dir.path()));
  ASSERT_OK(e.status());
  Namespace ns;
  ns.tenant = "acme";
  ns.agent = "helper";
  ProceduralMemory pm(**e, ns);
  ASSERT_OK_AND_ASSIGN(auto history, pm.History(ProcedureType::kTool, "shared_tool"));
  EXPECT_EQ(history.size(), static_cast<size_t>(kProcs * kEach));
  int current = 0;
  for (const auto& v : history) current += v.current ? 1 : 0;
  EXPECT_EQ(current, 1);
}

TEST_F(ProceduralTest, AgentsHaveTheirOwnProceduralMemory) {
  ProceduralMemory a(*engine_, scope_);
  Namespace other = scope_;
  other.agent = "other";
  ProceduralMemory b(*engine_, other);
  ASSERT_OK(a.SetSystemPrompt("I am helper.", By("ann")).status());
  ASSERT_OK(b.SetSystemPrompt("I am other.", By("ann")).status());
  ASSERT_OK_AND_ASSIGN(auto sa, a.Snapshot());
  ASSERT_OK_AND_ASSIGN(auto sb, b.Snapshot());
  EXPECT_EQ(sa.system_prompt, "I am helper.");
  EXPECT_EQ(sb.system_prompt, "I am other.");
  ASSERT_OK_AND_ASSIGN(auto ha, a.History(ProcedureType::kSystemPrompt, "system"));
  EXPECT_EQ(ha.size(), 1u);
}

TEST_F(ProceduralTest, ToolSchemasMustBeObjectSchemas) {
  ProceduralMemory pm(*engine_, scope_);
  ToolDefinition t = SearchTool();
  t.parameters_json = R"({"type":"string"})";
  auto r = pm.PutTool(t, By("ann"));
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find("object schema"), std::string::npos) << r.status().ToString();
  t.parameters_json = "[1]";
  EXPECT_TRUE(pm.PutTool(t, By("ann")).status().IsInvalidArgument());
  t.parameters_json = "{not json";
  EXPECT_TRUE(pm.PutTool(t, By("ann")).status().IsInvalidArgument());
  t.parameters_json = R"({"type":"object","properties":{"q":{"type":"string"}},"required":["query"]})";
  r = pm.PutTool(t, By("ann"));
  EXPECT_NE(r.status().message().find("'query'"), std::string::npos) << r.status().ToString();
  t = SearchTool();
  t.name = "bad name!";
  EXPECT_TRUE(pm.PutTool(t, By("ann")).status().IsInvalidArgument());
  t = SearchTool();
  t.description.clear();
  EXPECT_TRUE(pm.PutTool(t, By("ann")).status().IsInvalidArgument());
  EXPECT_TRUE(pm.History(ProcedureType::kTool, "web_search").status().IsNotFound()) << "nothing was written";
}

TEST_F(ProceduralTest, RulesAreCheckedAndListed) {
  ProceduralMemory pm(*engine_, scope_);
  BehaviourRule r;
  r.name = "remember";
  r.when = "request contains \"remember\"";
  r.tool = "archival_memory_insert";
  r.arguments_json = R"({"content":"{{request}}"})";
  ASSERT_OK(pm.PutRule(r, By("ann")).status());
  BehaviourRule bad = r;
  bad.name = "broken";
  bad.when = "request contanis \"x\"";
  auto s = pm.PutRule(bad, By("ann"));
  EXPECT_TRUE(s.status().IsInvalidArgument());
  EXPECT_NE(s.status().message().find("position"), std::string::npos) << s.status().ToString();
  bad = r;
  bad.arguments_json = "[]";
  EXPECT_TRUE(pm.PutRule(bad, By("ann")).status().IsInvalidArgument());
  ASSERT_OK_AND_ASSIGN(auto snap, pm.Snapshot());
  ASSERT_EQ(snap.rules.size(), 1u);
  EXPECT_EQ(snap.rules[0].tool, "archival_memory_insert");
  ASSERT_OK_AND_ASSIGN(auto list, pm.List());
  EXPECT_EQ(list.size(), 1u);
}

// ---- the rule language -----------------------------------------------------

bool Eval(const std::string& cond, const RuleContext& c) {
  auto r = RuleCondition::Parse(cond);
  EXPECT_TRUE(r.ok()) << cond << ": " << r.status().ToString();
  return r.ok() && r->Evaluate(c);
}

TEST(RuleConditionTest, Tests) {
  RuleContext c;
  c.request = "Please REMEMBER that I use Windows 11";
  EXPECT_TRUE(Eval("always", c));
  EXPECT_TRUE(Eval("request contains \"remember\"", c));
  EXPECT_FALSE(Eval("request contains \"forget\"", c));
  EXPECT_TRUE(Eval("request matches /windows \\d+/", c));
  EXPECT_FALSE(Eval("request matches /^windows/", c));
  EXPECT_FALSE(Eval("request is \"remember\"", c));
  EXPECT_TRUE(Eval("request is \"please remember that i use windows 11\"", c));
  // No last observation yet: last.* tests are false, their negation true.
  EXPECT_FALSE(Eval("last.tool is \"fetch\"", c));
  EXPECT_FALSE(Eval("last.error", c));
  EXPECT_TRUE(Eval("not last.error", c));
  c.has_last = true;
  c.last_tool = "fetch";
  c.last_text = "HTTP 503 from upstream";
  c.last_error = true;
  EXPECT_TRUE(Eval("last.error and last.tool is \"fetch\"", c));
  EXPECT_TRUE(Eval("last.text matches \"50[0-9]\"", c));
  EXPECT_FALSE(Eval("last.tool is \"fetch\" and not last.error", c));
  EXPECT_TRUE(Eval("request contains \"x\" or (last.error and not last.tool is \"other\")", c));
  EXPECT_TRUE(Eval("last.text contains \"a \\\"quoted\\\" word\" or always", c));
  EXPECT_TRUE(Eval("request matches /use\\/?\\s+windows/", c));
}

TEST(RuleConditionTest, Precedence) {
  RuleContext c;
  c.request = "a";
  // and binds tighter than or.
  EXPECT_TRUE(Eval("request contains \"a\" or request contains \"b\" and request contains \"c\"", c));
  EXPECT_FALSE(Eval("(request contains \"a\" or request contains \"b\") and request contains \"c\"", c));
  EXPECT_TRUE(Eval("not not request contains \"a\"", c));
}

TEST(RuleConditionTest, SyntaxErrorsNamePositions) {
  for (const char* bad : {"", "request", "request contains", "request contains x", "request has \"a\"",
                          "(always", "always and", "always always", "request matches /[/", "request contains \"open",
                          "last.error or ?"}) {
    auto r = RuleCondition::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsInvalidArgument()) << bad;
    EXPECT_NE(r.status().message().find("position"), std::string::npos) << r.status().ToString();
  }
}

TEST(RuleConditionTest, ArgumentsAreExpanded) {
  RuleContext c;
  c.request = "hi \"there\"";
  c.has_last = true;
  c.last_tool = "fetch";
  c.last_text = "{{request}}";
  ASSERT_OK_AND_ASSIGN(std::string out,
                       ExpandRuleArguments(R"({"q":"{{request}}","n":3,"l":["{{last.tool}}: {{last.text}}"],"x":"{{other}}"})", c));
  const json j = json::parse(out);
  EXPECT_EQ(j["q"], "hi \"there\"");
  EXPECT_EQ(j["n"], 3);
  EXPECT_EQ(j["l"][0], "fetch: {{request}}") << "replaced text is not expanded again";
  EXPECT_EQ(j["x"], "{{other}}");
  EXPECT_TRUE(ExpandRuleArguments("[1]", c).status().IsInvalidArgument());
}

TEST(LineDiffTest, MarksChangedLines) {
  EXPECT_EQ(LineDiff("a\nb\nc\n", "a\nx\nc\n"), "  a\n- b\n+ x\n  c\n");
  EXPECT_EQ(LineDiff("", "a\n"), "+ a\n");
  EXPECT_EQ(LineDiff("a\n", ""), "- a\n");
  EXPECT_EQ(LineDiff("a\nb\n", "a\nb\n"), "  a\n  b\n");
  EXPECT_EQ(LineDiff("a\nb\nc\nd\n", "b\nc\ne\n"), "- a\n  b\n  c\n- d\n+ e\n");
}

}  // namespace
}  // namespace msp
