// Tests for packing the working memory: order, budget, FIFO dropping, errors.
#include "working/working_memory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msp {
namespace {

// One token per byte: makes the arithmetic of a test exact.
class ByteCounter final : public TokenCounter {
 public:
  size_t Count(std::string_view text) const override { return text.size(); }
  std::string_view name() const override { return "bytes"; }
};

WorkingEpisode Ep(std::string id, EpisodeType type, std::string text, int64_t step) {
  WorkingEpisode e;
  e.id = std::move(id);
  e.type = type;
  e.text = std::move(text);
  e.step_number = step;
  return e;
}

WorkingMemoryInput SampleInput() {
  WorkingMemoryInput in;
  in.system_prompt = "You are a support agent.";
  in.facts = {{"f1", "User uses Windows 11.", 0.91, "", false}, {"f2", "User uses Python 3.11.", 0.87, "", false}};
  in.retrieved = {Ep("r1", EpisodeType::kUserMessage, "pip install numpy fails on my laptop", 3),
                  Ep("r2", EpisodeType::kAgentResponse, "Try installing the Visual C++ build tools.", 4)};
  in.recent = {Ep("e1", EpisodeType::kUserMessage, "Hi, the same script fails again", 1),
               Ep("e2", EpisodeType::kToolCall, "{\"query\": \"numpy windows 11 error\"}", 2),
               Ep("e3", EpisodeType::kToolResult, "3 results", 3),
               Ep("e4", EpisodeType::kAgentResponse, "Is it the same error as last time?", 4)};
  in.recent[1].tool_name = "web_search";
  in.recent[2].tool_name = "web_search";
  in.tool_schemas = {"{\"name\": \"web_search\", \"parameters\": {\"query\": \"string\"}}"};
  in.request = "Yes, the same error: Microsoft Visual C++ 14.0 is required.";
  return in;
}

WorkingMemoryBudget Budget(int64_t context, int64_t reserve = 0) {
  WorkingMemoryBudget b;
  b.context_tokens = context;
  b.reply_reserve = reserve;
  return b;
}

TEST(WorkingMemoryTest, KeepsEverythingWhenItFitsInSectionOrder) {
  EstimateTokenCounter counter;
  auto wm = PackWorkingMemory(SampleInput(), Budget(8192, 1024), counter);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  EXPECT_TRUE(wm->dropped.empty());
  EXPECT_EQ(wm->budget, 8192u - 1024u);
  ASSERT_EQ(wm->sections.size(), 9u);
  const std::string prompt = wm->Render();
  EXPECT_EQ(wm->total_tokens, counter.Count(prompt));
  // The six sections appear in the documented order.
  const std::vector<std::string> markers = {"System: You are a support agent.",
                                            "Relevant facts from memory:\n- [fact · untrusted · id f1] User uses Windows "
                                            "11.\n- [fact · untrusted · id f2] User uses Python 3.11.",
                                            "Earlier conversation (retrieved from memory):\nUser [episode · untrusted · id "
                                            "r1]: pip install numpy",
                                            "Recent conversation history:\nUser [episode · untrusted · id e1]: Hi, the same "
                                            "script fails again\nTool call (web_search) [episode · untrusted · id e2]: "
                                            "{\"query\"",
                                            "Available tools:\n{\"name\": \"web_search\"",
                                            "User's current request: Yes, the same error"};
  size_t pos = 0;
  for (const auto& m : markers) {
    const size_t at = prompt.find(m, pos);
    ASSERT_NE(at, std::string::npos) << "missing or out of order: " << m << "\nin:\n" << prompt;
    pos = at + m.size();
  }
  for (const auto& s : wm->sections) EXPECT_EQ(s.tokens, counter.Count(s.text)) << WorkingSectionName(s.id);
  EXPECT_EQ(wm->section(WorkingSectionId::kFacts).items, 2u);
  EXPECT_EQ(wm->section(WorkingSectionId::kRecentHistory).items, 4u);
  EXPECT_EQ(wm->section(WorkingSectionId::kRequest).items, 1u);
}

TEST(WorkingMemoryTest, EmptySectionsAreLeftOut) {
  WorkingMemoryInput in;
  in.request = "What is my OS?";
  ByteCounter counter;
  auto wm = PackWorkingMemory(in, Budget(1000), counter);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  EXPECT_EQ(wm->Render(), "User's current request: What is my OS?");
  EXPECT_EQ(wm->total_tokens, wm->Render().size());
  EXPECT_TRUE(wm->section(WorkingSectionId::kFacts).text.empty());
  EXPECT_NE(wm->Report().find("== facts (empty) =="), std::string::npos);
}

TEST(WorkingMemoryTest, NeverExceedsTheBudget) {
  EstimateTokenCounter counter;
  const WorkingMemoryInput in = SampleInput();
  auto full = PackWorkingMemory(in, Budget(100000), counter);
  ASSERT_TRUE(full.ok());
  int packed = 0;
  int refused = 0;
  for (int64_t context = 1; context <= static_cast<int64_t>(full->total_tokens) + 5; ++context) {
    auto wm = PackWorkingMemory(in, Budget(context + 7, 7), counter);
    if (!wm.ok()) {
      EXPECT_EQ(wm.status().code(), StatusCode::kFailedPrecondition) << wm.status().ToString();
      ++refused;
      continue;
    }
    ++packed;
    EXPECT_LE(wm->total_tokens, static_cast<size_t>(context));
    EXPECT_EQ(counter.Count(wm->Render()), wm->total_tokens);
    // Facts, tools and the request are always whole.
    EXPECT_EQ(wm->section(WorkingSectionId::kFacts).items, in.facts.size());
    EXPECT_EQ(wm->section(WorkingSectionId::kTools).items, in.tool_schemas.size());
    EXPECT_NE(wm->Render().find(in.request), std::string::npos);
  }
  EXPECT_GT(packed, 0);
  EXPECT_GT(refused, 0);
}

TEST(WorkingMemoryTest, DropsOldestHistoryFirst) {
  EstimateTokenCounter counter;
  const WorkingMemoryInput in = SampleInput();
  const std::vector<std::string> fifo = {"r1", "r2", "e1", "e2", "e3", "e4"};
  auto full = PackWorkingMemory(in, Budget(100000), counter);
  ASSERT_TRUE(full.ok());
  size_t last_dropped = 0;
  for (size_t budget = full->total_tokens; budget > 0; --budget) {
    auto wm = PackWorkingMemory(in, Budget(static_cast<int64_t>(budget)), counter);
    if (!wm.ok()) break;
    // What was dropped is a prefix of the FIFO order ...
    ASSERT_LE(wm->dropped.size(), fifo.size());
    for (size_t i = 0; i < wm->dropped.size(); ++i) {
      EXPECT_EQ(wm->dropped[i].id, fifo[i]) << "budget " << budget;
      EXPECT_EQ(wm->dropped[i].section,
                i < 2 ? WorkingSectionId::kRetrievedHistory : WorkingSectionId::kRecentHistory);
    }
    // ... that only grows as the budget shrinks ...
    EXPECT_GE(wm->dropped.size(), last_dropped);
    last_dropped = wm->dropped.size();
    // ... and what is kept is the rest, in order.
    const std::string prompt = wm->Render();
    const std::vector<std::string> texts = {in.retrieved[0].text, in.retrieved[1].text, in.recent[0].text,
                                            in.recent[1].text,    in.recent[2].text,    in.recent[3].text};
    for (size_t i = 0; i < texts.size(); ++i) {
      EXPECT_EQ(prompt.find(texts[i]) != std::string::npos, i >= wm->dropped.size())
          << "budget " << budget << " entry " << fifo[i];
    }
  }
  EXPECT_EQ(last_dropped, fifo.size());  // the smallest budgets that fit hold no history
}

TEST(WorkingMemoryTest, DropsNoMoreThanNeeded) {
  // Bytes as tokens: every line's cost is known exactly.
  ByteCounter counter;
  WorkingMemoryInput in;
  in.request = "go";
  in.recent = {Ep("a", EpisodeType::kUserMessage, "aaaa", 1), Ep("b", EpisodeType::kUserMessage, "bbbb", 2),
               Ep("c", EpisodeType::kUserMessage, "cccc", 3)};
  const std::string request = "User's current request: go";
  const std::string header = "Recent conversation history:";
  const std::string line = WorkingEpisodeLine(in.recent[0]);  // every line is as long
  // Room for the request, the header and two lines: exactly "a" goes.
  const size_t two_lines = request.size() + 2 + header.size() + 2 * (1 + line.size());
  auto wm = PackWorkingMemory(in, Budget(static_cast<int64_t>(two_lines)), counter);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  ASSERT_EQ(wm->dropped.size(), 1u);
  EXPECT_EQ(wm->dropped[0].id, "a");
  EXPECT_EQ(wm->dropped[0].step_number, 1);
  EXPECT_EQ(wm->dropped[0].tokens, line.size());
  EXPECT_EQ(wm->total_tokens, two_lines);
  EXPECT_EQ(wm->Render(), header + "\n" + WorkingEpisodeLine(in.recent[1]) + "\n" + WorkingEpisodeLine(in.recent[2]) +
                             "\n\n" + request);
  // One byte less: "b" goes too.
  auto tighter = PackWorkingMemory(in, Budget(static_cast<int64_t>(two_lines - 1)), counter);
  ASSERT_TRUE(tighter.ok());
  ASSERT_EQ(tighter->dropped.size(), 2u);
  EXPECT_EQ(tighter->dropped[1].id, "b");
  // No room for any history: the header goes with the last line.
  auto bare = PackWorkingMemory(in, Budget(static_cast<int64_t>(request.size())), counter);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->dropped.size(), 3u);
  EXPECT_EQ(bare->Render(), request);
}

