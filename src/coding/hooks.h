// The Claude Code hooks besides capture: SessionStart prints a digest of the
// mission memory for the current repository and branch; PostToolUse records
// a tool call as an episode. Both are built on the public engine API.
#ifndef MSP_CODING_HOOKS_H_
#define MSP_CODING_HOOKS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "coding/capture.h"
#include "coding/observation.h"
#include "msp/memory.h"
#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// The task description a SessionStart digest is ranked for:
// "Repository NAME (PATH), branch BRANCH: continue the work there." (no
// branch: "detached HEAD <id>" or nothing; no repository: the directory),
// followed by "Recent prompts: " and `recent` (the last prompts captured in
// this repository, most recent first, each cut to 300 characters) when there
// are any. The digest's heading is the task without them.
std::string SessionStartTask(const std::string& cwd, const WorkTree& tree,
                             const std::vector<std::string>& recent = {});

// The mission a coding session's digest reads: `mission` when set, else the
// repository's name (its top level's last component), else the last
// component of cwd.
std::string SessionMission(const std::string& mission, const std::string& cwd, const WorkTree& tree);

// How many captured prompts a SessionStart digest shows, and the characters
// kept of each.
inline constexpr size_t kSessionStartPrompts = 3;
inline constexpr size_t kSessionStartPromptChars = 300;

// The section of a SessionStart digest that shows `recent` (most recent
// first; at most kSessionStartPrompts of them): "# Recent prompts in this
// repository (most recent first)" and one item per prompt, "- <captured at>
// [prompt · from <agent> · untrusted · id <commit's first 12>] <text cut to
// kSessionStartPromptChars characters>", the text fenced (util/fence.h:
// later lines behind the gutter). A captured prompt is untrusted text: it
// holds whatever was pasted into the agent. "" when `recent` is empty.
std::string RecentPromptsSection(const std::vector<CapturedPrompt>& recent);

// The SessionStart context: workflow_memory_query for the session (`scope`
// names tenant and user; the mission comes from SessionMission; the task
// is SessionStartTask with `recent_prompts`), then RecentPromptsSection.
// Both within `budget` tokens together (the tokens.* counter): the prompts
// first, the oldest of them dropped until the section fits, the digest in
// what is left. Empty when nothing fits.
//
// With `recent_sessions` (session summary records, most recent first:
// session_summary.h), the session index comes first, within half of
// `budget` (SessionIndexSection); the prompts and the digest share the rest.
Result<std::string> SessionStartDigest(MemoryLayer& engine, const Options& options, const HookInput& input,
                                       const Namespace& scope, int64_t budget, const std::string& actor,
                                       const std::vector<CapturedPrompt>& recent_prompts = {},
                                       const std::vector<Memory>& recent_sessions = {});

// What the hook prints: the JSON Claude Code reads from a SessionStart
// hook's standard output, {"hookSpecificOutput": {"hookEventName":
// "SessionStart", "additionalContext": CONTEXT}}; "" for an empty context.
std::string SessionStartOutput(const std::string& context, std::string_view source);

// The episode of one tool observation (observation.h): type tool_call, the
// tool's name, content the observation's JSON, at its time, in `scope`'s
// tenant, user and mission and the observation's session; tags
// "claude-code" and "observation".
EpisodeStep ObservationEpisode(const Observation& o, const ObservationScope& scope, const std::string& actor);

// Whether the observation spool of `repository` holds a file.
bool HasSpooledObservations(const std::string& repository);

// Imports the observation spool of `repository` into `engine`: each file
// becomes an episode (ObservationEpisode) keyed by the file's name, so a file
// that outlived its import (a crash before its removal) is not added twice,
// and is removed. One importer at a
// time (a lock file; the others return busy). A file that cannot be parsed
// goes to msp-spool/observations/bad/.
struct ObservationImportReport {
  size_t imported = 0;
  size_t failed = 0;
  bool busy = false;
};
Result<ObservationImportReport> ImportObservations(const std::string& repository, MemoryLayer& engine,
                                                   const std::string& actor);

}  // namespace msp

#endif  // MSP_CODING_HOOKS_H_
