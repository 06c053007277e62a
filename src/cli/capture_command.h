// `msp capture` and `msp-capture`: the UserPromptSubmit hook command. It
// prints nothing and exits 0 whatever happens; failures go to the log file
// (capture.log_file). docs/coding-agents.md.
#ifndef MSP_CLI_CAPTURE_COMMAND_H_
#define MSP_CLI_CAPTURE_COMMAND_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "config/settings.h"

namespace msp {

// Runs the hook with `args` (after the verb word: --config, setting flags).
// `importer` is the msp executable that runs `msp prompts import`
// (capture.mode = spool) and, from the lean `msp-capture` (`lean`), also
// `msp capture` when capture.mode is direct. Returns the exit code: 0.
int RunCaptureCommand(const std::vector<std::string>& args, std::istream& in, const std::string& importer,
                      bool lean);

// The path of the running executable (/proc/self/exe); empty if unknown.
std::string SelfExecutable();

// `path` made absolute and normalised (unchanged if that fails).
std::string AbsolutePath(const std::string& path);
// The prompt repository (capture.repository, default <data_dir>/prompts.git)
// and the capture log (capture.log_file, default <data_dir>/capture.log),
// both absolute: the hook, the importer and `msp prompts` agree on them.
std::string PromptRepositoryPath(const Settings& options);
std::string CaptureLogPath(const Settings& options);

}  // namespace msp

#endif  // MSP_CLI_CAPTURE_COMMAND_H_
