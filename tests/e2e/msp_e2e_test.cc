// End-to-end tests of the `msp` command line: each test runs the built binary
// (MSP_BINARY) with posix_spawn in its own temporary directory and checks exit
// codes, stdout and stderr. Bad input must exit non-zero with a message that
// names the field (or line) and leave the store unchanged, which is checked
// by comparing `msp export` before and after.
#include "tests/e2e/msp_e2e_fixture.h"

namespace {

using namespace msp_e2e;  // NOLINT: the fixture's helpers
namespace fs = std::filesystem;
using nlohmann::json;

TEST_F(MspTest, InitCreatesTheStoreAndSaysWhere) {
  Outcome r = Msp({"init"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, data_)) << r.out;
  EXPECT_TRUE(fs::is_directory(data_));
  EXPECT_TRUE(fs::exists(fs::path(data_) / "msp.db"));
  // Again: still fine, nothing lost.
  EXPECT_EQ(Msp({"init"}).code, 0);
  json j = OkJson({"init"});
  EXPECT_EQ(j["records"], 0);
}

TEST_F(MspTest, WriteSearchGetHistoryDelete) {
  Ok({"init"});
  const std::string id = WriteId({"write", "The user prefers dark mode in every editor", "--tag", "preference"});
  ASSERT_EQ(id.size(), 36u);
  WriteId({"write", "The deploy pipeline runs on GitHub Actions runners", "--tag", "constraint"});

  const std::string human = Ok({"search", "dark mode editor"});
  ASSERT_FALSE(human.empty());
  EXPECT_TRUE(Contains(Lines(human)[0], id)) << human;
  EXPECT_TRUE(Contains(Lines(human)[0], "fact")) << human;

  json hits = Hits({"search", "dark mode editor", "--top-k", "1"});
  ASSERT_TRUE(hits.is_array());
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0]["memory"]["id"], id);
  EXPECT_GT(hits[0]["score"].get<double>(), 0.0);
  EXPECT_LE(hits[0]["score"].get<double>(), 1.0);

  json explained = Hits({"search", "dark mode", "--explain"});
  ASSERT_FALSE(explained.empty());
  EXPECT_FALSE(explained[0]["explain"].empty());
  EXPECT_TRUE(Contains(Ok({"search", "dark mode", "--explain"}), "bm25"));

  const std::string got = Ok({"get", id});
  EXPECT_TRUE(Contains(got, "The user prefers dark mode in every editor"));
  EXPECT_TRUE(Contains(got, "preference"));
  json g = OkJson({"get", id});
  EXPECT_EQ(g["id"], id);
  EXPECT_EQ(g["kind"], "fact");
  EXPECT_EQ(g["tags"], json::array({"preference"}));

  json history = OkJson({"history", id})["versions"];
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0]["id"], id);

  EXPECT_TRUE(Contains(Ok({"delete", id, "--reason", "user asked"}), "deleted " + id));
  Outcome gone = Msp({"get", id});
  EXPECT_EQ(gone.code, 4);
  EXPECT_TRUE(Contains(gone.err, "msp: no record " + id)) << gone.err;
  json after = Hits({"search", "dark mode editor"});
  for (const auto& h : after) EXPECT_NE(h["memory"]["id"], id);
  EXPECT_EQ(Msp({"delete", id}).code, 4);

  // The audit log has the delete with its reason.
  json audit = OkJson({"audit", "--record", id})["events"];
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit[0]["action"], "delete");
  EXPECT_EQ(audit[0]["reason"], "user asked");
}

TEST_F(MspTest, SearchFilters) {
  Populate();
  json decisions = Hits({"search", "deploys Tuesdays", "--kinds", "decision"});
  ASSERT_FALSE(decisions.empty());
  for (const auto& h : decisions) EXPECT_EQ(h["memory"]["kind"], "decision");
  json episodic = Hits({"search", "numpy windows", "--layers", "episodic"});
  ASSERT_FALSE(episodic.empty());
  for (const auto& h : episodic) EXPECT_EQ(h["memory"]["layer"], "episodic");
  json tagged = Hits({"search", "dark mode", "--tags", "preference"});
  ASSERT_FALSE(tagged.empty());
  for (const auto& h : tagged) EXPECT_EQ(h["memory"]["tags"], json::array({"preference"}));
  EXPECT_TRUE(Hits({"search", "dark mode", "--created-to", "2000-01-01"}).empty());
  EXPECT_FALSE(Hits({"search", "dark mode", "--created-from", "2000-01-01"}).empty());
  EXPECT_EQ(Ok({"search", "zzzqqqxxx unrelated"}), "no results\n");
}

