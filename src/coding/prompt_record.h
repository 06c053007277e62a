// A captured prompt as msp stores it: the record, its metadata file
// (meta.json) and the name of its ref in the prompt repository. No libgit2
// here, so that the capture hook process does not load it.
#ifndef MSP_CODING_PROMPT_RECORD_H_
#define MSP_CODING_PROMPT_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// One captured prompt.
struct CapturedPrompt {
  std::string id;               // the commit id (40 hex); set by Append and List
  std::string ref;              // refs/prompts/...; set by Append and List
  std::string text;             // the prompt
  TimeMs at = 0;                // capture time (UTC ms)
  std::string session_id;       // the agent's session
  std::string transcript_path;
  std::string cwd;              // the agent's working directory
  std::string repository;       // top level of cwd's git work tree; empty: none
  std::string branch;           // checked-out branch; empty: none or detached
  std::string head;             // HEAD's commit id when detached; else empty
  std::string permission_mode;  // default, plan, acceptEdits, bypassPermissions, ...
  std::string hook_event;       // UserPromptSubmit
  std::string agent = "claude-code";
  std::string extra_json;       // the hook's other fields, a JSON object ("" = {})
};

// "refs/prompts/<YYYY-MM-DD>/<HHMMSSmmm>-<12 hex of random>" for a prompt
// captured at `at`.
std::string PromptRefName(TimeMs at, uint64_t random);
// 64 random bits (the kernel's, else clock and pid).
uint64_t RandomBits();

// The metadata file's JSON for `p` (without text, id and ref).
std::string PromptMetadataJson(const CapturedPrompt& p);
// Fills `p`'s fields from meta.json text. InvalidArgument when it is not a
// JSON object.
Status ParsePromptMetadata(const std::string& json, CapturedPrompt* p);

// The capture time a prompt ref name encodes; -1 when `name` is not one.
TimeMs PromptRefTime(std::string_view name);

}  // namespace msp

#endif  // MSP_CODING_PROMPT_RECORD_H_
