// Tests for the configuration loader: precedence, every type, every error.
#include "config/config.h"
#include "tests/support/test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace msp {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string made = testing::MakeTestDir("config-test");
    ASSERT_FALSE(made.empty());
    dir_ = made;
    // A data dir without msp.toml, so no file is picked up by default.
    input_.flags.push_back({"--data-dir", (dir_ / "data").string()});
  }
  void TearDown() override { testing::RemoveTestDir(dir_.string()); }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  // Loads and expects failure; returns the message.
  std::string ErrorOf(StatusCode code = StatusCode::kInvalidArgument) {
    auto r = LoadConfig(input_);
    EXPECT_FALSE(r.ok());
    if (r.ok()) return "";
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    return r.status().message();
  }

  LoadedConfig Load() {
    auto r = LoadConfig(input_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : LoadedConfig{};
  }

  fs::path dir_;
  ConfigInput input_;
};

TEST_F(ConfigTest, DefaultsWhenNothingIsGiven) {
  const LoadedConfig c = Load();
  const Options d;
  EXPECT_EQ(c.options.store.synchronous, d.store.synchronous);
  EXPECT_EQ(c.options.policy.min_chars, d.policy.min_chars);
  EXPECT_EQ(c.options.policy.trivial_phrases, d.policy.trivial_phrases);
  EXPECT_EQ(c.options.retrieval.rrf_k, d.retrieval.rrf_k);
  EXPECT_EQ(c.options.facts.dedup_cosine, d.facts.dedup_cosine);
  EXPECT_TRUE(c.config_file.empty());
  EXPECT_EQ(c.OriginOf("policy.min_chars").source, SettingSource::kDefault);
  EXPECT_EQ(c.OriginOf("store.data_dir").source, SettingSource::kFlag);
}

TEST_F(ConfigTest, FileThenEnvThenFlagsWin) {
  const std::string path = WriteFile("c.toml",
                                     "[policy]\n"
                                     "min_chars = 5\n"
                                     "max_items_per_user = 7\n"
                                     "ttl_max_days = 100\n"
                                     "[retrieval]\n"
                                     "rrf_k = 10\n");
  input_.config_path = path;
  // File only.
  LoadedConfig c = Load();
  EXPECT_EQ(c.options.policy.min_chars, 5u);
  EXPECT_EQ(c.options.retrieval.rrf_k, 10);
  EXPECT_EQ(c.config_file, path);
  EXPECT_EQ(c.OriginOf("policy.min_chars").source, SettingSource::kFile);
  EXPECT_EQ(c.OriginOf("policy.min_chars").where, path + " line 2");

  // Environment beats the file.
  input_.env["MSP_POLICY_MIN_CHARS"] = "9";
  input_.env["MSP_RETRIEVAL_RRF_K"] = "20";
  c = Load();
  EXPECT_EQ(c.options.policy.min_chars, 9u);
  EXPECT_EQ(c.options.retrieval.rrf_k, 20);
  EXPECT_EQ(c.options.policy.max_items_per_user, 7u);  // still from the file
  EXPECT_EQ(c.OriginOf("policy.min_chars").where, "MSP_POLICY_MIN_CHARS");

  // Flags beat the environment.
  input_.flags.push_back({"--policy-min-chars", "3"});
  c = Load();
  EXPECT_EQ(c.options.policy.min_chars, 3u);
  EXPECT_EQ(c.options.retrieval.rrf_k, 20);
  EXPECT_EQ(c.OriginOf("policy.min_chars").source, SettingSource::kFlag);
  EXPECT_EQ(c.OriginOf("policy.min_chars").where, "--policy-min-chars");
}

TEST_F(ConfigTest, FindsFileInDataDirThenMspConfigThenConfigFlag) {
  const std::string in_data = WriteFile("data/msp.toml", "[retrieval]\nrrf_k = 11\n");
  EXPECT_EQ(Load().options.retrieval.rrf_k, 11);
  EXPECT_EQ(Load().config_file, in_data);

  // The data dir from the environment is used to find the file too.
  input_.flags.clear();
  WriteFile("envdata/msp.toml", "[retrieval]\nrrf_k = 15\n");
  input_.env["MSP_DATA_DIR"] = (dir_ / "envdata").string();
  EXPECT_EQ(Load().options.retrieval.rrf_k, 15);
  input_.flags.push_back({"--data-dir", (dir_ / "data").string()});
  EXPECT_EQ(Load().options.retrieval.rrf_k, 11);

  const std::string from_env = WriteFile("env.toml", "[retrieval]\nrrf_k = 12\n");
  input_.env["MSP_CONFIG"] = from_env;
  EXPECT_EQ(Load().options.retrieval.rrf_k, 12);

  const std::string from_flag = WriteFile("flag.toml", "[retrieval]\nrrf_k = 13\n");
  input_.config_path = from_flag;
  EXPECT_EQ(Load().options.retrieval.rrf_k, 13);
  EXPECT_EQ(Load().config_file, from_flag);
}

