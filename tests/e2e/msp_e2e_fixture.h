// The fixture of the `msp` command line's end-to-end tests (msp_e2e_test.cc,
// msp_resident_test.cc): a temporary directory per test, the built binary
// (MSP_BINARY) run with posix_spawn, and the helpers that check exit codes,
// output and that bad input left the store's export unchanged.
#ifndef MSP_TESTS_E2E_MSP_E2E_FIXTURE_H_
#define MSP_TESTS_E2E_MSP_E2E_FIXTURE_H_

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/child_process.h"
#include "tests/support/test_util.h"

extern char** environ;

namespace msp_e2e {

namespace fs = std::filesystem;
using nlohmann::json;

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class MspTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string made = ::msp::testing::MakeTestDir("msp-e2e");
    ASSERT_FALSE(made.empty());
    dir_ = made;
    data_ = (dir_ / "data").string();
  }
  void TearDown() override { ::msp::testing::RemoveTestDir(dir_.string()); }

  // Runs `msp args...` in dir_ with stdin `input`, the environment of this
  // process without any MSP_* variable, plus env_.
  Outcome Exec(const std::vector<std::string>& args, const std::string& input = "") {
    unchanged_export_.reset();  // this run may change the store
    const fs::path in_path = dir_ / ".stdin";
    const fs::path out_path = dir_ / ".stdout";
    const fs::path err_path = dir_ / ".stderr";
    WriteFile(in_path, input);

    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string_view(*e).substr(0, 4) != "MSP_") env_strings.emplace_back(*e);
    }
    for (const auto& [k, v] : env_) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::vector<std::string> argv_strings = {MSP_BINARY};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addchdir_np(&actions, dir_.c_str());
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    Outcome r;
    if (rc != 0) {
      ADD_FAILURE() << "posix_spawn " << MSP_BINARY << " failed: " << rc;
      return r;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = ReadFile(out_path);
    r.err = ReadFile(err_path);
    return r;
  }

  // `msp --data-dir data_ args...`.
  Outcome Msp(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--data-dir", data_});
    return Exec(args, input);
  }

  // Runs and expects exit 0; returns stdout.
  std::string Ok(const std::vector<std::string>& args, const std::string& input = "") {
    Outcome r = Msp(args, input);
    EXPECT_EQ(r.code, 0) << "msp " << Join(args) << "\nstderr: " << r.err << "\nstdout: " << r.out;
    return r.out;
  }

  json OkJson(std::vector<std::string> args) {
    args.push_back("--json");
    const std::string out = Ok(args);
    json j = json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out;
    return j;
  }

  // The hits of `msp search ... --json` ({"hits": [...]}, docs/operations.md).
  json Hits(std::vector<std::string> args) {
    json answer = OkJson(std::move(args));
    EXPECT_TRUE(answer.is_object() && answer.contains("hits")) << answer.dump();
    return answer.value("hits", json::array());
  }

  std::string Export(const std::string& tenant = "default") {
    return Ok({"export", "--tenant", tenant});
  }

  static std::string Join(const std::vector<std::string>& args) {
    std::string s;
    for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
    return s;
  }

  // The id printed by a --json write / fact add.
  std::string WriteId(std::vector<std::string> args) {
    json j = OkJson(std::move(args));
    return j.is_object() && j.contains("id") ? j["id"].get<std::string>() : "";
  }

  // Checks that `args` fails with `code`, that stderr has every one of
  // `parts`, and that the store's export did not change.
  void ExpectRejected(const std::vector<std::string>& args, int code, const std::vector<std::string>& parts,
                      const std::string& input = "") {
    // The export just taken by the previous ExpectRejected, when nothing has
    // run since (each msp process costs ~0.5 s of CPU under the sanitizers;
    // the tests of bad input call this dozens of times in a row).
    const std::string before =
        unchanged_export_ && unchanged_export_->first == env_ ? unchanged_export_->second : Export();
    Outcome r = Msp(args, input);
    EXPECT_EQ(r.code, code) << Join(args) << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.rfind("msp: ", 0), 0u) << r.err;
    for (const std::string& p : parts) EXPECT_TRUE(Contains(r.err, p)) << Join(args) << "\nwant: " << p << "\nstderr: " << r.err;
    const std::string after = Export();
    EXPECT_EQ(after, before) << "the store changed after: " << Join(args);
    unchanged_export_.emplace(env_, after);
  }

  // A store with a few records of every kind of write.
  void Populate() {
    Ok({"init"});
    Ok({"write", "The user prefers dark mode in every editor", "--tag", "preference", "--criticality", "high",
        "--body", R"({"editor":"vim","ünïcode":"✓"})", "--provenance", "commit:abc123"});
    Ok({"write", "Deploys happen on Tuesdays after the standup — never on Fridays", "--tag", "constraint",
        "--kind", "decision", "--ttl-days", "30"});
    Ok({"fact", "add", "Пользователь работает на Windows 11 с Python 3.12", "--confidence", "0.8", "--tag", "profile"});
    Ok({"episode", "add", "--session", "s1", "--text", "numpy will not install on Windows 11 🙁"});
    Ok({"episode", "add", "--session", "s1", "--type", "tool_call", "--content", R"({"query":"numpy windows wheel"})",
        "--tool-name", "web_search", "--duration-ms", "120", "--token-count", "14"});
  }

  fs::path dir_;
  std::string data_;
  std::map<std::string, std::string> env_;
  // The default tenant's export after the last ExpectRejected, with the
  // environment it ran in; cleared by every run of msp since.
  std::optional<std::pair<std::map<std::string, std::string>, std::string>> unchanged_export_;
};


}  // namespace msp_e2e

#endif  // MSP_TESTS_E2E_MSP_E2E_FIXTURE_H_
