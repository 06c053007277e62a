// Tool observations: secret redaction (each pattern, and none on ordinary
// code), summaries, files relative to the repository, exit status, caps.
#include "coding/observation.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "coding/hooks.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

std::string Redact(std::string_view s, size_t* n = nullptr) { return RedactSecrets(s, n); }

TEST(RedactSecretsTest, EachPattern) {
  size_t n = 0;
  EXPECT_EQ(Redact("export OPENAI=sk-proj-4fGh7Jk2LmN9pQr5StUv8WxYz1", &n), "export OPENAI=[REDACTED]");
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(Redact("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx end"), "key [REDACTED] end");
  EXPECT_EQ(Redact("git clone https://ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789@github.com/x"),
            "git clone https://[REDACTED]@github.com/x");
  EXPECT_EQ(Redact("token github_pat_11ABCDEFG0123456789_abcdefghijklmnop"), "token [REDACTED]");
  EXPECT_EQ(Redact("aws_access_key_id AKIAIOSFODNN7EXAMPLE."), "aws_access_key_id [REDACTED].");
  EXPECT_EQ(Redact("curl -H 'Authorization: Bearer eyJhbGciOi.eyJzdWIi.SflKxw' https://api"),
            "curl -H 'Authorization: Bearer [REDACTED]' https://api");
  EXPECT_EQ(Redact("mysql://db?user=ann&password=hunter2&x=1"), "mysql://db?user=ann&password=[REDACTED]&x=1");
  EXPECT_EQ(Redact(R"({"user":"ann","password": "correct horse"})"), R"({"user":"ann","password": "[REDACTED]"})");
  EXPECT_EQ(Redact("PGPASSWORD=x psql --pwd='s3cr3t!' db"), "PGPASSWORD=[REDACTED] psql --pwd='[REDACTED]' db");
  EXPECT_EQ(Redact("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nb"),
            "a\n[REDACTED]\nb");
  EXPECT_EQ(Redact("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"), "[REDACTED]");
  EXPECT_EQ(Redact("STRIPE_API_KEY=q8Zr2Lx9Vt4Pw7Ny3Mb6Kc1Hd5Jf0Gs"), "STRIPE_API_KEY=[REDACTED]");
  EXPECT_EQ(Redact("SLACK_TOKEN: \"Xk29dLq8ZpW3rT7vN1bM5cY0\""), "SLACK_TOKEN: \"[REDACTED]\"");
  EXPECT_EQ(Redact("client_secret=9f8e7d6c5b4a39281706f5e4d3c2b1a0"), "client_secret=[REDACTED]");
  EXPECT_EQ(Redact("two: sk-aaaaaaaaaaaaaaaaaaaaaaaa1 and AKIAABCDEFGHIJKLMNOP", &n), "two: [REDACTED] and [REDACTED]");
  EXPECT_EQ(n, 2u);
}

TEST(RedactSecretsTest, OrdinaryCodeAndProsePassUnchanged) {
  const std::string code = R"(// Checks the password the user typed.
bool Check(const std::string& password, const std::string& stored_hash) {
  if (password == "") return false;
  const auto key = Derive(password, salt);  // KEY=derived below
  std::string API_KEY = std::getenv("API_KEY");
  int token_count = 0, MAX_TOKEN = 4096;
  auto secret = vault.Get("db/secret");
  PRIMARY_KEY=id
  CACHE_KEY=user_profile_settings
  return key == stored_hash;  // see task-runner-ghp_ and sk-learn
}
password_hash = bcrypt(pw)
sk-learn is a Python library; the risk-free path; disk-usage-summary-for-all-users
Authorization: Bearer <token>
AKIA is the prefix of AWS key ids; ghp_short; -----BEGIN CERTIFICATE-----
git commit -m "fix: tokenizer keeps 1500 tokens"
)";
  size_t n = 0;
  EXPECT_EQ(Redact(code, &n), code);
  EXPECT_EQ(n, 0u);
}

HookInput Hook(const std::string& tool, const nlohmann::json& input, const nlohmann::json& response,
               const std::string& cwd = "/home/u/webapp/src") {
  HookInput in;
  in.session_id = "s-1";
  in.cwd = cwd;
  in.hook_event_name = "PostToolUse";
  in.tool_name = tool;
  in.tool_use_id = "toolu_1";
  in.tool_input = input.dump();
  in.tool_response = response.dump();
  return in;
}

