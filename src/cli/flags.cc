// The flag parser.
#include "cli/flags.h"

#include <optional>

#include "config/config.h"
#include "util/utf8.h"

namespace msp {
namespace {

const FlagSpec* FindSpec(const std::vector<FlagSpec>& specs, std::string_view name) {
  for (const FlagSpec& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

bool ParsedFlags::Has(std::string_view name) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return true;
  }
  return false;
}

std::string ParsedFlags::Get(std::string_view name, std::string_view fallback) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return v;
  }
  return std::string(fallback);
}

std::vector<std::string> ParsedFlags::All(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : values_) {
    if (n == name) out.push_back(v);
  }
  return out;
}

Result<int64_t> ParsedFlags::GetInt(std::string_view name, int64_t fallback, int64_t min, int64_t max) const {
  if (!Has(name)) return fallback;
  const std::string text = Get(name);
  std::optional<int64_t> v = ParseInteger(text);
  if (!v) return Status::InvalidArgument(std::string(name) + " must be an integer, got " + Quote(text));
  if (*v < min || *v > max) {
    return Status::InvalidArgument(std::string(name) + " must be between " + std::to_string(min) + " and " +
                                   std::to_string(max) + ", got " + text);
  }
  return *v;
}

Result<double> ParsedFlags::GetDouble(std::string_view name, double fallback, double min, double max) const {
  if (!Has(name)) return fallback;
  const std::string text = Get(name);
  std::optional<double> v = ParseNumber(text);
  if (!v) return Status::InvalidArgument(std::string(name) + " must be a number, got " + Quote(text));
  if (*v < min || *v > max) {
    return Status::InvalidArgument(std::string(name) + " must be between " + FormatNumber(min) + " and " +
                                   FormatNumber(max) + ", got " + text);
  }
  return *v;
}

Result<ParsedFlags> ParseFlags(const std::vector<std::string>& args, const std::vector<FlagSpec>& specs,
                               bool accept_settings) {
  ParsedFlags out;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    size_t bad = 0;
    if (flags_done || arg == "-" || arg.size() < 2 || arg[0] != '-') {
      out.positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      out.Add("--help", "");
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      return Status::InvalidArgument("unknown flag " + Quote(arg) + " (flags are spelt --name)");
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (!IsValidUtf8(name, &bad)) {
      return Status::InvalidArgument("unknown flag " + Quote(name.substr(0, bad)) + "... (not valid UTF-8)");
    }
    const bool inline_value = eq != std::string::npos;
    const FlagSpec* spec = FindSpec(specs, name);
    const bool is_setting = spec == nullptr && accept_settings && IsSettingFlag(name);
    if (spec == nullptr && !is_setting) return Status::InvalidArgument("unknown flag " + Quote(name));
    const bool takes_value = is_setting || !spec->value_name.empty();
    std::string value;
    if (!takes_value) {
      if (inline_value) return Status::InvalidArgument(name + " takes no value");
    } else if (inline_value) {
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) return Status::InvalidArgument(name + " needs a value");
      value = args[++i];
    }
    if (!IsValidUtf8(value, &bad)) {
      return Status::InvalidArgument("the value of " + name + " is not valid UTF-8 (bad byte at offset " +
                                     std::to_string(bad) + ")");
    }
    if (is_setting) {
      for (const auto& [n, v] : out.setting_flags) {
        if (n == name) return Status::InvalidArgument(name + " is given more than once");
      }
      out.setting_flags.emplace_back(name, std::move(value));
      continue;
    }
    if (!spec->repeatable && out.Has(name)) return Status::InvalidArgument(name + " is given more than once");
    out.Add(name, std::move(value));
  }
  return out;
}

}  // namespace msp
