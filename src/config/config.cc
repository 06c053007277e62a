// The loader that applies defaults, TOML, environment and flags in that order,
// through the settings table (settings_table.h).
#include "config/config.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <variant>

#include <toml++/toml.h>

#include "config/settings_table.h"
#include "util/hash.h"
#include "util/text.h"
#include "util/utf8.h"

extern char** environ;

namespace msp {
namespace {

using config_table::Field;
using config_table::Setting;
using config_table::Table;
using config_table::Value;

// Environment variables msp reads that are not settings (SettingsHelp
// lists them): the module overrides of util/module.h's ModuleSpec::env, a
// benchmark's kernel choice and the heap's page size (cli/main.cc).
constexpr std::pair<std::string_view, std::string_view> kInternalOverrides[] = {
    {"MSP_HTTP_CLIENT_MODULE", "the path of libmsp_http_client.so (the OpenAI-compatible clients)"},
    {"MSP_SERVE_MODULE", "the path of libmsp_serve.so (msp serve)"},
    {"MSP_INGEST_MODULE", "the path of libmsp_ingest_formats.so (msp ingest: PDF, DOCX, Markdown and HTML)"},
    {"MSP_POSTGRES_MODULE", "the path of libmsp_postgres.so (store.backend = postgres)"},
    {"MSP_NATIVE_EMBED_MODULE", "the path of libmsp_native_embed.so (embedder.provider = native)"},
    {"MSP_NATIVE_INT8_KERNEL", "the int8 kernel of the native embedder (scalar, avx2, avx512-vnni; benchmarks)"},
    {"MSP_HUGE_PAGES", "false: the heap on small pages only (by default, true, its first 16 MB are advised to "
                       "huge pages while the kernel has 2 MB blocks free)"},
};

const Setting* FindByKey(std::string_view key) {
  for (const Setting& s : Table()) {
    if (s.info.key == key) return &s;
  }
  return nullptr;
}

const Setting* FindByFlag(std::string_view flag) {
  for (const Setting& s : Table()) {
    if (!s.info.flag.empty() && s.info.flag == flag) return &s;
  }
  return nullptr;
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// An enum setting's values: "sqlite, postgres".
std::string ChoiceList(const Setting& s, std::string_view separator = ", ") {
  std::string list;
  for (std::string_view name : s.info.choices) list += (list.empty() ? "" : std::string(separator)) + std::string(name);
  return list;
}

std::string RangeText(const Setting& s) {
  const bool has_lo = !std::isinf(s.lo);
  const bool has_hi = !std::isinf(s.hi);
  if (has_lo && has_hi) {
    return std::string(s.lo_open ? "> " : ">= ") + FormatNumber(s.lo) + " and <= " + FormatNumber(s.hi);
  }
  if (has_lo) return std::string(s.lo_open ? "> " : ">= ") + FormatNumber(s.lo);
  if (has_hi) return "<= " + FormatNumber(s.hi);
  return "";
}

// What a value of the setting must look like: "an integer >= 0".
std::string Expected(const Setting& s) {
  switch (s.info.type) {
    case SettingType::kString: return "a string";
    case SettingType::kInt: return "an integer";
    case SettingType::kSize: return "an integer >= 0";
    case SettingType::kDouble: return "a number";
    case SettingType::kBool: return "a boolean (true or false)";
    case SettingType::kStringList: return "a list of strings";
    case SettingType::kEnum: return "one of " + ChoiceList(s);
  }
  return "a value";
}

// Range and choice checks, common to every source. Returns the problem, or "".
std::string CheckValue(const Setting& s, const Value& v) {
  if (const auto* str = std::get_if<std::string>(&v)) {
    size_t bad = 0;
    if (!IsValidUtf8(*str, &bad)) return "is not valid UTF-8 (bad byte at offset " + std::to_string(bad) + ")";
    if (s.info.type == SettingType::kEnum) {
      for (std::string_view name : s.info.choices) {
        if (name == *str) return "";
      }
      return "must be one of " + ChoiceList(s) + ", got " + Quote(*str);
    }
    if (!s.allow_empty && str->empty()) return "must not be empty";
    if (!s.choices.empty()) {
      std::string_view rest = s.choices;
      bool found = false;
      std::string list;
      while (!rest.empty()) {
        const size_t bar = rest.find('|');
        const std::string_view choice = rest.substr(0, bar);
        found = found || choice == *str;
        if (!list.empty()) list += ", ";
        list += choice;
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
      }
      if (!found) return "must be one of " + list + ", got " + Quote(*str);
    }
    return "";
  }
  if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
    for (const std::string& item : *list) {
      size_t bad = 0;
      if (!IsValidUtf8(item, &bad)) return "has an item that is not valid UTF-8";
    }
    return "";
  }
  double d = 0;
  std::string shown;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    if (s.info.type == SettingType::kSize && *i < 0) return "must be >= 0, got " + std::to_string(*i);
    if (s.info.type == SettingType::kInt &&
        (*i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max())) {
      return "is out of range, got " + std::to_string(*i);
    }
    d = static_cast<double>(*i);
    shown = std::to_string(*i);
  } else if (const auto* f = std::get_if<double>(&v)) {
    if (!std::isfinite(*f)) return "must be a finite number";
    d = *f;
    shown = FormatNumber(*f);
  } else {
    return "";
  }
  const bool below = s.lo_open ? !(d > s.lo) : !(d >= s.lo);
  if (below || d > s.hi) return "must be " + RangeText(s) + ", got " + shown;
  return "";
}

void StoreValue(const Setting& s, const Value& v, Settings& o) {
  std::visit(
      [&](auto getter) {
        auto field = getter(o);
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<decltype(field), config_table::EnumRef>) {
          const std::string& name = std::get<std::string>(v);
          for (size_t i = 0; i < field.names.size(); ++i) {
            if (field.names[i] == name) field.store(field.field, i);
          }
        } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>> ||
                      std::is_same_v<T, bool>) {
          *field = std::get<T>(v);
        } else if constexpr (std::is_same_v<T, double>) {
          *field = std::holds_alternative<double>(v) ? std::get<double>(v)
                                                     : static_cast<double>(std::get<int64_t>(v));
        } else {
          *field = static_cast<T>(std::get<int64_t>(v));
        }
      },
      s.field);
}