TEST_F(MspTest, EpisodeAddAndList) {
  Ok({"init"});
  const std::string first = Ok({"episode", "add", "--session", "s1", "--text", "I cannot install numpy"});
  EXPECT_TRUE(Contains(first, "step 1")) << first;
  Ok({"episode", "add", "--session", "s1", "--type", "tool_call", "--content", R"({"query":"numpy wheel"})",
      "--tool-name", "web_search", "--duration-ms", "40", "--token-count", "9"});
  json third = OkJson({"episode", "add", "--session", "s1", "--type", "agent_response", "--text",
                       "Install the Microsoft C++ Build Tools"});
  EXPECT_EQ(third["step_number"], 3);
  EXPECT_EQ(third["kind"], "episode");
  EXPECT_EQ(third["namespace"]["session"], "s1");
  Ok({"episode", "add", "--session", "other", "--text", "a different session entirely"});

  const std::vector<std::string> all = Lines(Ok({"episode", "list", "--session", "s1"}));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].rfind("step 1  user_message", 0), 0u) << all[0];
  EXPECT_EQ(all[1].rfind("step 2  tool_call", 0), 0u) << all[1];
  EXPECT_EQ(all[2].rfind("step 3  agent_response", 0), 0u) << all[2];

  json last = OkJson({"episode", "list", "--session", "s1", "--last", "2"})["steps"];
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0]["step_number"], 2);
  EXPECT_EQ(last[1]["step_number"], 3);
  EXPECT_EQ(last[0]["body"]["metadata"]["tool_name"], "web_search");
  EXPECT_EQ(last[0]["body"]["content"]["query"], "numpy wheel");

  // An explicit step that exists already is refused and changes nothing.
  ExpectRejected({"episode", "add", "--session", "s1", "--step", "2", "--text", "dup step"}, 1, {"already has step 2"});
}

TEST_F(MspTest, FactAddMergesANearDuplicate) {
  Ok({"init"});
  const std::string text = "The user's laptop runs Windows 11 with Python 3.12";
  json a = OkJson({"fact", "add", text});
  json b = OkJson({"fact", "add", text});
  EXPECT_EQ(a["merged"], false);
  EXPECT_EQ(b["merged"], true);
  EXPECT_EQ(a["id"], b["id"]);
  EXPECT_TRUE(Contains(Ok({"fact", "add", text}), "merged into fact " + a["id"].get<std::string>()));
  const std::vector<std::string> lines = Lines(Export());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(json::parse(lines[0])["text"], text);
}

TEST_F(MspTest, SupersedeKeepsHistory) {
  Ok({"init"});
  const std::string old_id = WriteId({"fact", "add", "The team deploys with Jenkins every Friday"});
  const std::string out = Ok({"fact", "supersede", old_id, "The team deploys with GitHub Actions every Tuesday"});
  EXPECT_TRUE(Contains(out, "superseded " + old_id + " by ")) << out;

  json history = OkJson({"history", old_id})["versions"];
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0]["id"], old_id);
  EXPECT_EQ(history[0]["state"], "superseded");
  EXPECT_EQ(history[1]["state"], "active");
  EXPECT_EQ(history[1]["supersedes"], old_id);
  EXPECT_EQ(history[0]["superseded_by"], history[1]["id"]);
  // The new id's history is the same chain.
  EXPECT_EQ(OkJson({"history", history[1]["id"].get<std::string>()})["versions"], history);

  json hits = Hits({"search", "team deploys"});
  for (const auto& h : hits) EXPECT_NE(h["memory"]["id"], old_id);
  bool found_old = false;
  for (const auto& h : Hits({"search", "team deploys", "--include-superseded"})) {
    found_old = found_old || h["memory"]["id"] == old_id;
  }
  EXPECT_TRUE(found_old);

  // Superseding twice is refused and changes nothing.
  ExpectRejected({"fact", "supersede", old_id, "The team deploys by hand on Mondays"}, 1, {"already superseded"});
  ExpectRejected({"fact", "supersede", "01900000-0000-7000-8000-000000000000", "Some replacement text here"}, 4,
                 {"no record"});
}

