// A child process with its standard error on a pipe, for the tests and
// benchmarks that run `msp serve` (or another long-lived msp) as a real
// process: spawn it, read its stderr until it says what they wait for (the
// "listening on http://127.0.0.1:PORT" line), stop it. Header-only, so the
// benchmarks use it without linking the test support library.
#ifndef MSP_TESTS_SUPPORT_CHILD_PROCESS_H_
#define MSP_TESTS_SUPPORT_CHILD_PROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace msp::testing {

// This process's environment without the MSP_* settings, so a child reads
// only its flags (a null-terminated list of pointers into environ).
inline std::vector<char*> EnvironmentWithoutMsp() {
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).substr(0, 4) != "MSP_") env.push_back(*e);
  }
  env.push_back(nullptr);
  return env;
}

struct ChildProcess {
  pid_t pid = -1;   // -1: it could not be started
  int err_fd = -1;  // the read end of its stderr
  std::string err;  // what ReadStderrUntil has read so far
};

// Starts argv[0] with `argv`, stdin and stdout on /dev/null and stderr on a
// pipe; `envp` null-terminated (nullptr: EnvironmentWithoutMsp()).
inline ChildProcess SpawnWithStderr(std::vector<std::string> argv, char* const* envp = nullptr) {
  ChildProcess child;
  if (argv.empty()) return child;
  int fds[2];
  if (pipe(fds) != 0) return child;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> cargs;
  for (std::string& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::vector<char*> env;
  if (envp == nullptr) {
    env = EnvironmentWithoutMsp();
    envp = env.data();
  }
  if (posix_spawn(&child.pid, argv[0].c_str(), &actions, nullptr, cargs.data(), envp) != 0) child.pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  child.err_fd = fds[0];
  return child;
}

// Appends the child's stderr to child.err until done(child.err), the pipe
// closes or `limit` passes (a guard against a hung child, not a timing
// assertion). Returns done(child.err).
inline bool ReadStderrUntil(ChildProcess& child, const std::function<bool(const std::string&)>& done,
                            std::chrono::seconds limit = std::chrono::seconds(120)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done(child.err) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{child.err_fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(child.err_fd, buf, sizeof(buf));
    if (n <= 0) break;
    child.err.append(buf, static_cast<size_t>(n));
  }
  return done(child.err);
}

// Reads stderr until `msp serve` says where it listens; its port, or 0 when
// it exited or never said so (child.err then says why).
inline int WaitForListening(ChildProcess& child) {
  static const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+))");
  std::smatch m;
  if (!ReadStderrUntil(child, [&](const std::string& t) { return std::regex_search(t, m, listening); })) return 0;
  std::regex_search(child.err, m, listening);
  return std::stoi(m[1].str());
}

// Waits for the child; its exit code, 128 + the signal that ended it, or -1.
inline int WaitExit(ChildProcess& child) {
  int status = 0;
  if (child.pid <= 0 || waitpid(child.pid, &status, 0) != child.pid) return -1;
  child.pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// SIGTERM, then waits and closes the pipe; the exit code as WaitExit.
inline int Stop(ChildProcess& child) {
  if (child.pid <= 0) return -1;
  kill(child.pid, SIGTERM);
  const int code = WaitExit(child);
  if (child.err_fd >= 0) close(child.err_fd);
  child.err_fd = -1;
  return code;
}

}  // namespace msp::testing

#endif  // MSP_TESTS_SUPPORT_CHILD_PROCESS_H_