// The current value of a setting as text (for defaults in the help).
std::string Show(const Setting& s, Settings& o) {
  return std::visit(
      [&](auto getter) -> std::string {
        auto field = getter(o);
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<decltype(field), config_table::EnumRef>) {
          return "\"" + std::string(field.names[field.load(field.field)]) + "\"";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + *field + "\"";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string out = "[";
          for (size_t i = 0; i < field->size(); ++i) out += (i ? ", \"" : "\"") + (*field)[i] + "\"";
          return out + "]";
        } else if constexpr (std::is_same_v<T, bool>) {
          return *field ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return FormatNumber(*field);
        } else {
          return std::to_string(*field);
        }
      },
      s.field);
}

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// Parses an environment or flag string as the setting's type. Returns the
// problem in *error on failure.
std::optional<Value> ParseText(const Setting& s, const std::string& text, std::string* error) {
  auto fail = [&]() -> std::optional<Value> {
    *error = "must be " + Expected(s) + ", got " + Quote(text);
    return std::nullopt;
  };
  switch (s.info.type) {
    case SettingType::kString:
    case SettingType::kEnum: return Value(text);
    case SettingType::kInt:
    case SettingType::kSize: {
      bool out_of_range = false;
      std::optional<int64_t> v = ParseInteger(Trim(text), &out_of_range);
      if (out_of_range) {
        *error = "is out of range, got " + Quote(text);
        return std::nullopt;
      }
      if (!v) return fail();
      return Value(*v);
    }
    case SettingType::kDouble: {
      std::optional<double> v = ParseNumber(Trim(text));
      if (!v) return fail();
      return Value(*v);
    }
    case SettingType::kBool: {
      const std::optional<bool> b = BooleanWord(Trim(text));
      if (!b) return fail();
      return Value(*b);
    }
    case SettingType::kStringList: {
      std::vector<std::string> items;
      size_t start = 0;
      while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const size_t end = comma == std::string::npos ? text.size() : comma;
        std::string item = Trim(std::string_view(text).substr(start, end - start));
        if (!item.empty()) items.push_back(std::move(item));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return Value(std::move(items));
    }
  }
  return fail();
}

