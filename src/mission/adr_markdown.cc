// The Markdown side of the ADR parser (adr_text.h): the plain text of a
// line, numbers and titles, headings and section names, cutting long text.
#include "mission/adr_text.h"

#include <algorithm>
#include <cctype>

#include "util/text.h"

namespace msp::adr_parse {

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && AsciiLower(s.substr(0, prefix.size())) == prefix;
}

std::string Trim(std::string_view s) { return std::string(TrimAsciiSpace(s)); }

std::string Plain(std::string_view line) {
  std::string s = Trim(line);
  for (bool again = true; again;) {
    again = false;
    if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ') {
      s = Trim(s.substr(2));
      again = true;
    } else if (!s.empty() && s[0] == '>') {
      s = Trim(s.substr(1));
      again = true;
    }
  }
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '*' || c == '`') continue;
    // '_' as emphasis only at a word's edge ("_Accepted_"), not inside
    // identifiers ("node_fetch").
    if (c == '_') {
      const bool left = i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]));
      const bool right = i + 1 == s.size() || !std::isalnum(static_cast<unsigned char>(s[i + 1]));
      if (left || right) continue;
    }
    out.push_back(c);
  }
  return Trim(out);
}

int LeadingNumber(std::string_view s, size_t* used) {
  size_t i = 0;
  int n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i < 9) {
    n = n * 10 + (s[i] - '0');
    ++i;
  }
  *used = i;
  return n;
}

bool LooksLikeDateNumber(int n, size_t digits) {
  if (digits != 8) return false;
  const int year = n / 10000, month = n / 100 % 100, day = n % 100;
  return year >= 1970 && year <= 2100 && month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

void SplitTitle(const std::string& heading, int* number, std::string* title) {
  std::string s = Trim(heading);
  // "[ADR-0005] Use X": the brackets around the number go.
  if (s.size() > 4 && s[0] == '[' && StartsWithNoCase(std::string_view(s).substr(1), "adr")) {
    if (const size_t close = s.find(']'); close != std::string::npos && s.compare(close + 1, 1, "(") != 0) {
      s = s.substr(1, close - 1) + ":" + s.substr(close + 1);
    }
  }
  size_t i = 0;
  if (StartsWithNoCase(s, "adr")) {
    i = 3;
    while (i < s.size() && (s[i] == '-' || s[i] == '_' || s[i] == ' ' || s[i] == '#')) ++i;
  }
  size_t used = 0;
  const int n = LeadingNumber(std::string_view(s).substr(i), &used);
  if (used == 0) {
    *number = 0;
    *title = s;
    return;
  }
  size_t j = i + used;
  // The number must end at a separator, else it is part of the title
  // ("3D printing").
  if (j < s.size() && std::string_view(".:)- ").find(s[j]) == std::string_view::npos &&
      static_cast<unsigned char>(s[j]) < 0x80) {
    *number = 0;
    *title = s;
    return;
  }
  while (j < s.size() && (std::string_view(".:)- ").find(s[j]) != std::string_view::npos)) ++j;
  // Em and en dashes (UTF-8) as separators.
  for (std::string_view dash : {std::string_view("\xE2\x80\x94"), std::string_view("\xE2\x80\x93")}) {
    if (s.compare(j, dash.size(), dash) == 0) {
      j += dash.size();
      while (j < s.size() && s[j] == ' ') ++j;
    }
  }
  std::string rest = Trim(std::string_view(s).substr(j));
  *number = n;
  *title = rest.empty() ? s : rest;
}

Section SectionOf(const std::string& name) {
  static const std::map<std::string, Section> names = {
      {"status", Section::kStatus},
      {"state", Section::kStatus},
      {"decision status", Section::kStatus},
      {"context", Section::kContext},
      {"context and problem statement", Section::kContext},
      {"context and problem", Section::kContext},
      {"problem", Section::kContext},
      {"problem statement", Section::kContext},
      {"the problem", Section::kContext},
      {"issue", Section::kContext},
      {"background", Section::kContext},
      {"motivation", Section::kContext},
      {"decision", Section::kDecision},
      {"decisions", Section::kDecision},
      {"decision outcome", Section::kDecision},
      {"the decision", Section::kDecision},
      {"our decision", Section::kDecision},
      {"decision made", Section::kDecision},
      {"outcome", Section::kDecision},
      {"resolution", Section::kDecision},
      {"proposed solution", Section::kDecision},
      {"solution", Section::kDecision},
      {"chosen option", Section::kDecision},
      {"consequences", Section::kConsequences},
      {"consequence", Section::kConsequences},
      {"positive consequences", Section::kConsequences},
      {"negative consequences", Section::kConsequences},
      {"consequences and risks", Section::kConsequences},
      {"implications", Section::kConsequences},
      {"alternatives", Section::kAlternatives},
      {"rejected alternatives", Section::kAlternatives},
      {"considered alternatives", Section::kAlternatives},
      {"alternatives considered", Section::kAlternatives},
      {"considered options", Section::kAlternatives},
      {"options considered", Section::kAlternatives},
      {"options", Section::kAlternatives},
      {"date", Section::kDate},
      {"deciders", Section::kDeciders},
      {"decision makers", Section::kDeciders},
      {"decision-makers", Section::kDeciders},
      {"decided by", Section::kDeciders},
      {"authors", Section::kDeciders},
  };
  auto it = names.find(name);
  return it == names.end() ? Section::kOther : it->second;
}

std::string SectionName(std::string_view heading) {
  std::string name = AsciiLower(Plain(heading));
  // "1. Context", "Context:" -> "context".
  size_t used = 0;
  LeadingNumber(name, &used);
  if (used > 0 && used < name.size() && (name[used] == '.' || name[used] == ')')) name = Trim(name.substr(used + 1));
  while (!name.empty() && (name.back() == ':' || name.back() == '#' || name.back() == ' ')) name.pop_back();
  return name;
}

int AtxHeading(std::string_view line, std::string* text) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  size_t level = 0;
  while (i + level < line.size() && line[i + level] == '#') ++level;
  if (level == 0 || level > 6) return 0;
  const size_t after = i + level;
  if (after < line.size() && line[after] != ' ' && line[after] != '\t') return 0;
  std::string t = Trim(line.substr(after));
  while (!t.empty() && t.back() == '#') t.pop_back();
  *text = Trim(t);
  return static_cast<int>(level);
}

int SetextLevel(std::string_view line) {
  const std::string t = Trim(line);
  if (t.size() < 3) return 0;
  if (std::all_of(t.begin(), t.end(), [](char c) { return c == '='; })) return 1;
  if (std::all_of(t.begin(), t.end(), [](char c) { return c == '-'; })) return 2;
  return 0;
}

bool FindPhrase(const std::string& low, const std::vector<std::string_view>& phrases, size_t* at,
                size_t* after) {
  size_t best = std::string::npos, len = 0;
  for (std::string_view p : phrases) {
    const size_t i = low.find(p);
    if (i != std::string::npos && i < best) {
      best = i;
      len = p.size();
    }
  }
  if (best == std::string::npos) return false;
  *at = best;
  *after = best + len;
  return true;
}

std::string Joined(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) {
    if (v.empty()) continue;
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

std::string CutAt(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t i = max_bytes;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return std::string(s.substr(0, i));
}

std::string CutChars(std::string_view s, size_t max_chars) {
  size_t chars = 0, i = 0;
  while (i < s.size() && chars < max_chars) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    ++chars;
  }
  return std::string(s.substr(0, i));
}

}  // namespace msp::adr_parse
