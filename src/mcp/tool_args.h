// Readers of tool-call arguments that several MCP tool files share: string
// lists and enum values by name, after the input schema has checked them.
#ifndef MSP_MCP_TOOL_ARGS_H_
#define MSP_MCP_TOOL_ARGS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace msp::mcp {

// The strings of args[key]; empty when the key is absent.
std::vector<std::string> StringList(const nlohmann::json& args, const char* key);

// args[key] parsed by `parse`; `fallback` when absent or not a known name.
template <typename E>
E EnumArg(const nlohmann::json& args, const char* key, E fallback, std::optional<E> (*parse)(std::string_view)) {
  if (auto it = args.find(key); it != args.end()) {
    if (std::optional<E> e = parse(it->get<std::string>())) return *e;
  }
  return fallback;
}

// The values of the names in args[key] parsed by `parse`, skipping unknown
// names; empty when the key is absent.
template <typename E>
std::vector<E> EnumList(const nlohmann::json& args, const char* key, std::optional<E> (*parse)(std::string_view)) {
  std::vector<E> out;
  for (const std::string& n : StringList(args, key)) {
    if (std::optional<E> e = parse(n)) out.push_back(*e);
  }
  return out;
}

}  // namespace msp::mcp

#endif  // MSP_MCP_TOOL_ARGS_H_
