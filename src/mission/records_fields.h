// Field checks and body readers shared by the mission record formats
// (records.cc and records_<type>.cc): the rules behind the Validate*
// functions, the lenient reading of stored bodies, and times as JSON.
// Internal to mission/.
#ifndef MSP_MISSION_RECORDS_FIELDS_H_
#define MSP_MISSION_RECORDS_FIELDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// InvalidArgument "<field>: invalid UTF-8 at byte N" unless `s` is valid.
Status CheckUtf8(std::string_view field, std::string_view s);
// True when `s` holds a control character other than \n, \r, \t (or, with
// !multiline, any control character at all).
bool HasControl(std::string_view s, bool multiline);
// `s` without leading and trailing spaces, tabs and line breaks.
std::string Trimmed(std::string_view s);
// A one-line text field: valid UTF-8, no control characters, at most
// `max_chars` characters; `required` refuses an empty (or blank) value.
Status CheckLine(std::string_view field, std::string_view s, size_t max_chars, bool required);
// A multi-line text field, at most `max_bytes` bytes.
Status CheckBlock(std::string_view field, std::string_view s, size_t max_bytes, bool required);
// An identifier field (IsMissionIdentifier); empty is fine unless `required`.
Status CheckIdentifier(std::string_view field, std::string_view s, bool required);
// Each reference: an identifier type, a one-line ref and detail.
Status CheckProvenance(const std::vector<ProvenanceRef>& refs);
// At most kMaxTags one-line tags.
Status CheckTags(const std::vector<std::string>& tags);

// `t` in ISO 8601, or null for 0.
nlohmann::json TimeJson(TimeMs t);

// Lenient reading of stored bodies (fields may be missing; unknown fields
// are ignored, so that later additive fields do not break readers): the
// string or integer at `key`, else "" or 0.
std::string BodyString(const nlohmann::json& b, const char* key);
int64_t BodyInt(const nlohmann::json& b, const char* key);
// The body of `m`, which must be a record of `kind` whose body "type" is
// `type`; InvalidArgument naming the record otherwise.
Result<nlohmann::json> BodyOf(const Memory& m, Kind kind, std::string_view type);

}  // namespace msp

#endif  // MSP_MISSION_RECORDS_FIELDS_H_