std::string TomlTypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::optional<Value> ParseToml(const Setting& s, const toml::node& n, std::string* error) {
  auto fail = [&]() -> std::optional<Value> {
    *error = "must be " + Expected(s) + ", got " + TomlTypeName(n);
    return std::nullopt;
  };
  switch (s.info.type) {
    case SettingType::kString:
    case SettingType::kEnum:
      if (!n.is_string()) return fail();
      return Value(*n.value<std::string>());
    case SettingType::kInt:
    case SettingType::kSize:
      if (!n.is_integer()) return fail();
      return Value(*n.value<int64_t>());
    case SettingType::kDouble:
      if (n.is_floating_point()) return Value(*n.value<double>());
      if (n.is_integer()) return Value(static_cast<double>(*n.value<int64_t>()));
      return fail();
    case SettingType::kBool:
      if (!n.is_boolean()) return fail();
      return Value(*n.value<bool>());
    case SettingType::kStringList: {
      if (!n.is_array()) return fail();
      std::vector<std::string> items;
      const toml::array& arr = *n.as_array();
      for (size_t i = 0; i < arr.size(); ++i) {
        if (!arr[i].is_string()) {
          *error = "must be a list of strings, but item " + std::to_string(i) + " is " + TomlTypeName(arr[i]);
          return std::nullopt;
        }
        items.push_back(*arr[i].value<std::string>());
      }
      return Value(std::move(items));
    }
  }
  return fail();
}

// The sections of the table ("store", "policy", ...), and the keys in one.
std::vector<std::string> SectionKeys(std::string_view section) {
  std::vector<std::string> keys;
  for (const Setting& s : Table()) {
    const std::string_view key = s.info.key;
    const size_t dot = key.find('.');
    const std::string_view sec = dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
    if (sec == section) keys.emplace_back(dot == std::string_view::npos ? key : key.substr(dot + 1));
  }
  return keys;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

bool IsSection(std::string_view name) {
  return !name.empty() && !SectionKeys(name).empty();
}

// What toml++ 3.3 does not check itself, found by fuzz/toml_config_fuzz: a
// table header whose key starts with anything but a key character or a
// quote ("[?x]", "[\n") fails an assertion in its parser (an abort, or
// undefined behaviour where assertions are off), as do control characters
// there; and a non-ASCII character where it looks for white space (after a
// key or value, after a line-ending backslash) reaches an "unreachable"
// point of its Unicode tables (U+0485 does). All are invalid TOML: refused
// here, before toml++ reads the text.
// A header is a '[' that starts a statement: at the start of a line, outside
// a multi-line string and outside an array or inline table spanning lines.
Status CheckTomlText(const std::string& doc, const std::string& path) {
  size_t line = 1, column = 0;
  int depth = 0;              // open '[' / '{' of a value
  char string_quote = 0;      // inside a string: its quote
  bool multi_line = false;    // ... a multi-line one
  bool comment = false;
  bool line_start = true;     // only white space so far on this line
  auto error = [&](const std::string& what) {
    return Status::InvalidArgument(path + " line " + std::to_string(line) + ", column " + std::to_string(column) +
                                   ": invalid TOML: " + what);
  };
  auto is_key_start = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '"' || c == '\'';
  };
  for (size_t i = 0; i < doc.size(); ++i) {
    const char c = doc[i];
    const auto u = static_cast<unsigned char>(c);
    ++column;
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "U+%04X", u);
      return error(std::string("control character ") + hex + " (only tab and line ends are allowed)");
    }
    if (c == '\n') {
      ++line;
      column = 0;
      comment = false;
      line_start = true;
      if (!multi_line) string_quote = 0;
      continue;
    }
    if (comment) continue;
    if (string_quote != 0) {
      if (string_quote == '"' && c == '\\') {
        // A backslash ending a line of a multi-line string trims the white
        // space after it, where toml++ must not meet a non-ASCII character.
        size_t j = i + 1;
        while (multi_line && j < doc.size() && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '\r' || doc[j] == '\n')) ++j;
        if (j > i + 1 && j < doc.size() && static_cast<unsigned char>(doc[j]) >= 0x80) {
          return error("a non-ASCII character right after a line-ending backslash");
        }
        if (j == i + 1) ++i;  // an escaped character
        continue;
      }
      if (c != string_quote) continue;
      if (!multi_line) {
        string_quote = 0;
      } else if (doc.compare(i, 3, std::string(3, string_quote)) == 0) {
        string_quote = 0;
        multi_line = false;
        i += 2;
        column += 2;
      }
      continue;
    }
    if (u >= 0x80) return error("a non-ASCII character outside a string or comment");
    const bool was_line_start = line_start;
    if (c != ' ' && c != '\t' && c != '\r') line_start = false;
    if (c == '[' && was_line_start && depth == 0) {
      size_t j = i + 1;
      if (j < doc.size() && doc[j] == '[') ++j;
      while (j < doc.size() && (doc[j] == ' ' || doc[j] == '\t')) ++j;
      if (j < doc.size() && doc[j] != ']' && !is_key_start(doc[j])) {
        column += j - i;
        return error("a table header's name must start with a letter, digit, '_', '-' or a quote");
      }
      continue;
    }
    switch (c) {
      case '#': comment = true; break;
      case '[': case '{': ++depth; break;
      case ']': case '}': if (depth > 0) --depth; break;
      case '"': case '\'':
        string_quote = c;
        multi_line = doc.compare(i, 3, std::string(3, c)) == 0;
        if (multi_line) {
          i += 2;
          column += 2;
        }
        break;
      default: break;
    }
  }
  return Status::Ok();
}

