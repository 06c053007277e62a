// Starting a resident server from a command (resident_start.h).
#include "cli/resident_start.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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

// The background server's command line and environment: the data
// directory as this command resolved it, the same configuration file and
// setting flags (so that it answers with this command's settings; secrets
// as variables), the idle time.
struct ServerLaunch {
  std::vector<std::string> args;
  std::vector<std::string> env;  // NAME=VALUE
};

ServerLaunch LaunchOf(const Invocation& inv) {
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
  return ServerLaunch{std::move(args), std::move(env)};
}

// Starts `args` as a session of its own: standard input, output and error
// /dev/null (the server opens its log once it holds the socket, so that one
// started in a race it loses writes nothing there), no descriptor of this
// process's but those, no signal blocked. Returns its pid, or -1.
pid_t SpawnDetached(const ServerLaunch& launch) {
  const std::vector<std::string>& args = launch.args;
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&files) != 0) return -1;
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&files);
    return -1;
  }
  sigset_t none;
  sigemptyset(&none);
  bool ok = posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0) == 0 &&
            posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0) == 0 &&
            posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0) == 0 &&
            posix_spawn_file_actions_addclosefrom_np(&files, 3) == 0 &&
            posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK) == 0 &&
            posix_spawnattr_setsigmask(&attr, &none) == 0;
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // Named in `ps` by the file the program was started from.
  char named[4096];
  const ssize_t n = readlink(args[0].c_str(), named, sizeof(named) - 1);
  if (n > 0) {
    named[n] = '\0';
    argv[0] = named;
  }
  std::vector<char*> envp;
  for (const std::string& e : launch.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  if (ok && posix_spawn(&pid, args[0].c_str(), &files, &attr, argv.data(), envp.data()) != 0) pid = -1;
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  return pid;
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
  const pid_t pid = SpawnDetached(LaunchOf(inv));
  if (inv.flags.Has("--timing")) {
    if (pid > 0) {
      *inv.err << "timing: started a resident server (pid " << pid << ", msp serve --local-only) for the next commands on "
               << local::SocketPath(inv.config.options.store.data_dir) << "\n";
    } else {
      *inv.err << "timing: could not start a resident server\n";
    }
  }
}

}  // namespace msp
