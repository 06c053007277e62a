// Test support for orchestrate_test: a fake clock, an engine in a temp
// directory, and git commit records written in the shape `msp ingest --git`
// writes them (the contract in docs/orchestrate.md).
#ifndef MSP_ORCHESTRATE_ORCHESTRATE_TEST_UTIL_H_
#define MSP_ORCHESTRATE_ORCHESTRATE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/memory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp::testing {


constexpr TimeMs kHour = 3600 * 1000;
constexpr TimeMs kDay = 24 * kHour;

class EngineFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTestDir("orchestrate");
    ASSERT_FALSE(dir_.empty());
    clock_ = std::make_shared<FakeClock>(*ParseIso8601("2026-03-02T09:00:00Z"));
    options_.store.data_dir = dir_ + "/data";
    options_.store.synchronous = "normal";
    options_.actor = "tester";
    mission_.tenant = "acme";
    mission_.mission = "m1";
    OpenEngine();
  }
  void TearDown() override {
    engine_.reset();
    RemoveTestDir(dir_);
  }
  void OpenEngine() {
    auto engine = MemoryLayer::Open(options_, clock_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
  }

  // A git commit record, exactly as the ingestion contract says.
  std::string PutCommit(const std::string& hash, const std::string& subject, const std::string& body,
                        const std::vector<std::string>& files, const std::string& author = "Ann") {
    const TimeMs t = clock_->NowMs();
    std::string message = subject + (body.empty() ? "" : "\n\n" + body);
    std::string files_line;
    for (const std::string& f : files) files_line += (files_line.empty() ? "" : ", ") + f;
    Memory m;
    m.ns = mission_;
    m.kind = Kind::kEvent;
    m.layer = Layer::kWorkflow;
    m.source = "git";
    m.tags = {"git-commit"};
    m.valid_at = t;
    m.text = subject + "\n\n" + body + "\nFiles: " + files_line;
    m.body_json = nlohmann::json{{"type", "git_commit"}, {"hash", hash},       {"author", author},
                                 {"email", "a@b"},       {"time", t},          {"subject", subject},
                                 {"message", message},   {"files", files},     {"repo", "/repo/nav"},
                                 {"parents", nlohmann::json::array()}}
                      .dump();
    m.provenance = {{"commit", hash, "/repo/nav"}};
    RecordBatch batch;
    batch.scope = mission_;
    batch.puts = {m};
    auto stored = engine_->Commit(batch);
    EXPECT_TRUE(stored.ok()) << stored.status().ToString();
    return stored.ok() ? stored->at(0).id : "";
  }

  std::string dir_;
  std::shared_ptr<FakeClock> clock_;
  Options options_;
  Namespace mission_;
  std::unique_ptr<MemoryLayer> engine_;
};

// A 40-hex-digit hash from a small number.
inline std::string Hash(int n) {
  std::string h = std::to_string(n);
  return h + std::string(40 - h.size(), 'f');
}

}  // namespace msp::testing

#endif  // MSP_ORCHESTRATE_ORCHESTRATE_TEST_UTIL_H_
