// ValidateJsonSchema: a recursive walk over the schema subset in the header.
#include "codec/json_schema.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "codec/json_reader.h"

namespace msp {
namespace {

using json = nlohmann::json;

std::string Dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string Short(const json& v) {
  std::string s = Dump(v);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

bool HasType(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  return false;
}

Status Fail(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": " + what);
}

Status BadSchema(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("schema at " + path + ": " + what);
}

// A non-negative integer keyword's value; -1 when absent.
Result<int64_t> Count(const json& schema, const char* keyword, const std::string& path) {
  auto it = schema.find(keyword);
  if (it == schema.end()) return int64_t{-1};
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return BadSchema(path, std::string("'") + keyword + "' must be a non-negative integer");
  }
  return it->get<int64_t>();
}

Status Validate(const json& schema, const json& v, const std::string& path) {
  if (schema.is_boolean()) {
    return schema.get<bool>() ? Status::Ok() : Fail(path, "no value is allowed here");
  }
  if (!schema.is_object()) return BadSchema(path, "a schema must be an object");

  if (auto t = schema.find("type"); t != schema.end()) {
    std::vector<std::string> types;
    if (t->is_string()) {
      types.push_back(t->get<std::string>());
    } else if (t->is_array()) {
      for (const auto& x : *t) {
        if (!x.is_string()) return BadSchema(path, "'type' entries must be strings");
        types.push_back(x.get<std::string>());
      }
    } else {
      return BadSchema(path, "'type' must be a string or an array");
    }
    bool any = false;
    for (const auto& type : types) any = any || HasType(v, type);
    if (!any) {
      std::string want;
      for (const auto& type : types) want += (want.empty() ? "" : " or ") + type;
      // The value too when it is short, so a model can see what to repair.
      const bool scalar = !v.is_object() && !v.is_array() && !v.is_null();
      return Fail(path, "expected " + want + ", got " + JsonTypeName(v) + (scalar ? " " + Short(v) : ""));
    }
  }

  if (auto e = schema.find("enum"); e != schema.end()) {
    if (!e->is_array()) return BadSchema(path, "'enum' must be an array");
    bool found = false;
    std::string allowed;
    for (const auto& x : *e) {
      found = found || x == v;
      allowed += (allowed.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : Dump(x));
    }
    if (!found) return Fail(path, Short(v) + " is not allowed; allowed: " + allowed);
  }

  if (v.is_number()) {
    const double d = v.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end()) {
      if (!m->is_number()) return BadSchema(path, "'minimum' must be a number");
      if (d < m->get<double>()) return Fail(path, Short(v) + " is below the minimum " + Dump(*m));
    }
    if (auto m = schema.find("maximum"); m != schema.end()) {
      if (!m->is_number()) return BadSchema(path, "'maximum' must be a number");
      if (d > m->get<double>()) return Fail(path, Short(v) + " is above the maximum " + Dump(*m));
    }
  }

  if (v.is_string()) {
    // Length in code points, as JSON Schema counts it.
    int64_t length = 0;
    for (unsigned char c : v.get_ref<const std::string&>()) length += (c & 0xC0) != 0x80;
    MSP_ASSIGN_OR_RETURN(int64_t min, Count(schema, "minLength", path));
    MSP_ASSIGN_OR_RETURN(int64_t max, Count(schema, "maxLength", path));
    if (min >= 0 && length < min) return Fail(path, "must have at least " + std::to_string(min) + " characters");
    if (max >= 0 && length > max) return Fail(path, "must have at most " + std::to_string(max) + " characters");
  }

  if (v.is_array()) {
    MSP_ASSIGN_OR_RETURN(int64_t min, Count(schema, "minItems", path));
    MSP_ASSIGN_OR_RETURN(int64_t max, Count(schema, "maxItems", path));
    const auto size = static_cast<int64_t>(v.size());
    if (min >= 0 && size < min) return Fail(path, "must have at least " + std::to_string(min) + " items");
    if (max >= 0 && size > max) return Fail(path, "must have at most " + std::to_string(max) + " items");
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        MSP_RETURN_IF_ERROR(Validate(*items, v[i], path + "[" + std::to_string(i) + "]"));
      }
    }
  }

  if (v.is_object()) {
    const json* properties = nullptr;
    if (auto p = schema.find("properties"); p != schema.end()) {
      if (!p->is_object()) return BadSchema(path, "'properties' must be an object");
      properties = &*p;
    }
    if (auto r = schema.find("required"); r != schema.end()) {
      if (!r->is_array()) return BadSchema(path, "'required' must be an array");
      for (const auto& name : *r) {
        if (!name.is_string()) return BadSchema(path, "'required' entries must be strings");
        if (!v.contains(name.get<std::string>())) return Status::InvalidArgument(path + "." + name.get<std::string>() + " is required");
      }
    }
    const json* extra = nullptr;
    if (auto a = schema.find("additionalProperties"); a != schema.end()) {
      if (!a->is_boolean() && !a->is_object()) {
        return BadSchema(path, "'additionalProperties' must be a boolean or a schema");
      }
      extra = &*a;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string child = path + "." + it.key();
      if (properties != nullptr) {
        if (auto p = properties->find(it.key()); p != properties->end()) {
          MSP_RETURN_IF_ERROR(Validate(*p, it.value(), child));
          continue;
        }
      }
      if (extra == nullptr) continue;
      if (extra->is_boolean() && !extra->get<bool>()) {
        std::string known;
        if (properties != nullptr) {
          for (auto p = properties->begin(); p != properties->end(); ++p) known += (known.empty() ? "" : ", ") + p.key();
        }
        return Status::InvalidArgument(child + " is not a known field" +
                                       (known.empty() ? std::string() : "; known: " + known));
      }
      MSP_RETURN_IF_ERROR(Validate(*extra, it.value(), child));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateJsonSchema(const nlohmann::json& schema, const nlohmann::json& value, std::string_view root) {
  return Validate(schema, value, std::string(root));
}

}  // namespace msp
