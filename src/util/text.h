// ASCII helpers for the parsers: white space, case folding and trimming.
// Unlike std::isspace and std::tolower they never depend on the C locale,
// and they leave every byte >= 0x80 (UTF-8) alone.
#ifndef MSP_UTIL_TEXT_H_
#define MSP_UTIL_TEXT_H_

#include <optional>
#include <string>
#include <string_view>

namespace msp {

// ' ', '\t', '\n', '\v', '\f' or '\r' (std::isspace in the "C" locale).
inline bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// `s` with 'A'..'Z' lowered.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `s` without its leading and trailing ASCII white space: a view into `s`.
inline std::string_view TrimAsciiSpace(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The settings' spellings of a boolean: true / 1 / yes / on, false / 0 /
// no / off, exactly (the caller trims); nullopt for anything else.
inline std::optional<bool> BooleanWord(std::string_view word) {
  if (word == "true" || word == "1" || word == "yes" || word == "on") return true;
  if (word == "false" || word == "0" || word == "no" || word == "off") return false;
  return std::nullopt;
}

// The first item of a `separator`-separated list, trimmed, and `list`
// advanced past it and its separator (empty after the last item): the
// walk over an HTTP header's list (`gzip;q=0.5, br`) or an item's
// parameters.
inline std::string_view NextListItem(std::string_view& list, char separator) {
  const size_t at = list.find(separator);
  const std::string_view item = TrimAsciiSpace(list.substr(0, at));
  list = at == std::string_view::npos ? std::string_view() : list.substr(at + 1);
  return item;
}

// `s` on one line: each run of ASCII white space (newlines included) as one
// space, none at either end.
inline std::string CollapseAsciiSpace(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (IsAsciiSpace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace msp

#endif  // MSP_UTIL_TEXT_H_
