// Hook payload parsing, work-tree detection and the capture of one prompt.
#include "coding/capture.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "util/detached.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

// The first line of `path` without its newline; empty when unreadable.
std::string FirstLine(const fs::path& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// JSON text of any value; a string stays a JSON string.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Result<HookInput> ParseHookInput(std::string_view json) {
  size_t first = json.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Status::InvalidArgument("the hook's standard input is empty");
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("the hook's standard input is not JSON");
  if (!j.is_object()) return Status::InvalidArgument("the hook's standard input is not a JSON object");
  HookInput in;
  nlohmann::json other = nlohmann::json::object();
  struct Field {
    const char* key;
    std::string* out;
  };
  const Field strings[] = {{"session_id", &in.session_id},
                           {"transcript_path", &in.transcript_path},
                           {"cwd", &in.cwd},
                           {"permission_mode", &in.permission_mode},
                           {"hook_event_name", &in.hook_event_name},
                           {"prompt", &in.prompt},
                           {"source", &in.source},
                           {"tool_name", &in.tool_name},
                           {"tool_use_id", &in.tool_use_id}};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const Field& f : strings) {
      if (it.key() != f.key) continue;
      known = true;
      if (it->is_null()) break;
      if (!it->is_string()) return Status::InvalidArgument(std::string("hook field '") + f.key + "' is not a string");
      *f.out = it->get<std::string>();
    }
    if (known) continue;
    if (it.key() == "tool_input") {
      in.tool_input = Dump(*it);
    } else if (it.key() == "tool_response") {
      in.tool_response = Dump(*it);
    } else if (it.key() == "error") {
      // PostToolUseFailure: a message (any other value kept as JSON text).
      in.error = it->is_string() ? it->get<std::string>() : it->is_null() ? "" : Dump(*it);
    } else {
      other[it.key()] = *it;
    }
  }
  if (!other.empty()) in.other_json = Dump(other);
  return in;
}

WorkTree FindWorkTree(const std::string& dir) {
  WorkTree wt;
  if (dir.empty()) return wt;
  std::error_code ec;
  fs::path p = fs::path(dir).lexically_normal();
  if (p.is_relative()) p = fs::absolute(p, ec);
  for (; !p.empty(); p = p.parent_path()) {
    const fs::path dotgit = p / ".git";
    fs::path gitdir;
    if (fs::is_directory(dotgit, ec)) {
      gitdir = dotgit;
    } else if (fs::is_regular_file(dotgit, ec)) {
      // A linked work tree or submodule: "gitdir: <path>".
      const std::string line = FirstLine(dotgit);
      if (line.rfind("gitdir: ", 0) != 0) return wt;
      gitdir = fs::path(line.substr(8));
      if (gitdir.is_relative()) gitdir = (p / gitdir).lexically_normal();
    }
    if (!gitdir.empty()) {
      wt.top_level = p.string();
      const std::string head = FirstLine(gitdir / "HEAD");
      constexpr std::string_view kHeads = "ref: refs/heads/";
      if (head.rfind(kHeads, 0) == 0) {
        wt.branch = head.substr(kHeads.size());
      } else if (head.rfind("ref: ", 0) == 0) {
        wt.branch = head.substr(5);
      } else {
        wt.head = head;
      }
      return wt;
    }
    if (p == p.root_path()) break;
  }
  return wt;
}

Result<CapturedPrompt> PromptFromHook(const HookInput& in, TimeMs now) {
  if (in.prompt.empty() && in.hook_event_name != "UserPromptSubmit") {
    return Status::InvalidArgument("the hook payload has no prompt (hook_event_name '" + in.hook_event_name + "')");
  }
  CapturedPrompt p;
  p.text = in.prompt;
  size_t bad = 0;
  if (!IsValidUtf8(p.text, &bad)) {
    return Status::InvalidArgument("the prompt is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  p.at = now;
  p.session_id = in.session_id;
  p.transcript_path = in.transcript_path;
  p.cwd = in.cwd;
  p.permission_mode = in.permission_mode;
  p.hook_event = in.hook_event_name.empty() ? "UserPromptSubmit" : in.hook_event_name;
  p.extra_json = in.other_json;
  const WorkTree wt = FindWorkTree(in.cwd);
  p.repository = wt.top_level;
  p.branch = wt.branch;
  p.head = wt.head;
  return p;
}

std::string SpoolDir(const std::string& repository) { return (fs::path(repository) / "msp-spool").string(); }

Result<std::string> WriteSpoolFile(const std::string& dir, TimeMs at, uint64_t random, const std::string& body) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create the spool '" + dir + "': " + ec.message());
  char name[64];
  std::snprintf(name, sizeof name, "%013lld-%012llx", static_cast<long long>(at),
                static_cast<unsigned long long>(random & 0xffffffffffffULL));
  const std::string tmp = dir + "/." + name + ".tmp";
  const std::string final_path = dir + "/" + name + ".json";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot write to the spool '" + dir + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < body.size()) {
    ssize_t n = ::write(fd, body.data() + done, body.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::IoError("cannot write '" + tmp + "': " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return Status::IoError("cannot write '" + final_path + "': " + std::strerror(e));
  }
  return final_path;
}

Result<std::string> SpoolPrompt(const CapturedPrompt& prompt, const std::string& repository) {
  if (repository.empty()) return Status::InvalidArgument("the prompt repository path is empty (capture.repository)");
  const uint64_t random = RandomBits();
  const std::string ref = PromptRefName(prompt.at, random);
  nlohmann::json j = {{"ref", ref}, {"text", prompt.text}, {"meta", PromptMetadataJson(prompt)}};
  const std::string body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return WriteSpoolFile(SpoolDir(repository), prompt.at, random, body);
}

Status SpawnImporter(const std::vector<std::string>& argv) {
  // SCHED_IDLE: the import is housekeeping and must not take the CPU from
  // the hook that is still exiting or from the agent (readers import the
  // spool themselves, so a late import loses nothing).
  DetachedProcess importer;
  importer.argv = argv;
  importer.idle_priority = true;
  Result<pid_t> started = SpawnDetached(importer);
  if (!started.ok()) return started.status().WithContext("the spool importer");
  return Status::Ok();
}

void AppendToLog(const std::string& log_path, std::string_view what, std::string_view message) {
  if (log_path.empty()) return;
  std::error_code ec;
  const fs::path parent = fs::path(log_path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  std::ofstream f(log_path, std::ios::app);
  if (!f) return;
  std::string line = FormatIso8601(WallClockMs()) + " " + std::string(what) + ": " + std::string(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  f << line << "\n";
}

}  // namespace msp