TEST_F(ConfigTest, ReadsEveryTypeFromToml) {
  input_.config_path = WriteFile("c.toml",
                                 "actor = \"ci-bot\"\n"
                                 "[store]\n"
                                 "synchronous = \"normal\"\n"
                                 "busy_timeout_ms = 250\n"
                                 "[policy]\n"
                                 "refuse_high_sensitivity = false\n"
                                 "trusted_sources = [\"user\", \"агент\"]\n"
                                 "stable_tags = []\n"
                                 "[facts]\n"
                                 "dedup_cosine = 1\n"
                                 "[retrieval]\n"
                                 "lexical_weight = 0.25\n");
  const LoadedConfig c = Load();
  EXPECT_EQ(c.options.actor, "ci-bot");
  EXPECT_EQ(c.options.store.synchronous, "normal");
  EXPECT_EQ(c.options.store.busy_timeout_ms, 250);
  EXPECT_FALSE(c.options.policy.refuse_high_sensitivity);
  EXPECT_EQ(c.options.policy.trusted_sources, (std::vector<std::string>{"user", "агент"}));
  EXPECT_TRUE(c.options.policy.stable_tags.empty());
  EXPECT_DOUBLE_EQ(c.options.facts.dedup_cosine, 1.0);  // an integer is accepted for a number
  EXPECT_DOUBLE_EQ(c.options.retrieval.lexical_weight, 0.25);
}

TEST_F(ConfigTest, ParsesEveryTypeFromEnvAndFlags) {
  input_.env["MSP_POLICY_REQUIRE_STABLE_TAG"] = "off";
  input_.env["MSP_POLICY_STABLE_TAGS"] = " goal , ,preference,";
  input_.env["MSP_FACTS_DEDUP_COSINE"] = "0.9";
  input_.env["MSP_POLICY_TRIVIAL_PHRASES"] = "";
  input_.flags.push_back({"--policy-refuse-high-sensitivity", "no"});
  input_.flags.push_back({"--policy-max-text-bytes", "1000"});
  input_.flags.push_back({"--synchronous", "normal"});
  const LoadedConfig c = Load();
  EXPECT_FALSE(c.options.policy.require_stable_tag);
  EXPECT_EQ(c.options.policy.stable_tags, (std::vector<std::string>{"goal", "preference"}));
  EXPECT_TRUE(c.options.policy.trivial_phrases.empty());
  EXPECT_DOUBLE_EQ(c.options.facts.dedup_cosine, 0.9);
  EXPECT_FALSE(c.options.policy.refuse_high_sensitivity);
  EXPECT_EQ(c.options.policy.max_text_bytes, 1000u);
  EXPECT_EQ(c.options.store.synchronous, "normal");

  for (const char* t : {"true", "1", "yes", "on"}) {
    input_.env["MSP_POLICY_REQUIRE_STABLE_TAG"] = t;
    EXPECT_TRUE(Load().options.policy.require_stable_tag) << t;
  }
}

TEST_F(ConfigTest, ProcessEnvironmentReadsMspVariables) {
  ASSERT_EQ(setenv("MSP_CONFIG_TEST_PROBE", "x=y", 1), 0);
  ASSERT_EQ(setenv("NOT_MSP_PROBE", "z", 1), 0);
  const auto env = ProcessEnvironment();
  unsetenv("MSP_CONFIG_TEST_PROBE");
  unsetenv("NOT_MSP_PROBE");
  ASSERT_TRUE(env.count("MSP_CONFIG_TEST_PROBE"));
  EXPECT_EQ(env.at("MSP_CONFIG_TEST_PROBE"), "x=y");
  EXPECT_FALSE(env.count("NOT_MSP_PROBE"));

  ASSERT_EQ(setenv("MSP_RETRIEVAL_RRF_K", "33", 1), 0);
  input_.env = ProcessEnvironment();
  unsetenv("MSP_RETRIEVAL_RRF_K");
  EXPECT_EQ(Load().options.retrieval.rrf_k, 33);
}

TEST_F(ConfigTest, UnknownTomlKeyNamesKeyFileAndLine) {
  const std::string path = WriteFile("c.toml", "[policy]\nmin_chars = 5\nmin_char = 6\n");
  input_.config_path = path;
  const std::string e = ErrorOf();
  EXPECT_NE(e.find(path + " line 3: unknown setting 'policy.min_char'"), std::string::npos) << e;
  EXPECT_NE(e.find("min_chars"), std::string::npos) << e;  // lists the known keys
}

