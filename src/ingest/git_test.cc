// Git ingestion of a scripted history: the record contract, files touched,
// incremental runs, revision options, and bad input.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "ingest/fixtures.h"
#include "ingest/git_record.h"
#include "ingest/ingest.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kT0 = 1767225600;  // 2026-01-01T00:00:00Z

class GitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Options o;
    o.store.data_dir = dir_.path() + "/data";
    o.store.synchronous = "normal";
    ASSERT_OK_AND_ASSIGN(engine_, MemoryLayer::Open(o));
    scope_.mission = "plant";
    repo_dir_ = fs::canonical(dir_.path()).string() + "/repo";
  }

  // Three commits: add a.txt and b.txt; change a.txt and delete b.txt (with
  // a body); add docs/c.md.
  void ScriptHistory(testing::ScriptedRepo& repo) {
    ASSERT_OK_AND_ASSIGN(h1_, repo.Commit({{"a.txt", "one\n"}, {"b.txt", "two\n"}}, "Add a and b\n", "Ann", kT0));
    ASSERT_OK_AND_ASSIGN(h2_, repo.Commit({{"a.txt", "one changed\n"}, {"b.txt", "<delete>"}},
                                          "Fix pump PRJ-7 timing\n\nThe pump started late.\nSecond line.\n", "Bob",
                                          kT0 + 3600));
    ASSERT_OK_AND_ASSIGN(h3_, repo.Commit({{"docs/c.md", "# C\n"}}, "Add docs\n", "Ann", kT0 + 7200));
  }

  Result<GitIngestReport> Ingest(const GitIngestOptions& o = {}) {
    return IngestGitRepository(*engine_, scope_, repo_dir_, o, "tester");
  }

  std::vector<Memory> Commits() {
    ListRequest r;
    r.scope = scope_;
    r.filter.tags = {"git-commit"};
    r.limit = 0;
    Result<std::vector<Memory>> all = engine_->List(r);
    EXPECT_TRUE(all.ok());
    return all.ok() ? *all : std::vector<Memory>{};
  }

  testing::TempDir dir_{"ingest-git"};
  std::unique_ptr<MemoryLayer> engine_;
  Namespace scope_;
  std::string repo_dir_;
  std::string h1_, h2_, h3_;
};

TEST_F(GitTest, CommitsFollowTheContract) {
  ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(repo_dir_));
  ScriptHistory(repo);
  size_t last_done = 0;
  ASSERT_OK_AND_ASSIGN(GitIngestReport r,
                       IngestGitRepository(*engine_, scope_, repo_dir_, {}, "tester",
                                           [&](size_t done, size_t total) {
                                             EXPECT_EQ(total, 3u);
                                             last_done = done;
                                           }));
  EXPECT_EQ(last_done, 3u);
  EXPECT_EQ(r.repo, repo_dir_);
  EXPECT_EQ(r.walked, 3);
  EXPECT_EQ(r.written, 3);
  EXPECT_EQ(r.written_hashes, (std::vector<std::string>{h3_, h2_, h1_}));
  ASSERT_EQ(Commits().size(), 3u);

  Namespace ns;
  ns.mission = "plant";
  ASSERT_OK_AND_ASSIGN(Memory m, engine_->Get(ns, GitCommitRecordId(ns, repo_dir_, h2_)));
  EXPECT_EQ(m.kind, Kind::kEvent);
  EXPECT_EQ(m.layer, Layer::kWorkflow);
  EXPECT_EQ(m.source, "git");
  EXPECT_EQ(m.tags, std::vector<std::string>{"git-commit"});
  EXPECT_EQ(m.valid_at, (kT0 + 3600) * 1000);
  EXPECT_EQ(m.ns.mission, "plant");
  EXPECT_EQ(m.text, "Fix pump PRJ-7 timing\n\nThe pump started late.\nSecond line.\nFiles: a.txt, b.txt");
  ASSERT_EQ(m.provenance.size(), 1u);
  EXPECT_EQ(m.provenance[0], (ProvenanceRef{"commit", h2_, repo_dir_}));
  const json b = json::parse(m.body_json);
  EXPECT_EQ(b["type"], "git_commit");
  EXPECT_EQ(b["hash"], h2_);
  EXPECT_EQ(b["author"], "Bob");
  EXPECT_EQ(b["email"], "Bob@example.com");
  EXPECT_EQ(b["time"], (kT0 + 3600) * 1000);
  EXPECT_EQ(b["subject"], "Fix pump PRJ-7 timing");
  EXPECT_EQ(b["message"], "Fix pump PRJ-7 timing\n\nThe pump started late.\nSecond line.\n");
  EXPECT_EQ(b["files"], json::array({"a.txt", "b.txt"}));
  EXPECT_EQ(b["repo"], repo_dir_);
  EXPECT_EQ(b["parents"], json::array({h1_}));

  ASSERT_OK_AND_ASSIGN(Memory root, engine_->Get(ns, GitCommitRecordId(ns, repo_dir_, h1_)));
  EXPECT_EQ(root.text, "Add a and b\n\nFiles: a.txt, b.txt");
  EXPECT_EQ(json::parse(root.body_json)["parents"], json::array());
  ASSERT_OK_AND_ASSIGN(Memory third, engine_->Get(ns, GitCommitRecordId(ns, repo_dir_, h3_)));
  EXPECT_EQ(json::parse(third.body_json)["files"], json::array({"docs/c.md"}));
}

