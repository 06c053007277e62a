// A resident server started by a command (docs/cli.md, "The resident
// path"): a read-only command that found no server on <data_dir>/msp.sock
// answers itself and, on a store that has seen server.resident_autostart
// changes or more, starts `msp serve --local-only --idle-exit
// server.resident_idle_seconds` in the background, so that the commands
// after it are answered warm instead of each opening the store. The
// server is a session of its own with its messages in
// <data_dir>/msp-resident.log; it stops after the idle time, when the data
// directory or its socket goes, or when a user's `msp serve` takes the
// socket over.
#ifndef MSP_CLI_RESIDENT_START_H_
#define MSP_CLI_RESIDENT_START_H_

#include <string>

#include "cli/cli.h"
#include "msp/memory.h"

namespace msp {

// Where a server started with --idle-exit writes its messages once it holds
// the socket (replacing the file): <data_dir>/msp-resident.log.
std::string ResidentLogPath(const std::string& data_dir);

// The program a command runs as the background server: main.cc names the
// msp binary. Unset (a test calling RunCli in its own process), commands
// start none.
void SetResidentProgram(std::string path);

// After `inv` answered itself on `engine`: starts the server when
// ResidentAnswer found none listening (inv.resident_absent), the settings
// allow it and the store's change sequence has reached
// server.resident_autostart. Never fails the command: a server that cannot
// be started leaves the next command to answer itself too. With --timing,
// says so on stderr.
void MaybeStartResident(Invocation& inv, MemoryLayer& engine);

}  // namespace msp

#endif  // MSP_CLI_RESIDENT_START_H_
