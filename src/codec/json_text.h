// Writing JSON text straight into a string, for answers too large to build
// as an nlohmann tree first (the MCP graph tools answer 100 KiB at a time),
// and the compact serializer behind DumpJson (AppendJson).
//
// What is written is byte for byte what DumpJson (codec/memory_json.h) writes
// for the same value: strings as nlohmann's dump writes them with
// ensure_ascii off, which is also JSON.stringify's form — '"' and '\' and
// \b \f \n \r \t escaped, the other control characters below U+0020 as
// \u00xx (lowercase hex), everything else (DEL, U+2028, U+2029, non-BMP
// characters) as its UTF-8 bytes. A string that is not valid UTF-8 is
// written by nlohmann itself (each bad sequence becomes U+FFFD), so that
// case too stays exactly DumpJson's.
#ifndef MSP_CODEC_JSON_TEXT_H_
#define MSP_CODEC_JSON_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace msp {

// Appends `s` as a JSON string (with its quotes) to `out`.
void AppendJsonString(std::string& out, std::string_view s);
// The same without the quotes: what stands between them.
void AppendJsonStringContent(std::string& out, std::string_view s);

// Appends `j` in compact form, byte for byte what nlohmann's
// dump(-1, ' ', false, replace) writes: members in the object's (sorted)
// order, strings as above, integers in decimal, doubles by nlohmann's own
// shortest round-trip form (not finite: null). About 5x faster than
// nlohmann's serializer on a search answer (its strings go a byte at a time
// through a UTF-8 decoder and a virtual output adapter).
void AppendJson(std::string& out, const nlohmann::json& j);

// Numbers as AppendJson writes the same value held in a json: integers in
// decimal; a double by nlohmann's shortest round-trip form, null when not
// finite.
void AppendJsonNumber(std::string& out, int64_t n);
void AppendJsonNumber(std::string& out, double x);

}  // namespace msp

#endif  // MSP_CODEC_JSON_TEXT_H_
