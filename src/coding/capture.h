// `msp capture`: the UserPromptSubmit hook of a coding agent (Claude Code).
// Reads the hook's JSON from standard input and stores the prompt in the
// prompt store (prompt_store.h). Never opens the memory engine.
//
// The hook must never block the user: CaptureHook reports what went wrong
// as a Status, and the command logs it to a file and exits 0 with no output.
#ifndef MSP_CODING_CAPTURE_H_
#define MSP_CODING_CAPTURE_H_

#include <string>
#include <string_view>
#include <vector>

#include "coding/prompt_record.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// The fields every Claude Code hook sends, and the event-specific ones msp
// reads. Unknown fields are kept (other_json).
struct HookInput {
  std::string session_id;
  std::string transcript_path;
  std::string cwd;
  std::string permission_mode;
  std::string hook_event_name;
  std::string prompt;        // UserPromptSubmit
  std::string source;        // SessionStart: startup, resume, clear, compact
  std::string tool_name;     // PostToolUse
  std::string tool_input;    // PostToolUse: JSON text
  std::string tool_response; // PostToolUse: JSON text
  std::string tool_use_id;   // PostToolUse
  std::string error;         // PostToolUseFailure
  std::string other_json;    // every other field, a JSON object ("" when none)
};

// Parses a hook's standard input. InvalidArgument for empty input, text
// that is not one JSON object, or a known field of the wrong type.
Result<HookInput> ParseHookInput(std::string_view json);

// The git work tree around `dir`: its top level, the checked-out branch (or
// empty and `head` = the commit id when detached). Reads .git (directory or
// `gitdir:` file) and HEAD directly; no git process, no libgit2 config
// reads. Empty strings when `dir` is not inside a work tree.
struct WorkTree {
  std::string top_level;
  std::string branch;
  std::string head;
};
WorkTree FindWorkTree(const std::string& dir);

// Turns a UserPromptSubmit payload into a prompt record captured at `now`.
// InvalidArgument when the payload carries no prompt string.
Result<CapturedPrompt> PromptFromHook(const HookInput& in, TimeMs now);

// --- The spool: how `msp capture` stays fast ---
//
// git_libgit2_init() of Debian's libgit2 (built with mbedTLS) parses the
// whole CA bundle, several ms per process, and the libraries it loads cost
// more. So the hook process (capture.mode = spool) only writes the prompt to
// <repository>/msp-spool/<at>-<hex>.json (temporary file + rename: a reader
// never sees half a file) and starts a detached importer (`msp prompts
// import`), which commits every spooled prompt under the ref named in the
// file and removes the file. The ref name is fixed at capture, so an import
// interrupted or run twice at once commits each prompt exactly once.

// The spool directory of a prompt repository.
std::string SpoolDir(const std::string& repository);

// Writes `prompt` to the spool of `repository` (directories created).
// Returns the spool file's path.
Result<std::string> SpoolPrompt(const CapturedPrompt& prompt, const std::string& repository);

// Writes `body` to <dir>/<at>-<12 hex of random>.json (directories
// created) through a temporary file and a rename. Returns the path.
Result<std::string> WriteSpoolFile(const std::string& dir, TimeMs at, uint64_t random, const std::string& body);

// Starts the spool importer `argv` (argv[0] a path, or a name looked up on
// PATH) detached (util/detached.h), scheduled SCHED_IDLE. IoError when fork
// fails; a failed exec is not reported (the child exits 127).
Status SpawnImporter(const std::vector<std::string>& argv);

// Appends one line "<ISO time> <what>: <message>" to `log_path` (parent
// directories created). Best effort: failures are ignored.
void AppendToLog(const std::string& log_path, std::string_view what, std::string_view message);

}  // namespace msp

#endif  // MSP_CODING_CAPTURE_H_
