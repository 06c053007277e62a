// The strict reading of mission records from a caller's JSON
// (DecisionFromJson, PrincipleFromJson, CorrectionFromJson in records.h):
// an absent or null field leaves the output alone, a wrong type is
// InvalidArgument "<field>: expected <what>", an unknown field is named with
// the allowed ones. Internal to mission/.
//
// codec/json_reader.h is the strict reader the REST bodies and src/api
// share; mission input keeps this one for now because its messages
// ("title: expected a string", "status: unknown value 'maybe'; allowed: ...")
// are what the CLI, REST and MCP answer today and what the tests pin.
#ifndef MSP_MISSION_RECORDS_READER_H_
#define MSP_MISSION_RECORDS_READER_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// InvalidArgument "<field>: expected <expected>".
Status TypeError(std::string_view field, std::string_view expected);
// A string (valid UTF-8).
Status ReadString(const nlohmann::json& j, const char* key, std::string* out);
// An integer in -1000000..1000000.
Status ReadInt(const nlohmann::json& j, const char* key, int* out);
// An array of strings (valid UTF-8); replaces *out.
Status ReadStrings(const nlohmann::json& j, const char* key, std::vector<std::string>* out);
// An ISO 8601 time string.
Status ReadTime(const nlohmann::json& j, const char* key, TimeMs* out);
// An array of {type, ref, detail}; replaces *out.
Status ReadProvenance(const nlohmann::json& j, const char* key, std::vector<ProvenanceRef>* out);
// InvalidArgument "<what>: unknown field '<key>'; allowed: ..." for the
// first key of object `j` not in `allowed`.
Status CheckKeys(const nlohmann::json& j, std::string_view what, const std::set<std::string>& allowed);

// One of an enum's names (`parse` reads one, `name` lists them in errors).
template <typename E>
Status ReadEnum(const nlohmann::json& j, const char* key, E* out, std::optional<E> (*parse)(std::string_view),
                std::string_view (*name)(E)) {
  std::string s;
  MSP_RETURN_IF_ERROR(ReadString(j, key, &s));
  if (s.empty()) return Status::Ok();
  std::optional<E> e = parse(s);
  if (!e) {
    return Status::InvalidArgument(std::string(key) + ": unknown value '" + s + "'; allowed: " + EnumNames(name));
  }
  *out = *e;
  return Status::Ok();
}

}  // namespace msp

#endif  // MSP_MISSION_RECORDS_READER_H_