TEST(ObservationTest, SummaryFilesAndStatusPerTool) {
  testing::TempDir dir("coding-obs");
  ASSERT_TRUE(dir.ok());
  const std::string repo = dir.path() + "/webapp";
  fs::create_directories(repo + "/.git");
  fs::create_directories(repo + "/src");
  std::ofstream(repo + "/.git/HEAD") << "ref: refs/heads/feature/login\n";
  const std::string cwd = repo + "/src";

  ASSERT_OK_AND_ASSIGN(Observation bash,
                       ObservationFromHook(Hook("Bash", {{"command", "make test\necho done"}},
                                                {{"stdout", "ok"}, {"stderr", ""}, {"interrupted", false}}, cwd),
                                           1000, 2000));
  EXPECT_EQ(bash.summary, "make test …");
  EXPECT_EQ(bash.command, "make test\necho done");
  EXPECT_EQ(bash.exit_code, 0);
  EXPECT_FALSE(bash.failed);
  EXPECT_EQ(bash.repository, repo);
  EXPECT_EQ(bash.branch, "feature/login");
  EXPECT_EQ(bash.at, 1000);

  ASSERT_OK_AND_ASSIGN(Observation edit,
                       ObservationFromHook(Hook("Edit", {{"file_path", cwd + "/app.ts"}, {"old_string", "a"}},
                                                {{"filePath", cwd + "/app.ts"}}, cwd),
                                           1, 2000));
  EXPECT_EQ(edit.files, std::vector<std::string>{"src/app.ts"});
  EXPECT_EQ(edit.summary, "src/app.ts");
  EXPECT_TRUE(edit.changed_files);
  ASSERT_OK_AND_ASSIGN(Observation read,
                       ObservationFromHook(Hook("Read", {{"file_path", "../README.md"}}, "text", cwd), 1, 2000));
  EXPECT_EQ(read.files, std::vector<std::string>{"README.md"});
  EXPECT_FALSE(read.changed_files);
  ASSERT_OK_AND_ASSIGN(Observation outside,
                       ObservationFromHook(Hook("Write", {{"file_path", "/etc/hosts"}}, nullptr, cwd), 1, 2000));
  EXPECT_EQ(outside.files, std::vector<std::string>{"/etc/hosts"});
  ASSERT_OK_AND_ASSIGN(Observation grep,
                       ObservationFromHook(Hook("Grep", {{"pattern", "TODO\\("}, {"path", cwd}}, nullptr, cwd), 1, 2000));
  EXPECT_EQ(grep.summary, "TODO\\( in src");
  ASSERT_OK_AND_ASSIGN(Observation glob, ObservationFromHook(Hook("Glob", {{"pattern", "**/*.ts"}}, nullptr, cwd), 1, 2000));
  EXPECT_EQ(glob.summary, "**/*.ts");
  ASSERT_OK_AND_ASSIGN(Observation mcp,
                       ObservationFromHook(Hook("mcp__msp__memory_search", {{"query", "docker"}}, nullptr, cwd), 1, 2000));
  EXPECT_EQ(mcp.summary, "query: docker");

  HookInput fail = Hook("Bash", {{"command", "npm test"}}, nullptr, cwd);
  fail.tool_response.clear();
  fail.hook_event_name = "PostToolUseFailure";
  fail.error = "Exit code 2\nnpm ERR! Test failed";
  ASSERT_OK_AND_ASSIGN(Observation failed, ObservationFromHook(fail, 1, 2000));
  EXPECT_TRUE(failed.failed);
  EXPECT_EQ(failed.exit_code, 2);
  EXPECT_EQ(failed.error, "Exit code 2\nnpm ERR! Test failed");

  ASSERT_OK_AND_ASSIGN(Observation stopped,
                       ObservationFromHook(Hook("Bash", {{"command", "sleep 99"}}, {{"interrupted", true}}, cwd), 1, 2000));
  EXPECT_TRUE(stopped.failed);
  EXPECT_EQ(stopped.exit_code, -1);

  HookInput none = Hook("", nullptr, nullptr);
  EXPECT_TRUE(ObservationFromHook(none, 1, 2000).status().IsInvalidArgument());
  HookInput no_session = Hook("Bash", nullptr, nullptr);
  no_session.session_id.clear();
  EXPECT_TRUE(ObservationFromHook(no_session, 1, 2000).status().IsInvalidArgument());
}