// Found by fuzz/toml_config_fuzz: a control character, or anything but a
// key character or quote, at the start of a table header's name made
// toml++ fail an assertion (an abort of msp); both are refused as invalid.
TEST_F(ConfigTest, TableHeadersTomlPlusPlusCannotReadAreErrorsNamingLineAndColumn) {
  static constexpr char kControl[] = "[retrieval]\nrrf_k = 5\n[\x01\0\x13mor]vsep\n";
  std::string path = WriteFile("c.toml", std::string(kControl, sizeof(kControl) - 1));
  input_.config_path = path;
  std::string e = ErrorOf();
  EXPECT_NE(e.find(path + " line 3, column 2: invalid TOML: a table header's name"), std::string::npos) << e;
  path = WriteFile("b.toml", "[retrieval]\nrrf_k = 5 \x01\n");
  input_.config_path = path;
  e = ErrorOf();
  EXPECT_NE(e.find(path + " line 2, column 11: invalid TOML: control character U+0001"), std::string::npos) << e;
  path = WriteFile("d.toml", "[retrieval]\nrrf_k = 5\n[?store\n%= 1\n");
  input_.config_path = path;
  e = ErrorOf();
  EXPECT_NE(e.find(path + " line 3, column 2: invalid TOML: a table header's name must start with"), std::string::npos)
      << e;
  path = WriteFile("n.toml", "[retrieval]\nKs9rchestrate\xd2\x85lane_[storep");
  input_.config_path = path;
  e = ErrorOf();
  EXPECT_NE(e.find(path + " line 2, column 14: invalid TOML: a non-ASCII character outside"), std::string::npos) << e;
  input_.config_path = WriteFile("e.toml", "[[ ]\n");
  EXPECT_NE(ErrorOf().find("invalid TOML"), std::string::npos);
  // What looks like a header inside a multi-line string is not one.
  input_.config_path = WriteFile("g.toml",
                                 "[policy]\ntrivial_phrases = [\n  \"a ]\",\n\"[?b\",\n]\n"
                                 "stable_tags = [\"\"\"x\n[?y\"\"\"]\n[retrieval]\nrrf_k = 7 # caf\xc3\xa9 \xd2\x85\n"
                                 "language = \"english\" # non-ASCII in comments and strings is fine\n");
  const LoadedConfig loaded = Load();
  EXPECT_EQ(loaded.options.retrieval.rrf_k, 7);
  EXPECT_EQ(loaded.options.policy.trivial_phrases, (std::vector<std::string>{"a ]", "[?b"}));
  input_.config_path = WriteFile("h.toml", "[policy]\ntrivial_phrases = [\"caf\xc3\xa9\", '\xd2\x85']\n");
  EXPECT_EQ(Load().options.policy.trivial_phrases, (std::vector<std::string>{"caf\xc3\xa9", "\xd2\x85"}));
  EXPECT_EQ(loaded.options.policy.stable_tags, (std::vector<std::string>{"x\n[?y"}));
}

