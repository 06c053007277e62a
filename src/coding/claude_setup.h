// `msp setup claude-code`: registers msp's hooks and MCP server with Claude
// Code, merging into the settings files that are there, and `--remove`
// takes out exactly msp's entries again.
//
// Files (Claude Code's documented locations):
//   project: <dir>/.claude/settings.json (hooks) and <dir>/.mcp.json
//            (mcpServers.msp)
//   user:    ~/.claude/settings.json (hooks) and ~/.claude.json (top-level
//            mcpServers.msp)
// msp's hook entries are those whose command runs msp (a first word whose
// last path component is `msp` or `msp-capture`) with `capture` or `hook`
// next (msp-capture: any arguments). Everything else in the files is kept,
// in its order. A file that is not a JSON object is an error naming it and
// nothing is written. The store kept in the project is added to git's
// info/exclude (see store_in_project).
//
// `--plugin DIR` writes the same hooks and MCP server as a Claude Code plugin
// instead (WriteClaudePlugin): DIR/.claude-plugin/plugin.json, a one-plugin
// marketplace beside it (.claude-plugin/marketplace.json, so that `claude
// plugin marketplace add DIR` and `claude plugin install msp@msp` install
// it), hooks/hooks.json, .mcp.json and a README.md. Claude Code copies the
// plugin into its own cache at install, so the commands name msp by absolute
// path, as the settings files do.
#ifndef MSP_CODING_CLAUDE_SETUP_H_
#define MSP_CODING_CLAUDE_SETUP_H_

#include <string>
#include <vector>

#include "msp/status.h"

namespace msp {

struct ClaudeSetupRequest {
  bool user = false;             // user scope (else project)
  std::string project_dir;       // project scope: the project's top directory
  std::string home;              // user scope: the home directory
  std::string capture_command;   // e.g. "/usr/bin/msp-capture --data-dir /home/u/.msp"
  std::string msp_command;       // e.g. "'/usr/bin/msp' --data-dir '/home/u/.msp'" (the other hooks)
  std::string mcp_program;       // the MCP server's command, e.g. "/usr/bin/msp"
  std::vector<std::string> mcp_args;  // its arguments, e.g. {"mcp", "--data-dir", "/home/u/.msp"}
  std::string observe_command;   // PostToolUse / PostToolUseFailure; empty: capture_command
  bool post_tool_use = true;     // register the PostToolUse and PostToolUseFailure hooks
  bool mcp = true;               // register the MCP server
  bool remove = false;           // take msp's entries out instead
  // Project scope: the store's path inside the project (".msp"), kept out
  // of git through the repository's info/exclude (its common directory's, for
  // a linked worktree) when the project is a git work tree; empty: none.
  // --remove takes the line out again.
  std::string store_in_project;
  // The SessionStart hook keeps a store inside the session's repository out
  // of git itself (`hook session-start --keep-store-out-of-git`): the plugin's
  // way, since it is installed once for every repository.
  bool keep_store_out_of_git = false;
  // WriteClaudePlugin: the plugin's directory and the version it declares.
  std::string plugin_dir;
  std::string version;
};

struct ClaudeSetupChange {
  std::string path;
  bool changed = false;          // false: already as wanted
  std::string summary;           // "added UserPromptSubmit, SessionStart hooks"
};

// Applies the request. All files are read and checked before any is
// written; each is replaced atomically (temporary file + rename, its mode
// kept). InvalidArgument for a malformed file or an `msp` MCP server entry
// that msp did not write; IoError when a file cannot be written.
Result<std::vector<ClaudeSetupChange>> SetupClaudeCode(const ClaudeSetupRequest& request);

// Writes (or with `remove` deletes) the plugin in `request.plugin_dir`,
// each file atomically. The directory must not exist, be empty or hold msp's
// plugin (a .claude-plugin/plugin.json named "msp"): anything else is
// InvalidArgument and nothing is written. `--remove` deletes only the files
// msp writes, then the directories they leave empty.
Result<std::vector<ClaudeSetupChange>> WriteClaudePlugin(const ClaudeSetupRequest& request);

// Adds (or with `remove` takes out) the rule keeping `store`, a path inside
// `project_dir`, out of git: a line in the repository's info/exclude (its
// common directory's, for a linked worktree). No change (an empty path in the
// answer) when the project is not a git work tree; unchanged when the rule is
// there already.
Result<ClaudeSetupChange> KeepStoreOutOfGit(const std::string& project_dir, const std::string& store, bool remove);

// True when `command` runs one of msp's hooks (see above).
bool IsMspHookCommand(const std::string& command);

}  // namespace msp

#endif  // MSP_CODING_CLAUDE_SETUP_H_
