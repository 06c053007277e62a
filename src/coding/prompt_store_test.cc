// The prompt store: orphan commits, listing, and concurrent writers in
// separate processes.
#include "coding/prompt_store.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <cstdio>
#include <set>

#include <git2.h>
#include <gtest/gtest.h>

#include "coding/capture.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

CapturedPrompt Prompt(const std::string& text, TimeMs at, const std::string& session = "s",
                      const std::string& repository = "/home/u/proj") {
  CapturedPrompt p;
  p.text = text;
  p.at = at;
  p.session_id = session;
  p.repository = repository;
  p.branch = "main";
  p.permission_mode = "default";
  p.hook_event = "UserPromptSubmit";
  return p;
}

TEST(PromptStoreTest, AppendWritesAnOrphanCommitWithPromptAndMetadata) {
  testing::TempDir dir("coding-store");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.path() + "/p.git";
  EXPECT_TRUE(PromptStore::Open(path, false).status().IsNotFound());
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(path, true));
  CapturedPrompt in = Prompt("fix the flaky test\nin ci", 1764530000123);
  in.extra_json = R"({"model":"x"})";
  ASSERT_OK_AND_ASSIGN(CapturedPrompt out, store->Append(in));
  EXPECT_EQ(out.id.size(), 40u);
  EXPECT_EQ(out.ref.rfind("refs/prompts/2025-11-30/191320123-", 0), 0u) << out.ref;

  // Check the commit with libgit2 directly: no parent, two files.
  GitLibrary lib;
  git_repository* repo = nullptr;
  ASSERT_EQ(git_repository_open_bare(&repo, path.c_str()), 0);
  git_oid oid;
  ASSERT_EQ(git_oid_fromstr(&oid, out.id.c_str()), 0);
  git_commit* commit = nullptr;
  ASSERT_EQ(git_commit_lookup(&commit, repo, &oid), 0);
  EXPECT_EQ(git_commit_parentcount(commit), 0u);
  EXPECT_STREQ(git_commit_message(commit), "fix the flaky test\n");
  EXPECT_EQ(git_commit_time(commit), 1764530000);
  git_tree* tree = nullptr;
  ASSERT_EQ(git_commit_tree(&tree, commit), 0);
  ASSERT_EQ(git_tree_entrycount(tree), 2u);
  EXPECT_STREQ(git_tree_entry_name(git_tree_entry_byindex(tree, 0)), "meta.json");
  EXPECT_STREQ(git_tree_entry_name(git_tree_entry_byindex(tree, 1)), "prompt.txt");
  git_tree_free(tree);
  git_commit_free(commit);
  git_repository_free(repo);

  ASSERT_OK_AND_ASSIGN(std::vector<CapturedPrompt> all, store->List({}));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].text, in.text);
  EXPECT_EQ(all[0].at, in.at);
  EXPECT_EQ(all[0].session_id, "s");
  EXPECT_EQ(all[0].repository, "/home/u/proj");
  EXPECT_EQ(all[0].branch, "main");
  EXPECT_EQ(all[0].permission_mode, "default");
  EXPECT_EQ(all[0].extra_json, R"({"model":"x"})");
  EXPECT_EQ(all[0].id, out.id);
}

TEST(PromptStoreTest, ListFiltersByTimeSessionRepositoryAndNewest) {
  testing::TempDir dir("coding-list");
  ASSERT_TRUE(dir.ok());
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(dir.path() + "/p.git", true));
  const TimeMs t0 = 1764530000000;
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK(store->Append(Prompt("p" + std::to_string(i), t0 + i * 1000, i % 2 ? "odd" : "even",
                                   i < 3 ? "/r/alpha" : "/r/beta"))
                  .status());
  }
  ASSERT_OK_AND_ASSIGN(size_t n, store->Count());
  EXPECT_EQ(n, 6u);
  PromptFilter f;
  f.from = t0 + 1000;
  f.to = t0 + 4000;
  ASSERT_OK_AND_ASSIGN(auto range, store->List(f));
  ASSERT_EQ(range.size(), 3u);
  EXPECT_EQ(range[0].text, "p1");
  EXPECT_EQ(range[2].text, "p3");
  f = {};
  f.session_id = "odd";
  ASSERT_OK_AND_ASSIGN(auto odd, store->List(f));
  ASSERT_EQ(odd.size(), 3u);
  EXPECT_EQ(odd[1].text, "p3");
  f = {};
  f.repository = "beta";
  f.newest = 2;
  ASSERT_OK_AND_ASSIGN(auto beta, store->List(f));
  ASSERT_EQ(beta.size(), 2u);
  EXPECT_EQ(beta[0].text, "p4");
  EXPECT_EQ(beta[1].text, "p5");
}

