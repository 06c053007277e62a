// Merging msp's hooks and MCP server into Claude Code's settings files.
#include "coding/claude_setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace msp {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Words of a shell command line, split at unquoted spaces (quotes removed).
std::vector<std::string> Words(const std::string& command) {
  std::vector<std::string> words;
  std::string cur;
  char quote = 0;
  bool any = false;
  for (char c : command) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        cur += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      any = true;
    } else if (c == ' ' || c == '\t') {
      if (any || !cur.empty()) words.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) words.push_back(cur);
  return words;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct FileState {
  std::string path;
  bool existed = false;
  Json json = Json::object();
  std::string original;  // the text as read
};

Result<FileState> ReadJsonFile(const std::string& path) {
  FileState f;
  f.path = path;
  std::error_code ec;
  if (!fs::exists(path, ec)) return f;
  f.existed = true;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  f.original = ss.str();
  if (f.original.find_first_not_of(" \t\r\n") == std::string::npos) return f;  // empty: {}
  f.json = Json::parse(f.original, nullptr, /*allow_exceptions=*/false);
  if (f.json.is_discarded()) {
    return Status::InvalidArgument("'" + path + "' is not valid JSON; fix or move it, then run again (nothing was written)");
  }
  if (!f.json.is_object()) {
    return Status::InvalidArgument("'" + path + "' is not a JSON object; nothing was written");
  }
  return f;
}

// Replaces `path` with `text` atomically (temporary file + rename), keeping
// its mode (0644 for a new file) and creating its directory.
Status ReplaceFile(const std::string& path, const std::string& text) {
  std::error_code ec;
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) return Status::IoError("cannot create '" + p.parent_path().string() + "': " + ec.message());
  const std::string tmp = path + ".msp-tmp";
  mode_t mode = 0644;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError("cannot write '" + tmp + "'");
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return Status::IoError("cannot write '" + tmp + "'");
    }
  }
  ::chmod(tmp.c_str(), mode);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    fs::remove(tmp, ec);
    return Status::IoError("cannot replace '" + path + "': " + std::strerror(e));
  }
  return Status::Ok();
}

std::string JsonText(const Json& json) { return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

Status WriteJsonFile(const FileState& f) { return ReplaceFile(f.path, JsonText(f.json)); }

struct WantedHook {
  std::string event;
  std::string matcher;  // empty: none
  std::string command;
  int timeout_s;
};

// Removes msp's commands from `hooks[event]`; returns how many were removed.
// Groups left with no hooks by this are removed, then an empty event array.
size_t RemoveMspHooks(Json& hooks, const std::string& event) {
  if (!hooks.is_object() || !hooks.contains(event) || !hooks[event].is_array()) return 0;
  size_t removed = 0;
  Json& groups = hooks[event];
  for (size_t g = groups.size(); g-- > 0;) {
    Json& group = groups[g];
    if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) continue;
    Json& list = group["hooks"];
    const size_t before = list.size();
    for (size_t i = list.size(); i-- > 0;) {
      const Json& h = list[i];
      if (h.is_object() && h.contains("command") && h["command"].is_string() &&
          IsMspHookCommand(h["command"].get<std::string>())) {
        list.erase(i);
      }
    }
    removed += before - list.size();
    if (before != list.size() && list.empty()) groups.erase(g);
  }
  if (removed > 0 && groups.empty()) hooks.erase(event);
  return removed;
}

bool IsMspMcpEntry(const Json& entry) {
  if (!entry.is_object() || !entry.contains("command") || !entry["command"].is_string()) return false;
  const std::string base = Basename(entry["command"].get<std::string>());
  if (base != "msp") return false;
  return entry.contains("args") && entry["args"].is_array() && !entry["args"].empty() &&
         entry["args"][0].is_string() && entry["args"][0].get<std::string>() == "mcp";
}

