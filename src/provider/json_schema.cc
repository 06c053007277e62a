// ValidateJsonSchema: a recursive walk over the schema subset in the header.
#include "provider/json_schema.h"

#include <string>

namespace msp {
namespace {

using json = nlohmann::json;

std::string Short(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

bool HasType(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    if (value.is_number_float()) {
      double d = value.get<double>();
      return d == static_cast<double>(static_cast<long long>(d));
    }
    return false;
  }
  return false;
}

Status Fail(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": " + what);
}

Status BadSchema(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("schema at " + path + ": " + what);
}

Status Validate(const json& schema, const json& value, const std::string& path) {
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
    for (const auto& type : types) any = any || HasType(value, type);
    if (!any) {
      std::string want;
      for (const auto& type : types) want += (want.empty() ? "" : " or ") + type;
      return Fail(path, "expected " + want + ", got " + Short(value));
    }
  }

  if (auto e = schema.find("enum"); e != schema.end()) {
    if (!e->is_array()) return BadSchema(path, "'enum' must be an array");
    bool found = false;
    for (const auto& x : *e) found = found || x == value;
    if (!found) return Fail(path, Short(value) + " is not one of " + Short(*e));
  }

  if (value.is_number()) {
    const double d = value.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end()) {
      if (!m->is_number()) return BadSchema(path, "'minimum' must be a number");
      if (d < m->get<double>()) return Fail(path, Short(value) + " is below the minimum " + Short(*m));
    }
    if (auto m = schema.find("maximum"); m != schema.end()) {
      if (!m->is_number()) return BadSchema(path, "'maximum' must be a number");
      if (d > m->get<double>()) return Fail(path, Short(value) + " is above the maximum " + Short(*m));
    }
  }

  if (value.is_string()) {
    // Length in code points, as JSON Schema counts it.
    size_t length = 0;
    for (unsigned char c : value.get_ref<const std::string&>()) length += (c & 0xC0) != 0x80;
    if (auto m = schema.find("minLength"); m != schema.end() && m->is_number_unsigned() &&
                                            length < m->get<size_t>()) {
      return Fail(path, "string is shorter than " + Short(*m) + " characters");
    }
    if (auto m = schema.find("maxLength"); m != schema.end() && m->is_number_unsigned() &&
                                            length > m->get<size_t>()) {
      return Fail(path, "string is longer than " + Short(*m) + " characters");
    }
  }

  if (value.is_object()) {
    const json* properties = nullptr;
    if (auto p = schema.find("properties"); p != schema.end()) {
      if (!p->is_object()) return BadSchema(path, "'properties' must be an object");
      properties = &*p;
    }
    if (auto r = schema.find("required"); r != schema.end()) {
      if (!r->is_array()) return BadSchema(path, "'required' must be an array");
      for (const auto& name : *r) {
        if (!name.is_string()) return BadSchema(path, "'required' entries must be strings");
        if (!value.contains(name.get<std::string>())) {
          return Fail(path, "missing required property '" + name.get<std::string>() + "'");
        }
      }
    }
    bool closed = false;
    if (auto a = schema.find("additionalProperties"); a != schema.end()) {
      if (a->is_boolean()) {
        closed = !a->get<bool>();
      } else if (!a->is_object()) {
        return BadSchema(path, "'additionalProperties' must be a boolean or a schema");
      }
    }
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string child = path + "." + it.key();
      if (properties != nullptr && properties->contains(it.key())) {
        MSP_RETURN_IF_ERROR(Validate((*properties)[it.key()], it.value(), child));
      } else if (closed) {
        return Fail(path, "unexpected property '" + it.key() + "'");
      } else if (auto a = schema.find("additionalProperties"); a != schema.end() && a->is_object()) {
        MSP_RETURN_IF_ERROR(Validate(*a, it.value(), child));
      }
    }
  }

  if (value.is_array()) {
    if (auto m = schema.find("minItems"); m != schema.end() && m->is_number_unsigned() &&
                                           value.size() < m->get<size_t>()) {
      return Fail(path, "array has fewer than " + Short(*m) + " items");
    }
    if (auto m = schema.find("maxItems"); m != schema.end() && m->is_number_unsigned() &&
                                           value.size() > m->get<size_t>()) {
      return Fail(path, "array has more than " + Short(*m) + " items");
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < value.size(); ++i) {
        MSP_RETURN_IF_ERROR(Validate(*items, value[i], path + "[" + std::to_string(i) + "]"));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateJsonSchema(const nlohmann::json& schema, const nlohmann::json& value) {
  return Validate(schema, value, "$");
}

}  // namespace msp