// The encryption key is never shown in an error, only where it came from.
TEST_F(ConfigTest, EncryptionKeySettingsAndTheirErrorsNeverShowTheKey) {
  const std::string key(64, 'a');
  input_.env["MSP_ENCRYPTION_KEY"] = key;
  EXPECT_EQ(Load().options.store.encryption_key, key);
  input_.flags.push_back({"--encryption-key-file", "/k"});
  std::string e = ErrorOf();
  EXPECT_NE(e.find("store.encryption_key_file (from --encryption-key-file) and store.encryption_key (from "
                   "MSP_ENCRYPTION_KEY) are both set"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find(key), std::string::npos) << e;
  input_.flags.pop_back();
  input_.flags.push_back({"--backend", "postgres"});
  e = ErrorOf();
  EXPECT_NE(e.find("database server's job"), std::string::npos) << e;
  EXPECT_EQ(e.find(key), std::string::npos) << e;
}

TEST_F(ConfigTest, UnknownTopLevelKeyAndSection) {
  input_.config_path = WriteFile("a.toml", "colour = \"blue\"\n");
  EXPECT_NE(ErrorOf().find("line 1: unknown setting 'colour'"), std::string::npos);
  input_.config_path = WriteFile("b.toml", "\n[polcy]\nmin_chars = 1\n");
  const std::string e = ErrorOf();
  EXPECT_NE(e.find("unknown s"), std::string::npos) << e;
  EXPECT_NE(e.find("polcy"), std::string::npos) << e;
  EXPECT_NE(e.find("b.toml line"), std::string::npos) << e;
  // A setting written as a table.
  input_.config_path = WriteFile("c.toml", "[store.data_dir]\nx = 1\n");
  const std::string t = ErrorOf();
  EXPECT_NE(t.find("store.data_dir must be a string, got a table"), std::string::npos) << t;
}

TEST_F(ConfigTest, WrongTomlTypesNameKeyFileLineAndType) {
  struct Case {
    std::string toml;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"[policy]\nmin_chars = \"20\"\n", "line 2: policy.min_chars must be an integer >= 0, got a string"},
      {"[retrieval]\nrrf_k = 1.5\n", "line 2: retrieval.rrf_k must be an integer, got a float"},
      {"[store]\ndata_dir = 5\n", "line 2: store.data_dir must be a string, got an integer"},
      {"[policy]\nrefuse_high_sensitivity = \"yes\"\n",
       "line 2: policy.refuse_high_sensitivity must be a boolean (true or false), got a string"},
      {"[policy]\nstable_tags = \"goal\"\n", "line 2: policy.stable_tags must be a list of strings, got a string"},
      {"[policy]\n\nstable_tags = [\"goal\", 3]\n", "line 3: policy.stable_tags must be a list of strings, but item 1 is an integer"},
      {"[facts]\ndedup_cosine = true\n", "line 2: facts.dedup_cosine must be a number, got a boolean"},
  };
  for (const Case& c : cases) {
    const std::string path = WriteFile("t.toml", c.toml);
    input_.config_path = path;
    const std::string e = ErrorOf();
    EXPECT_NE(e.find(path + " " + c.expected), std::string::npos) << e;
  }
}

TEST_F(ConfigTest, OutOfRangeValuesAreRejectedFromEverySource) {
  struct Case {
    std::string key_toml;  // "[section]\nkey = value\n"
    std::string env;
    std::string env_value;
    std::string flag;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"[policy]\nmin_chars = -1\n", "MSP_POLICY_MIN_CHARS", "-1", "--policy-min-chars", "must be >= 0, got -1"},
      {"[policy]\nmax_items_per_user = -5\n", "MSP_POLICY_MAX_ITEMS_PER_USER", "-5", "--policy-max-items-per-user",
       "must be >= 0, got -5"},
      {"[retrieval]\nrrf_k = 0\n", "MSP_RETRIEVAL_RRF_K", "0", "--retrieval-rrf-k", "must be >= 1, got 0"},
      {"[facts]\ndedup_cosine = 0.0\n", "MSP_FACTS_DEDUP_COSINE", "0", "--facts-dedup-cosine",
       "must be > 0 and <= 1, got 0"},
      {"[facts]\ndedup_cosine = 1.5\n", "MSP_FACTS_DEDUP_COSINE", "1.5", "--facts-dedup-cosine",
       "must be > 0 and <= 1, got 1.5"},
      {"[store]\nsynchronous = \"off\"\n", "MSP_SYNCHRONOUS", "off", "--synchronous",
       "must be one of full, normal, got 'off'"},
      {"[store]\ndata_dir = \"\"\n", "MSP_DATA_DIR", "", "--data-dir", "must not be empty"},
      {"[embedder]\ndimension = 0\n", "MSP_EMBEDDER_DIMENSION", "0", "--embedder-dimension",
       "must be >= 1 and <= 65536, got 0"},
      {"[policy]\nttl_min_days = 0\n", "MSP_POLICY_TTL_MIN_DAYS", "0", "--policy-ttl-min-days",
       "must be >= 1 and <= 36500, got 0"},
      {"[retrieval]\ncandidates = 3000000000\n", "MSP_RETRIEVAL_CANDIDATES", "3000000000",
       "--retrieval-candidates", "is out of range, got 3000000000"},
      {"[retrieval]\nlexical_weight = -0.5\n", "MSP_RETRIEVAL_LEXICAL_WEIGHT", "-0.5",
       "--retrieval-lexical-weight", "must be >= 0, got -0.5"},
  };
  for (const Case& c : cases) {
    const std::string dotted = [&] {
      const size_t close = c.key_toml.find(']');
      const std::string section = c.key_toml.substr(1, close - 1);
      const size_t key_start = close + 2;
      const std::string key = c.key_toml.substr(key_start, c.key_toml.find(' ', key_start) - key_start);
      return section + "." + key;
    }();
    // TOML.
    const std::string path = WriteFile("r.toml", c.key_toml);
    input_ = ConfigInput{};
    input_.flags.push_back({"--data-dir", (dir_ / "data").string()});
    input_.config_path = path;
    std::string e = ErrorOf();
    EXPECT_NE(e.find(path + " line 2: " + dotted + " " + c.expected), std::string::npos) << e;
    // Environment.
    input_.config_path.clear();
    input_.env[c.env] = c.env_value;
    e = ErrorOf();
    EXPECT_NE(e.find("environment variable " + c.env + " (" + dotted + ") " + c.expected), std::string::npos)
        << e;
    // Flag.
    input_.env.clear();
    input_.flags.push_back({c.flag, c.env_value});
    e = ErrorOf();
    EXPECT_NE(e.find(c.flag + " " + c.expected), std::string::npos) << e;
  }
}

