// What git knows about the files of an ADR folder: when each file was first
// committed and who last changed it. ADR import dates a record that names no
// date by its file's first commit, and attributes a changed file's new
// revision to its latest commit's author.
#ifndef MSP_MISSION_ADR_GIT_H_
#define MSP_MISSION_ADR_GIT_H_

#include <map>
#include <string>

#include "msp/status.h"
#include "msp/types.h"

namespace msp {

struct AdrGitFile {
  TimeMs first_commit_at = 0;  // author time of the first commit holding it
  std::string last_author;     // author of the latest commit that changed it
};

// The files directly in `dir` (an absolute, canonical directory) and one
// folder down ("0005-x/index.md") as git's history from HEAD holds them, by
// name relative to `dir`. Empty when `dir` is not inside
// a git work tree or the repository has no commits; files never committed
// are absent. An error only when the repository exists but cannot be read.
Result<std::map<std::string, AdrGitFile>> AdrGitHistory(const std::string& dir);

}  // namespace msp

#endif  // MSP_MISSION_ADR_GIT_H_
