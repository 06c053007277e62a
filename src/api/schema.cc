// The request schema of an operation (see schema.h).
#include "api/schema.h"

namespace msp::api {
namespace {

using nlohmann::json;

json FieldSchema(const FieldInfo& f) {
  json s;
  switch (f.type) {
    case FieldType::kString: s = {{"type", "string"}}; break;
    case FieldType::kText: s = {{"type", "string"}, {"minLength", 1}}; break;
    case FieldType::kInt: s = {{"type", "integer"}, {"minimum", f.min_int}, {"maximum", f.max_int}}; break;
    case FieldType::kNumber: s = {{"type", "number"}, {"minimum", f.min_number}, {"maximum", f.max_number}}; break;
    case FieldType::kBool: s = {{"type", "boolean"}}; break;
    case FieldType::kTime: s = {{"type", "string"}, {"format", "date-time"}}; break;
    case FieldType::kEnum: s = {{"type", "string"}, {"enum", f.values}}; break;
    case FieldType::kStrings: s = {{"type", "array"}, {"items", {{"type", "string"}}}}; break;
    case FieldType::kEnums: s = {{"type", "array"}, {"items", {{"type", "string"}, {"enum", f.values}}}}; break;
    case FieldType::kNamespace: {
      json parts = json::object();
      for (const char* p : {"tenant", "user", "agent", "session", "mission", "operator"}) {
        parts[p] = {{"type", "string"}};
      }
      s = {{"type", "object"}, {"properties", std::move(parts)}, {"additionalProperties", false}};
      break;
    }
    case FieldType::kObject: s = {{"type", "object"}}; break;
    case FieldType::kProvenance:
      s = {{"type", "array"},
           {"items",
            {{"type", "object"},
             {"properties",
              {{"type", {{"type", "string"}, {"minLength", 1}}},
               {"ref", {{"type", "string"}, {"minLength", 1}}},
               {"detail", {{"type", "string"}}}}},
             {"required", {"type", "ref"}},
             {"additionalProperties", false}}}};
      break;
    case FieldType::kAlternatives:
      s = {{"type", "array"},
           {"items",
            {{"type", "object"},
             {"properties",
              {{"option", {{"type", "string"}, {"minLength", 1}}}, {"reason", {{"type", "string"}, {"minLength", 1}}}}},
             {"required", {"option", "reason"}},
             {"additionalProperties", false}}}};
      break;
    case FieldType::kFiles:
      s = {{"type", "array"},
           {"items",
            {{"type", "object"},
             {"properties",
              {{"name", {{"type", "string"}, {"minLength", 1}}},
               {"text", {{"type", "string"}, {"minLength", 1}}},
               {"first_commit_at", {{"type", "string"}, {"format", "date-time"}}},
               {"last_author", {{"type", "string"}}}}},
             {"required", {"name", "text"}},
             {"additionalProperties", false}}}};
      break;
  }
  s["description"] = f.doc;
  if (!f.default_value.is_null()) s["default"] = f.default_value;
  return s;
}

json ClosedObject() {
  return {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}};
}

}  // namespace

json InputSchema(const OperationInfo& info) {
  json schema = ClosedObject();
  json required = json::array();
  for (const FieldInfo& f : info.fields) {
    if (f.group.empty()) {
      schema["properties"][f.name] = FieldSchema(f);
      if (f.required) required.push_back(f.name);
      continue;
    }
    json& group = schema["properties"][f.group];
    if (group.is_null()) group = ClosedObject();
    group["properties"][f.name] = FieldSchema(f);
    if (f.required) group["required"].push_back(f.name);
  }
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

json TypedSchema(const char* type, std::string description) {
  return json{{"type", type}, {"description", std::move(description)}};
}

json StringsSchema(std::string description) {
  return json{{"type", "array"}, {"items", {{"type", "string"}}}, {"description", std::move(description)}};
}

json TimeOrNullSchema(std::string description) {
  return json{{"type", {"string", "null"}}, {"description", std::move(description)}};
}

}  // namespace msp::api