TEST_F(ConfigTest, UnparsableEnvAndFlagValues) {
  input_.env["MSP_POLICY_MIN_CHARS"] = "twenty";
  EXPECT_NE(ErrorOf().find("environment variable MSP_POLICY_MIN_CHARS (policy.min_chars) must be an integer >= 0, "
                           "got 'twenty'"),
            std::string::npos);
  input_.env.clear();
  input_.flags.push_back({"--retrieval-rrf-k", "60x"});
  EXPECT_NE(ErrorOf().find("--retrieval-rrf-k must be an integer, got '60x'"), std::string::npos);
  input_.flags.back() = {"--policy-require-stable-tag", "maybe"};
  EXPECT_NE(ErrorOf().find("--policy-require-stable-tag must be a boolean (true or false), got 'maybe'"),
            std::string::npos);
  input_.flags.back() = {"--facts-dedup-cosine", "nan"};
  EXPECT_NE(ErrorOf().find("--facts-dedup-cosine must be a number, got 'nan'"), std::string::npos);
  input_.flags.back() = {"--policy-min-chars", "99999999999999999999999"};
  EXPECT_NE(ErrorOf().find("--policy-min-chars is out of range"), std::string::npos);
  input_.flags.back() = {"--actor", "a\xC3"};
  EXPECT_NE(ErrorOf().find("--actor is not valid UTF-8"), std::string::npos);
  input_.flags.back() = {"--no-such-setting", "1"};
  EXPECT_NE(ErrorOf().find("unknown setting flag '--no-such-setting'"), std::string::npos);
}

TEST_F(ConfigTest, TtlMinAboveMaxNamesBothAndWhereFrom) {
  const std::string path = WriteFile("c.toml", "[policy]\nttl_min_days = 30\n");
  input_.config_path = path;
  input_.env["MSP_POLICY_TTL_MAX_DAYS"] = "10";
  const std::string e = ErrorOf();
  EXPECT_NE(e.find("policy.ttl_min_days (30, from " + path + " line 2) is greater than policy.ttl_max_days (10, "
                   "from MSP_POLICY_TTL_MAX_DAYS)"),
            std::string::npos)
      << e;
}

TEST_F(ConfigTest, DefaultTtlOutsideBoundsAndZeroWeights) {
  input_.flags.push_back({"--policy-default-ttl-days", "400"});
  std::string e = ErrorOf();
  EXPECT_NE(e.find("policy.default_ttl_days (400, from --policy-default-ttl-days) must be 0 or between"),
            std::string::npos)
      << e;
  input_.flags.back() = {"--policy-default-ttl-days", "30"};
  EXPECT_EQ(Load().options.policy.default_ttl_days, 30);

  input_.flags.push_back({"--retrieval-lexical-weight", "0"});
  input_.flags.push_back({"--retrieval-vector-weight", "0"});
  e = ErrorOf();
  EXPECT_NE(e.find("may not both be 0"), std::string::npos) << e;
}