class Loader {
 public:
  explicit Loader(const ConfigInput& input) : input_(input) {}

  Result<LoadedConfig> Load() {
    MSP_ASSIGN_OR_RETURN(std::string path, FindFile());
    if (!path.empty()) MSP_RETURN_IF_ERROR(ApplyFile(path));
    MSP_RETURN_IF_ERROR(ApplyEnv());
    MSP_RETURN_IF_ERROR(ApplyFlags());
    MSP_RETURN_IF_ERROR(CheckCrossRules());
    StoreOptions& store = loaded_.options.store;
    store.data_dir = ResolveDataDir(store.data_dir, store.data_dir_base);
    // A native model named without a '/' that `msp model pull` put in
    // <data_dir>/models is that directory (docs/embeddings.md).
    EmbedderOptions& embedder = loaded_.options.embedder;
    if (embedder.provider == EmbedderProvider::kNative && !embedder.model.empty() && embedder.model.find('/') == std::string::npos) {
      const std::filesystem::path pulled = std::filesystem::path(store.data_dir) / "models" / embedder.model;
      std::error_code ec;
      if (embedder.model.front() != '.' && std::filesystem::is_directory(pulled, ec)) embedder.model = pulled.string();
    }
    return std::move(loaded_);
  }

 private:
  // --config, else MSP_CONFIG, else <data_dir>/msp.toml if present.
  Result<std::string> FindFile() {
    auto must_exist = [](const std::string& path, const std::string& from) -> Result<std::string> {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        return Status::NotFound("config file " + Quote(path) + " (from " + from + ") does not exist");
      }
      return path;
    };
    if (!input_.config_path.empty()) return must_exist(input_.config_path, "--config");
    if (auto it = input_.env.find("MSP_CONFIG"); it != input_.env.end() && !it->second.empty()) {
      return must_exist(it->second, "MSP_CONFIG");
    }
    // data_dir (and what it is relative to) as the flags, then the
    // environment, then the default give it.
    std::string data_dir = Options().store.data_dir;
    std::string base = Options().store.data_dir_base;
    if (auto it = input_.env.find("MSP_DATA_DIR"); it != input_.env.end() && !it->second.empty()) {
      data_dir = it->second;
    }
    if (auto it = input_.env.find("MSP_DATA_DIR_BASE"); it != input_.env.end() && !it->second.empty()) {
      base = it->second;
    }
    for (const auto& [flag, value] : input_.flags) {
      if (flag == "--data-dir" && !value.empty()) data_dir = value;
      if (flag == "--data-dir-base" && !value.empty()) base = value;
    }
    const std::string candidate = (std::filesystem::path(ResolveDataDir(data_dir, base)) / "msp.toml").string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    return std::string();
  }

  Status ApplyFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return Status::IoError("cannot read config file " + Quote(path) + ": " + std::strerror(errno));
    }
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string doc = buf.str();
    MSP_RETURN_IF_ERROR(CheckTomlText(doc, path));
    toml::table root;
    try {
      root = toml::parse(doc, path);
    } catch (const toml::parse_error& e) {
      return Status::InvalidArgument(path + " line " + std::to_string(e.source().begin.line) + ", column " +
                                     std::to_string(e.source().begin.column) +
                                     ": invalid TOML: " + std::string(e.description()));
    } catch (const std::exception& e) {
      return Status::InvalidArgument(path + ": invalid TOML: " + e.what());
    }
    loaded_.config_file = path;
    return ApplyTable(root, "", path);
  }

  Status ApplyTable(const toml::table& table, const std::string& section, const std::string& path) {
    for (auto&& [k, node] : table) {
      const std::string name = std::string(k.str());
      const std::string key = section.empty() ? name : section + "." + name;
      const std::string at = path + " line " + std::to_string(node.source().begin.line);
      if (const Setting* s = FindByKey(key)) {
        std::string error;
        std::optional<Value> v = ParseToml(*s, node, &error);
        if (v) error = CheckValue(*s, *v);
        if (!error.empty()) return Status::InvalidArgument(at + ": " + key + " " + error);
        StoreValue(*s, *v, loaded_.options);
        loaded_.origins[key] = SettingOrigin{SettingSource::kFile, at};
        continue;
      }
      if (section.empty() && node.is_table() && IsSection(name)) {
        MSP_RETURN_IF_ERROR(ApplyTable(*node.as_table(), name, path));
        continue;
      }
      if (section.empty() && node.is_table()) {
        std::vector<std::string> sections;
        for (const Setting& s : Table()) {
          const std::string_view sk = s.info.key;
          const size_t dot = sk.find('.');
          if (dot == std::string_view::npos) continue;
          const std::string sec(sk.substr(0, dot));
          if (sections.empty() || sections.back() != sec) sections.push_back(sec);
        }
        return Status::InvalidArgument(at + ": unknown section [" + key + "]; known sections are " +
                                       Join(sections) + " (see `msp help config`)");
      }
      return Status::InvalidArgument(at + ": unknown setting " + Quote(key) + "; known " +
                                     (section.empty() ? std::string("top-level settings") : "settings in [" + section + "]") +
                                     " are " + Join(SectionKeys(section)) + " (see `msp help config`)");
    }
    return Status::Ok();
  }

  Status ApplyEnv() {
    for (const Setting& s : Table()) {
      auto it = input_.env.find(std::string(s.info.env));
      if (it == input_.env.end()) continue;
      std::string error;
      std::optional<Value> v = ParseText(s, it->second, &error);
      if (v) error = CheckValue(s, *v);
      if (!error.empty()) {
        return Status::InvalidArgument("environment variable " + std::string(s.info.env) + " (" +
                                       std::string(s.info.key) + ") " + error);
      }
      StoreValue(s, *v, loaded_.options);
      loaded_.origins[std::string(s.info.key)] = SettingOrigin{SettingSource::kEnv, std::string(s.info.env)};
    }
    return Status::Ok();
  }

  Status ApplyFlags() {
    for (const auto& [flag, text] : input_.flags) {
      const Setting* s = FindByFlag(flag);
      if (s == nullptr) return Status::InvalidArgument("unknown setting flag " + Quote(flag));
      std::string error;
      std::optional<Value> v = ParseText(*s, text, &error);
      if (v) error = CheckValue(*s, *v);
      if (!error.empty()) return Status::InvalidArgument(flag + " " + error);
      StoreValue(*s, *v, loaded_.options);
      loaded_.origins[std::string(s->info.key)] = SettingOrigin{SettingSource::kFlag, flag};
    }
    return Status::Ok();
  }

  // "policy.ttl_min_days (30, from /x/msp.toml line 3)".
  std::string Described(std::string_view key) {
    const Setting* s = FindByKey(key);
    return std::string(key) + " (" + Show(*s, loaded_.options) + ", from " + loaded_.OriginOf(key).where + ")";
  }

  Status CheckCrossRules() {
    const WritePolicyOptions& p = loaded_.options.policy;
    if (p.ttl_min_days > p.ttl_max_days) {
      return Status::InvalidArgument(Described("policy.ttl_min_days") + " is greater than " +
                                     Described("policy.ttl_max_days"));
    }
    if (p.default_ttl_days != 0 && (p.default_ttl_days < p.ttl_min_days || p.default_ttl_days > p.ttl_max_days)) {
      return Status::InvalidArgument(Described("policy.default_ttl_days") + " must be 0 or between " +
                                     Described("policy.ttl_min_days") + " and " + Described("policy.ttl_max_days"));
    }
    const MissionOptions& m = loaded_.options.mission;
    if (m.degraded_mode != "auto" && m.degraded_mode != "degraded" && m.degraded_mode != "normal") {
      return Status::InvalidArgument(Described("mission.degraded_mode") + " must be auto, degraded or normal");
    }
    const RetrievalOptions& r = loaded_.options.retrieval;
    if (r.lexical_weight == 0 && r.vector_weight == 0) {
      return Status::InvalidArgument(Described("retrieval.lexical_weight") + " and " +
                                     Described("retrieval.vector_weight") + " may not both be 0");
    }
    // The key's value is never shown: only where it came from.
    const StoreOptions& st = loaded_.options.store;
    auto named = [this](std::string_view key) {
      return std::string(key) + " (from " + loaded_.OriginOf(key).where + ")";
    };
    if (!st.encryption_key_file.empty() && !st.encryption_key.empty()) {
      return Status::InvalidArgument(named("store.encryption_key_file") + " and " + named("store.encryption_key") +
                                     " are both set; set one");
    }
    if (st.backend == StoreBackend::kPostgres && (!st.encryption_key_file.empty() || !st.encryption_key.empty())) {
      return Status::InvalidArgument(
          "encryption at rest is for the sqlite store: with store.backend = postgres it is the database "
          "server's job (an encrypted volume, docs/encryption.md); unset " +
          named(st.encryption_key_file.empty() ? "store.encryption_key" : "store.encryption_key_file"));
    }
    return Status::Ok();
  }

  const ConfigInput& input_;
  LoadedConfig loaded_;
};

}  // namespace

