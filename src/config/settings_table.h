// The settings table's rows (internal to src/config): each setting msp reads,
// declared once in settings_table.cc with its TOML key, environment variable,
// flag, type, bounds, description and the Options field it fills; config.cc
// loads defaults, TOML, environment and flags through it.
#ifndef MSP_CONFIG_SETTINGS_TABLE_H_
#define MSP_CONFIG_SETTINGS_TABLE_H_

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"
#include "msp/options.h"

namespace msp {
namespace config_table {

// An enum field (options.h's enum classes) seen through its value's index
// into the enum's names (kStoreBackendNames ...).
struct EnumRef {
  std::span<const std::string_view> names;
  void* field;
  size_t (*load)(const void* field);
  void (*store)(void* field, size_t index);
};

// `field` with the names of its enum's values. REQUIRES: names[i] is the name of E(i).
template <typename E, size_t N>
EnumRef Ref(E* field, const std::array<std::string_view, N>& names) {
  return EnumRef{names, field, [](const void* f) { return static_cast<size_t>(*static_cast<const E*>(f)); },
                 [](void* f, size_t i) { *static_cast<E*>(f) = static_cast<E>(i); }};
}

// Pointers to the Settings field a setting fills; the alternative also gives
// the setting's type.
using Field = std::variant<std::string* (*)(Settings&), int* (*)(Settings&), size_t* (*)(Settings&),
                           double* (*)(Settings&), bool* (*)(Settings&), std::vector<std::string>* (*)(Settings&),
                           EnumRef (*)(Settings&)>;

// A parsed value, before it is range-checked and stored.
using Value = std::variant<std::string, int64_t, double, bool, std::vector<std::string>>;

struct Setting {
  SettingInfo info;
  Field field;
  // Numeric bounds, inclusive unless lo_open.
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  // Strings: allowed values separated by '|' (empty: any), and whether "" is
  // allowed. (Enums: their names, EnumRef.)
  std::string_view choices;
  bool allow_empty = true;
};

// Every setting, in the order `msp help config` prints them.
const std::vector<Setting>& Table();

}  // namespace config_table
}  // namespace msp

#endif  // MSP_CONFIG_SETTINGS_TABLE_H_
