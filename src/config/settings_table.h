// The settings table's rows (internal to src/config): each setting msp reads,
// declared once in settings_table.cc with its TOML key, environment variable,
// flag, type, bounds, description and the Options field it fills; config.cc
// loads defaults, TOML, environment and flags through it.
#ifndef MSP_CONFIG_SETTINGS_TABLE_H_
#define MSP_CONFIG_SETTINGS_TABLE_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"
#include "msp/options.h"

namespace msp {
namespace config_table {

// Pointers to the Options field a setting fills; the alternative also gives
// the setting's type.
using Field = std::variant<std::string* (*)(Settings&), int* (*)(Settings&), size_t* (*)(Settings&),
                           double* (*)(Settings&), bool* (*)(Settings&), std::vector<std::string>* (*)(Settings&)>;

// A parsed value, before it is range-checked and stored.
using Value = std::variant<std::string, int64_t, double, bool, std::vector<std::string>>;

struct Setting {
  SettingInfo info;
  Field field;
  // Numeric bounds, inclusive unless lo_open.
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  // Strings: allowed values separated by '|' (empty: any), and whether "" is allowed.
  std::string_view choices;
  bool allow_empty = true;
};

// Every setting, in the order `msp help config` prints them.
const std::vector<Setting>& Table();

}  // namespace config_table
}  // namespace msp

#endif  // MSP_CONFIG_SETTINGS_TABLE_H_
