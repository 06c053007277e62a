// Starting a process that outlives its caller: the capture hook's spool
// importer (src/coding), the resident server a command starts
// (src/cli/resident_start.h).
#ifndef MSP_UTIL_DETACHED_H_
#define MSP_UTIL_DETACHED_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "msp/status.h"

namespace msp {

struct DetachedProcess {
  std::vector<std::string> argv;  // argv[0] as `ps` shows it
  // The file to run; empty: argv[0] (a path, or a name looked up on PATH).
  std::string program;
  // NAME=VALUE, the whole environment; empty: this process's.
  std::vector<std::string> env;
  bool idle_priority = false;  // scheduled SCHED_IDLE (housekeeping)
};

// Starts `p` detached: its own session, standard streams on /dev/null, no
// other descriptor of the caller's, no signal blocked; not waited for (when
// the caller exits, init adopts it). By fork(); posix_spawn() (vfork: the
// caller waits for the child's execve) measured the same for the capture
// hook (bench/README.md, "Session 37"). Returns its pid; IoError when fork
// fails. A failed exec is not reported (the child exits 127).
Result<pid_t> SpawnDetached(const DetachedProcess& p);

}  // namespace msp

#endif  // MSP_UTIL_DETACHED_H_