TEST_F(ConfigTest, InvalidTomlSyntaxGivesLine) {
  const std::string path = WriteFile("c.toml", "[policy]\nmin_chars = 5\nmin_chars = 6\n");
  input_.config_path = path;
  std::string e = ErrorOf();
  EXPECT_NE(e.find(path + " line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("invalid TOML"), std::string::npos) << e;

  input_.config_path = WriteFile("d.toml", "[policy\n");
  e = ErrorOf();
  EXPECT_NE(e.find("d.toml line 1"), std::string::npos) << e;

  input_.config_path = WriteFile("e.toml", "actor = \"a\xFF\"\n");
  e = ErrorOf();
  EXPECT_NE(e.find("e.toml line 1"), std::string::npos) << e;
}

TEST_F(ConfigTest, MissingNamedFileIsAnError) {
  input_.config_path = (dir_ / "nope.toml").string();
  std::string e = ErrorOf(StatusCode::kNotFound);
  EXPECT_NE(e.find("nope.toml' (from --config) does not exist"), std::string::npos) << e;
  input_.config_path.clear();
  input_.env["MSP_CONFIG"] = (dir_ / "gone.toml").string();
  e = ErrorOf(StatusCode::kNotFound);
  EXPECT_NE(e.find("gone.toml' (from MSP_CONFIG) does not exist"), std::string::npos) << e;
}

// Random byte edits of a valid file: loading either succeeds or fails with a
// message naming the file; it never crashes.
TEST_F(ConfigTest, MutatedFilesNeverCrash) {
  const std::string good =
      "actor = \"x\"\n[store]\nsynchronous = \"normal\"\n[policy]\nmin_chars = 5\n"
      "stable_tags = [\"goal\", \"profile\"]\nrefuse_high_sensitivity = true\n[facts]\ndedup_cosine = 0.9\n";
  std::mt19937_64 rng(11);
  int failed = 0;
  for (int iter = 0; iter < 400; ++iter) {
    std::string s = good;
    for (int e = 0, n = 1 + static_cast<int>(rng() % 3); e < n; ++e) {
      const size_t pos = rng() % s.size();
      if (rng() % 2 == 0) {
        s[pos] = static_cast<char>(rng() % 256);
      } else {
        s.insert(pos, 1, "[]=\"\n.,-9"[rng() % 9]);
      }
    }
    input_.config_path = WriteFile("m.toml", s);
    auto r = LoadConfig(input_);
    if (!r.ok()) {
      ++failed;
      EXPECT_NE(r.status().message().find("m.toml"), std::string::npos) << r.status().message();
    }
  }
  EXPECT_GT(failed, 0);
}

TEST(SettingsTableTest, EverySettingDeclaredOnceAndDocumented) {
  const auto settings = AllSettings();
  EXPECT_GE(settings.size(), 20u);
  std::set<std::string_view> keys, envs, flags;
  const std::string help = SettingsHelp();
  for (const SettingInfo& s : settings) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    EXPECT_TRUE(envs.insert(s.env).second) << s.env;
    EXPECT_TRUE(flags.insert(s.flag).second) << s.flag;
    EXPECT_FALSE(s.description.empty()) << s.key;
    EXPECT_NE(help.find(std::string(s.key) + "  ("), std::string::npos) << s.key;
    EXPECT_NE(help.find(std::string(s.env)), std::string::npos) << s.env;
    EXPECT_EQ(s.type == SettingType::kEnum, !s.choices.empty()) << s.key;
    if (s.key == "openai_api_key") {  // the one variable not ours, and a secret: no flag
      EXPECT_EQ(s.env, "OPENAI_API_KEY");
      EXPECT_TRUE(s.flag.empty());
      continue;
    }
    EXPECT_EQ(s.env.substr(0, 4), "MSP_") << s.env;
    EXPECT_EQ(s.flag.substr(0, 2), "--") << s.flag;
    EXPECT_TRUE(IsSettingFlag(s.flag));
    EXPECT_NE(help.find(std::string(s.flag) + " VALUE"), std::string::npos) << s.flag;
  }
  EXPECT_FALSE(IsSettingFlag("--openai-api-key"));
  EXPECT_FALSE(IsSettingFlag(""));
  EXPECT_FALSE(IsSettingFlag("--json"));
  EXPECT_NE(help.find("store.synchronous  (string, default \"full\")"), std::string::npos) << help;
  EXPECT_NE(help.find("retrieval.rrf_k  (integer, default 60)"), std::string::npos) << help;
}

// docs/cli.md lists every setting with its variable and flag.
TEST(SettingsTableTest, DocumentedInCliMd) {
  std::ifstream in(MSP_CLI_DOC);
  ASSERT_TRUE(in) << MSP_CLI_DOC;
  std::stringstream doc;
  doc << in.rdbuf();
  for (const SettingInfo& s : AllSettings()) {
    const std::string flag = s.flag.empty() ? std::string("(none)") : "`" + std::string(s.flag) + "`";
    const std::string row = "| `" + std::string(s.key) + "` | `" + std::string(s.env) + "` | " + flag + " |";
    EXPECT_NE(doc.str().find(row), std::string::npos) << "docs/cli.md lacks the row for " << s.key;
  }
}

// store.data_dir_base = "repository": every process started anywhere in a
// git work tree uses the one store at its top, msp.toml included.
TEST_F(ConfigTest, DataDirRelativeToTheRepository) {
  const fs::path repo = dir_ / "repo";
  fs::create_directories(repo / ".git");
  fs::create_directories(repo / "sub" / "deep");
  EXPECT_EQ(ResolveDataDir(".msp", "repository", (repo / "sub" / "deep").string()), (repo / ".msp").string());
  EXPECT_EQ(ResolveDataDir(".msp", "repository", repo.string()), (repo / ".msp").string());
  EXPECT_EQ(ResolveDataDir("../x", "repository", (repo / "sub").string()), (dir_ / "x").string());
  EXPECT_EQ(ResolveDataDir(".msp", "current", (repo / "sub").string()), ".msp");
  EXPECT_EQ(ResolveDataDir("/abs/dir", "repository", (repo / "sub").string()), "/abs/dir");
  EXPECT_EQ(ResolveDataDir(".msp", "repository", "/"), ".msp");  // no repository above: unchanged
  // A linked worktree's .git is a file.
  const fs::path worktree = dir_ / "worktree";
  fs::create_directories(worktree / "src");
  WriteFile("worktree/.git", "gitdir: /elsewhere\n");
  EXPECT_EQ(RepositoryRoot((worktree / "src").string()), worktree.string());

  // Through the loader, from a subdirectory: the store and its msp.toml.
  WriteFile("repo/.msp/msp.toml", "[retrieval]\nrrf_k = 61\n");
  const fs::path before = fs::current_path();
  fs::current_path(repo / "sub" / "deep");
  input_.flags = {{"--data-dir", ".msp"}, {"--data-dir-base", "repository"}};
  const LoadedConfig c = Load();
  fs::current_path(before);
  EXPECT_EQ(c.options.store.data_dir, (repo / ".msp").string());
  EXPECT_EQ(c.options.retrieval.rrf_k, 61);
  EXPECT_EQ(c.config_file, (repo / ".msp" / "msp.toml").string());

  input_.flags = {{"--data-dir", ".msp"}, {"--data-dir-base", "parent"}};
  EXPECT_NE(ErrorOf().find("must be one of current, repository"), std::string::npos);
}

}  // namespace
}  // namespace msp