// The file git reads for a work tree's private ignore rules: <git dir>/
// info/exclude, where the git dir is <project>/.git, or the directory a
// .git file names, or, for a linked worktree, the common directory it
// shares with the main one. "" when the project is not a git work tree.
std::string ExcludeFile(const std::string& project_dir) {
  std::error_code ec;
  const fs::path dot_git = fs::path(project_dir) / ".git";
  fs::path git_dir;
  if (fs::is_directory(dot_git, ec)) {
    git_dir = dot_git;
  } else if (fs::is_regular_file(dot_git, ec)) {
    std::ifstream in(dot_git);
    std::string line;
    std::getline(in, line);
    if (line.rfind("gitdir:", 0) != 0) return "";
    const size_t start = line.find_first_not_of(" \t", 7);
    if (start == std::string::npos) return "";
    git_dir = fs::path(line.substr(start));
    if (git_dir.is_relative()) git_dir = fs::path(project_dir) / git_dir;
    if (std::ifstream common(git_dir / "commondir"); common) {
      std::string rel;
      std::getline(common, rel);
      if (!rel.empty()) git_dir = fs::path(rel).is_relative() ? git_dir / rel : fs::path(rel);
    }
  } else {
    return "";
  }
  return (git_dir.lexically_normal() / "info" / "exclude").string();
}

constexpr std::string_view kExcludeComment = "# msp's store (msp setup claude-code)";

// The hooks msp registers, in the order they are written.
std::vector<WantedHook> WantedHooks(const ClaudeSetupRequest& r) {
  std::vector<WantedHook> wanted = {
      {"UserPromptSubmit", "", r.capture_command, 10},
      {"SessionStart", "", r.msp_command + " hook session-start" + (r.keep_store_out_of_git ? " --keep-store-out-of-git" : ""),
       30},
      {"SessionEnd", "", r.msp_command + " hook session-end", 30},
  };
  if (r.post_tool_use) {
    const std::string& observe = r.observe_command.empty() ? r.capture_command : r.observe_command;
    wanted.push_back({"PostToolUse", "*", observe, 10});
    wanted.push_back({"PostToolUseFailure", "*", observe, 10});
  }
  return wanted;
}

// One matcher group holding one command hook.
Json HookGroup(const WantedHook& w) {
  Json group = Json::object();
  if (!w.matcher.empty()) group["matcher"] = w.matcher;
  group["hooks"] = Json::array({Json{{"type", "command"}, {"command", w.command}, {"timeout", w.timeout_s}}});
  return group;
}

// The MCP server's entry.
Json McpEntry(const ClaudeSetupRequest& r) {
  Json args = Json::array();
  for (const std::string& a : r.mcp_args) args.push_back(a);
  if (args.empty()) args.push_back("mcp");
  return Json{{"type", "stdio"},
              {"command", r.mcp_program.empty() ? "msp" : r.mcp_program},
              {"args", args},
              {"env", Json::object()}};
}

}  // namespace

Result<ClaudeSetupChange> KeepStoreOutOfGit(const std::string& project_dir, const std::string& store, bool remove) {
  const std::string path = ExcludeFile(project_dir);
  if (path.empty()) return ClaudeSetupChange{"", false, ""};
  std::string rule = fs::path(store).lexically_normal().generic_string();
  while (!rule.empty() && rule.back() == '/') rule.pop_back();
  rule = "/" + rule + "/";
  std::vector<std::string> lines;
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  std::vector<std::string> kept;
  bool had = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool ours = lines[i] == rule && i > 0 && lines[i - 1] == kExcludeComment;
    had = had || lines[i] == rule;
    if (ours && remove) {
      kept.pop_back();  // its comment
      continue;
    }
    kept.push_back(lines[i]);
  }
  ClaudeSetupChange c{path, false, ""};
  if (!remove && !had) {
    kept.push_back(std::string(kExcludeComment));
    kept.push_back(rule);
    c.changed = true;
    c.summary = "kept the store " + rule + " out of git";
  } else if (remove) {
    c.changed = kept.size() != lines.size();
    c.summary = c.changed ? "removed " + rule : "no msp rule";
  } else {
    c.summary = "the store " + rule + " already kept out of git";
  }
  if (!c.changed) return c;
  std::string text;
  for (const std::string& line : kept) text += line + "\n";
  MSP_RETURN_IF_ERROR(ReplaceFile(path, text));
  return c;
}


