// Configuration loading: fills msp::Settings (settings.h) once from, in rising precedence,
// the built-in defaults, a TOML file, MSP_* environment variables and
// command-line flags.
//
// One table (settings_table.cc) declares every setting exactly once: its TOML key,
// environment variable, flag, type, description, bounds and the Options field
// it sets. `msp help config` prints that table (SettingsHelp()).
//
// The TOML file is --config PATH, else $MSP_CONFIG, else <data_dir>/msp.toml
// when that exists (data_dir as given by flag, environment or default).
// Every error is InvalidArgument (NotFound for a named file that does not
// exist) and names the key, variable or flag, and the file and line for TOML.
#ifndef MSP_CONFIG_CONFIG_H_
#define MSP_CONFIG_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/settings.h"
#include "msp/status.h"

namespace msp {

enum class SettingType { kString, kInt, kSize, kDouble, kBool, kStringList, kEnum };

// "string", "integer", "size", "number", "boolean", "list of strings", "choice".
std::string_view SettingTypeName(SettingType t);

// The public face of one row of the settings table.
struct SettingInfo {
  std::string_view key;          // TOML key: "policy.min_chars"
  std::string_view env;          // "MSP_POLICY_MIN_CHARS"
  std::string_view flag;         // "--policy-min-chars"
  SettingType type;
  std::string_view description;  // includes the allowed range
  std::vector<std::string_view> choices;  // kEnum: the allowed values
};

// Every setting, in table order.
std::vector<SettingInfo> AllSettings();

// True when `flag` ("--data-dir") sets a configuration value. Every such
// flag takes a value (booleans: true/false, lists: comma-separated).
bool IsSettingFlag(std::string_view flag);

// A digest of the settings that decide what a call answers: all but the
// faces' own (server.*, mcp.*, hooks.*, capture.*, orchestrate.*, agent.*,
// ingest.*, prompts.*, actor) and store.data_dir. Two processes on one data
// directory with the same digest answer a call alike: the resident path
// (src/local) hands a command's call to `msp serve` only then.
std::string AnswerSettingsDigest(const Settings& options);

// What the loader reads besides the TOML file.
struct ConfigInput {
  // From --config; empty: $MSP_CONFIG, then <data_dir>/msp.toml if present.
  std::string config_path;
  // Environment variables; only the table's names (MSP_*, OPENAI_API_KEY) and MSP_CONFIG are read.
  std::map<std::string, std::string> env;
  // Setting flags with their values, in command-line order: {"--data-dir", "/x"}.
  std::vector<std::pair<std::string, std::string>> flags;
};

// The top of the git work tree holding `from` (the nearest directory at or
// above it with a .git folder or file); "" when there is none.
std::string RepositoryRoot(const std::string& from);

// store.data_dir as a process uses it: with `base` "repository" a relative
// `data_dir` is taken from RepositoryRoot(cwd) (cwd empty: the current
// directory), and stays relative to the current directory outside a
// repository; otherwise `data_dir` as it is.
std::string ResolveDataDir(const std::string& data_dir, const std::string& base, const std::string& cwd = "");

// The MSP_* variables and OPENAI_API_KEY of this process's environment.
std::map<std::string, std::string> ProcessEnvironment();

enum class SettingSource { kDefault, kFile, kEnv, kFlag };

struct SettingOrigin {
  SettingSource source = SettingSource::kDefault;
  std::string where;  // "default", "/x/msp.toml line 3", "MSP_DATA_DIR", "--data-dir"
};

struct LoadedConfig {
  Settings options;
  std::string config_file;  // the TOML file that was read; empty if none
  // By TOML key, the settings a file, the environment or a flag set (the
  // others are at their default: OriginOf answers for them).
  std::map<std::string, SettingOrigin, std::less<>> origins;

  // Where the setting with TOML key `key` got its value. REQUIRES: a table key.
  const SettingOrigin& OriginOf(std::string_view key) const;
};

// Loads and validates the configuration. Strings from the environment and
// flags are parsed as the setting's type: integers and numbers in decimal,
// booleans as true/false/1/0/yes/no/on/off, lists comma-separated.
// Validates each value's type and range, unknown TOML keys and sections, and
// cross-setting rules (ttl_min_days <= ttl_max_days; default_ttl_days 0 or
// within them; at least one retrieval weight > 0).
Result<LoadedConfig> LoadConfig(const ConfigInput& input);

// Whole-string decimal parsers shared by the settings and the command-line
// flags: nullopt unless all of `s` is one number. ParseInteger sets
// *out_of_range when `s` is an integer too large for int64; ParseNumber
// rejects NaN, infinities and overflow.
std::optional<int64_t> ParseInteger(std::string_view s, bool* out_of_range = nullptr);
std::optional<double> ParseNumber(std::string_view s);
// 0.25 -> "0.25", 3.0 -> "3".
std::string FormatNumber(double d);

// The settings table as text for `msp help config`: precedence, where the
// file is looked for, then per setting its key, variable, flag, type,
// default and description.
std::string SettingsHelp();

}  // namespace msp

#endif  // MSP_CONFIG_CONFIG_H_