TEST_F(MspTest, SessionEndAndConsolidate) {
  Ok({"init"});
  Ok({"episode", "add", "--session", "s1", "--text", "My name is Ann and I prefer answers in Python"});
  Ok({"episode", "add", "--session", "s1", "--type", "agent_response", "--text", "Noted, Ann: Python it is."});
  json report = OkJson({"session", "end", "--session", "s1"});
  EXPECT_EQ(report["episodes_read"], 2);
  EXPECT_TRUE(report.contains("facts_added"));
  // Nothing left to consolidate.
  json again = OkJson({"consolidate", "--session", "s1"});
  EXPECT_EQ(again["episodes_read"], 0);
  EXPECT_EQ(Msp({"session", "end"}).code, 2);
}

TEST_F(MspTest, ExportImportExportIsIdentical) {
  Populate();
  Ok({"search", "dark mode"});  // access counts are part of the records
  const std::string first = Export();
  ASSERT_EQ(Lines(first).size(), 5u) << first;

  const fs::path file = dir_ / "dump.jsonl";
  EXPECT_TRUE(Contains(Ok({"export", file.string()}), "exported 5 records to " + file.string()));
  EXPECT_EQ(ReadFile(file), first);

  const std::string fresh = (dir_ / "fresh").string();
  Outcome imported = Exec({"import", file.string(), "--data-dir", fresh});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_TRUE(Contains(imported.out, "imported 5 records")) << imported.out;
  Outcome second = Exec({"export", "--data-dir", fresh});
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.out, first);

  // And through standard input.
  const std::string piped = (dir_ / "piped").string();
  Outcome from_stdin = Exec({"import", "-", "--data-dir", piped, "--json"}, first);
  ASSERT_EQ(from_stdin.code, 0) << from_stdin.err;
  EXPECT_EQ(json::parse(from_stdin.out)["applied"], 5);
  EXPECT_EQ(Exec({"export", "--data-dir", piped}).out, first);
  // The copy is searchable.
  EXPECT_TRUE(Contains(Exec({"search", "dark mode", "--data-dir", piped}).out, "dark mode"));
}

TEST_F(MspTest, TextFromStandardInput) {
  Ok({"init"});
  Outcome r = Msp({"write", "-", "--tag", "goal", "--json"}, "Ship the CLI with end-to-end tests this week\n");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string id = json::parse(r.out)["id"];
  EXPECT_EQ(OkJson({"get", id})["text"], "Ship the CLI with end-to-end tests this week");
}

