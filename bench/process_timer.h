// Timing a command as a whole process, for the benchmarks that measure msp
// where hooks and scripts meet it (process_bench, start_bench): from fork to
// the end of wait4, with the child's CPU time from wait4's rusage.
#ifndef MSP_BENCH_PROCESS_TIMER_H_
#define MSP_BENCH_PROCESS_TIMER_H_

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace msp::bench {

struct ProcessSample {
  double wall_ms = 0;
  double cpu_ms = 0;  // user + system of the child
};

// Runs argv (argv[0] a path) with `input` on standard input and standard
// output discarded (standard error is left alone, so a failure shows).
// False when it could not run or did not exit 0.
inline bool TimeProcess(const std::vector<std::string>& argv, const std::string& input, ProcessSample* out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(fds[0], 0);
    close(fds[0]);
    close(fds[1]);
    std::FILE* null = std::fopen("/dev/null", "w");
    if (null != nullptr) dup2(fileno(null), 1);
    std::vector<char*> c;
    for (const std::string& a : argv) c.push_back(const_cast<char*>(a.c_str()));
    c.push_back(nullptr);
    execv(c[0], c.data());
    _exit(127);
  }
  close(fds[0]);
  const bool wrote =
      input.empty() || write(fds[1], input.data(), input.size()) == static_cast<ssize_t>(input.size());
  close(fds[1]);
  int status = 0;
  struct rusage ru {};
  if (wait4(pid, &status, 0, &ru) != pid) return false;
  out->wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out->cpu_ms = (static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)) * 1e3 +
                static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  return wrote && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace msp::bench

#endif  // MSP_BENCH_PROCESS_TIMER_H_
