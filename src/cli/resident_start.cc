// Starting a resident server from a command (resident_start.h).
#include "cli/resident_start.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "local/local_socket.h"
#include "util/detached.h"
#include "util/owned_fd.h"

extern char** environ;

namespace msp {
namespace {

// The least time between two starts on one data directory.
constexpr int kStartGapSeconds = 10;

std::string& ResidentProgram() {
  static std::string* program = new std::string();  // never taken apart at exit
  return *program;
}

// Whether the setting with TOML key `key` holds a secret: given as a
// flag, it reaches the server through the setting's environment variable
// rather than its command line, which `ps` shows to every user.
bool SecretSetting(std::string_view key) {
  return key == "store.encryption_key" || key.ends_with("api_key") || key.ends_with("api_keys");
}

// The background server (started detached, util/detached.h, with its
// messages in its log once it holds the socket, so that one started in a
// race it loses writes nothing there): its command line and environment,
// the data directory as this command resolved it, the same configuration
// file and setting flags (so that it answers with this command's settings;
// secrets as variables), the idle time.
DetachedProcess ServerOf(const Invocation& inv) {
  const Settings& options = inv.config.options;
  std::error_code ec;
  const std::filesystem::path data_dir = std::filesystem::absolute(options.store.data_dir, ec);
  std::vector<std::string> args = {ResidentProgram(),
                                   "serve",
                                   "--local-only",
                                   "--idle-exit",
                                   std::to_string(options.server.resident_idle_seconds),
                                   "--data-dir",
                                   ec ? options.store.data_dir : data_dir.string()};
  if (inv.flags.Has("--config")) {
    const std::filesystem::path config = std::filesystem::absolute(inv.flags.Get("--config"), ec);
    args.push_back("--config");
    args.push_back(ec ? inv.flags.Get("--config") : config.string());
  }
  // (Starting a server is rare: the settings table is read only then.)
  std::vector<std::pair<std::string_view, std::string_view>> secret_flags;  // flag, its variable
  for (const SettingInfo& s : AllSettings()) {
    if (SecretSetting(s.key) && !s.flag.empty() && !s.env.empty()) secret_flags.emplace_back(s.flag, s.env);
  }
  std::vector<std::pair<std::string, std::string>> secrets;  // variable, value
  for (const auto& [flag, value] : inv.flags.setting_flags) {
    if (flag == "--data-dir") continue;
    auto secret = std::find_if(secret_flags.begin(), secret_flags.end(), [&](const auto& f) { return f.first == flag; });
    if (secret != secret_flags.end()) {
      // A list given flag by flag is one comma-separated variable.
      auto given = std::find_if(secrets.begin(), secrets.end(), [&](const auto& v) { return v.first == secret->second; });
      if (given == secrets.end()) {
        secrets.emplace_back(std::string(secret->second), value);
      } else {
        given->second += "," + value;
      }
      continue;
    }
    args.push_back(flag);
    args.push_back(value);
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(secrets.begin(), secrets.end(), [&](const auto& v) {
      return entry.size() > v.first.size() && entry.substr(0, v.first.size()) == v.first && entry[v.first.size()] == '=';
    });
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : secrets) env.push_back(name + "=" + value);
  DetachedProcess server;
  server.program = ResidentProgram();
  // Named in `ps` by the file the program was started from.
  std::error_code named_ec;
  const std::filesystem::path named = std::filesystem::read_symlink(server.program, named_ec);
  if (!named_ec) args[0] = named.string();
  server.argv = std::move(args);
  server.env = std::move(env);
  return server;
}

}  // namespace

std::string ResidentLogPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "msp-resident.log").string();
}

void SetResidentProgram(std::string path) { ResidentProgram() = std::move(path); }

void MaybeStartResident(Invocation& inv, MemoryLayer& engine) {
  const ServerOptions& so = inv.config.options.server;
  if (!inv.resident_absent || ResidentProgram().empty() || !so.local_socket || so.resident_autostart <= 0) return;
  Result<int64_t> seq = engine.LastChangeSeq();
  if (!seq.ok() || *seq < so.resident_autostart) return;
  // At most one start every kStartGap, marked by the time of the socket's
  // lock file (a running server holds its lock; it does not touch the
  // time): one that cannot start (a read-only data directory, a server
  // module missing) is not started again by every command.
  const std::string lock = local::LockPath(local::SocketPath(inv.config.options.store.data_dir));
  struct stat st;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  if (stat(lock.c_str(), &st) == 0) {
    const double age = static_cast<double>(now.tv_sec - st.st_mtim.tv_sec) +
                       static_cast<double>(now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
    if (age >= 0 && age < kStartGapSeconds) {
      if (inv.flags.Has("--timing")) {
        *inv.err << "timing: not starting a resident server: one was started " << Fixed(age, 1)
                 << " s ago (at most one every " << kStartGapSeconds << " s)\n";
      }
      return;
    }
  }
  if (OwnedFd mark(open(lock.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)); mark.valid()) {
    (void)futimens(mark.get(), nullptr);
  }
  const Result<pid_t> pid = SpawnDetached(ServerOf(inv));
  if (inv.flags.Has("--timing")) {
    if (pid.ok()) {
      *inv.err << "timing: started a resident server (pid " << *pid << ", msp serve --local-only) for the next commands on "
               << local::SocketPath(inv.config.options.store.data_dir) << "\n";
    } else {
      *inv.err << "timing: could not start a resident server: " << pid.status().message() << "\n";
    }
  }
}

}  // namespace msp
