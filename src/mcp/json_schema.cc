// The JSON Schema subset checker (see json_schema.h).
#include "mcp/json_schema.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "codec/memory_json.h"

namespace msp::mcp {
namespace {

using nlohmann::json;

std::string JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "value";
  }
}

bool IsIntegral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool HasType(const json& v, std::string_view type) {
  if (type == "string") return v.is_string();
  if (type == "integer") return IsIntegral(v);
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  return false;
}

// Characters (code points) of a valid UTF-8 string.
size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

// A non-negative integer keyword's value, or -1 when absent or malformed.
int64_t Count(const json& schema, const char* keyword) {
  auto it = schema.find(keyword);
  if (it == schema.end() || !it->is_number_integer()) return -1;
  return it->get<int64_t>();
}

std::string Short(const json& v) {
  std::string s = DumpJson(v);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

Status Check(const json& schema, const json& v, const std::string& at) {
  if (!schema.is_object()) return Status::Internal(at + ": the schema is not an object");
  if (auto t = schema.find("type"); t != schema.end()) {
    bool ok = false;
    std::string names;
    if (t->is_string()) {
      ok = HasType(v, t->get<std::string>());
      names = t->get<std::string>();
    } else if (t->is_array()) {
      for (const json& one : *t) {
        if (!one.is_string()) continue;
        ok = ok || HasType(v, one.get<std::string>());
        names += (names.empty() ? "" : " or ") + one.get<std::string>();
      }
    }
    if (!ok) return Status::InvalidArgument(at + ": expected " + names + ", got " + JsonTypeName(v));
  }
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
    bool found = false;
    std::string allowed;
    for (const json& one : *e) {
      found = found || one == v;
      allowed += (allowed.empty() ? "" : ", ") + (one.is_string() ? one.get<std::string>() : DumpJson(one));
    }
    if (!found) return Status::InvalidArgument(at + ": " + Short(v) + " is not allowed; allowed: " + allowed);
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && m->is_number() && d < m->get<double>()) {
      return Status::InvalidArgument(at + ": " + Short(v) + " is below the minimum " + DumpJson(*m));
    }
    if (auto m = schema.find("maximum"); m != schema.end() && m->is_number() && d > m->get<double>()) {
      return Status::InvalidArgument(at + ": " + Short(v) + " is above the maximum " + DumpJson(*m));
    }
  }
  if (v.is_string()) {
    const size_t n = CodePoints(v.get_ref<const std::string&>());
    if (const int64_t m = Count(schema, "minLength"); m >= 0 && static_cast<int64_t>(n) < m) {
      return Status::InvalidArgument(at + ": must have at least " + std::to_string(m) + " characters");
    }
    if (const int64_t m = Count(schema, "maxLength"); m >= 0 && static_cast<int64_t>(n) > m) {
      return Status::InvalidArgument(at + ": must have at most " + std::to_string(m) + " characters");
    }
  }
  if (v.is_array()) {
    if (const int64_t m = Count(schema, "minItems"); m >= 0 && static_cast<int64_t>(v.size()) < m) {
      return Status::InvalidArgument(at + ": must have at least " + std::to_string(m) + " items");
    }
    if (const int64_t m = Count(schema, "maxItems"); m >= 0 && static_cast<int64_t>(v.size()) > m) {
      return Status::InvalidArgument(at + ": must have at most " + std::to_string(m) + " items");
    }
    if (auto items = schema.find("items"); items != schema.end() && items->is_object()) {
      for (size_t i = 0; i < v.size(); ++i) {
        MSP_RETURN_IF_ERROR(Check(*items, v[i], at + "[" + std::to_string(i) + "]"));
      }
    }
  }
  if (v.is_object()) {
    const auto props = schema.find("properties");
    if (auto req = schema.find("required"); req != schema.end() && req->is_array()) {
      for (const json& name : *req) {
        if (name.is_string() && !v.contains(name.get<std::string>())) {
          return Status::InvalidArgument(at + "." + name.get<std::string>() + " is required");
        }
      }
    }
    const auto extra = schema.find("additionalProperties");
    for (const auto& [key, value] : v.items()) {
      const std::string here = at + "." + key;
      if (props != schema.end() && props->is_object()) {
        if (auto p = props->find(key); p != props->end()) {
          MSP_RETURN_IF_ERROR(Check(*p, value, here));
          continue;
        }
      }
      if (extra == schema.end()) continue;
      if (extra->is_boolean() && !extra->get<bool>()) {
        std::string known;
        if (props != schema.end() && props->is_object()) {
          for (const auto& [name, unused] : props->items()) known += (known.empty() ? "" : ", ") + name;
        }
        return Status::InvalidArgument(here + " is not a known field" +
                                       (known.empty() ? std::string() : "; known: " + known));
      }
      if (extra->is_object()) MSP_RETURN_IF_ERROR(Check(*extra, value, here));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateJson(const nlohmann::json& schema, const nlohmann::json& value, std::string_view root) {
  return Check(schema, value, std::string(root));
}

}  // namespace msp::mcp
