// Front matter and dates for the ADR parser (adr_text.h): the minimal YAML
// front matter reader and the dates written in an ADR.
#include "mission/adr_text.h"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "util/text.h"
#include "util/time.h"

namespace msp::adr_parse {

std::map<std::string, std::vector<std::string>> FrontMatter(const std::vector<std::string>& lines) {
  std::map<std::string, std::vector<std::string>> out;
  auto unquote = [](std::string v) {
    v = Trim(v);
    if (v.size() >= 2 && ((v.front() == '"' && v.back() == '"') || (v.front() == '\'' && v.back() == '\''))) {
      v = v.substr(1, v.size() - 2);
    }
    return v;
  };
  std::string key;
  bool block_scalar = false;
  for (const std::string& raw : lines) {
    const std::string t = Trim(raw);
    const bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    if (t.empty() || t[0] == '#') {
      if (block_scalar && !key.empty() && !out[key].empty()) out[key].back() += "\n";
      continue;
    }
    if (indented || (t.size() >= 2 && t[0] == '-' && t[1] == ' ')) {
      if (key.empty()) continue;
      if (block_scalar) {
        std::string& v = out[key].back();
        v += (v.empty() || v.back() == '\n' ? "" : " ") + t;
      } else if (t.size() >= 2 && t[0] == '-' && t[1] == ' ') {
        out[key].push_back(unquote(t.substr(2)));
      }
      continue;
    }
    const size_t colon = t.find(':');
    if (colon == std::string::npos) {
      key.clear();
      continue;
    }
    key.clear();
    for (char c : t.substr(0, colon)) {
      if (c == '-' || c == '_' || c == ' ') continue;
      key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    std::string v = Trim(t.substr(colon + 1));
    block_scalar = v == "|" || v == ">" || v == "|-" || v == ">-";
    auto& values = out[key];
    values.clear();
    if (block_scalar) {
      values.push_back("");
    } else if (v.size() >= 2 && v.front() == '[' && v.back() == ']') {
      std::istringstream items(v.substr(1, v.size() - 2));
      for (std::string item; std::getline(items, item, ',');) {
        item = unquote(item);
        if (!item.empty()) values.push_back(item);
      }
    } else if (!v.empty()) {
      values.push_back(unquote(v));
    }
  }
  for (auto& [k, values] : out) {
    for (std::string& v : values) v = Trim(v);
  }
  return out;
}

TimeMs DateIn(std::string_view s) {
  for (size_t i = 0; i + 10 <= s.size(); ++i) {
    if (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) continue;
    std::string c(s.substr(i, 10));
    bool shape = true;
    const char sep = c[4];
    if (sep != '-' && sep != '/' && sep != '.') continue;
    for (size_t k = 0; k < 10; ++k) {
      const bool digit = std::isdigit(static_cast<unsigned char>(c[k])) != 0;
      if ((k == 4 || k == 7) ? c[k] != sep : !digit) {
        shape = false;
        break;
      }
    }
    if (!shape) continue;
    c[4] = c[7] = '-';
    Result<TimeMs> t = ParseIso8601(c);
    if (t.ok()) return *t;
  }
  static const char* kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                  "jul", "aug", "sep", "oct", "nov", "dec"};
  std::istringstream in{AsciiLower(s)};
  std::vector<std::string> w;
  for (std::string x; in >> x;) {
    while (!x.empty() && (x.back() == ',' || x.back() == '.')) x.pop_back();
    w.push_back(x);
  }
  auto month_of = [&](const std::string& x) {
    for (int m = 0; m < 12; ++m) {
      if (x.size() >= 3 && x.compare(0, 3, kMonths[m]) == 0) return m + 1;
    }
    return 0;
  };
  auto number = [](const std::string& x, int lo, int hi) {
    std::string d;
    for (char c : x) {
      if (std::isdigit(static_cast<unsigned char>(c))) d.push_back(c);
    }
    if (d.empty() || d.size() > 4) return 0;
    const int n = std::stoi(d);
    return n >= lo && n <= hi ? n : 0;
  };
  for (size_t k = 0; k + 2 < w.size(); ++k) {
    int y = 0, m = 0, d = 0;
    if ((m = month_of(w[k])) && (d = number(w[k + 1], 1, 31)) && (y = number(w[k + 2], 1970, 2100))) {
    } else if ((d = number(w[k], 1, 31)) && (m = month_of(w[k + 1])) && (y = number(w[k + 2], 1970, 2100))) {
    } else {
      continue;
    }
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d", y, m, d);
    Result<TimeMs> t = ParseIso8601(buf);
    if (t.ok()) return *t;
  }
  return 0;
}

}  // namespace msp::adr_parse
