// Starting a detached process (detached.h).
#include "util/detached.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace msp {

Result<pid_t> SpawnDetached(const DetachedProcess& p) {
  if (p.argv.empty()) return Status::InvalidArgument("no program to start");
  // Everything the child uses is made before fork(): between fork and exec
  // a child of a threaded process may only make system calls.
  std::vector<char*> argv;
  for (const std::string& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : p.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* program = p.program.empty() ? argv[0] : p.program.c_str();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return Status::IoError("cannot start " + p.argv[0] + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    ::setsid();
    if (p.idle_priority) {
      sched_param param{};
      param.sched_priority = 0;
      ::sched_setscheduler(0, SCHED_IDLE, &param);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      ::dup2(null_fd, 0);
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
    }
    ::close_range(3, ~0U, 0);
    if (p.env.empty()) {
      ::execvp(program, argv.data());
    } else {
      ::execvpe(program, argv.data(), envp.data());
    }
    ::_exit(127);
  }
  return pid;
}

}  // namespace msp
