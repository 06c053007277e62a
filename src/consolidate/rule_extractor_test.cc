// Tests for the rule-based fact extractor: example sentences and the facts
// they give, what must give nothing, merging, and the extractor factory.
#include "consolidate/rule_extractor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace msp {
namespace {

std::vector<std::string> Texts(const std::vector<FactCandidate>& facts) {
  std::vector<std::string> out;
  for (const auto& f : facts) out.push_back(f.text);
  return out;
}

const FactCandidate* Find(const std::vector<FactCandidate>& facts, const std::string& text) {
  for (const auto& f : facts) {
    if (f.text == text) return &f;
  }
  return nullptr;
}

std::string Dump(const std::vector<FactCandidate>& facts) {
  std::string out;
  for (const auto& f : facts) {
    out += "  \"" + f.text + "\" " + std::to_string(f.confidence) + " [";
    for (const auto& t : f.tags) out += t + " ";
    out += "]\n";
  }
  return out.empty() ? "  (none)\n" : out;
}

Memory Episode(const std::string& id, const std::string& type, const std::string& text) {
  Memory m;
  m.id = id;
  m.kind = Kind::kEpisode;
  m.layer = Layer::kEpisodic;
  m.text = text;
  m.body_json = R"({"type":")" + type + R"(","content":{"text":"..."},"metadata":{}})";
  return m;
}

struct Example {
  const char* text;
  const char* fact;   // one fact the text must give, exactly
  const char* tag;    // its category tag
  double confidence;  // its confidence
};

class RuleExamples : public ::testing::TestWithParam<Example> {};

TEST_P(RuleExamples, GivesTheExpectedFact) {
  const Example& e = GetParam();
  RuleExtractor x;
  const auto facts = x.ExtractFromText(e.text);
  const FactCandidate* f = Find(facts, e.fact);
  ASSERT_NE(f, nullptr) << "\"" << e.text << "\" gave:\n" << Dump(facts);
  EXPECT_NE(std::find(f->tags.begin(), f->tags.end(), e.tag), f->tags.end()) << e.text;
  EXPECT_DOUBLE_EQ(f->confidence, e.confidence) << e.text;
}

INSTANTIATE_TEST_SUITE_P(
    Preferences, RuleExamples,
    ::testing::Values(Example{"I prefer dark mode.", "User prefers dark mode.", "preference", 0.85},
                      Example{"i PREFER Dark Mode", "User prefers Dark Mode.", "preference", 0.85},
                      Example{"I'd prefer short answers.", "User prefers short answers.", "preference", 0.85},
                      Example{"I like vim too.", "User likes vim.", "preference", 0.8},
                      Example{"I really like spicy food", "User likes spicy food.", "preference", 0.8},
                      Example{"I'd rather not use Docker", "User would rather not use Docker.", "preference", 0.85},
                      Example{"I don't like long meetings", "User does not like long meetings.", "preference", 0.85},
                      Example{"I don\xE2\x80\x99t like tabs", "User does not like tabs.", "preference", 0.85},
                      Example{"I hate waiting", "User hates waiting.", "preference", 0.8},
                      Example{"I'm a big fan of jazz", "User is a fan of jazz.", "preference", 0.8},
                      Example{"My favorite editor is Neovim.", "User's favorite editor is Neovim.", "preference", 0.9},
                      Example{"I think I prefer tabs", "User prefers tabs.", "preference", 0.6},
                      Example{"I'm not sure but maybe I prefer tabs", "User prefers tabs.", "preference", 0.6},
                      Example{"I probably like tea", "User likes tea.", "preference", 0.6}));

INSTANTIATE_TEST_SUITE_P(
    Profile, RuleExamples,
    ::testing::Values(Example{"My name is Anna.", "User's name is Anna.", "profile", 0.9},
                      Example{"my job is teaching math", "User's job is teaching math.", "profile", 0.9},
                      Example{"My time zone is CET", "User's time zone is CET.", "profile", 0.9},
                      Example{"I am a software engineer", "User is a software engineer.", "profile", 0.85},
                      Example{"I'm an architect.", "User is an architect.", "profile", 0.85},
                      Example{"I'm 34 years old", "User is 34 years old.", "profile", 0.85},
                      Example{"I work at Acme Corp.", "User works at Acme Corp.", "profile", 0.85},
                      Example{"I work as a nurse", "User works as a nurse.", "profile", 0.85},
                      Example{"I live in Berlin", "User lives in Berlin.", "profile", 0.85},
                      Example{"I'm based in Lisbon", "User lives in Lisbon.", "profile", 0.85},
                      Example{"I'm from Kyiv", "User is from Kyiv.", "profile", 0.85},
                      Example{"I speak Polish and German", "User speaks Polish and German.", "profile", 0.8},
                      Example{"Hi, I'm Anna and I work at Acme Corp.", "User works at Acme Corp.", "profile", 0.85}));

INSTANTIATE_TEST_SUITE_P(
    Environment, RuleExamples,
    ::testing::Values(Example{"I use Python 3.11.", "User uses Python 3.11.", "environment", 0.85},
                      Example{"I'm using PostgreSQL at work", "User uses PostgreSQL at work.", "environment", 0.85},
                      Example{"I am using a Raspberry Pi", "User uses a Raspberry Pi.", "environment", 0.85},
                      Example{"I'm on Windows 11", "User uses Windows 11.", "environment", 0.8},
                      Example{"I'm on a Mac", "User uses a Mac.", "environment", 0.8},
                      Example{"I run Arch Linux", "User runs Arch Linux.", "environment", 0.8},
                      Example{"My OS is Ubuntu 22.04", "User's OS is Ubuntu 22.04.", "environment", 0.9},
                      Example{"My OS is Ubuntu 22.04", "User uses Ubuntu 22.04.", "environment", 0.7},
                      Example{"My editor is VS Code.", "User's editor is VS Code.", "environment", 0.9},
                      Example{"I installed CUDA 12.2 yesterday", "User has installed CUDA 12.2 yesterday.",
                              "environment", 0.8},
                      Example{"I have numpy installed", "User has numpy installed.", "environment", 0.8},
                      Example{"I don't use Python 2.7 anymore", "User does not use Python 2.7 anymore.",
                              "environment", 0.85},
                      Example{"I stopped using Windows", "User no longer uses Windows.", "environment", 0.85},
                      Example{"I think I use Python 3.11.", "User uses Python 3.11.", "environment", 0.6},
                      Example{"The script dies on Windows 10, I'm sure of it, my laptop is old",
                              "User's laptop is old.", "environment", 0.9},
                      Example{"my code compiles with C++20", "User uses C++20.", "environment", 0.7}));

INSTANTIATE_TEST_SUITE_P(
    Goals, RuleExamples,
    ::testing::Values(Example{"I want to learn Rust.", "User's goal: learn Rust.", "goal", 0.8},
                      Example{"I need to finish my thesis", "User's goal: finish their thesis.", "goal", 0.8},
                      Example{"My goal is to run a marathon.", "User's goal: run a marathon.", "goal", 0.9},
                      Example{"I'm trying to deploy the app to AWS", "User's goal: deploy the app to AWS.", "goal",
                              0.8},
                      Example{"I plan to move to Spain", "User's goal: move to Spain.", "goal", 0.8},
                      Example{"I'm learning Japanese", "User is learning Japanese.", "goal", 0.8},
                      Example{"I work as a nurse, but I want to become a developer",
                              "User's goal: become a developer.", "goal", 0.8}));

INSTANTIATE_TEST_SUITE_P(
    Constraints, RuleExamples,
    ::testing::Values(Example{"I can't eat gluten", "User cannot eat gluten.", "constraint", 0.85},
                      Example{"I cannot use sudo on this machine", "User cannot use sudo on this machine.",
                              "constraint", 0.85},
                      Example{"I must not share customer data.", "User must not share customer data.", "constraint",
                              0.85},
                      Example{"I'm allergic to peanuts", "User is allergic to peanuts.", "constraint", 0.9},
                      Example{"My budget is 500 dollars", "User's budget is 500 dollars.", "constraint", 0.9},
                      Example{"I'm not allowed to install software", "User is not allowed to install software.",
                              "constraint", 0.85},
                      Example{"I don't want to use Docker", "User does not want to use Docker.", "constraint", 0.8},
                      Example{"I only have 8GB of RAM", "User only has 8GB of RAM.", "constraint", 0.75},
                      Example{"I need to deploy this without Docker.", "User's constraint: without Docker.",
                              "constraint", 0.75},
                      Example{"It has to run without root access.", "User's constraint: without root access.",
                              "constraint", 0.75},
                      Example{"I can't eat gluten and I don't have a car", "User does not have a car.", "constraint",
                              0.75}));

INSTANTIATE_TEST_SUITE_P(
    Problems, RuleExamples,
    ::testing::Values(
        Example{"I can't install numpy", "User cannot install numpy.", "problem", 0.85},
        Example{"Can't connect to the database", "User cannot connect to the database.", "problem", 0.8},
        Example{"I'm unable to run the tests", "User cannot run the tests.", "problem", 0.85},
        Example{"My script fails with Python 3.11", "User's script fails with Python 3.11.", "problem", 0.8},
        Example{"My laptop is broken", "User's laptop is broken.", "problem", 0.8},
        Example{"The build fails on CI.", "User reports that the build fails on CI.", "problem", 0.7},
        Example{"Installing torch keeps failing on my laptop",
                "User reports that installing torch keeps failing on their laptop.", "problem", 0.75},
        Example{"pip install numpy fails with an error", "User reports that pip install numpy fails with an error.",
                "problem", 0.75},
        Example{"I get an error when I run pip install", "User gets an error when they run pip install.", "problem",
                0.8},
        Example{"I keep getting ModuleNotFoundError: No module named numpy",
                "User gets ModuleNotFoundError: No module named numpy.", "problem", 0.8},
        Example{"I'm having trouble connecting to the VPN", "User has trouble connecting to the VPN.", "problem",
                0.75}));

INSTANTIATE_TEST_SUITE_P(
    VersionMentions, RuleExamples,
    ::testing::Values(Example{"I'm using a MacBook with macOS 14.2 and Xcode 15", "User uses macOS 14.2.",
                              "environment", 0.7},
                      Example{"I'm using a MacBook with macOS 14.2 and Xcode 15", "User uses Xcode 15.", "environment",
                              0.7},
                      Example{"I'm on Windows 11 with C++20 and node 20", "User uses Node.js 20.", "environment", 0.7},
                      Example{"I'm on Windows 11 with C++20 and node 20", "User uses C++20.", "environment", 0.7},
                      Example{"we deploy on ubuntu 20.04 servers", "User uses Ubuntu 20.04.", "environment", 0.7}));

// Every fact carries a tag the write policy accepts as stable.
TEST(RuleExtractorTest, EveryFactHasAStableTag) {
  RuleExtractor x;
  const char* texts[] = {"I use Python 3.11.", "The build fails on CI.", "I prefer tabs", "I can't eat gluten",
                         "I want to learn Rust", "My name is Anna", "I'm on Windows 11",
                         "It has to run without root access."};
  for (const char* t : texts) {
    const auto facts = x.ExtractFromText(t);
    ASSERT_FALSE(facts.empty()) << t;
    for (const auto& f : facts) {
      const bool stable = std::any_of(f.tags.begin(), f.tags.end(), [](const std::string& tag) {
        return tag == "preference" || tag == "constraint" || tag == "profile" || tag == "goal";
      });
      EXPECT_TRUE(stable) << f.text;
      EXPECT_GT(f.confidence, 0.0);
      EXPECT_LE(f.confidence, 1.0);
    }
  }
  // Environment and problem facts are also profile facts.
  const auto env = x.ExtractFromText("I use Python 3.11.");
  EXPECT_EQ(env.at(0).tags, (std::vector<std::string>{"environment", "profile"}));
  const auto problem = x.ExtractFromText("I can't install numpy");
  EXPECT_EQ(problem.at(0).tags, (std::vector<std::string>{"problem", "profile"}));
  const auto pref = x.ExtractFromText("I prefer tabs");
  EXPECT_EQ(pref.at(0).tags, (std::vector<std::string>{"preference"}));
}

// Seed 000, section 5: session 1 of the support agent.
TEST(RuleExtractorTest, SeedExampleGivesWindowsPythonAndTheFailingInstall) {
  RuleExtractor x;
  std::vector<Memory> episodes = {
      Episode("ep1", "user_message",
              "I can't install the numpy package on Windows 11, my script fails with Python 3.11"),
      Episode("ep2", "tool_call", "web_search: numpy install error windows 11 python 3.11"),
      Episode("ep3", "tool_result", "Results: you use Windows 10 and Python 2.7"),
      Episode("ep4", "agent_response", "I use Linux. You prefer Windows 11. Try installing the build tools."),
  };
  auto facts = x.Extract(episodes);
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  EXPECT_EQ(Texts(*facts), (std::vector<std::string>{"User cannot install the numpy package on Windows 11.",
                                                     "User uses Windows 11.", "User's script fails with Python 3.11.",
                                                     "User uses Python 3.11."}))
      << Dump(*facts);
  for (const auto& f : *facts) EXPECT_EQ(f.source_episodes, std::vector<std::string>{"ep1"}) << f.text;
  const FactCandidate* install = Find(*facts, "User cannot install the numpy package on Windows 11.");
  ASSERT_NE(install, nullptr);
  EXPECT_EQ(install->tags, (std::vector<std::string>{"problem", "profile"}));
  EXPECT_DOUBLE_EQ(install->confidence, 0.85);
  const FactCandidate* windows = Find(*facts, "User uses Windows 11.");
  ASSERT_NE(windows, nullptr);
  EXPECT_EQ(windows->tags, (std::vector<std::string>{"environment", "profile"}));
}

TEST(RuleExtractorTest, QuestionsGiveNothing) {
  RuleExtractor x;
  for (const char* t :
       {"Do you use Python?", "do you use X?", "Should I use Python 3.12?", "What do you prefer?",
        "Can you help me install numpy on Windows 11?", "Is it true that I like vim?", "How do I run Docker on Mac",
        "Why does my script fail with Python 3.11?", "I wonder, do I need to install numpy?",
        "Which editor do you like"}) {
    EXPECT_TRUE(x.ExtractFromText(t).empty()) << t << " gave:\n" << Dump(x.ExtractFromText(t));
  }
  // The statement before the question still counts.
  EXPECT_EQ(Texts(x.ExtractFromText("I use Python 3.11, how do I install numpy?")),
            std::vector<std::string>{"User uses Python 3.11."});
}

TEST(RuleExtractorTest, NonStatementsGiveNothing) {
  RuleExtractor x;
  for (const char* t :
       {"", " ", "...", "ok", "thanks!", "I", "my", "I like", "I like it", "I'm on", "I need to", "maybe",
        "I want to know how to install numpy", "I need to ask you something", "I'm a bit confused",
        "I'm on it", "I run a bakery", "If I use Python 3.12, will numpy work",
        "When I run the script, it crashes", "My password is hunter2", "My api key is sk-123456",
        "My friend uses Python 2.7", "My colleague's laptop crashes with Windows 10",
        "I upgraded from Python 3.8 to Python 3.12", "I'd like to see the logs", "Please summarise the thread",
        "I'll definitely finish the report without a doubt", "Thanks, that works now",
        "The docs say it requires Python 3.10"}) {
    EXPECT_TRUE(x.ExtractFromText(t).empty()) << "\"" << t << "\" gave:\n" << Dump(x.ExtractFromText(t));
  }
}

TEST(RuleExtractorTest, VersionMentionsThatAreNotTheUsersOwnAreIgnored) {
  RuleExtractor x;
  // A wish is not an environment: the goal, but no "uses Postgres 16".
  EXPECT_EQ(Texts(x.ExtractFromText("I want to migrate to Postgres 16.")),
            std::vector<std::string>{"User's goal: migrate to Postgres 16."});
  EXPECT_EQ(Texts(x.ExtractFromText("I don't use Python 2.7 anymore")),
            std::vector<std::string>{"User does not use Python 2.7 anymore."});
  EXPECT_EQ(Texts(x.ExtractFromText("I prefer Python 3.11 over 3.12")),
            std::vector<std::string>{"User prefers Python 3.11 over 3.12."});
  // "Go" is a product only with its capital.
  EXPECT_TRUE(x.ExtractFromText("I go 3 times a week").empty());
  EXPECT_EQ(Texts(x.ExtractFromText("my service is written in Go 1.22")),
            std::vector<std::string>{"User uses Go 1.22."});
}

TEST(RuleExtractorTest, SentencesClausesAndPronouns) {
  RuleExtractor x;
  EXPECT_EQ(Texts(x.ExtractFromText("My name is Anna. I live in Berlin!\nI prefer tea; I hate coffee")),
            (std::vector<std::string>{"User's name is Anna.", "User lives in Berlin.", "User prefers tea.",
                                      "User hates coffee."}));
  // Abbreviations and version dots do not end a sentence.
  EXPECT_EQ(Texts(x.ExtractFromText("I use tools e.g. pip and conda. I like Python 3.11.4 a lot.")),
            (std::vector<std::string>{"User uses tools e.g. pip and conda.", "User likes Python 3.11.4 a lot."}));
  // A list after a verb stays one object; a new subject starts a new clause.
  EXPECT_EQ(Texts(x.ExtractFromText("I like apples, pears and plums")),
            std::vector<std::string>{"User likes apples, pears and plums."});
  EXPECT_EQ(Texts(x.ExtractFromText("So I can't use apt, I'm on Windows")),
            (std::vector<std::string>{"User cannot use apt.", "User uses Windows."}));
  // First person inside the object becomes third person.
  EXPECT_EQ(Texts(x.ExtractFromText("I want to finish my thesis before I move")),
            std::vector<std::string>{"User's goal: finish their thesis before they move."});
}

TEST(RuleExtractorTest, OnlyUserMessagesAreRead) {
  RuleExtractor x;
  const std::string text = "I prefer dark mode and I use Python 3.11.";
  std::vector<Memory> episodes;
  for (const char* type : {"agent_response", "tool_call", "tool_result", "observation"}) {
    episodes.push_back(Episode(std::string("ep-") + type, type, text));
  }
  Memory fact = Episode("fact1", "user_message", text);
  fact.kind = Kind::kFact;  // not an episode
  episodes.push_back(fact);
  Memory secret = Episode("secret1", "user_message", text);
  secret.sensitivity = Sensitivity::kHigh;
  episodes.push_back(secret);
  Memory broken = Episode("broken1", "user_message", text);
  broken.body_json = "not json";
  episodes.push_back(broken);
  Memory untyped = Episode("untyped1", "user_message", text);
  untyped.body_json = R"({"content":{}})";
  episodes.push_back(untyped);
  auto facts = x.Extract(episodes);
  ASSERT_TRUE(facts.ok());
  EXPECT_TRUE(facts->empty()) << Dump(*facts);

  // The same text as a user message gives facts.
  episodes.push_back(Episode("ep-user", "user_message", text));
  facts = x.Extract(episodes);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(Texts(*facts), (std::vector<std::string>{"User prefers dark mode.", "User uses Python 3.11."}))
      << Dump(*facts);
  EXPECT_EQ(facts->at(0).source_episodes, std::vector<std::string>{"ep-user"});
}

TEST(RuleExtractorTest, FallsBackToContentText) {
  RuleExtractor x;
  Memory m = Episode("ep1", "user_message", "");
  m.body_json = R"({"type":"user_message","content":{"text":"I live in Oslo"},"metadata":{}})";
  auto facts = x.Extract({m});
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(Texts(*facts), std::vector<std::string>{"User lives in Oslo."});
}

TEST(RuleExtractorTest, MergesIdenticalFactsAndTheirSources) {
  RuleExtractor x;
  std::vector<Memory> episodes = {
      Episode("ep1", "user_message", "I think I use Python 3.11."),
      Episode("ep2", "user_message", "I use python 3.11"),  // same fact, other case
      Episode("ep3", "user_message", "My script fails with Python 3.11. I use Python 3.11."),
      Episode("ep4", "user_message", "I prefer tabs."),
  };
  auto facts = x.Extract(episodes);
  ASSERT_TRUE(facts.ok());
  // "User uses python 3.11." (ep2's own words) is the same fact as "User uses
  // Python 3.11.": facts are keyed case-insensitively and the first spelling wins.
  EXPECT_EQ(Texts(*facts), (std::vector<std::string>{"User uses Python 3.11.", "User's script fails with Python 3.11.",
                                                     "User prefers tabs."}))
      << Dump(*facts);
  EXPECT_EQ(facts->at(0).source_episodes, (std::vector<std::string>{"ep1", "ep2", "ep3"}));
  EXPECT_EQ(facts->at(2).source_episodes, std::vector<std::string>{"ep4"});
}

TEST(RuleExtractorTest, MergeKeepsTheHighestConfidenceAndAllSources) {
  RuleExtractor x;
  std::vector<Memory> episodes = {
      Episode("ep1", "user_message", "I think I use Python 3.11."),
      Episode("ep2", "user_message", "I use Python 3.11"),
      Episode("ep3", "user_message", "My script fails with Python 3.11"),
      Episode("ep2", "user_message", "I use Python 3.11"),  // the same episode twice
  };
  auto facts = x.Extract(episodes);
  ASSERT_TRUE(facts.ok());
  const FactCandidate* py = Find(*facts, "User uses Python 3.11.");
  ASSERT_NE(py, nullptr) << Dump(*facts);
  EXPECT_DOUBLE_EQ(py->confidence, 0.85);  // hedged 0.6 in ep1, stated 0.85 in ep2
  EXPECT_EQ(py->source_episodes, (std::vector<std::string>{"ep1", "ep2", "ep3"}));
  EXPECT_EQ(py->tags, (std::vector<std::string>{"environment", "profile"}));
  EXPECT_EQ(std::count_if(facts->begin(), facts->end(),
                          [](const FactCandidate& f) { return f.text == "User uses Python 3.11."; }),
            1);
}

TEST(RuleExtractorTest, LongAndOddInputIsSafe) {
  RuleExtractor x;
  std::string long_text;
  for (int i = 0; i < 500; ++i) long_text += "I prefer tabs, and I use vim; ";
  const auto facts = x.ExtractFromText(long_text);
  EXPECT_EQ(Texts(facts), (std::vector<std::string>{"User prefers tabs.", "User uses vim."}));
  // Bytes that are not text, lone punctuation, UTF-8 outside ASCII.
  const char raw[] = "\xff\xfe\0\x01, ; : - ?!";
  EXPECT_TRUE(x.ExtractFromText(std::string(raw, sizeof(raw) - 1)).empty());
  EXPECT_EQ(Texts(x.ExtractFromText("I live in Zürich — I speak Deutsch")),
            (std::vector<std::string>{"User lives in Zürich.", "User speaks Deutsch."}));
  // An object of more than 30 words is not a crisp fact.
  std::string rambling = "I like";
  for (int i = 0; i < 40; ++i) rambling += " things";
  EXPECT_TRUE(x.ExtractFromText(rambling).empty());
}

// Random text from words that fire rules, punctuation and odd bytes: no
// crash (the sanitizer build checks memory), and every fact is well formed.
TEST(RuleExtractorTest, RandomTextGivesWellFormedFacts) {
  const std::vector<std::string> pieces = {
      "I", "I'm", "my", "prefer", "use", "can't", "install", "Python", "3.11", "Windows", "11", "fails",
      "want", "to", "without", "the", "is", "name", "goal", ",", ".", "?", ";", " - ", "\n", "e.g.",
      "and", "but", "if", "do you", "error", "C++20", "\xE2\x80\x94", "\xC3\xBC", "\xFF", "'", "\"",
      "a", "an", "engineer", "34", "years old", "my friend", "don't", "like", "on", "maybe", "really"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 40);
  RuleExtractor x;
  size_t produced = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    for (int i = length(rng); i > 0; --i) text += pieces[pick(rng)] + (rng() % 3 == 0 ? "" : " ");
    for (const auto& f : x.ExtractFromText(text)) {
      ++produced;
      EXPECT_EQ(f.text.rfind("User", 0), 0u) << f.text << " from: " << text;
      EXPECT_EQ(f.text.back(), '.') << f.text;
      EXPECT_EQ(f.text.find("  "), std::string::npos) << f.text;
      EXPECT_FALSE(f.tags.empty()) << f.text;
      EXPECT_GT(f.confidence, 0.0);
      EXPECT_LE(f.confidence, 1.0);
      EXPECT_TRUE(f.source_episodes.empty());
    }
  }
  EXPECT_GT(produced, 0u);  // the pieces do fire rules
}

TEST(ExtractorFactoryTest, MakesTheRuleExtractor) {
  ConsolidationOptions options;
  auto e = MakeExtractor(options);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->name(), "rules");
  auto facts = (*e)->Extract({Episode("ep1", "user_message", "I prefer dark mode.")});
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(Texts(*facts), std::vector<std::string>{"User prefers dark mode."});
}

// MakeExtractor makes the rules extractor only: the llm one needs a chat
// model (MakeConfiguredExtractor).
TEST(ExtractorFactoryTest, RefusesTheLlmExtractorNamingWhereItIsMade) {
  ConsolidationOptions options;
  options.extractor = ExtractorKind::kLlm;
  auto e = MakeExtractor(options);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("llm"), std::string::npos);
  EXPECT_NE(e.status().message().find("rules"), std::string::npos);
  EXPECT_NE(e.status().message().find("MakeConfiguredExtractor"), std::string::npos);
}

}  // namespace
}  // namespace msp
