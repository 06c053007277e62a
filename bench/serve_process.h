// `msp serve` as a child process for the benchmarks over sockets: started
// with the given arguments (which should include --port 0), it is ready once
// it prints the address it listens on; its standard error is drained so it
// never blocks; SIGTERM stops it when the object goes. The spawning and the
// wait are the tests' (tests/support/child_process.h).
#ifndef MSP_BENCH_SERVE_PROCESS_H_
#define MSP_BENCH_SERVE_PROCESS_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.h"

namespace msp::bench {

class ServeProcess {
 public:
  // Runs `msp serve ARGS...` (with this process's environment); exits the
  // benchmark with a message when it cannot start.
  ServeProcess(const std::string& msp, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {msp, "serve"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_ = testing::SpawnWithStderr(std::move(argv), environ);
    if (child_.pid <= 0) Fail("cannot start " + msp);
    port_ = testing::WaitForListening(child_);
    if (port_ == 0) Fail("msp serve did not start: " + child_.err);
    drain_ = std::thread([fd = child_.err_fd] {
      char buf[4096];
      while (read(fd, buf, sizeof(buf)) > 0) {
      }
    });
  }
  ~ServeProcess() {
    if (child_.pid > 0) kill(child_.pid, SIGTERM);
    drain_.join();  // the pipe closes when the server exits
    testing::Stop(child_);
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  int port() const { return port_; }

 private:
  [[noreturn]] static void Fail(const std::string& why) {
    std::fprintf(stderr, "%s\n", why.c_str());
    std::exit(1);
  }

  testing::ChildProcess child_;
  int port_ = 0;
  std::thread drain_;
};

}  // namespace msp::bench

#endif  // MSP_BENCH_SERVE_PROCESS_H_
