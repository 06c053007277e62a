// JsonReader: strict reads of the fields of one JSON object, for the request
// codec of src/api (api/codec.h) and the other REST bodies
// (rest/request_json.cc, mission_routes.cc). Every error is
// InvalidArgument naming the field (with its path prefix, "memories[2].text")
// and what was expected; a number out of range names the range and the value.
#ifndef MSP_CODEC_JSON_READER_H_
#define MSP_CODEC_JSON_READER_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "msp/status.h"
#include "msp/types.h"
#include "util/time.h"

namespace msp {

inline std::string JsonTypeName(const nlohmann::json& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "number";
  return j.type_name();
}

// Reads the fields of one JSON object; `prefix` ("", "memories[2].")
// qualifies field names in errors. Absent fields and null leave the output
// untouched. `obj` must outlive the reader.
class JsonReader {
 public:
  using json = nlohmann::json;

  JsonReader(const json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  Status Object() const {
    if (obj_.is_object()) return Status::Ok();
    return Status::InvalidArgument((prefix_.empty() ? std::string("the body") : "'" + Trimmed() + "'") +
                                   " must be a JSON object, got " + JsonTypeName(obj_));
  }

  Status Known(const std::vector<std::string>& known) const {
    for (const auto& [key, value] : obj_.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        return Status::InvalidArgument("unknown field '" + prefix_ + key + "'; known fields are " + list);
      }
    }
    return Status::Ok();
  }

  bool Has(const std::string& name) const { return obj_.contains(name) && !obj_.at(name).is_null(); }

  Status String(const std::string& name, std::string* out) const {
    if (!Has(name)) return Status::Ok();
    const json& v = obj_.at(name);
    if (!v.is_string()) return Wrong(name, "a string", v);
    *out = v.get<std::string>();
    return Status::Ok();
  }

  Status Strings(const std::string& name, std::vector<std::string>* out) const {
    if (!Has(name)) return Status::Ok();
    const json& v = obj_.at(name);
    if (!v.is_array()) return Wrong(name, "an array of strings", v);
    out->clear();
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) return Wrong(name + "[" + std::to_string(i) + "]", "a string", v[i]);
      out->push_back(v[i].get<std::string>());
    }
    return Status::Ok();
  }

  template <typename I>
  Status Int(const std::string& name, I* out, int64_t lo, int64_t hi) const {
    if (!Has(name)) return Status::Ok();
    const json& v = obj_.at(name);
    if (!v.is_number_integer()) return Wrong(name, "an integer", v);
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return OutOfRange(name, lo, hi, v.dump());
    }
    const int64_t n = v.get<int64_t>();
    if (n < lo || n > hi) return OutOfRange(name, lo, hi, std::to_string(n));
    *out = static_cast<I>(n);
    return Status::Ok();
  }

  Status Double(const std::string& name, double* out, double lo, double hi) const {
    if (!Has(name)) return Status::Ok();
    const json& v = obj_.at(name);
    if (!v.is_number()) return Wrong(name, "a number", v);
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi)) {
      return Status::InvalidArgument("field '" + prefix_ + name + "' must be between " + FormatBound(lo) +
                                     " and " + FormatBound(hi) + ", got " + FormatBound(d));
    }
    *out = d;
    return Status::Ok();
  }

  Status Bool(const std::string& name, bool* out) const {
    if (!Has(name)) return Status::Ok();
    const json& v = obj_.at(name);
    if (!v.is_boolean()) return Wrong(name, "a boolean", v);
    *out = v.get<bool>();
    return Status::Ok();
  }

  Status Time(const std::string& name, TimeMs* out) const {
    std::string text;
    MSP_RETURN_IF_ERROR(String(name, &text));
    if (text.empty()) return Status::Ok();
    Result<TimeMs> t = ParseIso8601(text);
    if (!t.ok()) return Status::InvalidArgument("field '" + prefix_ + name + "': " + t.status().message());
    *out = *t;
    return Status::Ok();
  }

  // A JSON object, kept as compact text (keys sorted).
  Status ObjectText(const std::string& name, std::string* out) const {
    if (!Has(name)) return Status::Ok();
    const json& v = obj_.at(name);
    if (!v.is_object()) return Wrong(name, "an object", v);
    *out = DumpJson(v);
    return Status::Ok();
  }

  template <typename E>
  Status Enum(const std::string& name, E* out, std::optional<E> (*parse)(std::string_view),
              std::string_view (*name_of)(E)) const {
    std::string text;
    if (!Has(name)) return Status::Ok();
    MSP_RETURN_IF_ERROR(String(name, &text));
    return ParseEnum(name, text, out, parse, name_of);
  }

  template <typename E>
  Status Enums(const std::string& name, std::vector<E>* out, std::optional<E> (*parse)(std::string_view),
               std::string_view (*name_of)(E)) const {
    std::vector<std::string> texts;
    MSP_RETURN_IF_ERROR(Strings(name, &texts));
    for (size_t i = 0; i < texts.size(); ++i) {
      E e{};
      MSP_RETURN_IF_ERROR(ParseEnum(name + "[" + std::to_string(i) + "]", texts[i], &e, parse, name_of));
      out->push_back(e);
    }
    return Status::Ok();
  }

  Status Provenance(const std::string& name, std::vector<ProvenanceRef>* out) const {
    if (!Has(name)) return Status::Ok();
    const json& v = obj_.at(name);
    if (!v.is_array()) return Wrong(name, "an array of {type, ref, detail} objects", v);
    for (size_t i = 0; i < v.size(); ++i) {
      JsonReader item(v[i], prefix_ + name + "[" + std::to_string(i) + "].");
      MSP_RETURN_IF_ERROR(item.Object());
      MSP_RETURN_IF_ERROR(item.Known({"type", "ref", "detail"}));
      ProvenanceRef p;
      MSP_RETURN_IF_ERROR(item.String("type", &p.type));
      MSP_RETURN_IF_ERROR(item.String("ref", &p.ref));
      MSP_RETURN_IF_ERROR(item.String("detail", &p.detail));
      if (p.type.empty() || p.ref.empty()) {
        return Status::InvalidArgument("field '" + prefix_ + name + "[" + std::to_string(i) +
                                       "]' needs a non-empty type and ref");
      }
      out->push_back(std::move(p));
    }
    return Status::Ok();
  }

  const json& obj() const { return obj_; }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string Trimmed() const { return prefix_.empty() ? prefix_ : prefix_.substr(0, prefix_.size() - 1); }

  Status Wrong(const std::string& name, const std::string& expected, const json& got) const {
    return Status::InvalidArgument("field '" + prefix_ + name + "' must be " + expected + ", got " + JsonTypeName(got));
  }

  Status OutOfRange(const std::string& name, int64_t lo, int64_t hi, const std::string& got) const {
    return Status::InvalidArgument("field '" + prefix_ + name + "' must be between " + std::to_string(lo) +
                                   " and " + std::to_string(hi) + ", got " + got);
  }

  static std::string FormatBound(double d) {
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  template <typename E>
  Status ParseEnum(const std::string& name, const std::string& text, E* out,
                   std::optional<E> (*parse)(std::string_view), std::string_view (*name_of)(E)) const {
    if (std::optional<E> e = parse(text)) {
      *out = *e;
      return Status::Ok();
    }
    return Status::InvalidArgument("field '" + prefix_ + name + "': unknown value '" + text + "'; allowed: " +
                                   EnumNames(name_of));
  }

  const json& obj_;
  std::string prefix_;
};

}  // namespace msp

#endif  // MSP_CODEC_JSON_READER_H_