namespace msp {
namespace {

// Enum-like settings (options.h's enum classes) read their one spelling from
// every source, and a value that is none of them is refused listing them.
TEST_F(ConfigTest, EnumSettingsFromEverySource) {
  const Settings d;
  EXPECT_EQ(d.store.backend, StoreBackend::kSqlite);
  EXPECT_EQ(d.embedder.provider, EmbedderProvider::kHashing);
  EXPECT_EQ(d.retrieval.fusion, Fusion::kScore);
  EXPECT_EQ(d.consolidation.extractor, ExtractorKind::kRules);
  EXPECT_EQ(d.coding.classifier, ModelChoice::kAuto);
  input_.config_path = WriteFile("a.toml", "[retrieval]\nfusion = \"rrf\"\n[prompts]\nclassifier = \"rules\"\n");
  input_.env = {{"MSP_EMBEDDER", "static"}, {"MSP_HOOKS_SESSION_SUMMARY", "llm"}};
  input_.flags.push_back({"--consolidation-extractor", "llm"});
  input_.flags.push_back({"--backend", "postgres"});
  const LoadedConfig c = Load();
  EXPECT_EQ(c.options.retrieval.fusion, Fusion::kRrf);
  EXPECT_EQ(c.options.coding.classifier, ModelChoice::kRules);
  EXPECT_EQ(c.options.embedder.provider, EmbedderProvider::kStatic);
  EXPECT_EQ(c.options.coding.session_summary, ModelChoice::kLlm);
  EXPECT_EQ(c.options.consolidation.extractor, ExtractorKind::kLlm);
  EXPECT_EQ(c.options.store.backend, StoreBackend::kPostgres);
  EXPECT_EQ(c.OriginOf("store.backend").where, "--backend");
  EXPECT_EQ(NameOf(StoreBackend::kPostgres), "postgres");
  EXPECT_EQ(NameOf(EmbedderProvider::kNative), "native");
}

TEST_F(ConfigTest, BadEnumValueListsTheChoices) {
  input_.flags.push_back({"--retrieval-fusion", "sum"});
  EXPECT_NE(ErrorOf().find("--retrieval-fusion must be one of score, rrf, got 'sum'"), std::string::npos) << ErrorOf();
  input_.flags.pop_back();
  input_.env = {{"MSP_BACKEND", "mysql"}};
  EXPECT_NE(ErrorOf().find("environment variable MSP_BACKEND (store.backend) must be one of sqlite, postgres, got "
                           "'mysql'"),
            std::string::npos)
      << ErrorOf();
  input_.env = {{"MSP_EMBEDDER", ""}};
  EXPECT_NE(ErrorOf().find("must be one of hashing, static, openai, native, got ''"), std::string::npos) << ErrorOf();
  input_.env.clear();
  input_.config_path = WriteFile("bad.toml", "[consolidation]\nextractor = \"magic\"\n");
  EXPECT_NE(ErrorOf().find("line 2: consolidation.extractor must be one of rules, llm, got 'magic'"), std::string::npos)
      << ErrorOf();
  input_.config_path = WriteFile("bad2.toml", "[prompts]\nclassifier = 1\n");
  EXPECT_NE(ErrorOf().find("line 2: prompts.classifier must be one of rules, llm, auto, got an integer"),
            std::string::npos)
      << ErrorOf();
}

TEST(SettingsTableTest, HelpListsEnumChoicesAndTheVariablesThatAreNotSettings) {
  const std::string help = SettingsHelp();
  EXPECT_NE(help.find("store.backend  (choice: sqlite | postgres, default \"sqlite\")"), std::string::npos) << help;
  EXPECT_NE(help.find("embedder.provider  (choice: hashing | static | openai | native, default \"hashing\")"),
            std::string::npos);
  EXPECT_NE(help.find("retrieval.fusion  (choice: score | rrf, default \"score\")"), std::string::npos);
  EXPECT_NE(help.find("prompts.classifier  (choice: rules | llm | auto, default \"auto\")"), std::string::npos);
  EXPECT_NE(help.find("env OPENAI_API_KEY   no flag"), std::string::npos);
  EXPECT_NE(help.find("Not settings"), std::string::npos);
  EXPECT_NE(help.find("MSP_INGEST_MODULE"), std::string::npos);
}

// $OPENAI_API_KEY is a setting like the others (the library reads no
// environment): the loader fills Options::openai_api_key from it or the
// file, beside embedder.api_key and llm.api_key, which stay as given (they
// win where set: EffectiveApiKey, ChatOptionsFor).
TEST_F(ConfigTest, OpenAiApiKeyFilledByTheLoader) {
  EXPECT_EQ(Load().options.openai_api_key, "");
  ASSERT_EQ(setenv("OPENAI_API_KEY", "sk-from-env", 1), 0);
  input_.env = ProcessEnvironment();
  unsetenv("OPENAI_API_KEY");
  EXPECT_EQ(input_.env.at("OPENAI_API_KEY"), "sk-from-env");
  LoadedConfig c = Load();
  EXPECT_EQ(c.options.openai_api_key, "sk-from-env");
  EXPECT_EQ(c.OriginOf("openai_api_key").where, "OPENAI_API_KEY");
  EXPECT_EQ(c.options.embedder.api_key, "");
  EXPECT_EQ(c.options.llm.api_key, "");
  // The file's key loses to the environment's, as every setting's does;
  // embedder.api_key and llm.api_key are their own settings.
  input_.config_path = WriteFile("k.toml", "openai_api_key = \"sk-file\"\n[embedder]\napi_key = \"sk-embed\"\n");
  c = Load();
  EXPECT_EQ(c.options.openai_api_key, "sk-from-env");
  EXPECT_EQ(c.options.embedder.api_key, "sk-embed");
  input_.env.clear();
  EXPECT_EQ(Load().options.openai_api_key, "sk-file");
  // No flag: a key on the command line is visible to other users.
  input_.flags.push_back({"--openai-api-key", "sk-flag"});
  EXPECT_NE(ErrorOf().find("unknown setting flag '--openai-api-key'"), std::string::npos);
}

TEST(AnswerSettingsDigest, FollowsWhatDecidesAnAnswerAndNotTheFaces) {
  const Settings base;
  const std::string d = AnswerSettingsDigest(base);
  EXPECT_EQ(d.size(), 16u);
  EXPECT_EQ(AnswerSettingsDigest(base), d);
  Settings o = base;
  o.server.port = base.server.port + 1;
  o.store.data_dir = "/elsewhere";
  o.actor = "someone";
  o.mcp.write_source = "other-agent";
  EXPECT_EQ(AnswerSettingsDigest(o), d) << "a face's own setting changed the digest";
  o = base;
  o.retrieval.bm25_k1 = base.retrieval.bm25_k1 + 0.5;
  EXPECT_NE(AnswerSettingsDigest(o), d);
  o = base;
  o.retrieval.bm25_k1 = std::nextafter(base.retrieval.bm25_k1, 2.0);  // one bit apart
  EXPECT_NE(AnswerSettingsDigest(o), d);
  o = base;
  o.policy.context_trusted_sources.push_back("wiki");
  EXPECT_NE(AnswerSettingsDigest(o), d);
  o = base;
  o.store.encryption_key = "k";
  EXPECT_NE(AnswerSettingsDigest(o), d);
}

}  // namespace
}  // namespace msp