bool IsMspHookCommand(const std::string& command) {
  const std::vector<std::string> w = Words(command);
  if (w.empty()) return false;
  const std::string base = Basename(w[0]);
  if (base == "msp-capture") return true;
  if (base != "msp") return false;
  // The first word after msp that is not a flag or a flag's value.
  for (size_t i = 1; i < w.size(); ++i) {
    if (w[i] == "capture" || w[i] == "hook") return true;
    if (w[i].rfind("--", 0) == 0) {
      if (w[i].find('=') == std::string::npos) ++i;  // its value
      continue;
    }
    return false;
  }
  return false;
}

Result<std::vector<ClaudeSetupChange>> SetupClaudeCode(const ClaudeSetupRequest& r) {
  std::string settings_path, mcp_path;
  if (r.user) {
    if (r.home.empty()) return Status::InvalidArgument("user scope needs the home directory ($HOME is not set)");
    settings_path = (fs::path(r.home) / ".claude" / "settings.json").string();
    mcp_path = (fs::path(r.home) / ".claude.json").string();
  } else {
    if (r.project_dir.empty()) return Status::InvalidArgument("project scope needs the project directory");
    settings_path = (fs::path(r.project_dir) / ".claude" / "settings.json").string();
    mcp_path = (fs::path(r.project_dir) / ".mcp.json").string();
  }
  if (!r.remove && (r.capture_command.empty() || r.msp_command.empty())) {
    return Status::InvalidArgument("the commands to register are empty");
  }
  // Read and check everything first.
  MSP_ASSIGN_OR_RETURN(FileState settings, ReadJsonFile(settings_path));
  FileState mcp;
  if (r.mcp || r.remove) {
    MSP_ASSIGN_OR_RETURN(mcp, ReadJsonFile(mcp_path));
  }
  if (settings.json.contains("hooks") && !settings.json["hooks"].is_object()) {
    return Status::InvalidArgument("'" + settings_path + "': \"hooks\" is not an object; nothing was written");
  }
  if ((r.mcp || r.remove) && mcp.json.contains("mcpServers") && !mcp.json["mcpServers"].is_object()) {
    return Status::InvalidArgument("'" + mcp_path + "': \"mcpServers\" is not an object; nothing was written");
  }
  const bool foreign_mcp = mcp.json.contains("mcpServers") && mcp.json["mcpServers"].contains("msp") &&
                           !IsMspMcpEntry(mcp.json["mcpServers"]["msp"]);
  if (!r.remove && r.mcp && foreign_mcp) {
    return Status::InvalidArgument("'" + mcp_path +
                                   "' has an MCP server named \"msp\" that does not run `msp mcp`; rename or remove "
                                   "it first (nothing was written)");
  }

  std::vector<ClaudeSetupChange> changes;
  const std::vector<std::string> events = {"UserPromptSubmit", "SessionStart", "PostToolUse", "PostToolUseFailure",
                                           "SessionEnd"};
  // Hooks.
  {
    Json& hooks = settings.json["hooks"];
    if (hooks.is_null()) hooks = Json::object();
    std::string summary;
    size_t removed = 0;
    for (const std::string& e : events) removed += RemoveMspHooks(hooks, e);
    if (!r.remove) {
      for (const WantedHook& w : WantedHooks(r)) {
        if (!hooks.contains(w.event) || !hooks[w.event].is_array()) hooks[w.event] = Json::array();
        hooks[w.event].push_back(HookGroup(w));
        summary += (summary.empty() ? "" : ", ") + w.event;
      }
      summary = "hooks " + summary;
    } else {
      summary = "removed " + std::to_string(removed) + " msp hook" + (removed == 1 ? "" : "s");
    }
    if (hooks.empty()) settings.json.erase("hooks");
    ClaudeSetupChange c{settings_path, false, summary};
    // Unchanged when the result equals what was read (or nothing to remove
    // from a file that does not exist).
    Json before = settings.original.empty() ? Json::object()
                                            : Json::parse(settings.original, nullptr, /*allow_exceptions=*/false);
    c.changed = before != settings.json;
    if (c.changed && !(r.remove && !settings.existed)) MSP_RETURN_IF_ERROR(WriteJsonFile(settings));
    if (!c.changed) c.summary = r.remove ? "no msp hooks" : "hooks already registered";
    changes.push_back(c);
  }
  // The MCP server.
  if (r.mcp || r.remove) {
    ClaudeSetupChange c{mcp_path, false, ""};
    Json before = mcp.json;
    if (r.remove) {
      if (mcp.json.contains("mcpServers") && mcp.json["mcpServers"].contains("msp") && !foreign_mcp) {
        mcp.json["mcpServers"].erase("msp");
        if (mcp.json["mcpServers"].empty()) mcp.json.erase("mcpServers");
        c.summary = "removed MCP server msp";
      } else {
        c.summary = foreign_mcp ? "kept the MCP server \"msp\" (not msp's)" : "no msp MCP server";
      }
    } else {
      if (!mcp.json.contains("mcpServers")) mcp.json["mcpServers"] = Json::object();
      mcp.json["mcpServers"]["msp"] = McpEntry(r);
      c.summary = "MCP server msp";
    }
    c.changed = before != mcp.json;
    if (c.changed) MSP_RETURN_IF_ERROR(WriteJsonFile(mcp));
    if (!c.changed && !r.remove) c.summary = "MCP server msp already registered";
    changes.push_back(c);
  }
  // The store out of git.
  if (!r.user && !r.store_in_project.empty()) {
    MSP_ASSIGN_OR_RETURN(ClaudeSetupChange c, KeepStoreOutOfGit(r.project_dir, r.store_in_project, r.remove));
    if (!c.path.empty()) changes.push_back(c);
  }
  return changes;
}

