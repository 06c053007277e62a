// The prompt store: a bare git repository that holds every captured prompt
// of a coding agent as an orphan commit (libgit2; docs/coding-agents.md).
//
// Layout. Each prompt is one commit with no parent whose tree holds two
// files, prompt.txt (the prompt as typed) and meta.json (when, session,
// repository and branch of the agent's working directory, permission mode,
// the hook's other fields). One loose ref per prompt keeps it reachable:
//   refs/prompts/<YYYY-MM-DD>/<HHMMSSmmm>-<12 hex random>
// (UTC). Names sort by time; writers never share a ref, so concurrent
// captures from many processes need no lock on a common ref and none is lost
// (a name that exists already is retried with new random digits). Refs must
// stay loose: `git pack-refs` (or `git gc`) makes libgit2 scan the whole
// packed-refs file on every ref creation.
//
// Thread-compatible: one PromptStore per thread; several processes may
// append to one repository at once.
#ifndef MSP_CODING_PROMPT_STORE_H_
#define MSP_CODING_PROMPT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coding/prompt_record.h"
#include "msp/status.h"
#include "msp/types.h"

struct git_repository;

namespace msp {

// Which prompts List returns.
struct PromptFilter {
  TimeMs from = 0;  // at >= from (0: unbounded)
  TimeMs to = 0;    // at < to (0: unbounded)
  std::string session_id;  // empty: any
  std::string repository;  // empty: any; else the repository path or its last component
  size_t newest = 0;       // >0: only the newest N that match
};

// libgit2 global state: libgit2 is initialised while one exists.
class GitLibrary {
 public:
  GitLibrary();
  ~GitLibrary();
  GitLibrary(const GitLibrary&) = delete;
  GitLibrary& operator=(const GitLibrary&) = delete;
};

class PromptStore {
 public:
  // Opens the bare repository at `path`. With `create`, a missing one is
  // created (with parent directories). Errors: NotFound (missing, !create),
  // IoError (not a repository, unreadable, cannot create).
  static Result<std::unique_ptr<PromptStore>> Open(const std::string& path, bool create);
  ~PromptStore();
  PromptStore(const PromptStore&) = delete;
  PromptStore& operator=(const PromptStore&) = delete;

  // Stores `prompt` as an orphan commit and its ref. REQUIRES: prompt.at > 0.
  // Returns the prompt with id and ref set. Lock conflicts and name
  // collisions are retried; IoError when the repository cannot be written.
  Result<CapturedPrompt> Append(const CapturedPrompt& prompt);

  // Stores `prompt` under the ref `ref_name` (refs/prompts/..., e.g. from
  // PromptRefName). Idempotent: when the ref exists and names the same commit
  // it succeeds; when it names another commit it is Conflict.
  Result<CapturedPrompt> AppendAs(const CapturedPrompt& prompt, const std::string& ref_name);

  // The prompts matching `filter`, oldest first. Refs that are not prompt
  // commits are skipped and counted in *skipped (optional).
  Result<std::vector<CapturedPrompt>> List(const PromptFilter& filter, size_t* skipped = nullptr);

  // Number of prompt refs (no object reads).
  Result<size_t> Count();

  // Rewrites the recent-prompts file (recent_prompts.h) from the newest
  // prompt refs, reading only the prompts the old file did not hold.
  Status RefreshRecent();

  const std::string& path() const { return path_; }

 private:
  PromptStore(std::string path, git_repository* repo);
  Result<CapturedPrompt> Read(const std::string& ref_name);
  // Writes the blobs, tree and commit of `prompt`; returns the commit id.
  Result<std::string> WriteCommit(const CapturedPrompt& prompt, void* oid_out);

  std::string path_;
  git_repository* repo_;
  GitLibrary library_;
};

// Imports the spool of `repository` (capture.h describes the spool):
// commits every spooled prompt under the ref named in its file and removes
// the file. Safe to run from many processes at once: one imports at a time
// (a lock file), the others return busy, and the holder rechecks the spool
// after it unlocks. A spool file that cannot be parsed goes to
// msp-spool/bad/.
struct SpoolImportReport {
  size_t imported = 0;  // spooled prompts committed (or found committed)
  size_t failed = 0;    // files moved to msp-spool/bad/
  bool busy = false;    // another importer held the lock; it imports them
  bool recent_refreshed = false;  // the recent-prompts file was rewritten
};
Result<SpoolImportReport> ImportSpool(const std::string& repository);

// capture.mode = direct: parses the hook's standard input and commits the
// prompt to `repository` (created when missing) in this process.
Result<CapturedPrompt> CaptureDirect(std::string_view stdin_text, const std::string& repository, TimeMs now);

}  // namespace msp

#endif  // MSP_CODING_PROMPT_STORE_H_