TEST(ObservationTest, SecretsRedactedAndPartsCapped) {
  const std::string key = "sk-proj-4fGh7Jk2LmN9pQr5StUv8WxYz1";
  HookInput in = Hook("Bash", {{"command", "OPENAI_API_KEY=" + key + " ./run.sh"}},
                      {{"stdout", "token " + key + " " + std::string(10000, 'x')}, {"stderr", "password=hunter2"}});
  ASSERT_OK_AND_ASSIGN(Observation o, ObservationFromHook(in, 1, 500));
  const std::string all = ObservationJson(o);
  EXPECT_EQ(all.find("4fGh7Jk2"), std::string::npos);
  EXPECT_EQ(all.find("hunter2"), std::string::npos);
  EXPECT_EQ(o.command, "OPENAI_API_KEY=[REDACTED] ./run.sh");
  EXPECT_GE(o.redactions, 3u);
  EXPECT_LT(o.response.size(), 1000u);
  EXPECT_NE(o.response.find("more characters]"), std::string::npos);
  // A credential under a key named like one, in JSON.
  HookInput mcp = Hook("mcp__x__login", {{"username", "ann"}, {"password", "p"}, {"api_token", "Zx81Qp29Lm47Vb36Nc"}},
                       nullptr);
  ASSERT_OK_AND_ASSIGN(Observation m, ObservationFromHook(mcp, 1, 500));
  nlohmann::json input = nlohmann::json::parse(m.input);
  EXPECT_EQ(input["username"], "ann");
  EXPECT_EQ(input["password"], "[REDACTED]");
  EXPECT_EQ(input["api_token"], "[REDACTED]");
  // The command is capped too.
  HookInput long_cmd = Hook("Bash", {{"command", std::string(5000, 'e')}}, nullptr);
  ASSERT_OK_AND_ASSIGN(Observation c, ObservationFromHook(long_cmd, 1, 500));
  EXPECT_LT(c.command.size(), kObservationCommandChars + 40);
  EXPECT_LT(c.summary.size(), kObservationSummaryChars + 40);
}

TEST(ObservationTest, JsonRoundTripAndEpisode) {
  Observation o;
  o.at = 42;
  o.session_id = "s-9";
  o.tool = "Edit";
  o.files = {"src/a.cc", "src/b.cc"};
  o.changed_files = true;
  o.exit_code = 3;
  o.failed = true;
  o.input = R"({"file_path":"src/a.cc"})";
  ASSERT_OK_AND_ASSIGN(Observation back, ParseObservationJson(ObservationJson(o)));
  EXPECT_EQ(back.files, o.files);
  EXPECT_EQ(back.exit_code, 3);
  EXPECT_TRUE(back.failed);
  EXPECT_TRUE(back.changed_files);
  EXPECT_EQ(back.input, o.input);
  EXPECT_EQ(back.at, 42);
  EXPECT_TRUE(ParseObservationJson("[]").status().IsInvalidArgument());
  EXPECT_TRUE(ParseObservationJson(R"({"tool":"Edit"})").status().IsInvalidArgument());
  EXPECT_TRUE(ParseObservationJson(R"({"tool":"Edit","session_id":"s","files":"x","at":"soon"})").status().IsInvalidArgument());

  ObservationScope scope{"t", "ann", "m"};
  EpisodeStep step = ObservationEpisode(o, scope, "hook");
  EXPECT_EQ(step.ns.tenant, "t");
  EXPECT_EQ(step.ns.user, "ann");
  EXPECT_EQ(step.ns.session, "s-9");
  EXPECT_EQ(step.type, EpisodeType::kToolCall);
  EXPECT_EQ(step.tool_name, "Edit");
  EXPECT_EQ(step.timestamp, 42);
  EXPECT_EQ(nlohmann::json::parse(step.content_json)["files"][1], "src/b.cc");
}

TEST(ObservationTest, RelativeToRoot) {
  EXPECT_EQ(RelativeToRoot("/r/src/a.cc", "/r/src", "/r"), "src/a.cc");
  EXPECT_EQ(RelativeToRoot("a.cc", "/r/src", "/r"), "src/a.cc");
  EXPECT_EQ(RelativeToRoot("../../x", "/r/src", "/r"), "/x");
  EXPECT_EQ(RelativeToRoot("/rx/a", "/r", "/r"), "/rx/a");
  EXPECT_EQ(RelativeToRoot("b/c", "/tmp", ""), "b/c");
  EXPECT_EQ(RelativeToRoot("", "/tmp", ""), "");
}

}  // namespace
}  // namespace msp
