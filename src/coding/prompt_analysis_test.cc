// Intent rules, search, topics and project switches.
#include "coding/prompt_analysis.h"

#include <chrono>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "provider/chat_client.h"
#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

CapturedPrompt P(const std::string& text, TimeMs at, const std::string& repo = "/r/alpha") {
  CapturedPrompt p;
  p.text = text;
  p.at = at;
  p.repository = repo;
  return p;
}

constexpr TimeMs kDay = 86400000;
constexpr TimeMs kMon = 1764547200000;  // 2025-12-01T00:00:00Z, a Monday

TEST(IntentTest, RulesLabelTypicalPrompts) {
  struct Case {
    const char* text;
    Intent want;
  };
  const Case cases[] = {
      {"yes", Intent::kApproval},
      {"LGTM, ship it", Intent::kApproval},
      {"ok go ahead", Intent::kApproval},
      {"Thanks!", Intent::kApproval},
      {"yes but rename the function first", Intent::kInstruction},
      {"No, that's the wrong file", Intent::kCorrection},
      {"actually use the async API instead", Intent::kCorrection},
      {"revert the last change", Intent::kCorrection},
      {"the test still fails", Intent::kInstruction},
      {"It still fails with the same error", Intent::kCorrection},
      {"That's not what I asked for", Intent::kCorrection},
      {"Why does the build fail on arm64?", Intent::kQuestion},
      {"how is the cache invalidated", Intent::kQuestion},
      {"is this thread-safe", Intent::kQuestion},
      {"Can you add a retry to the HTTP client?", Intent::kQuestion},
      {"can you add a retry to the HTTP client", Intent::kInstruction},
      {"Add a --json flag to the list command", Intent::kInstruction},
      {"refactor the parser into its own file", Intent::kInstruction},
      {"yesterday's deploy broke login; find out why", Intent::kInstruction},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IntentName(ClassifyIntent(c.text)), IntentName(c.want)) << c.text;
  }
  EXPECT_EQ(ParseIntent("correction"), Intent::kCorrection);
  EXPECT_FALSE(ParseIntent("other").has_value());
}

TEST(AnalysisTest, TermsDropStopWordsAndNumbers) {
  EXPECT_EQ(PromptTerms("Please fix the HTTP-client retry in src/net.cc, 42 times!"),
            (std::vector<std::string>{"fix", "http-client", "retry", "src", "net.cc", "times"}));
}

TEST(AnalysisTest, SearchRanksRarerTermsHigherAndNewestOnTies) {
  std::vector<CapturedPrompt> ps = {P("fix the parser bug", 1), P("fix the lexer", 2), P("fix the parser tests", 3),
                                    P("update docs", 4)};
  std::vector<PromptMatch> m = SearchPrompts(ps, "parser fix", 0);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].index, 2u);  // both terms, newer
  EXPECT_EQ(m[1].index, 0u);  // both terms
  EXPECT_EQ(m[2].index, 1u);  // only "fix"
  EXPECT_GT(m[1].score, m[2].score);
  EXPECT_EQ(SearchPrompts(ps, "parser", 1).size(), 1u);
  EXPECT_TRUE(SearchPrompts(ps, "kubernetes", 0).empty());
}

TEST(AnalysisTest, TopicFrequenciesPerWeek) {
  std::vector<CapturedPrompt> ps = {P("parser bug again", kMon), P("parser speed", kMon + kDay),
                                    P("docs for parser", kMon + 7 * kDay), P("docs typo", kMon + 8 * kDay),
                                    P("docs links", kMon + 9 * kDay)};
  TopicTable t = TopicFrequencies(ps, Period::kWeek, 2);
  ASSERT_EQ(t.periods, (std::vector<std::string>{"2025-W49", "2025-W50"}));
  ASSERT_EQ(t.topics, (std::vector<std::string>{"docs", "parser"}));
  EXPECT_EQ(t.totals, (std::vector<size_t>{3, 3}));
  EXPECT_EQ(t.counts[0], (std::vector<size_t>{0, 3}));  // docs
  EXPECT_EQ(t.counts[1], (std::vector<size_t>{2, 1}));  // parser
  EXPECT_EQ(PeriodLabel(kMon, Period::kMonth), "2025-12");
  EXPECT_EQ(PeriodLabel(kMon, Period::kDay), "2025-12-01");
}

TEST(AnalysisTest, ProjectSwitchesPerDay) {
  std::vector<CapturedPrompt> ps = {
      P("a1", kMon + 1000, "/r/alpha"), P("b1", kMon + 2000, "/r/beta"), P("a2", kMon + 3000, "/r/alpha"),
      P("a3", kMon + 4000, "/r/alpha"), P("b2", kMon + 5000, "/r/beta/"),
      P("n1", kMon + kDay + 1000, ""),  // next day, no repository
      P("a4", kMon + kDay + 2000, "/r/alpha")};
  std::vector<SwitchDay> days = ProjectSwitches(ps);
  ASSERT_EQ(days.size(), 2u);
  EXPECT_EQ(days[0].day, "2025-12-01");
  EXPECT_EQ(days[0].prompts, 5u);
  EXPECT_EQ(days[0].projects, 2u);
  EXPECT_EQ(days[0].switches, 3u);
  ASSERT_EQ(days[0].transitions.size(), 2u);
  EXPECT_EQ(days[0].transitions[0], (std::pair<std::string, size_t>{"alpha -> beta", 2}));
  EXPECT_EQ(days[0].transitions[1], (std::pair<std::string, size_t>{"beta -> alpha", 1}));
  EXPECT_EQ(days[1].switches, 1u);
  EXPECT_EQ(days[1].transitions[0].first, "(none) -> alpha");
}

TEST(IntentTest, ModelLabelsEveryPromptByIndexAndARepliedGapIsRetried) {
  testing::OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  ChatOptions c;
  c.base_url = stub.base_url();
  c.model = "stub-model";
  c.max_retries = 1;
  c.initial_backoff_ms = 1;
  c.sleep = [](std::chrono::milliseconds) {};
  ASSERT_OK_AND_ASSIGN(auto chat, ChatClient::Create(c));
  // First reply labels only one of two prompts: invalid, sent back once.
  stub.Enqueue(testing::kChatPath,
               testing::StubReply::ChatContent(R"({"labels":[{"i":0,"intent":"question"}]})"));
  stub.Enqueue(testing::kChatPath, testing::StubReply::ChatContent(
                                       R"({"labels":[{"i":1,"intent":"approval"},{"i":0,"intent":"correction"}]})"));
  ASSERT_OK_AND_ASSIGN(std::vector<Intent> labels,
                       ClassifyIntentsWithModel(*chat, {"hmm, not that one", "fine by me"}));
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[0], Intent::kCorrection);
  EXPECT_EQ(labels[1], Intent::kApproval);
  const auto sent = stub.Requests(testing::kChatPath);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[0].body.find("fine by me"), std::string::npos);
  // A model that keeps failing is an error, not silent rule labels.
  stub.SetDefault(testing::kChatPath, [](const testing::StubRequest&) { return testing::StubReply::Error(500, "down"); });
  EXPECT_FALSE(ClassifyIntentsWithModel(*chat, {"x"}).ok());
}

}  // namespace
}  // namespace msp
