// `msp ingest` end to end through RunCli: documents with a damaged one (exit
// code 1, the others stored), re-runs, chunk settings, git, and usage errors.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "ingest/fixtures.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using json = nlohmann::json;

using testing::Contains;

class IngestVerbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    data_ = dir_.path() + "/data";
    docs_ = dir_.path() + "/docs";
    ASSERT_EQ(Run({"init"}).code, 0);
  }

  CliRun Run(std::vector<std::string> args) {
    args.push_back("--data-dir");
    args.push_back(data_);
    return RunCliCapture(args);
  }

  testing::TempDir dir_{"ingest-verb"};
  std::string data_;
  std::string docs_;
};

TEST_F(IngestVerbTest, DocumentsReportAndExitCode) {
  ASSERT_OK(testing::WriteFile(docs_ + "/a.md", "# Pumps\n\nThe pump runs at 40 Hz."));
  ASSERT_OK(testing::WriteFile(docs_ + "/b.pdf", "%PDF-1.4\nbroken"));
  CliRun r = Run({"ingest", docs_, "--mission", "plant"});
  EXPECT_EQ(r.code, 1) << r.err;  // one file failed
  EXPECT_TRUE(Contains(r.err, "msp: failed: ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "b.pdf")) << r.err;
  EXPECT_TRUE(Contains(r.out, "files: 1 ingested (0 replaced), 0 unchanged, 1 failed, 0 skipped; chunks: 1 written"))
      << r.out;
  EXPECT_FALSE(Contains(r.err, "\033[K"));  // no progress bar off a terminal

  CliRun again = Run({"ingest", docs_ + "/a.md", "--mission", "plant", "--json"});
  EXPECT_EQ(again.code, 0) << again.err;
  const json j = json::parse(again.out);
  EXPECT_EQ(j["unchanged"], 1);
  EXPECT_EQ(j["files"][0]["action"], "unchanged");

  CliRun q = Run({"search", "pump 40 Hz", "--mission", "plant", "--kinds", "document_chunk", "--json"});
  EXPECT_EQ(q.code, 0) << q.err;
  EXPECT_TRUE(Contains(q.out, "The pump runs at 40 Hz.")) << q.out;
}

TEST_F(IngestVerbTest, ChunkSettingsAreHonoured) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "word" + std::to_string(i) + " ";
  ASSERT_OK(testing::WriteFile(docs_ + "/long.txt", text));
  CliRun r = Run({"ingest", docs_ + "/long.txt", "--mission", "plant", "--json", "--ingest-chunk-tokens", "64",
                  "--ingest-overlap-tokens", "0", "--tokens-counter", "estimate"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_GE(j["chunks_written"].get<int>(), 5);
  EXPECT_EQ(j["counter"], "estimate");
  CliRun bad = Run({"ingest", docs_ + "/long.txt", "--mission", "plant", "--ingest-chunk-tokens", "64",
                    "--ingest-overlap-tokens", "40"});
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_TRUE(Contains(bad.err, "ingest.overlap_tokens")) << bad.err;
}

TEST_F(IngestVerbTest, GitAndUsageErrors) {
  const std::string repo_dir = dir_.path() + "/repo";
  {
    ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(repo_dir));
    ASSERT_OK(repo.Commit({{"x.txt", "x"}}, "First commit\n", "Ann", 1767225600).status());
  }
  CliRun r = Run({"ingest", "--git", repo_dir, "--mission", "plant"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "1 commits walked, wrote 1 new, 0 already stored")) << r.out;
  CliRun again = Run({"ingest", "--git", repo_dir, "--mission", "plant"});
  EXPECT_TRUE(Contains(again.out, "wrote 0 new, 1 already stored")) << again.out;

  CliRun not_repo = Run({"ingest", "--git", docs_.substr(0, docs_.rfind('/')), "--mission", "plant"});
  EXPECT_EQ(not_repo.code, 2);
  EXPECT_TRUE(Contains(not_repo.err, "not a git repository")) << not_repo.err;
  EXPECT_EQ(Run({"ingest", dir_.path() + "/nope.md", "--mission", "plant"}).code, 4);
  EXPECT_EQ(Run({"ingest", repo_dir, "--mission", "plant", "--git", repo_dir}).code, 2);
  CliRun no_mission = Run({"ingest", repo_dir + "/x.txt"});
  EXPECT_EQ(no_mission.code, 2);
  EXPECT_TRUE(Contains(no_mission.err, "--mission")) << no_mission.err;
  EXPECT_EQ(Run({"ingest", "--mission", "plant"}).code, 2);
  EXPECT_EQ(Run({"ingest", repo_dir, "--mission", "plant", "--rev", "HEAD"}).code, 2);
}

}  // namespace
}  // namespace msp
