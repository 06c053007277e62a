// `msp serve` as a child process for the benchmarks over sockets: started
// with the given arguments (which should include --port 0), it is ready once
// it prints the address it listens on; its standard error is drained so it
// never blocks; SIGTERM stops it when the object goes.
#ifndef MSP_BENCH_SERVE_PROCESS_H_
#define MSP_BENCH_SERVE_PROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace msp::bench {

class ServeProcess {
 public:
  // Runs `msp serve ARGS...`; exits the benchmark with a message when it
  // cannot start.
  ServeProcess(const std::string& msp, const std::vector<std::string>& args) {
    int fds[2];
    if (pipe(fds) != 0) Fail("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<std::string> argv = {msp, "serve"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargs;
    for (std::string& a : argv) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    if (posix_spawn(&pid_, msp.c_str(), &actions, nullptr, cargs.data(), environ) != 0) Fail("cannot start " + msp);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    err_fd_ = fds[0];
    const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+))");
    std::string text;
    std::smatch m;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!std::regex_search(text, m, listening)) {
      if (std::chrono::steady_clock::now() > deadline) Fail("msp serve did not start: " + text);
      pollfd p{err_fd_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(err_fd_, buf, sizeof(buf));
      if (n <= 0) Fail("msp serve exited: " + text);
      text.append(buf, static_cast<size_t>(n));
    }
    port_ = std::stoi(m[1].str());
    drain_ = std::thread([fd = err_fd_] {
      char buf[4096];
      while (read(fd, buf, sizeof(buf)) > 0) {
      }
    });
  }
  ~ServeProcess() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    drain_.join();
    close(err_fd_);
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  int port() const { return port_; }

 private:
  [[noreturn]] static void Fail(const std::string& why) {
    std::fprintf(stderr, "%s\n", why.c_str());
    std::exit(1);
  }

  pid_t pid_ = -1;
  int err_fd_ = -1;
  int port_ = 0;
  std::thread drain_;
};

}  // namespace msp::bench

#endif  // MSP_BENCH_SERVE_PROCESS_H_
