// Small helpers that build the JSON Schemas of msp's tools, so each tool's
// inputSchema and outputSchema read like a declaration.
#ifndef MSP_MCP_SCHEMA_BUILDER_H_
#define MSP_MCP_SCHEMA_BUILDER_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace msp::mcp::schema {

using nlohmann::json;

inline json String(std::string_view description) {
  return json{{"type", "string"}, {"description", std::string(description)}};
}
inline json NonEmptyString(std::string_view description) {
  return json{{"type", "string"}, {"minLength", 1}, {"description", std::string(description)}};
}
inline json Integer(std::string_view description, int64_t lo, int64_t hi) {
  return json{{"type", "integer"}, {"minimum", lo}, {"maximum", hi}, {"description", std::string(description)}};
}
inline json Number(std::string_view description, double lo, double hi) {
  return json{{"type", "number"}, {"minimum", lo}, {"maximum", hi}, {"description", std::string(description)}};
}
inline json Boolean(std::string_view description) {
  return json{{"type", "boolean"}, {"description", std::string(description)}};
}
inline json Enum(std::string_view description, const std::vector<std::string>& names) {
  return json{{"type", "string"}, {"enum", names}, {"description", std::string(description)}};
}
inline json ArrayOf(json items, std::string_view description = {}) {
  json a = {{"type", "array"}, {"items", std::move(items)}};
  if (!description.empty()) a["description"] = std::string(description);
  return a;
}
inline json AnyObject(std::string_view description) {
  return json{{"type", "object"}, {"description", std::string(description)}};
}
// A string, or null when unset.
inline json OptionalString(std::string_view description) {
  return json{{"type", json::array({"string", "null"})}, {"description", std::string(description)}};
}

// An object with `properties`, of which `required` must be present; no
// other fields when `closed`.
inline json Object(std::initializer_list<std::pair<const std::string, json>> properties,
                   std::vector<std::string> required = {}, bool closed = true) {
  json o = {{"type", "object"}, {"properties", json::object()}};
  for (const auto& [name, s] : properties) o["properties"][name] = s;
  if (!required.empty()) o["required"] = std::move(required);
  if (closed) o["additionalProperties"] = false;
  return o;
}

}  // namespace msp::mcp::schema

#endif  // MSP_MCP_SCHEMA_BUILDER_H_
