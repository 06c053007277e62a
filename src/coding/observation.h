// Tool observations: what a coding agent's PostToolUse (and
// PostToolUseFailure) hook tells msp about one tool use, reduced to a small
// record (tool, a one-line input summary, files touched relative to the
// repository, command and exit status), with secrets redacted by pattern and
// every part capped. Built in the lean hook process (no engine, no libgit2)
// and spooled beside the prompts (capture.h); `msp prompts import` turns
// each into an episode. docs/coding-agents.md, "Tool observations".
#ifndef MSP_CODING_OBSERVATION_H_
#define MSP_CODING_OBSERVATION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "coding/capture.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// `text` with secrets replaced by "[REDACTED]": OpenAI/Anthropic-style keys
// (sk-...), GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), AWS
// access key ids (AKIA/ASIA + 16), the credential after "Bearer ", the value
// of password=/passwd=/pwd= (and "password": "..."), PEM private key blocks,
// and a long high-entropy value after a name ending in KEY, TOKEN or SECRET
// followed by '=' or ':'. `*count` (optional) receives how many were
// replaced. Ordinary code and prose pass unchanged.
std::string RedactSecrets(std::string_view text, size_t* count = nullptr);

// Characters kept of an observation's summary and of its command.
inline constexpr size_t kObservationSummaryChars = 200;
inline constexpr size_t kObservationCommandChars = 1000;
// Files kept of one tool use.
inline constexpr size_t kObservationMaxFiles = 50;

// One tool use.
struct Observation {
  TimeMs at = 0;
  std::string session_id;
  std::string cwd;
  std::string repository;  // top level of cwd's work tree; empty: none
  std::string branch;
  std::string hook_event;  // PostToolUse or PostToolUseFailure
  std::string tool;
  std::string tool_use_id;
  std::string summary;     // e.g. the command, the file, the pattern (redacted, capped)
  std::vector<std::string> files;  // touched, relative to the repository (or cwd) when inside it
  bool changed_files = false;      // the tool writes the files (Edit, Write, MultiEdit, NotebookEdit)
  std::string command;     // Bash: the command (redacted, capped)
  int exit_code = -1;      // -1: unknown
  bool interrupted = false;
  bool failed = false;     // PostToolUseFailure, or a non-zero exit code
  std::string error;       // PostToolUseFailure's error (redacted, capped)
  std::string input;       // tool_input as JSON text (redacted, capped)
  std::string response;    // tool_response as JSON text (redacted, capped)
  size_t redactions = 0;   // secrets replaced
};

// The observation of a PostToolUse / PostToolUseFailure payload at `now`;
// input and response each capped to `max_chars` characters.
// InvalidArgument when the payload names no tool or no session.
Result<Observation> ObservationFromHook(const HookInput& in, TimeMs now, size_t max_chars);

// `path` relative to `root` when it lies inside it (`path` relative is taken
// from `cwd`); else `path` normalised.
std::string RelativeToRoot(const std::string& path, const std::string& cwd, const std::string& root);

// One line for people and search: "<tool>: <summary>" then " (exit N)",
// " (failed: <error's first line>)", " · files: a, b" as they apply.
std::string ObservationLine(const Observation& o);

// The observation as a JSON object (text) and back. The episode's content is
// this JSON.
std::string ObservationJson(const Observation& o);
Result<Observation> ParseObservationJson(std::string_view json);

// The observation spool: <repository>/msp-spool/observations/, one file per
// tool use, {"scope": {"tenant","user","mission"}, "observation": {...}}.
std::string ObservationSpoolDir(const std::string& repository);
struct ObservationScope {
  std::string tenant = "default";
  std::string user;
  std::string mission;
};
Result<std::string> SpoolObservation(const Observation& o, const ObservationScope& scope,
                                     const std::string& repository);

}  // namespace msp

#endif  // MSP_CODING_OBSERVATION_H_