namespace {

constexpr std::string_view kPluginDescription =
    "Persistent memory for Claude Code: every prompt and tool use captured, a summary when a session ends, an "
    "index of the last sessions at the start of the next, and msp's memory tools over MCP.";

// The files msp writes in a plugin directory, relative to it.
const std::vector<std::string>& PluginFiles() {
  static const std::vector<std::string> files = {".claude-plugin/plugin.json", ".claude-plugin/marketplace.json",
                                                 "hooks/hooks.json", ".mcp.json", "README.md"};
  return files;
}

std::string PluginReadme(const ClaudeSetupRequest& r) {
  std::string text =
      "# msp for Claude Code\n\n"
      "Written by `msp setup claude-code --plugin` (msp " + r.version + "). " + std::string(kPluginDescription) +
      "\n\nInstall it once for your user:\n\n"
      "```sh\n"
      "claude plugin marketplace add " + r.plugin_dir + "\n"
      "claude plugin install msp@msp\n"
      "```\n\n"
      "or try it for one session with `claude --plugin-dir " + r.plugin_dir + "`.\n\n"
      "The hooks and the MCP server run the msp named below by absolute path; after moving or upgrading msp, run "
      "`msp setup claude-code --plugin` again, then `claude plugin update msp@msp`.\n\n"
      "- MCP server: `" + (r.mcp_program.empty() ? std::string("msp") : r.mcp_program);
  for (const std::string& a : r.mcp_args) text += " " + a;
  text += "`\n";
  for (const WantedHook& w : WantedHooks(r)) text += "- " + w.event + ": `" + w.command + "`\n";
  text += "\nSee msp's docs/coding-agents.md.\n";
  return text;
}

}  // namespace