TEST_F(MspTest, BadInputIsRejectedAndChangesNothing) {
  Populate();
  // Malformed JSON.
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--tag", "goal", "--body", R"({"a": tru})"}, 2,
                 {"--body: invalid JSON at byte"});
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--tag", "goal", "--body", "[1,2]"}, 2,
                 {"--body: expected a JSON object"});
  ExpectRejected({"episode", "add", "--session", "s1", "--content", "{\"text\": \"x\""}, 2,
                 {"--content: invalid JSON at byte"});
  // Unknown kinds and enum values.
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--kind", "thought"}, 2,
                 {"--kind: unknown value 'thought'", "allowed: fact, procedure"});
  ExpectRejected({"episode", "add", "--session", "s1", "--text", "hello there", "--type", "shout"}, 2,
                 {"--type: unknown value 'shout'"});
  ExpectRejected({"fact", "add", "A perfectly fine fact sentence", "--sensitivity", "secret"}, 2,
                 {"--sensitivity: unknown value 'secret'", "low, medium, high"});
  // Empty and oversize text.
  ExpectRejected({"write", "", "--tag", "goal"}, 2, {"TEXT must not be empty"});
  ExpectRejected({"write", "   ", "--tag", "goal"}, 2, {"TEXT must not be empty"});
  ExpectRejected({"fact", "add", ""}, 2, {"TEXT must not be empty"});
  ExpectRejected({"fact", "add", "  \t "}, 2, {"TEXT must not be empty"});
  ExpectRejected({"episode", "add", "--session", "s1", "--text", ""}, 2, {"--text must not be empty"});
  ExpectRejected({"write", std::string(40000, 'a'), "--tag", "goal"}, 2, {"text is 40000 bytes"});
  ExpectRejected({"fact", "add", std::string(300, 'b'), "--policy-max-text-bytes", "100"}, 2, {"text is 300 bytes"});
  // Invalid UTF-8.
  ExpectRejected({"write", "caf\xC3 au lait with extra words", "--tag", "goal"}, 2, {"TEXT is not valid UTF-8"});
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--tag", "go\xFF"}, 2,
                 {"the value of --tag is not valid UTF-8"});
  ExpectRejected({"write", "-", "--tag", "goal"}, 2, {"TEXT from standard input is not valid UTF-8"},
                 "bad \xF0\x28\x8C\x28 bytes in a long enough text");
  // TTL out of range.
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--tag", "goal", "--ttl-days", "400"}, 3,
                 {"ttl", "400"});
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--tag", "goal", "--ttl-days", "-1"}, 2,
                 {"--ttl-days must be between 1 and 36500", "got -1"});
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--tag", "goal", "--ttl-days", "ten"}, 2,
                 {"--ttl-days must be an integer, got 'ten'"});
  // Policy refusals.
  ExpectRejected({"write", "tiny", "--tag", "goal"}, 3, {"policy rule min_chars"});
  ExpectRejected({"write", "thanks", "--tag", "goal", "--policy-min-chars", "0"}, 3, {"policy rule trivial"});
  ExpectRejected({"write", "A perfectly fine sentence without a stable tag"}, 3, {"stable_tag"});
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--tag", "goal", "--sensitivity", "high"}, 3,
                 {"sensitivity"});
  // Other values.
  ExpectRejected({"fact", "add", "A perfectly fine fact sentence", "--confidence", "2"}, 2,
                 {"--confidence must be between 0 and 1, got 2"});
  ExpectRejected({"search", "dark", "--top-k", "0"}, 2, {"--top-k must be between 1 and 1000, got 0"});
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--colour", "red"}, 2, {"unknown flag '--colour'"});
  ExpectRejected({"write", "A perfectly fine sentence for storage", "--valid-at", "someday"}, 2,
                 {"--valid-at: 'someday' is not an ISO 8601 time"});
}

TEST_F(MspTest, BadImportNamesTheLineAndChangesNothing) {
  Populate();
  const std::string good = Lines(Export())[0];
  json fresh = json::parse(good);
  fresh.erase("id");
  fresh["text"] = "A brand new record from an import file";
  const std::string ok_line = fresh.dump();

  struct Case {
    std::string content;
    std::vector<std::string> parts;
  };
  json unknown_field = fresh;
  unknown_field["colour"] = "blue";
  json unknown_kind = fresh;
  unknown_kind["kind"] = "thought";
  json bad_time = fresh;
  bad_time["created_at"] = "yesterday";
  json empty_text = fresh;
  empty_text["text"] = "";
  json wrong_type = fresh;
  wrong_type["tags"] = "a,b";
  const std::vector<Case> cases = {
      {ok_line + "\n" + ok_line.substr(0, 20) + "\n", {"line 2", "invalid JSON at byte"}},
      {ok_line + "\n" + ok_line + "\n" + unknown_field.dump() + "\n", {"line 3", "unknown field 'colour'"}},
      {unknown_kind.dump() + "\n", {"line 1", "field 'kind': unknown value 'thought'"}},
      {ok_line + "\n" + bad_time.dump() + "\n", {"line 2", "created_at"}},
      {empty_text.dump() + "\n", {"line 1", "text is empty"}},
      {wrong_type.dump() + "\n", {"line 1", "field 'tags' must be an array of strings, got string"}},
      {"[1, 2]\n", {"line 1", "expected a JSON object"}},
      {ok_line + "\n{\"text\": \"caf\xC3 au lait\"}\n", {"line 2", "UTF-8"}},
  };
  for (const Case& c : cases) {
    const fs::path file = dir_ / "bad.jsonl";
    WriteFile(file, c.content);
    ExpectRejected({"import", file.string()}, 2, c.parts);
  }
  ExpectRejected({"import", (dir_ / "missing.jsonl").string()}, 4, {"missing.jsonl' does not exist"});
}