TEST(WorkingMemoryTest, FailsWhenFactsAndRequestAloneAreOverBudget) {
  ByteCounter counter;
  WorkingMemoryInput in = SampleInput();
  std::string big(500, 'x');
  in.facts.push_back({"f3", big, 0.5, "", false});
  auto wm = PackWorkingMemory(in, Budget(600, 100), counter);
  ASSERT_FALSE(wm.ok());
  EXPECT_EQ(wm.status().code(), StatusCode::kFailedPrecondition);
  const std::string& msg = wm.status().message();
  EXPECT_NE(msg.find("facts ("), std::string::npos) << msg;
  EXPECT_NE(msg.find("3 facts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("budget of 500"), std::string::npos) << msg;
  EXPECT_NE(msg.find("request ("), std::string::npos) << msg;
  EXPECT_NE(msg.find("system prompt ("), std::string::npos) << msg;
}

TEST(WorkingMemoryTest, ToolsAreNeverDropped) {
  ByteCounter counter;
  WorkingMemoryInput in;
  in.request = "hi";
  in.tool_schemas = {std::string(300, 't')};
  auto wm = PackWorkingMemory(in, Budget(200), counter);
  ASSERT_FALSE(wm.ok());
  EXPECT_EQ(wm.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(wm.status().message().find("1 tools"), std::string::npos) << wm.status().message();
}

TEST(WorkingMemoryTest, RejectsAnEmptyBudget) {
  EstimateTokenCounter counter;
  for (auto b : {Budget(100, 100), Budget(100, 200), Budget(0, 0), Budget(100, -1)}) {
    auto wm = PackWorkingMemory(SampleInput(), b, counter);
    ASSERT_FALSE(wm.ok());
    EXPECT_EQ(wm.status().code(), StatusCode::kInvalidArgument) << wm.status().ToString();
  }
}

TEST(WorkingMemoryTest, ReportNamesSectionsSizesAndDrops) {
  EstimateTokenCounter counter;
  const WorkingMemoryInput in = SampleInput();
  auto full = PackWorkingMemory(in, Budget(100000), counter);
  ASSERT_TRUE(full.ok());
  auto wm = PackWorkingMemory(in, Budget(static_cast<int64_t>(full->total_tokens) - 1), counter);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  ASSERT_FALSE(wm->dropped.empty());
  const std::string report = wm->Report();
  const auto& facts = wm->section(WorkingSectionId::kFacts);
  EXPECT_NE(report.find("== facts (" + std::to_string(facts.tokens) + " tokens, 2 items) =="), std::string::npos)
      << report;
  EXPECT_NE(report.find("[id f1, score 0.910]"), std::string::npos) << report;
  EXPECT_NE(report.find("== dropped (1 episodes"), std::string::npos) << report;
  EXPECT_NE(report.find("- retrieved history: r1 step 3"), std::string::npos) << report;
  EXPECT_NE(report.find("== total " + std::to_string(wm->total_tokens) + " of " + std::to_string(wm->budget) +
                        " tokens (estimate) =="),
            std::string::npos)
      << report;
  // Section headers appear in prompt order.
  size_t pos = 0;
  for (const char* name : {"== system", "== facts", "== retrieved history", "== recent history", "== tools",
                           "== request", "== dropped", "== total"}) {
    const size_t at = report.find(name, pos);
    ASSERT_NE(at, std::string::npos) << name << "\n" << report;
    pos = at;
  }
}

TEST(WorkingMemoryTest, CoreMemoryAndTurnAreShownAndNeverCut) {
  ByteCounter counter;
  WorkingMemoryInput in;
  in.system_prompt = "S";
  in.core_blocks = {{"persona", "I am Sam.", 100}, {"task", "", 50}};
  in.recent = {Ep("a", EpisodeType::kUserMessage, "aaaa", 1)};
  in.request = "go";
  in.turn = {"Tool call (x): {}", "Tool result (x): 1"};
  auto full = PackWorkingMemory(in, Budget(10000), counter);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const std::string prompt = full->Render();
  EXPECT_NE(prompt.find("<persona chars=\"9/100\">\n  > I am Sam.\n</persona>\n<task chars=\"0/50\">\n</task>"),
            std::string::npos)
      << prompt;
  EXPECT_LT(prompt.find("System: S"), prompt.find("Core memory"));
  EXPECT_LT(prompt.find("Core memory"), prompt.find("Recent conversation"));
  EXPECT_LT(prompt.find("User's current request: go"), prompt.find("This turn so far:\nTool call (x): {}"));
  EXPECT_EQ(full->section(WorkingSectionId::kCoreMemory).items, 2u);
  EXPECT_EQ(full->RenderBefore(WorkingSectionId::kTools), prompt.substr(0, prompt.find("\n\nUser's current request")));
  // Squeezed: the history goes, the core memory and the turn stay.
  const size_t without_history =
      full->total_tokens - ("\n\nRecent conversation history:\n" + WorkingEpisodeLine(in.recent[0])).size();
  auto squeezed = PackWorkingMemory(in, Budget(static_cast<int64_t>(without_history)), counter);
  ASSERT_TRUE(squeezed.ok()) << squeezed.status().ToString();
  EXPECT_EQ(squeezed->total_tokens, without_history) << "an exact fit is accepted";
  EXPECT_EQ(squeezed->dropped.size(), 1u);
  EXPECT_NE(squeezed->Render().find("I am Sam."), std::string::npos);
  EXPECT_NE(squeezed->Render().find("Tool result (x): 1"), std::string::npos);
  // One token less and nothing more can go: a clear error with the excess.
  auto over = PackWorkingMemory(in, Budget(static_cast<int64_t>(without_history) - 1), counter);
  ASSERT_EQ(over.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(over.status().message().find("by 1;"), std::string::npos) << over.status().message();
  EXPECT_NE(over.status().message().find("core memory ("), std::string::npos) << over.status().message();
}

TEST(WorkingMemoryTest, SummarisesWhatTheBudgetLeavesOut) {
  ByteCounter counter;
  WorkingMemoryInput in;
  in.request = "go";
  for (int i = 1; i <= 6; ++i) {
    in.recent.push_back(Ep("e" + std::to_string(i), EpisodeType::kUserMessage, std::string(40, 'a' + i), i));
  }
  auto full = PackWorkingMemory(in, Budget(100000), counter);
  ASSERT_TRUE(full.ok());
  std::vector<std::string> seen;
  WorkingMemoryPackOptions opts;
  opts.summarise = [&](const std::vector<WorkingEpisode>& dropped) -> Result<std::string> {
    for (const auto& e : dropped) seen.push_back(e.id);
    return std::string("short summary");
  };
  // Two lines and a bit over: three lines go.
  const int64_t line = static_cast<int64_t>(WorkingEpisodeLine(in.recent[0]).size()) + 1;
  const int64_t budget = static_cast<int64_t>(full->total_tokens) - (2 * line + 10);
  auto wm = PackWorkingMemory(in, Budget(budget), counter, opts);
  ASSERT_TRUE(wm.ok()) << wm.status().ToString();
  EXPECT_TRUE(wm->summarised);
  ASSERT_GE(wm->dropped.size(), 3u);
  EXPECT_EQ(seen, (std::vector<std::string>{"e1", "e2", "e3"})) << "the oldest entries, in order";
  EXPECT_LE(wm->total_tokens, static_cast<size_t>(budget));
  const std::string prompt = wm->Render();
  EXPECT_NE(prompt.find("Summary of earlier conversation:\n  > short summary"), std::string::npos) << prompt;
  EXPECT_LT(prompt.find("short summary"), prompt.find("Recent conversation history:"));
  for (size_t i = 0; i < wm->dropped.size(); ++i) EXPECT_EQ(wm->dropped[i].summarised, i < seen.size());
  EXPECT_NE(wm->Report().find("[summarised]"), std::string::npos);

  // A failing summariser leaves plain FIFO dropping, and says why.
  opts.summarise = [](const std::vector<WorkingEpisode>&) -> Result<std::string> {
    return Status::Unavailable("model down");
  };
  auto plain = PackWorkingMemory(in, Budget(budget), counter, opts);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->summarised);
  EXPECT_EQ(plain->dropped.size(), 3u);
  EXPECT_NE(plain->summary_error.find("model down"), std::string::npos);
  EXPECT_EQ(plain->Render().find("Summary of earlier"), std::string::npos);
}

TEST(WorkingEpisodeFromMemoryTest, ReadsTypeAndToolFromTheBody) {
  Memory m;
  m.id = "ep1";
  m.kind = Kind::kEpisode;
  m.layer = Layer::kEpisodic;
  m.text = "{\"query\": \"numpy\"}";
  m.step_number = 7;
  m.body_json = R"({"type":"tool_call","content":{"query":"numpy"},"metadata":{"tool_name":"web_search"}})";
  auto e = WorkingEpisodeFromMemory(m);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->id, "ep1");
  EXPECT_EQ(e->type, EpisodeType::kToolCall);
  EXPECT_EQ(e->tool_name, "web_search");
  EXPECT_EQ(e->step_number, 7);
  EXPECT_EQ(e->text, m.text);
}

TEST(WorkingEpisodeFromMemoryTest, RejectsWhatIsNotAnEpisode) {
  Memory fact;
  fact.id = "f1";
  fact.kind = Kind::kFact;
  EXPECT_EQ(WorkingEpisodeFromMemory(fact).status().code(), StatusCode::kInvalidArgument);
  Memory bad;
  bad.id = "e1";
  bad.kind = Kind::kEpisode;
  for (const char* body : {"not json", "[]", "{}", R"({"type": "chat"})", R"({"type": 3})"}) {
    bad.body_json = body;
    auto e = WorkingEpisodeFromMemory(bad);
    ASSERT_FALSE(e.ok()) << body;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << body;
  }
}

}  // namespace
}  // namespace msp
