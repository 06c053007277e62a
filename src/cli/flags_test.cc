// Tests for the flag parser.
#include "cli/flags.h"

#include <gtest/gtest.h>

namespace msp {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {"--top-k", "K", "results"},
    {"--tag", "TAG", "tags", true},
    {"--json", "", "json"},
    {"--min-score", "X", "score"},
};

ParsedFlags ParseOk(const std::vector<std::string>& args, bool settings = false) {
  auto r = ParseFlags(args, kSpecs, settings);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ParsedFlags{};
}

std::string ParseError(const std::vector<std::string>& args, bool settings = false) {
  auto r = ParseFlags(args, kSpecs, settings);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(FlagsTest, SeparateAndInlineValues) {
  ParsedFlags f = ParseOk({"query text", "--top-k", "5", "--tag=a", "--tag", "b=c", "--json"});
  EXPECT_EQ(f.positionals, std::vector<std::string>{"query text"});
  EXPECT_EQ(f.Get("--top-k"), "5");
  EXPECT_EQ(f.All("--tag"), (std::vector<std::string>{"a", "b=c"}));
  EXPECT_TRUE(f.Has("--json"));
  EXPECT_FALSE(f.Has("--min-score"));
  EXPECT_EQ(f.Get("--min-score", "0.5"), "0.5");
}

TEST(FlagsTest, ValuesMayStartWithDashesAndBeEmpty) {
  ParsedFlags f = ParseOk({"--tag", "--weird", "--min-score=", "-"});
  EXPECT_EQ(f.All("--tag"), std::vector<std::string>{"--weird"});
  EXPECT_EQ(f.Get("--min-score", "x"), "");
  EXPECT_EQ(f.positionals, std::vector<std::string>{"-"});
}

TEST(FlagsTest, DoubleDashEndsFlags) {
  ParsedFlags f = ParseOk({"--json", "--", "--top-k", "-x"});
  EXPECT_EQ(f.positionals, (std::vector<std::string>{"--top-k", "-x"}));
  EXPECT_FALSE(f.Has("--top-k"));
}

TEST(FlagsTest, HelpSwitches) {
  EXPECT_TRUE(ParseOk({"-h"}).Has("--help"));
  EXPECT_TRUE(ParseOk({"--help"}).Has("--help"));
}

TEST(FlagsTest, ErrorsNameTheFlag) {
  EXPECT_EQ(ParseError({"--colour", "red"}), "unknown flag '--colour'");
  EXPECT_EQ(ParseError({"--colour=red"}), "unknown flag '--colour'");
  EXPECT_EQ(ParseError({"-x"}), "unknown flag '-x' (flags are spelt --name)");
  EXPECT_EQ(ParseError({"--top-k"}), "--top-k needs a value");
  EXPECT_EQ(ParseError({"--json=yes"}), "--json takes no value");
  EXPECT_EQ(ParseError({"--top-k", "1", "--top-k=2"}), "--top-k is given more than once");
  EXPECT_EQ(ParseError({"--tag", "ok\xC3\x28"}), "the value of --tag is not valid UTF-8 (bad byte at offset 2)");
  EXPECT_EQ(ParseError({"--tag=\xFF"}), "the value of --tag is not valid UTF-8 (bad byte at offset 0)");
}

TEST(FlagsTest, PositionalsAreNotCheckedHere) {
  ParsedFlags f = ParseOk({"bad\xFF"});
  EXPECT_EQ(f.positionals.size(), 1u);
}

TEST(FlagsTest, SettingFlagsOnlyWhenAccepted) {
  EXPECT_EQ(ParseError({"--data-dir", "/x"}), "unknown flag '--data-dir'");
  ParsedFlags f = ParseOk({"--data-dir", "/x", "--policy-min-chars=3", "--json"}, /*settings=*/true);
  ASSERT_EQ(f.setting_flags.size(), 2u);
  EXPECT_EQ(f.setting_flags[0], (std::pair<std::string, std::string>{"--data-dir", "/x"}));
  EXPECT_EQ(f.setting_flags[1], (std::pair<std::string, std::string>{"--policy-min-chars", "3"}));
  EXPECT_FALSE(f.Has("--data-dir"));
  EXPECT_EQ(ParseError({"--data-dir", "/x", "--data-dir", "/y"}, true), "--data-dir is given more than once");
  EXPECT_EQ(ParseError({"--data-dir"}, true), "--data-dir needs a value");
}

TEST(FlagsTest, TypedValues) {
  ParsedFlags f = ParseOk({"--top-k", "25", "--min-score", "0.25"});
  EXPECT_EQ(*f.GetInt("--top-k", 10, 1, 1000), 25);
  EXPECT_DOUBLE_EQ(*f.GetDouble("--min-score", 0, 0, 1), 0.25);
  EXPECT_EQ(*ParseOk({}).GetInt("--top-k", 10, 1, 1000), 10);

  auto bad_int = ParseOk({"--top-k", "2x"}).GetInt("--top-k", 10, 1, 1000);
  ASSERT_FALSE(bad_int.ok());
  EXPECT_EQ(bad_int.status().message(), "--top-k must be an integer, got '2x'");
  auto low = ParseOk({"--top-k", "0"}).GetInt("--top-k", 10, 1, 1000);
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.status().message(), "--top-k must be between 1 and 1000, got 0");
  auto bad_double = ParseOk({"--min-score", "high"}).GetDouble("--min-score", 0, 0, 1);
  ASSERT_FALSE(bad_double.ok());
  EXPECT_EQ(bad_double.status().message(), "--min-score must be a number, got 'high'");
  auto high = ParseOk({"--min-score", "1.5"}).GetDouble("--min-score", 0, 0, 1);
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.status().message(), "--min-score must be between 0 and 1, got 1.5");
  EXPECT_FALSE(ParseOk({"--min-score", "nan"}).GetDouble("--min-score", 0, 0, 1).ok());
  EXPECT_FALSE(ParseOk({"--top-k", ""}).GetInt("--top-k", 10, 1, 1000).ok());
}

}  // namespace
}  // namespace msp