Result<std::vector<ClaudeSetupChange>> WriteClaudePlugin(const ClaudeSetupRequest& r) {
  if (r.plugin_dir.empty()) return Status::InvalidArgument("--plugin needs the plugin's directory");
  if (!r.remove && (r.capture_command.empty() || r.msp_command.empty())) {
    return Status::InvalidArgument("the commands to register are empty");
  }
  const fs::path dir(r.plugin_dir);
  const fs::path manifest = dir / ".claude-plugin" / "plugin.json";
  std::error_code ec;
  // Only an empty or missing directory, or msp's own plugin, is written.
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      return Status::InvalidArgument("'" + r.plugin_dir + "' is not a directory; nothing was written");
    }
    if (!fs::is_empty(dir, ec)) {
      Result<FileState> m = ReadJsonFile(manifest.string());
      const bool ours = m.ok() && m->existed && m->json.contains("name") && m->json["name"] == "msp";
      if (!ours) {
        return Status::InvalidArgument("'" + r.plugin_dir +
                                       "' is not empty and holds no msp plugin (.claude-plugin/plugin.json named "
                                       "\"msp\"); choose a new or empty directory (nothing was written)");
      }
    }
  }
  std::vector<ClaudeSetupChange> changes;
  if (r.remove) {
    for (const std::string& rel : PluginFiles()) {
      const fs::path f = dir / rel;
      const bool removed = fs::remove(f, ec);
      if (ec) return Status::IoError("cannot remove '" + f.string() + "': " + ec.message());
      changes.push_back({f.string(), removed, removed ? "removed" : "not there"});
    }
    for (const fs::path& d : {dir / ".claude-plugin", dir / "hooks", dir}) {
      if (fs::is_directory(d, ec) && fs::is_empty(d, ec)) fs::remove(d, ec);
    }
    return changes;
  }
  Json plugin = {{"name", "msp"},
                 {"version", r.version},
                 {"description", kPluginDescription},
                 {"author", {{"name", "msp"}}},
                 {"keywords", Json::array({"memory", "mcp", "hooks", "sessions"})}};
  Json marketplace = {{"name", "msp"},
                      {"owner", {{"name", "msp"}}},
                      {"description", "msp's Claude Code plugin, written on this machine by msp setup claude-code"},
                      {"plugins", Json::array({Json{{"name", "msp"},
                                                    {"source", "./"},
                                                    {"description", kPluginDescription},
                                                    {"version", r.version}}})}};
  Json events = Json::object();
  for (const WantedHook& w : WantedHooks(r)) {
    if (!events.contains(w.event)) events[w.event] = Json::array();
    events[w.event].push_back(HookGroup(w));
  }
  Json hooks = {{"description", "msp: prompt and tool-use capture, session summaries, the SessionStart index"},
                {"hooks", events}};
  Json mcp = {{"mcpServers", Json::object()}};
  if (r.mcp) mcp["mcpServers"]["msp"] = McpEntry(r);
  const std::vector<std::string> texts = {JsonText(plugin), JsonText(marketplace), JsonText(hooks),
                                          JsonText(mcp), PluginReadme(r)};
  for (size_t i = 0; i < texts.size(); ++i) {
    const fs::path f = dir / PluginFiles()[i];
    std::string before;
    if (std::ifstream in(f, std::ios::binary); in) {
      std::stringstream ss;
      ss << in.rdbuf();
      before = ss.str();
    }
    ClaudeSetupChange c{f.string(), before != texts[i], ""};
    if (c.changed) MSP_RETURN_IF_ERROR(ReplaceFile(f.string(), texts[i]));
    c.summary = c.changed ? "written" : "unchanged";
    changes.push_back(c);
  }
  return changes;
}

}  // namespace msp
