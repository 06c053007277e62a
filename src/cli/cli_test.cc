// In-process tests of the command line's dispatch, help, usage errors, exit
// codes and output helpers. Flows against a real store are in tests/e2e/.
#include "cli/cli.h"
#include "cli/answer_text.h"
#include "cli/cli_test_util.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/test_util.h"

namespace msp {
namespace {

CliRun Cli(const std::vector<std::string>& args, const std::string& input = "") {
  return RunCliCapture(args, input);
}

using testing::Contains;

TEST(ExitCodeTest, OneMapping) {
  EXPECT_EQ(ExitCodeFor(Status::Ok()), 0);
  EXPECT_EQ(ExitCodeFor(Status::InvalidArgument("x")), 2);
  EXPECT_EQ(ExitCodeFor(Status::Refused("x")), 3);
  EXPECT_EQ(ExitCodeFor(Status::NotFound("x")), 4);
  EXPECT_EQ(ExitCodeFor(Status::IoError("x")), 1);
  EXPECT_EQ(ExitCodeFor(Status::Internal("x")), 1);
  EXPECT_EQ(ExitCodeFor(Status::FailedPrecondition("x")), 1);
}

TEST(CliTest, NoVerbIsAUsageError) {
  CliRun r = Cli({});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(Contains(r.err, "no verb given"));
  EXPECT_TRUE(Contains(r.err, "usage: msp VERB"));
  EXPECT_TRUE(r.out.empty());
}

TEST(CliTest, HelpAndVersion) {
  CliRun r = Cli({"help"});
  EXPECT_EQ(r.code, 0);
  for (const char* verb : {"init", "write", "episode add", "episode list", "session end", "fact add",
                           "fact supersede", "search", "get", "history", "delete", "consolidate", "reindex",
                           "import", "export", "stats", "audit", "demo", "version"}) {
    EXPECT_TRUE(Contains(r.out, std::string("  ") + verb + " ")) << verb;
  }
  EXPECT_EQ(Cli({"--help"}).out, r.out);

  CliRun v = Cli({"version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("msp ", 0), 0u);
  EXPECT_EQ(Cli({"--version"}).out, v.out);

  CliRun search = Cli({"help", "search"});
  EXPECT_EQ(search.code, 0);
  EXPECT_TRUE(Contains(search.out, "usage: msp search QUERY"));
  EXPECT_TRUE(Contains(search.out, "--top-k TOP_K"));
  EXPECT_TRUE(Contains(search.out, "--tenant NAME"));
  EXPECT_EQ(Cli({"search", "--help"}).out, search.out);

  CliRun group = Cli({"help", "episode"});
  EXPECT_TRUE(Contains(group.out, "usage: msp episode add"));
  EXPECT_TRUE(Contains(group.out, "usage: msp episode list"));

  CliRun config = Cli({"help", "config"});
  EXPECT_EQ(config.code, 0);
  EXPECT_TRUE(Contains(config.out, "policy.min_chars"));
  EXPECT_TRUE(Contains(config.out, "MSP_POLICY_MIN_CHARS"));
  EXPECT_TRUE(Contains(config.out, "--policy-min-chars VALUE"));

  CliRun unknown = Cli({"help", "frobnicate"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(Contains(unknown.err, "no help for 'frobnicate'"));
}

TEST(CliTest, UnknownVerbsAndSubVerbs) {
  CliRun r = Cli({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(Contains(r.err, "unknown verb 'frobnicate'"));
  CliRun sub = Cli({"episode", "remove"});
  EXPECT_EQ(sub.code, 2);
  EXPECT_TRUE(Contains(sub.err, "after 'episode' use one of: add, list")) << sub.err;
  CliRun bare = Cli({"fact"});
  EXPECT_EQ(bare.code, 2);
  EXPECT_TRUE(Contains(bare.err, "use one of: add, supersede")) << bare.err;
}

TEST(CliTest, UsageErrorsPrintTheVerbsUsage) {
  CliRun missing = Cli({"write"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(Contains(missing.err, "msp: missing TEXT"));
  EXPECT_TRUE(Contains(missing.err, "usage: msp write TEXT"));

  CliRun extra = Cli({"get", "a", "b"});
  EXPECT_EQ(extra.code, 2);
  EXPECT_TRUE(Contains(extra.err, "unexpected argument 'b'"));
  EXPECT_TRUE(Contains(extra.err, "usage: msp get ID"));

  CliRun flag = Cli({"search", "q", "--colour", "red"});
  EXPECT_EQ(flag.code, 2);
  EXPECT_TRUE(Contains(flag.err, "msp: unknown flag '--colour'"));
  EXPECT_TRUE(Contains(flag.err, "usage: msp search QUERY"));

  // A flag of another verb is unknown here.
  CliRun other = Cli({"get", "x", "--top-k", "3"});
  EXPECT_EQ(other.code, 2);
  EXPECT_TRUE(Contains(other.err, "unknown flag '--top-k'"));

  CliRun bad_utf8 = Cli({"write", "caf\xC3"});
  EXPECT_EQ(bad_utf8.code, 2);
  EXPECT_TRUE(Contains(bad_utf8.err, "TEXT is not valid UTF-8 (bad byte at offset 3)")) << bad_utf8.err;
}

TEST(CliTest, ConfigErrorsExitTwoBeforeTouchingTheStore) {
  CliRun r = Cli({"stats", "--data-dir", "/nonexistent/msp-cli-test", "--retrieval-rrf-k", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(Contains(r.err, "msp: --retrieval-rrf-k must be >= 1, got 0")) << r.err;
  CliRun missing = Cli({"stats", "--config", "/nonexistent/msp.toml"});
  EXPECT_EQ(missing.code, 4);
  EXPECT_TRUE(Contains(missing.err, "config file '/nonexistent/msp.toml' (from --config) does not exist"));
}

TEST(CliTest, ReadVerbsDoNotCreateAStore) {
  CliRun r = Cli({"search", "anything", "--data-dir", "/nonexistent/msp-cli-test"});
  EXPECT_EQ(r.code, 4);
  EXPECT_TRUE(Contains(r.err, "no msp store in data directory '/nonexistent/msp-cli-test' (store.data_dir, from "
                              "--data-dir); run `msp init` first"))
      << r.err;
}

// Seed 003 clamps push refreshes between once per 24 h and once per 7 days:
// outside it only with an explicit override, which is logged.
TEST(CliTest, OrchestrateIntervalsOutsideTheClampNeedAnOverride) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--orchestrate-min-interval-h", "1"},
        std::vector<std::string>{"--orchestrate-max-interval-h", "8760"}}) {
    std::vector<std::string> args = {"orchestrate", "--once", "--mission", "m", "--data-dir", "/nonexistent/x"};
    args.insert(args.end(), flags.begin(), flags.end());
    CliRun r = Cli(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(Contains(r.err, "outside seed 003's clamp")) << r.err;
    EXPECT_TRUE(Contains(r.err, "--orchestrate-interval-override true")) << r.err;
    args.push_back("--orchestrate-interval-override");
    args.push_back("true");
    CliRun allowed = Cli(args);
    // Past the check (the store is missing), and the override was logged.
    EXPECT_EQ(allowed.code, 4) << allowed.err;
    EXPECT_TRUE(Contains(allowed.err, "warning: orchestrate.min_interval_h")) << allowed.err;
    EXPECT_TRUE(Contains(allowed.err, "allowed by orchestrate.interval_override")) << allowed.err;
  }
  CliRun inside = Cli({"orchestrate", "--once", "--mission", "m", "--data-dir", "/nonexistent/x",
                       "--orchestrate-min-interval-h", "48", "--orchestrate-max-interval-h", "120"});
  EXPECT_EQ(inside.code, 4) << inside.err;
  EXPECT_FALSE(Contains(inside.err, "warning")) << inside.err;
}

TEST(CliTest, FlagsMayComeBeforeTheVerb) {
  CliRun r = Cli({"--data-dir", "/nonexistent/msp-cli-test", "get", "some-id"});
  EXPECT_EQ(r.code, 4);
  EXPECT_TRUE(Contains(r.err, "no msp store in data directory '/nonexistent/msp-cli-test'")) << r.err;
}

TEST(CliTest, EnumAndValueFlagErrorsAreUsageErrors) {
  CliRun kind = Cli({"write", "some text here", "--kind", "thought", "--data-dir", "/nonexistent/x"});
  EXPECT_EQ(kind.code, 2);
  EXPECT_TRUE(Contains(kind.err, "--kind: unknown value 'thought'; allowed: fact, procedure")) << kind.err;
  CliRun body = Cli({"write", "some text here", "--body", "{\"a\":", "--data-dir", "/nonexistent/x"});
  EXPECT_EQ(body.code, 2);
  EXPECT_TRUE(Contains(body.err, "--body: invalid JSON at byte")) << body.err;
  CliRun ttl = Cli({"write", "some text here", "--ttl-days", "ten", "--data-dir", "/nonexistent/x"});
  EXPECT_EQ(ttl.code, 2);
  EXPECT_TRUE(Contains(ttl.err, "--ttl-days must be an integer, got 'ten'")) << ttl.err;
  // 0 is not a TTL (issue 19: it was accepted and the record never expired).
  CliRun zero = Cli({"write", "some text here", "--ttl-days", "0", "--data-dir", "/nonexistent/x"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_TRUE(Contains(zero.err, "--ttl-days 0 is not a time to live: give 1..36500 days")) << zero.err;
  EXPECT_TRUE(Contains(zero.err, "to store without expiry leave it out")) << zero.err;
  CliRun prov = Cli({"write", "some text here", "--provenance", "abc", "--data-dir", "/nonexistent/x"});
  EXPECT_EQ(prov.code, 2);
  EXPECT_TRUE(Contains(prov.err, "--provenance must be TYPE:REF")) << prov.err;
  CliRun since = Cli({"search", "q", "--created-from", "last week", "--data-dir", "/nonexistent/x"});
  EXPECT_EQ(since.code, 2);
  EXPECT_TRUE(Contains(since.err, "--created-from: 'last week' is not an ISO 8601 time")) << since.err;
  CliRun both = Cli({"episode", "add", "--session", "s", "--text", "a", "--content", "{}"});
  EXPECT_EQ(both.code, 2);
  EXPECT_TRUE(Contains(both.err, "give exactly one of --text (the step as text) and --content")) << both.err;
  CliRun no_session = Cli({"episode", "list"});
  EXPECT_EQ(no_session.code, 2);
  EXPECT_TRUE(Contains(no_session.err, "--session is required"));
  CliRun tenant = Cli({"get", "x", "--tenant", ""});
  EXPECT_EQ(tenant.code, 2);
  EXPECT_TRUE(Contains(tenant.err, "--tenant must not be empty"));
}

TEST(OneLineTest, CollapsesWhitespaceAndCutsOnCharacters) {
  EXPECT_EQ(OneLine("  a\n\n b\tc  "), "a b c");
  EXPECT_EQ(OneLine("привет мир", 6), "привет…");
  EXPECT_EQ(OneLine("abc", 3), "abc");
  EXPECT_EQ(OneLine("abcd", 3), "abc…");
  EXPECT_EQ(OneLine("a\x01" "b"), "a?b");
  EXPECT_EQ(OneLine("🙂🙂🙂", 2), "🙂🙂…");
}

}  // namespace
}  // namespace msp

namespace msp {
namespace {

// The printed forms the command and the resident server share
// (answer_text.h).
TEST(PrintAnswerTest, SearchLinesJsonAndRefusals) {
  const nlohmann::json answer = {
      {"hits",
       {{{"score", 0.5},
         {"memory", {{"kind", "fact"}, {"id", "id-1"}, {"text", "the user\nlikes  tea"}}},
         {"passage", {{"begin", 0}, {"end", 10}, {"text_bytes", 100}}},
         {"explain",
          {{{"signal", "bm25"}, {"rank", 1}, {"raw", 2.5}, {"contribution", 0.3}},
           {{"signal", "vector"}, {"rank", 0}, {"raw", 0.0}, {"contribution", 0.0}}}}}}},
      {"sessions", {{{"score", 0.8}, {"namespace", {{"session", "s1"}}}, {"best_id", "id-1"}}}}};
  std::ostringstream lines;
  ASSERT_TRUE(PrintAnswer("search", "search", answer, lines));
  EXPECT_EQ(lines.str(),
            "0.500  fact  id-1  the user likes tea\n"
            "       passage: bytes 0..10 of 100 (msp get id-1: the whole)\n"
            "       bm25: rank 1, raw 2.5000, adds 0.3000\n"
            "       vector: not found, adds 0.0000\n"
            "sessions:\n"
            "0.800  s1  best id-1\n");
  std::ostringstream none;
  ASSERT_TRUE(PrintAnswer("search", "search", {{"hits", nlohmann::json::array()}, {"sessions", nlohmann::json::array()}},
                          none));
  EXPECT_EQ(none.str(), "no results\n");

  std::ostringstream json_line;
  ASSERT_TRUE(PrintAnswer("get", "json", {{"id", "id-1"}}, json_line));
  EXPECT_EQ(json_line.str(), "{\"id\":\"id-1\"}\n");

  // The search lines are only for a search's answer; unknown forms print nothing.
  std::ostringstream refused;
  EXPECT_FALSE(PrintAnswer("get", "search", {{"id", "id-1"}}, refused));
  EXPECT_FALSE(PrintAnswer("search", "table", answer, refused));
  EXPECT_FALSE(PrintAnswer("search", "", answer, refused));
  EXPECT_EQ(refused.str(), "");
}

}  // namespace
}  // namespace msp
