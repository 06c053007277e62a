// The strict reading of mission records from a caller's JSON; see
// records_reader.h.
#include "mission/records_reader.h"

#include <utility>

#include "mission/records_fields.h"
#include "util/time.h"

namespace msp {

using json = nlohmann::json;

Status TypeError(std::string_view field, std::string_view expected) {
  return Status::InvalidArgument(std::string(field) + ": expected " + std::string(expected));
}

Status ReadString(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return TypeError(key, "a string");
  *out = it->get<std::string>();
  return CheckUtf8(key, *out);
}

Status ReadInt(const json& j, const char* key, int* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer()) return TypeError(key, "an integer");
  const int64_t v = it->get<int64_t>();
  if (v < -1000000 || v > 1000000) return Status::InvalidArgument(std::string(key) + ": out of range");
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status ReadStrings(const json& j, const char* key, std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError(key, "an array of strings");
  out->clear();
  for (const json& v : *it) {
    if (!v.is_string()) return TypeError(key, "an array of strings");
    out->push_back(v.get<std::string>());
    MSP_RETURN_IF_ERROR(CheckUtf8(key, out->back()));
  }
  return Status::Ok();
}

Status ReadTime(const json& j, const char* key, TimeMs* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return TypeError(key, "an ISO 8601 time string");
  Result<TimeMs> t = ParseIso8601(it->get<std::string>());
  if (!t.ok()) return t.status().WithContext(key);
  *out = *t;
  return Status::Ok();
}

Status ReadProvenance(const json& j, const char* key, std::vector<ProvenanceRef>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError(key, "an array of {type, ref, detail}");
  out->clear();
  for (const json& v : *it) {
    if (!v.is_object()) return TypeError(key, "an array of {type, ref, detail}");
    ProvenanceRef r;
    for (auto f = v.begin(); f != v.end(); ++f) {
      if (f.key() != "type" && f.key() != "ref" && f.key() != "detail") {
        return Status::InvalidArgument(std::string(key) + ": unknown field '" + f.key() +
                                       "'; allowed: type, ref, detail");
      }
    }
    MSP_RETURN_IF_ERROR(ReadString(v, "type", &r.type));
    MSP_RETURN_IF_ERROR(ReadString(v, "ref", &r.ref));
    MSP_RETURN_IF_ERROR(ReadString(v, "detail", &r.detail));
    out->push_back(std::move(r));
  }
  return Status::Ok();
}

Status CheckKeys(const json& j, std::string_view what, const std::set<std::string>& allowed) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (allowed.count(it.key()) == 0) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Status::InvalidArgument(std::string(what) + ": unknown field '" + it.key() + "'; allowed: " + list);
    }
  }
  return Status::Ok();
}

}  // namespace msp
