// The capture hook command, shared by `msp capture` and the lean
// `msp-capture` (which links only this, the flag parser, the settings and
// msp_capture: no engine, no libgit2).
#include "cli/capture_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <filesystem>
#include <iostream>
#include <iterator>

#include "cli/flags.h"
#include "coding/capture.h"
#include "coding/observation.h"
#include "config/config.h"
#include "util/time.h"

#ifdef MSP_CAPTURE_DIRECT
#include "coding/prompt_store.h"
#endif

namespace msp {
namespace {

namespace fs = std::filesystem;

// Where failures go when the settings cannot be read.
std::string FallbackLog() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state != '\0') {
    return std::string(state) + "/msp/capture.log";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.local/state/msp/capture.log";
  }
  return "/tmp/msp-capture.log";
}

}  // namespace

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

std::string PromptRepositoryPath(const Settings& options) {
  const CodingOptions& c = options.coding;
  return AbsolutePath(c.capture_repository.empty() ? options.store.data_dir + "/prompts.git" : c.capture_repository);
}

std::string CaptureLogPath(const Settings& options) {
  const CodingOptions& c = options.coding;
  return AbsolutePath(c.capture_log.empty() ? options.store.data_dir + "/capture.log" : c.capture_log);
}

std::string SelfExecutable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

int RunCaptureCommand(const std::vector<std::string>& args, std::istream& in, const std::string& importer,
                      bool lean) {
  std::string log = FallbackLog();
  auto fail = [&](const Status& s) {
    AppendToLog(log, "capture", s.ToString());
    return 0;
  };
  Result<ParsedFlags> flags = ParseFlags(args,
                                         {{"--config", "PATH", "TOML configuration file"},
                                          {"--tenant", "NAME", "the observations' tenant"},
                                          {"--user", "ID", "the observations' user (default $USER)"},
                                          {"--mission", "ID", "the observations' mission"}},
                                         true);
  if (!flags.ok()) return fail(flags.status());
  ConfigInput input;
  input.config_path = flags->Get("--config");
  input.env = ProcessEnvironment();
  input.flags = flags->setting_flags;
  Result<LoadedConfig> config = LoadConfig(input);
  if (!config.ok()) return fail(config.status());
  const CodingOptions& coding = config->options.coding;
  const std::string data_dir = AbsolutePath(config->options.store.data_dir);
  const std::string repository = PromptRepositoryPath(config->options);
  log = CaptureLogPath(config->options);

  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<HookInput> hook = ParseHookInput(text);
  if (!hook.ok()) return fail(hook.status());
  std::vector<std::string> import_argv = {importer,          "prompts",          "import", "--log-failures",
                                          "--data-dir",      data_dir,           "--capture-repository", repository,
                                          "--capture-log-file", log};
  if (flags->Has("--config")) {
    import_argv.push_back("--config");
    import_argv.push_back(AbsolutePath(flags->Get("--config")));
  }
  // PostToolUse / PostToolUseFailure: a tool observation, always spooled
  // (capture.mode is about prompts). Off only when hooks.post_tool_use is
  // set to false; registering the hook is what turns it on.
  if (hook->hook_event_name == "PostToolUse" || hook->hook_event_name == "PostToolUseFailure") {
    if (!coding.post_tool_use && config->OriginOf("hooks.post_tool_use").source != SettingSource::kDefault) {
      return 0;
    }
    Result<Observation> o = ObservationFromHook(*hook, WallClockMs(), coding.tool_max_chars);
    if (!o.ok()) return fail(o.status());
    ObservationScope scope;
    scope.tenant = flags->Get("--tenant", "default");
    scope.user = flags->Get("--user");
    if (scope.user.empty()) {
      const char* user = std::getenv("USER");
      scope.user = user == nullptr ? "" : user;
    }
    scope.mission = flags->Get("--mission");
    Result<std::string> spooled = SpoolObservation(*o, scope, repository);
    if (!spooled.ok()) return fail(spooled.status());
    if (Status s = SpawnImporter(import_argv); !s.ok()) return fail(s);
    return 0;
  }

  if (coding.capture_mode == "direct") {
    if (lean) {
      // The lean binary has no libgit2: hand the hook to the full msp, the
      // payload read above on its standard input again (an unlinked file).
      std::FILE* payload = std::tmpfile();
      if (payload == nullptr || std::fwrite(text.data(), 1, text.size(), payload) != text.size() ||
          std::fflush(payload) != 0 || ::lseek(::fileno(payload), 0, SEEK_SET) != 0 ||
          ::dup2(::fileno(payload), 0) < 0) {
        return fail(Status::IoError("cannot hand the hook to '" + importer + "' for capture.mode = direct"));
      }
      std::vector<std::string> argv = {importer, "capture"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> c;
      for (std::string& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      ::execvp(c[0], c.data());
      return fail(Status::IoError("cannot run '" + importer + "' for capture.mode = direct"));
    }
#ifdef MSP_CAPTURE_DIRECT
    Result<CapturedPrompt> r = CaptureDirect(text, repository, WallClockMs());
    if (!r.ok()) return fail(r.status());
    return 0;
#endif
  }
  Result<CapturedPrompt> prompt = PromptFromHook(*hook, WallClockMs());
  if (!prompt.ok()) return fail(prompt.status());
  Result<std::string> spooled = SpoolPrompt(*prompt, repository);
  if (!spooled.ok()) return fail(spooled.status());
  if (Status s = SpawnImporter(import_argv); !s.ok()) return fail(s);
  return 0;
}

}  // namespace msp