std::optional<int64_t> ParseInteger(std::string_view s, bool* out_of_range) {
  if (out_of_range != nullptr) *out_of_range = false;
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec == std::errc::result_out_of_range && ptr == end && out_of_range != nullptr) *out_of_range = true;
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<double> ParseNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string text(s);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string FormatNumber(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (std::fabs(d) < 1e15 && d == std::floor(d)) return std::to_string(static_cast<int64_t>(d));
  std::ostringstream os;
  os << d;
  return os.str();
}

std::string_view SettingTypeName(SettingType t) {
  switch (t) {
    case SettingType::kString: return "string";
    case SettingType::kInt: return "integer";
    case SettingType::kSize: return "size";
    case SettingType::kDouble: return "number";
    case SettingType::kBool: return "boolean";
    case SettingType::kStringList: return "list of strings";
    case SettingType::kEnum: return "choice";
  }
  return "unknown";
}

std::vector<SettingInfo> AllSettings() {
  std::vector<SettingInfo> out;
  for (const Setting& s : Table()) out.push_back(s.info);
  return out;
}

bool IsSettingFlag(std::string_view flag) { return FindByFlag(flag) != nullptr; }

std::string AnswerSettingsDigest(const Settings& options) {
  // The faces' own settings, and the directory (the socket names it).
  static constexpr std::string_view kFaceOnly[] = {"server.", "mcp.", "hooks.", "capture.", "orchestrate.",
                                                   "agent.", "ingest.", "prompts.", "actor", "store.data_dir"};
  // The table's accessors take a Settings&; they are only read here.
  Settings& settings = const_cast<Settings&>(options);
  uint64_t h = kFnv1a64OffsetBasis;
  for (const Setting& s : Table()) {
    const std::string_view key = s.info.key;
    bool face_only = false;
    for (std::string_view prefix : kFaceOnly) face_only = face_only || key.substr(0, prefix.size()) == prefix;
    if (face_only) continue;
    std::string text(key);
    text += '=';
    std::visit(
        [&](auto get) {
          if constexpr (std::is_same_v<decltype(get(settings)), config_table::EnumRef>) {
            const config_table::EnumRef ref = get(settings);
            text += ref.names[ref.load(ref.field)];
          } else if constexpr (std::is_same_v<std::decay_t<decltype(*get(settings))>, std::string>) {
            text += *get(settings);
          } else if constexpr (std::is_same_v<std::decay_t<decltype(*get(settings))>, std::vector<std::string>>) {
            for (const std::string& item : *get(settings)) text += item + '\x1f';
          } else if constexpr (std::is_same_v<std::decay_t<decltype(*get(settings))>, double>) {
            char buf[40];  // the shortest text that reads back as the same double
            text.append(buf, std::to_chars(buf, buf + sizeof buf, *get(settings)).ptr);
          } else {
            text += std::to_string(*get(settings));
          }
        },
        s.field);
    text += '\n';
    h = Fnv1a64(text, h);
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    if (entry.substr(0, 4) != "MSP_" && entry.substr(0, eq) != "OPENAI_API_KEY") continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

const SettingOrigin& LoadedConfig::OriginOf(std::string_view key) const {
  static const SettingOrigin kDefaultOrigin{};
  auto it = origins.find(key);
  return it == origins.end() ? kDefaultOrigin : it->second;
}

std::string RepositoryRoot(const std::string& from) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(from, ec);
  if (ec) return "";
  for (dir = dir.lexically_normal();; dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", ec)) return dir.string();  // a folder, or a worktree's file
    if (!dir.has_relative_path()) return "";                // reached the root
  }
}

std::string ResolveDataDir(const std::string& data_dir, const std::string& base, const std::string& cwd) {
  if (base != "repository" || data_dir.empty() || std::filesystem::path(data_dir).is_absolute()) return data_dir;
  std::error_code ec;
  const std::string here = cwd.empty() ? std::filesystem::current_path(ec).string() : cwd;
  const std::string root = RepositoryRoot(here);
  if (root.empty()) return data_dir;
  return (std::filesystem::path(root) / data_dir).lexically_normal().string();
}

Result<LoadedConfig> LoadConfig(const ConfigInput& input) { return Loader(input).Load(); }

std::string SettingsHelp() {
  Settings defaults;
  std::ostringstream out;
  out << "Configuration, lowest to highest precedence:\n"
         "  built-in default < TOML file < MSP_* environment variable < command-line flag\n"
         "The TOML file is --config PATH, else $MSP_CONFIG, else <data_dir>/msp.toml when it exists.\n"
         "A key \"section.name\" is written in TOML as `name = value` under `[section]`.\n"
         "In the environment and in flags, booleans are true/false and lists are comma-separated.\n\n";
  for (const Setting& s : Table()) {
    out << s.info.key << "  (" << SettingTypeName(s.info.type)
        << (s.info.type == SettingType::kEnum ? ": " + ChoiceList(s, " | ") : std::string()) << ", default "
        << Show(s, defaults) << ")\n"
        << "    env " << s.info.env
        << (s.info.flag.empty() ? std::string("   no flag") : "   flag " + std::string(s.info.flag) + " VALUE") << "\n"
        << "    " << s.info.description << "\n";
  }
  out << "\nNot settings: variables that override where msp finds its own parts, for tests, packaging and "
         "benchmarks (read where the part is loaded, also in a program using the library):\n";
  for (const auto& [variable, what] : kInternalOverrides) out << "  " << variable << "  " << what << "\n";
  return out.str();
}

}  // namespace msp