TEST(PromptStoreTest, AppendAsIsIdempotentAndRefusesAnotherCommit) {
  testing::TempDir dir("coding-as");
  ASSERT_TRUE(dir.ok());
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(dir.path() + "/p.git", true));
  const CapturedPrompt p = Prompt("same", 1764530000000);
  const std::string ref = PromptRefName(p.at, 0xabcdef);
  ASSERT_OK_AND_ASSIGN(CapturedPrompt a, store->AppendAs(p, ref));
  ASSERT_OK_AND_ASSIGN(CapturedPrompt b, store->AppendAs(p, ref));
  EXPECT_EQ(a.id, b.id);
  Result<CapturedPrompt> other = store->AppendAs(Prompt("different", p.at), ref);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kConflict);
  EXPECT_TRUE(store->AppendAs(p, "refs/heads/main").status().IsInvalidArgument());
  ASSERT_OK_AND_ASSIGN(size_t n, store->Count());
  EXPECT_EQ(n, 1u);
}

TEST(PromptStoreTest, ListReadsOnlyTheDaysItNeedsAndSurvivesPackedRefs) {
  testing::TempDir dir("coding-days");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.path() + "/p.git";
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(path, true));
  const TimeMs day = 86400000;
  const TimeMs t0 = 1764547200000;  // 2025-12-01T00:00:00Z
  for (int d = 0; d < 4; ++d) {
    for (int i = 0; i < 2; ++i) {
      ASSERT_OK(store->Append(Prompt("d" + std::to_string(d) + "-" + std::to_string(i), t0 + d * day + i * 1000))
                    .status());
    }
  }
  PromptFilter f;
  f.newest = 3;
  ASSERT_OK_AND_ASSIGN(auto newest, store->List(f));
  ASSERT_EQ(newest.size(), 3u);
  EXPECT_EQ(newest[0].text, "d2-1");
  EXPECT_EQ(newest[2].text, "d3-1");
  f = {};
  f.from = t0 + day + 500;  // inside day 1
  f.to = t0 + 3 * day;
  ASSERT_OK_AND_ASSIGN(auto range, store->List(f));
  ASSERT_EQ(range.size(), 3u);
  EXPECT_EQ(range[0].text, "d1-1");
  EXPECT_EQ(range[2].text, "d2-1");

  // Packed refs (git pack-refs): still listed, and appends still work.
  {
    GitLibrary lib;
    git_repository* repo = nullptr;
    ASSERT_EQ(git_repository_open_bare(&repo, path.c_str()), 0);
    git_refdb* refdb = nullptr;
    ASSERT_EQ(git_repository_refdb(&refdb, repo), 0);
    ASSERT_EQ(git_refdb_compress(refdb), 0);
    git_refdb_free(refdb);
    git_repository_free(repo);
  }
  ASSERT_OK(store->Append(Prompt("after packing", t0 + 5 * day)).status());
  ASSERT_OK_AND_ASSIGN(auto all, store->List({}));
  ASSERT_EQ(all.size(), 9u);
  EXPECT_EQ(all[0].text, "d0-0");
  EXPECT_EQ(all[8].text, "after packing");
}

// Several processes append at once, directly and through the spool; no
// commit is lost and none is doubled.
TEST(PromptStoreTest, ConcurrentWriterProcessesLoseNothing) {
  testing::TempDir dir("coding-conc");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.path() + "/p.git";
  constexpr int kProcesses = 6;
  constexpr int kEach = 15;
  // All children start at the same millisecond so that ref names share
  // their time part and only the random part tells them apart.
  const TimeMs at = 1764530000000;
  std::vector<pid_t> pids;
  for (int c = 0; c < kProcesses; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int bad = 0;
      if (c % 2 == 0) {
        auto store = PromptStore::Open(path, true);
        if (!store.ok()) {
          fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
          _exit(10);
        }
        for (int i = 0; i < kEach; ++i) {
          if (!(*store)->Append(Prompt("c" + std::to_string(c) + "-" + std::to_string(i), at)).ok()) ++bad;
        }
      } else {
        for (int i = 0; i < kEach; ++i) {
          if (!SpoolPrompt(Prompt("c" + std::to_string(c) + "-" + std::to_string(i), at), path).ok()) ++bad;
          if (!ImportSpool(path).ok()) ++bad;
        }
      }
      _exit(bad == 0 ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  // An importer that found the lock taken left its prompts to the holder,
  // which rechecked; whatever is left now is imported here.
  ASSERT_OK(ImportSpool(path).status());
  ASSERT_OK_AND_ASSIGN(auto store, PromptStore::Open(path, false));
  ASSERT_OK_AND_ASSIGN(auto all, store->List({}));
  std::set<std::string> texts;
  for (const CapturedPrompt& p : all) texts.insert(p.text);
  EXPECT_EQ(all.size(), static_cast<size_t>(kProcesses * kEach));
  EXPECT_EQ(texts.size(), static_cast<size_t>(kProcesses * kEach));
  EXPECT_TRUE(std::filesystem::is_empty(SpoolDir(path)) ||
              (std::filesystem::exists(SpoolDir(path) + "/.import.lock") &&
               std::distance(std::filesystem::directory_iterator(SpoolDir(path)), {}) == 1));
}

}  // namespace
}  // namespace msp