TEST_F(MspTest, UnwritableDataDirectory) {
  WriteFile(dir_ / "plainfile", "not a directory");
  const std::string under_file = (dir_ / "plainfile" / "data").string();
  Outcome init = Exec({"init", "--data-dir", under_file});
  EXPECT_EQ(init.code, 1);
  EXPECT_TRUE(Contains(init.err, "data directory '" + under_file + "' (store.data_dir, from --data-dir)")) << init.err;
  Outcome write = Exec({"write", "A perfectly fine sentence for storage", "--tag", "goal", "--data-dir", under_file});
  EXPECT_EQ(write.code, 1);
  EXPECT_TRUE(Contains(write.err, "cannot create data directory")) << write.err;
  Outcome is_file = Exec({"init", "--data-dir", (dir_ / "plainfile").string()});
  EXPECT_EQ(is_file.code, 1);
  EXPECT_TRUE(Contains(is_file.err, "is not a directory")) << is_file.err;
  // Read verbs do not create a store.
  Outcome search = Exec({"search", "x", "--data-dir", (dir_ / "nothing").string()});
  EXPECT_EQ(search.code, 4);
  EXPECT_TRUE(Contains(search.err, "run `msp init` first")) << search.err;
  EXPECT_FALSE(fs::exists(dir_ / "nothing"));
}

TEST_F(MspTest, TenantsAreIsolated) {
  Ok({"init"});
  const std::string id =
      WriteId({"write", "Tenant A's secret deployment schedule is Tuesday", "--tag", "constraint", "--tenant", "a"});
  ASSERT_FALSE(id.empty());
  EXPECT_FALSE(Hits({"search", "deployment schedule", "--tenant", "a"}).empty());
  EXPECT_TRUE(Hits({"search", "deployment schedule", "--tenant", "b"}).empty());
  EXPECT_TRUE(Hits({"search", "deployment schedule"}).empty());  // tenant "default"
  EXPECT_TRUE(Contains(Ok({"get", id, "--tenant", "a"}), "Tenant A's secret"));
  Outcome other = Msp({"get", id, "--tenant", "b"});
  EXPECT_EQ(other.code, 4);
  EXPECT_TRUE(Contains(other.err, "no record " + id + " in tenant=b")) << other.err;
  EXPECT_EQ(Msp({"history", id, "--tenant", "b"}).code, 4);
  EXPECT_EQ(Msp({"delete", id, "--tenant", "b"}).code, 4);
  EXPECT_EQ(Export("b"), "");
  EXPECT_EQ(Lines(Export("a")).size(), 1u);
  // Users within a tenant.
  WriteId({"fact", "add", "Ann prefers tea over coffee every morning", "--tenant", "a", "--user", "ann"});
  EXPECT_TRUE(Hits({"search", "tea coffee", "--tenant", "a", "--user", "bob"}).empty());
  EXPECT_FALSE(Hits({"search", "tea coffee", "--tenant", "a", "--user", "ann"}).empty());
}

