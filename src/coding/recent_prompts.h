// The recent-prompts file of a prompt repository: the newest prompts, kept
// beside the repository (<repository>/msp-recent.json) so that the
// SessionStart hook shows a repository's last prompts without libgit2, whose
// load and CA-bundle parse were a quarter of the hook (bench/README.md,
// "SessionStart"). No libgit2 here.
//
// The file is a cache, never the truth: each entry names its ref and commit,
// and a reader walks the repository's loose prompt refs newest first (a
// directory listing and one small read per ref) and accepts the file's
// answer only when every ref it passes on the way is in the file with the
// same commit. A missing, damaged or stale file, a packed prompt ref, or a
// prompt whose text the file does not hold makes the reader answer "don't
// know", and the caller reads the repository itself (PromptStore::List).
// Writers (PromptStore::RefreshRecent, after an import or a direct capture)
// replace the file atomically.
#ifndef MSP_CODING_RECENT_PROMPTS_H_
#define MSP_CODING_RECENT_PROMPTS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coding/prompt_record.h"
#include "msp/status.h"

namespace msp {

// How many of the repository's newest prompts the file keeps, and the
// longest text it holds (a longer prompt's entry has no text: a reader that
// needs it reads the repository).
inline constexpr size_t kRecentPromptsKept = 128;
inline constexpr size_t kRecentPromptTextBytes = 4096;

// <repository>/msp-recent.json
std::string RecentPromptsPath(const std::string& repository);

// Whether a packed-refs file names a prompt ref (someone ran git
// pack-refs): then the loose refs are not all of them.
bool PromptRefsPacked(const std::string& repository);

// The day folders of the loose prompt refs (refs/prompts/<YYYY-MM-DD>),
// newest first; other names there are left out.
std::vector<std::string> PromptRefDays(const std::string& repository);

// The names of the newest `max` prompt refs of `repository` (loose refs
// under refs/prompts/<day>/), newest first. nullopt when prompt refs may be
// packed (a packed-refs file names one), so that loose refs are not all.
std::optional<std::vector<std::string>> NewestPromptRefs(const std::string& repository, size_t max);

// The commit id (40 hex) a loose ref file names; "" when it cannot be read.
std::string LooseRefId(const std::string& repository, const std::string& ref);

// An entry of the file: the prompt, and whether its text was left out
// (longer than kRecentPromptTextBytes).
struct RecentPrompt {
  CapturedPrompt prompt;  // id, ref, at, agent, session, repository, branch, text
  bool text_omitted = false;
};

// The file's JSON for `entries` (newest first), and back. The parser is
// InvalidArgument on anything but the format this writes.
std::string RecentPromptsJson(const std::vector<RecentPrompt>& entries);
Result<std::vector<RecentPrompt>> ParseRecentPrompts(std::string_view json);

// Reads the file; NotFound when there is none.
Result<std::vector<RecentPrompt>> ReadRecentPromptsFile(const std::string& repository);
// Replaces the file (a temporary file renamed over it).
Status WriteRecentPromptsFile(const std::string& repository, const std::vector<RecentPrompt>& entries);

// The newest `n` prompts captured in `worktree` (a repository path or its
// last component, as PromptFilter::repository), most recent first, answered
// from the file and checked against the refs; nullopt when the file cannot
// answer for sure. `n` must be at most kRecentPromptsKept to be answered.
std::optional<std::vector<CapturedPrompt>> RecentPromptsFromFile(const std::string& repository,
                                                                 const std::string& worktree, size_t n);

// Whether prompt `p` was captured in `worktree` (its repository path or that
// path's last component).
bool PromptInRepository(const CapturedPrompt& p, const std::string& worktree);

}  // namespace msp

#endif  // MSP_CODING_RECENT_PROMPTS_H_
