// The command line's one flag parser: `--flag value`, `--flag=value`,
// switches without a value, repeatable flags, `--` to end the flags, and the
// configuration setting flags of src/config/ (every one takes a value).
#ifndef MSP_CLI_FLAGS_H_
#define MSP_CLI_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "msp/status.h"

namespace msp {

struct FlagSpec {
  std::string_view name;        // "--top-k"
  std::string_view value_name;  // "K"; empty: a switch that takes no value
  std::string_view help;
  bool repeatable = false;
};

// What ParseFlags found. Flag values are kept in command-line order.
class ParsedFlags {
 public:
  std::vector<std::string> positionals;
  // Configuration setting flags ({"--data-dir", "/x"}), for LoadConfig.
  std::vector<std::pair<std::string, std::string>> setting_flags;

  bool Has(std::string_view name) const;
  // The flag's value; `fallback` when absent. REQUIRES: a non-repeatable flag.
  std::string Get(std::string_view name, std::string_view fallback = {}) const;
  // Every value of a repeatable flag, in order.
  std::vector<std::string> All(std::string_view name) const;

  // Typed values. Absent: `fallback`. Present: must parse completely and lie
  // in [min, max], else InvalidArgument naming the flag.
  Result<int64_t> GetInt(std::string_view name, int64_t fallback, int64_t min, int64_t max) const;
  Result<double> GetDouble(std::string_view name, double fallback, double min, double max) const;

  void Add(std::string name, std::string value) { values_.emplace_back(std::move(name), std::move(value)); }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

// Parses `args` against `specs`; with `accept_settings`, the configuration
// setting flags (IsSettingFlag) are accepted too. Errors (InvalidArgument)
// name the flag: an unknown flag, a missing value, a value given to a switch,
// a non-repeatable flag given twice, a flag or flag value that is not valid
// UTF-8. Positionals are returned unchecked (the caller names them).
// `-h` and `--help` are returned as the switch "--help".
Result<ParsedFlags> ParseFlags(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs,
                               bool accept_settings);

}  // namespace msp

#endif  // MSP_CLI_FLAGS_H_
