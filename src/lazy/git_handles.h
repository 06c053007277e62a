// Owning handles for libgit2 objects (reached through the lazy shim,
// lazy.h), shared by the git ingest and the ADR importer's date lookup:
// GitLibrary holds libgit2's global state for a scope; each XPtr frees its
// object with libgit2's own free function; LastGitError names the last
// failure. Not thread-safe beyond what libgit2 itself is.
#ifndef MSP_LAZY_GIT_HANDLES_H_
#define MSP_LAZY_GIT_HANDLES_H_

#include <git2.h>

#include <memory>
#include <string>

namespace msp {

// libgit2's global state, initialised for the object's lifetime.
class GitLibrary {
 public:
  GitLibrary() { git_libgit2_init(); }
  ~GitLibrary() { git_libgit2_shutdown(); }
  GitLibrary(const GitLibrary&) = delete;
  GitLibrary& operator=(const GitLibrary&) = delete;
};

template <typename T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const {
    if (p != nullptr) Free(p);
  }
};
using RepoPtr = std::unique_ptr<git_repository, GitDeleter<git_repository, git_repository_free>>;
using WalkPtr = std::unique_ptr<git_revwalk, GitDeleter<git_revwalk, git_revwalk_free>>;
using CommitPtr = std::unique_ptr<git_commit, GitDeleter<git_commit, git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, GitDeleter<git_tree, git_tree_free>>;
using EntryPtr = std::unique_ptr<git_tree_entry, GitDeleter<git_tree_entry, git_tree_entry_free>>;
using DiffPtr = std::unique_ptr<git_diff, GitDeleter<git_diff, git_diff_free>>;
using ObjectPtr = std::unique_ptr<git_object, GitDeleter<git_object, git_object_free>>;

inline std::string LastGitError() {
  const git_error* e = git_error_last();
  return e != nullptr && e->message != nullptr ? e->message : "unknown libgit2 error";
}

}  // namespace msp

#endif  // MSP_LAZY_GIT_HANDLES_H_