TEST_F(MspTest, ConfigPrecedenceThroughTheBinary) {
  Ok({"init"});
  const std::string text = "Thirty-odd characters of text.";  // 30 characters
  ASSERT_EQ(text.size(), 30u);
  // Defaults: min_chars 20, so it passes that rule.
  json ok = OkJson({"write", text, "--tag", "goal"});
  EXPECT_EQ(ok["merged"], false);

  // The TOML file in the data directory raises the bar to 50.
  WriteFile(fs::path(data_) / "msp.toml", "[policy]\nmin_chars = 50\n");
  Outcome refused = Msp({"write", text + " a", "--tag", "goal"});
  EXPECT_EQ(refused.code, 3);
  EXPECT_TRUE(Contains(refused.err, "min_chars")) << refused.err;

  // The environment beats the file.
  env_["MSP_POLICY_MIN_CHARS"] = "10";
  EXPECT_EQ(Msp({"write", text + " b", "--tag", "goal"}).code, 0);

  // A flag beats the environment.
  Outcome flag = Msp({"write", text + " c", "--tag", "goal", "--policy-min-chars", "100"});
  EXPECT_EQ(flag.code, 3);
  EXPECT_TRUE(Contains(flag.err, "at least 100")) << flag.err;

  // --config names another file, which replaces the one in the data dir.
  env_.clear();
  WriteFile(dir_ / "other.toml", "[policy]\nmin_chars = 5\n");
  EXPECT_EQ(Msp({"write", "Short text ok", "--tag", "goal", "--config", (dir_ / "other.toml").string()}).code, 0);
  env_["MSP_CONFIG"] = (dir_ / "other.toml").string();
  EXPECT_EQ(Msp({"write", "Short text two", "--tag", "goal"}).code, 0);

  // The data directory itself from the environment.
  env_.clear();
  env_["MSP_DATA_DIR"] = data_;
  Outcome via_env = Exec({"search", "Thirty-odd", "--json"});
  ASSERT_EQ(via_env.code, 0) << via_env.err;
  EXPECT_FALSE(json::parse(via_env.out)["hits"].empty());
}

