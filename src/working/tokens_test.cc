// Tests for the token counters: the estimate's rules, monotonicity, the factory.
#include "working/tokens.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace msp {
namespace {

TEST(EstimateTokenCounterTest, EmptyTextIsFree) {
  EstimateTokenCounter c;
  EXPECT_EQ(c.Count(""), 0u);
  EXPECT_EQ(c.name(), "estimate");
}

TEST(EstimateTokenCounterTest, FollowsTheDocumentedRules) {
  EstimateTokenCounter c;
  EXPECT_EQ(c.Count("hello"), 1u);                  // a short word
  EXPECT_EQ(c.Count("hello world"), 2u);            // the single space joins the next word
  EXPECT_EQ(c.Count("internationalization"), 4u);   // 20 letters: ceil(20 / 5)
  EXPECT_EQ(c.Count("getUserName"), 3u);            // cut at case changes
  EXPECT_EQ(c.Count("HTTPServer"), 2u);             // no lower-to-upper change: 10 letters
  EXPECT_EQ(c.Count("1234567"), 3u);                // digits by three
  EXPECT_EQ(c.Count("a,b"), 3u);                    // punctuation: ceil(1 / 2) each run
  EXPECT_EQ(c.Count("::"), 1u);
  EXPECT_EQ(c.Count("();"), 2u);
  EXPECT_EQ(c.Count("  "), 1u);                     // two spaces
  EXPECT_EQ(c.Count("\n\n"), 1u);
  EXPECT_EQ(c.Count("\n\n\n"), 2u);
  EXPECT_EQ(c.Count("日本語"), 3u);                 // 9 bytes: one per CJK character
  EXPECT_EQ(c.Count("Привет"), 4u);                 // 12 bytes
  EXPECT_EQ(c.Count("\xF0\x9F\x98\x80"), 2u);       // an emoji: 4 bytes + 2
}

TEST(EstimateTokenCounterTest, InvalidUtf8IsCountedNotRejected) {
  EstimateTokenCounter c;
  EXPECT_EQ(c.Count(std::string("\xff\xfe", 2)), 1u);
  EXPECT_GT(c.Count(std::string("ok \xc3", 4)), c.Count("ok "));
}

// Every prefix costs no more than any longer prefix of the same text.
void ExpectMonotone(const TokenCounter& c, const std::string& text) {
  size_t previous = 0;
  for (size_t n = 0; n <= text.size(); ++n) {
    const size_t count = c.Count(std::string_view(text).substr(0, n));
    ASSERT_GE(count, previous) << "prefix of " << n << " bytes of: " << text;
    previous = count;
  }
}

TEST(EstimateTokenCounterTest, MonotoneInTextLength) {
  EstimateTokenCounter c;
  for (const char* s : {"I can't install the numpy package on Windows 11, my script fails with Python 3.11.",
                        "    return Status::InvalidArgument(\"bad\");\n\n\n  }\n",
                        "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}",
                        "Пользователь предпочитает Python для анализа данных 😀 日本語",
                        "QmFzZTY0IGVuY29kZWQgc3RyaW5nIGhlcmU= aBcDeFgHiJ 0192f3a4-5b6c-7d8e"}) {
    ExpectMonotone(c, s);
  }
  // Random texts over pieces of every character class, cut at any byte.
  const std::vector<std::string> pieces = {"a", "Z", "q", "7", " ", "  ", "\n", "\t", ",", "::", "é",
                                           "ж", "語", "\xF0\x9F\x98\x80", "\x01", "\xff", "aB", "Ab"};
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    for (int i = 0; i < 60; ++i) text += pieces[pick(rng)];
    ExpectMonotone(c, text);
  }
}

TEST(EstimateTokenCounterTest, GrowsWithText) {
  EstimateTokenCounter c;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "memory ";
  EXPECT_EQ(c.Count(text), 1000u);  // 1000 short words, single spaces
  EXPECT_GT(c.Count(text + text), c.Count(text));
}

TEST(TokenCounterFactoryTest, KnowsTheEstimate) {
  auto c = MakeTokenCounter("estimate");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->name(), "estimate");
  EXPECT_EQ((*c)->Count("hello world"), 2u);
  // The default is the exact counter when its vocabulary is installed
  // (cl100k_test checks that), else the estimate.
  const std::string_view def = DefaultTokenCounter()->name();
  EXPECT_TRUE(def == "cl100k" || def == "estimate") << def;
}

TEST(TokenCounterFactoryTest, RejectsUnknownNames) {
  auto c = MakeTokenCounter("gpt2");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("cl100k"), std::string::npos);
  EXPECT_NE(c.status().message().find("estimate"), std::string::npos);
}

TEST(TokenCounterFactoryTest, Cl100kWithoutVocabularyNamesThePath) {
  TokenOptions o;
  o.counter = "cl100k";
  o.vocabulary_path = "/nonexistent/ranks.js";
  auto c = MakeTokenCounter(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("/nonexistent/ranks.js"), std::string::npos);
}

}  // namespace
}  // namespace msp
