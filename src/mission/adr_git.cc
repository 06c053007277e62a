// AdrGitHistory: one walk of the history from HEAD, oldest commit first,
// looking at the ADR folder's tree in each (libgit2 through its lazy shim).
#include "mission/adr_git.h"

#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "lazy/git_handles.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

}  // namespace

Result<std::map<std::string, AdrGitFile>> AdrGitHistory(const std::string& dir) {
  std::map<std::string, AdrGitFile> out;
  GitLibrary library;
  git_repository* raw_repo = nullptr;
  const int rc = git_repository_open_ext(&raw_repo, dir.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND) return out;
  if (rc != 0) return Status::IoError(dir + ": cannot open its git repository: " + LastGitError());
  RepoPtr repo(raw_repo);
  const char* workdir = git_repository_workdir(repo.get());
  if (workdir == nullptr || git_repository_is_empty(repo.get()) == 1 ||
      git_repository_head_unborn(repo.get()) == 1) {
    return out;
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(workdir, ec);
  if (ec) return out;
  const fs::path rel = fs::path(dir).lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return out;
  const std::string folder = rel == "." ? "" : rel.generic_string();

  git_revwalk* raw_walk = nullptr;
  if (git_revwalk_new(&raw_walk, repo.get()) != 0) return Status::IoError(dir + ": git: " + LastGitError());
  WalkPtr walk(raw_walk);
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME | GIT_SORT_REVERSE);
  if (git_revwalk_push_head(walk.get()) != 0) return Status::IoError(dir + ": git: " + LastGitError());

  git_oid last_folder{};
  bool have_last = false;
  std::map<std::string, git_oid> blobs;  // each file's blob in the latest commit seen
  for (git_oid id; git_revwalk_next(&id, walk.get()) == 0;) {
    git_commit* raw_commit = nullptr;
    if (git_commit_lookup(&raw_commit, repo.get(), &id) != 0) continue;
    CommitPtr commit(raw_commit);
    git_tree* raw_tree = nullptr;
    if (git_commit_tree(&raw_tree, commit.get()) != 0) continue;
    TreePtr tree(raw_tree);
    git_oid folder_id;
    if (folder.empty()) {
      folder_id = *git_tree_id(tree.get());
    } else {
      git_tree_entry* raw_entry = nullptr;
      if (git_tree_entry_bypath(&raw_entry, tree.get(), folder.c_str()) != 0) continue;
      EntryPtr entry(raw_entry);
      if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) continue;
      folder_id = *git_tree_entry_id(entry.get());
    }
    if (have_last && git_oid_equal(&folder_id, &last_folder)) continue;
    last_folder = folder_id;
    have_last = true;
    git_tree* raw_folder = nullptr;
    if (git_tree_lookup(&raw_folder, repo.get(), &folder_id) != 0) continue;
    TreePtr folder_tree(raw_folder);
    const git_signature* author = git_commit_author(commit.get());
    const TimeMs at = author != nullptr ? static_cast<TimeMs>(author->when.time) * 1000
                                        : static_cast<TimeMs>(git_commit_time(commit.get())) * 1000;
    const std::string who = author != nullptr && author->name != nullptr ? author->name : "";
    const size_t n = git_tree_entrycount(folder_tree.get());
    // The folder's files, and those one folder down ("0005-x/index.md").
    std::vector<std::pair<std::string, git_oid>> files;
    for (size_t i = 0; i < n; ++i) {
      const git_tree_entry* e = git_tree_entry_byindex(folder_tree.get(), i);
      if (e == nullptr) continue;
      const std::string name = git_tree_entry_name(e);
      if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
        files.emplace_back(name, *git_tree_entry_id(e));
      } else if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
        git_tree* raw_sub = nullptr;
        if (git_tree_lookup(&raw_sub, repo.get(), git_tree_entry_id(e)) != 0) continue;
        TreePtr sub(raw_sub);
        const size_t m = git_tree_entrycount(sub.get());
        for (size_t k = 0; k < m && k < 64; ++k) {
          const git_tree_entry* f = git_tree_entry_byindex(sub.get(), k);
          if (f != nullptr && git_tree_entry_type(f) == GIT_OBJECT_BLOB) {
            files.emplace_back(name + "/" + git_tree_entry_name(f), *git_tree_entry_id(f));
          }
        }
      }
    }
    for (const auto& [name, blob_id] : files) {
      const git_oid* blob = &blob_id;
      auto [it, added] = blobs.emplace(name, *blob);
      if (added) {
        out[name].first_commit_at = at;
        out[name].last_author = who;
      } else if (!git_oid_equal(&it->second, blob)) {
        it->second = *blob;
        out[name].last_author = who;
      }
    }
  }
  return out;
}

}  // namespace msp