TEST_F(MspTest, ConfigErrorsNameKeyFileAndLine) {
  Ok({"init"});
  const std::string before = Export();
  const fs::path toml = fs::path(data_) / "msp.toml";
  WriteFile(toml, "[policy]\nmin_chars = 5\nmin_char = 6\n");
  Outcome unknown = Msp({"stats"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(Contains(unknown.err, toml.string() + " line 3: unknown setting 'policy.min_char'")) << unknown.err;

  WriteFile(toml, "[retrieval]\nrrf_k = 0\n");
  Outcome range = Msp({"write", "A perfectly fine sentence for storage", "--tag", "goal"});
  EXPECT_EQ(range.code, 2);
  EXPECT_TRUE(Contains(range.err, toml.string() + " line 2: retrieval.rrf_k must be >= 1, got 0")) << range.err;

  WriteFile(toml, "[store]\nsynchronous = \"sometimes\"\n");
  Outcome choice = Msp({"search", "x"});
  EXPECT_EQ(choice.code, 2);
  EXPECT_TRUE(Contains(choice.err, "store.synchronous must be one of full, normal")) << choice.err;

  fs::remove(toml);
  env_["MSP_FACTS_DEDUP_COSINE"] = "1.5";
  Outcome env = Msp({"search", "x"});
  EXPECT_EQ(env.code, 2);
  EXPECT_TRUE(Contains(env.err, "MSP_FACTS_DEDUP_COSINE (facts.dedup_cosine) must be > 0 and <= 1, got 1.5"))
      << env.err;
  env_.clear();
  // Read by main before anything else, for every verb: the settings' boolean spellings.
  env_["MSP_HUGE_PAGES"] = "sometimes";
  Outcome huge = Msp({"search", "x"});
  EXPECT_EQ(huge.code, 2);
  EXPECT_TRUE(Contains(huge.err, "MSP_HUGE_PAGES must be a boolean (true or false), got 'sometimes'")) << huge.err;
  for (const char* spelled : {"off", "0", "true"}) {
    env_["MSP_HUGE_PAGES"] = spelled;
    EXPECT_EQ(Msp({"search", "x"}).code, 0) << spelled;
  }
  env_.clear();
  Outcome ttl = Msp({"search", "x", "--policy-ttl-min-days", "30", "--policy-ttl-max-days", "10"});
  EXPECT_EQ(ttl.code, 2);
  EXPECT_TRUE(Contains(ttl.err, "policy.ttl_min_days (30, from --policy-ttl-min-days) is greater than")) << ttl.err;
  EXPECT_EQ(Export(), before);
}

TEST_F(MspTest, UsageErrorsExitTwoWithUsage) {
  Ok({"init"});
  Outcome missing = Msp({"get"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(Contains(missing.err, "msp: missing ID"));
  EXPECT_TRUE(Contains(missing.err, "usage: msp get ID"));
  Outcome unknown = Msp({"frobnicate"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(Contains(unknown.err, "unknown verb 'frobnicate'"));
  Outcome help = Exec({"help", "write"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(Contains(help.out, "--ttl-days TTL_DAYS"));
  Outcome config = Exec({"help", "config"});
  EXPECT_EQ(config.code, 0);
  EXPECT_TRUE(Contains(config.out, "consolidation.every_n_episodes"));
  Outcome version = Exec({"version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out.rfind("msp ", 0), 0u);
}

TEST_F(MspTest, StatsAndAudit) {
  Populate();
  json stats = OkJson({"stats"});
  EXPECT_EQ(stats["records"], 5);
  EXPECT_EQ(stats["by_kind"]["episode"], 2);
  EXPECT_TRUE(Contains(Ok({"stats"}), "records:"));
  // A refusal is audited (the records stay as they were).
  EXPECT_EQ(Msp({"write", "tiny", "--tag", "goal"}).code, 3);
  json audit = OkJson({"audit", "--limit", "1"})["events"];
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0]["action"], "refuse");
  EXPECT_EQ(OkJson({"stats"})["records"], 5);
  EXPECT_EQ(Msp({"audit", "--limit", "0"}).code, 2);
  EXPECT_EQ(Msp({"audit", "--limit", "1001"}).code, 2);  // REST's and MCP's limit too
  EXPECT_TRUE(Contains(Ok({"reindex"}), "reindexed"));
  EXPECT_FALSE(Hits({"search", "dark mode"}).empty());
}

TEST_F(MspTest, Demo) {
  Outcome r = Exec({"demo", "--data-dir", (dir_ / "demo").string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_TRUE(fs::exists(dir_ / "demo" / "msp.db"));
}

TEST_F(MspTest, DemoWithoutDataDirUsesATemporaryDirectory) {
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  env_["TMPDIR"] = tmp.string();
  Outcome r = Exec({"demo"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "temporary directory, now removed"));
  EXPECT_TRUE(fs::is_empty(tmp));
  EXPECT_FALSE(fs::exists(dir_ / ".msp"));  // the default data dir was not touched
}

// The lexical index damaged on disk (the error message of old recommended
// `msp reindex`, which failed the same way): every verb works, the index is
// rebuilt from the store with a warning, and `msp reindex` succeeds without
// reading it.
TEST_F(MspTest, DamagedLexicalIndexIsRebuiltAndReindexNeverNeedsIt) {
  const std::string id = WriteId({"write", "The kafka broker restarts every night at two", "--tag", "preference"});
  ASSERT_EQ(Msp({"search", "kafka"}).code, 0);
  const fs::path lexical = fs::path(data_) / "lexical";
  fs::resize_file(lexical / "postlist.glass", 0);
  Outcome search = Msp({"search", "kafka"});
  EXPECT_EQ(search.code, 0) << search.err;
  EXPECT_TRUE(Contains(search.out, id)) << search.out;
  EXPECT_TRUE(Contains(search.err, "set aside and rebuilt from the store")) << search.err;
  EXPECT_TRUE(fs::exists(fs::path(data_) / "lexical.set-aside"));

  fs::remove_all(lexical);
  WriteFile(lexical, "not an index");
  Outcome reindex = Msp({"reindex"});
  EXPECT_EQ(reindex.code, 0) << reindex.err;
  search = Msp({"search", "kafka"});
  EXPECT_EQ(search.code, 0) << search.err;
  EXPECT_TRUE(Contains(search.out, id)) << search.out;
  EXPECT_TRUE(fs::is_directory(lexical));
}

}  // namespace