TEST_F(GitTest, IncrementalRunsWriteOnlyNewCommits) {
  ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(repo_dir_));
  ScriptHistory(repo);
  ASSERT_OK_AND_ASSIGN(GitIngestReport r1, Ingest());
  ASSERT_EQ(r1.written, 3);
  const std::vector<Memory> before = Commits();
  ASSERT_OK_AND_ASSIGN(GitIngestReport r2, Ingest());
  EXPECT_EQ(r2.written, 0);
  EXPECT_EQ(r2.existing, 3);
  EXPECT_EQ(Commits(), before);  // nothing rewritten (same seq)
  ASSERT_OK_AND_ASSIGN(std::string h4, repo.Commit({{"a.txt", "three\n"}}, "Tune a\n", "Cy", kT0 + 9000));
  ASSERT_OK_AND_ASSIGN(GitIngestReport r3, Ingest());
  EXPECT_EQ(r3.written, 1);
  EXPECT_EQ(r3.existing, 3);
  EXPECT_EQ(r3.written_hashes, std::vector<std::string>{h4});
  EXPECT_EQ(Commits().size(), 4u);
}

// Each mission (and tenant) keeps its own copy of a repository's commits.
TEST_F(GitTest, AnotherMissionOrTenantIngestsItsOwnCopy) {
  ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(repo_dir_));
  ScriptHistory(repo);
  ASSERT_OK_AND_ASSIGN(GitIngestReport first, Ingest());
  ASSERT_EQ(first.written, 3);
  for (auto [tenant, mission] : {std::pair<std::string, std::string>{"default", "mill"}, {"acme", "plant"}}) {
    Namespace other;
    other.tenant = tenant;
    other.mission = mission;
    ASSERT_OK_AND_ASSIGN(GitIngestReport r, IngestGitRepository(*engine_, other, repo_dir_, {}, "tester"));
    EXPECT_EQ(r.written, 3) << tenant << "/" << mission;
    ASSERT_OK_AND_ASSIGN(Memory m, engine_->Get(other, GitCommitRecordId(other, repo_dir_, h2_)));
    EXPECT_EQ(m.ns.tenant, tenant);
    EXPECT_EQ(m.ns.mission, mission);
    EXPECT_NE(m.id, GitCommitRecordId(scope_, repo_dir_, h2_));
  }
  EXPECT_EQ(Commits().size(), 3u);  // the first mission's copy is untouched
}

TEST_F(GitTest, RevisionRangeSinceAndMaxCount) {
  ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(repo_dir_));
  ScriptHistory(repo);
  GitIngestOptions o;
  o.rev = h1_ + ".." + h3_;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(GitIngestReport range, Ingest(o));
  EXPECT_EQ(range.written_hashes, (std::vector<std::string>{h3_, h2_}));
  EXPECT_TRUE(Commits().empty());  // dry run

  o = {};
  o.rev = h2_;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(GitIngestReport from_h2, Ingest(o));
  EXPECT_EQ(from_h2.written_hashes, (std::vector<std::string>{h2_, h1_}));

  o = {};
  o.since = (kT0 + 3600) * 1000;
  ASSERT_OK_AND_ASSIGN(GitIngestReport since, Ingest(o));
  EXPECT_EQ(since.written_hashes, (std::vector<std::string>{h3_, h2_}));

  o = {};
  o.max_count = 1;
  ASSERT_OK_AND_ASSIGN(GitIngestReport one, Ingest(o));
  EXPECT_EQ(one.walked, 1);
  EXPECT_EQ(one.written, 0);
  EXPECT_EQ(one.existing, 1);
}

TEST_F(GitTest, BadInputWritesNothing) {
  Result<GitIngestReport> missing = Ingest();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  fs::create_directories(repo_dir_);
  Result<GitIngestReport> not_repo = Ingest();
  ASSERT_FALSE(not_repo.ok());
  EXPECT_EQ(not_repo.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_repo.status().message().find("not a git repository"), std::string::npos);

  ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(repo_dir_));
  ASSERT_OK_AND_ASSIGN(GitIngestReport empty, Ingest());  // no commits yet
  EXPECT_EQ(empty.walked, 0);
  ScriptHistory(repo);
  GitIngestOptions o;
  o.rev = "no-such-branch";
  Result<GitIngestReport> bad_rev = Ingest(o);
  ASSERT_FALSE(bad_rev.ok());
  EXPECT_NE(bad_rev.status().message().find("no-such-branch"), std::string::npos);
  scope_.mission.clear();
  EXPECT_EQ(Ingest().status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Commits().empty());
}

}  // namespace
}  // namespace msp
