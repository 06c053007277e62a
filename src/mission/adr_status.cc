// Status and supersede recognition for the ADR parser (adr_text.h): status
// words, title tags, and the links to the ADRs one supersedes or is
// superseded by.
#include "mission/adr_text.h"

#include <cctype>
#include <sstream>
#include <utility>

#include "util/text.h"

namespace msp::adr_parse {

std::string BaseName(std::string target) {
  if (size_t hash = target.find('#'); hash != std::string::npos) target.resize(hash);
  if (size_t q = target.find('?'); q != std::string::npos) target.resize(q);
  while (!target.empty() && target.back() == '/') target.pop_back();
  // "../0005-x/index.md" names the folder's ADR: "0005-x".
  if (const size_t slash = target.find_last_of('/'); slash != std::string::npos) {
    const std::string last = AsciiLower(target.substr(slash + 1));
    if (last == "index.md" || last == "index.mdx" || last == "readme.md" || last == "index.markdown") {
      target.resize(slash);
    }
  }
  if (size_t slash = target.find_last_of('/'); slash != std::string::npos) target = target.substr(slash + 1);
  return Trim(target);
}

int NumberIn(std::string_view text) {
  const std::string low = AsciiLower(text);
  for (size_t at = low.find("adr"); at != std::string::npos; at = low.find("adr", at + 3)) {
    // "adr" must start a word ("adrs-adr013": the second one).
    size_t i = at + 3;
    while (i < low.size() && (low[i] == '-' || low[i] == ' ' || low[i] == '#' || low[i] == '_')) ++i;
    size_t used = 0;
    const int n = LeadingNumber(std::string_view(low).substr(i), &used);
    if (used > 0) return n;
  }
  return 0;
}

std::vector<AdrLink> LinksIn(std::string_view line) {
  std::vector<AdrLink> out;
  for (size_t at = line.find("]("); at != std::string_view::npos; at = line.find("](", at + 2)) {
    const size_t close = line.find(')', at + 2);
    if (close == std::string_view::npos) break;
    const size_t open = line.rfind('[', at);
    const std::string_view label = open == std::string_view::npos ? "" : line.substr(open + 1, at - open - 1);
    const std::string raw(line.substr(at + 2, close - at - 2));
    if (raw.rfind("http://", 0) == 0 || raw.rfind("https://", 0) == 0) {
      // A link to a web page may still be an ADR of this folder by name.
      AdrLink l{BaseName(raw), NumberIn(label), std::string(line)};
      if (l.number == 0) l.number = NumberIn(l.file);
      out.push_back(std::move(l));
      continue;
    }
    AdrLink l{BaseName(raw), NumberIn(label), std::string(line)};
    if (l.number == 0) l.number = NumberIn(l.file);
    if (!l.file.empty() || l.number > 0) out.push_back(std::move(l));
  }
  if (!out.empty()) return out;
  std::istringstream words{std::string(line)};
  for (std::string w; words >> w;) {
    while (!w.empty() && std::string_view(".,;:)\"'").find(w.back()) != std::string_view::npos) w.pop_back();
    while (!w.empty() && std::string_view("(\"'[").find(w.front()) != std::string_view::npos) w.erase(0, 1);
    const std::string low = AsciiLower(w);
    if ((low.size() > 3 && low.ends_with(".md")) || (low.size() > 4 && low.ends_with(".mdx"))) {
      out.push_back({BaseName(w), 0, std::string(line)});
    }
  }
  if (!out.empty()) return out;
  const std::string low = AsciiLower(line);
  for (size_t at = low.find("adr"); at != std::string::npos; at = low.find("adr", at + 3)) {
    size_t i = at + 3;
    while (i < low.size() && (low[i] == '-' || low[i] == ' ' || low[i] == '#' || low[i] == '_')) ++i;
    size_t used = 0;
    const int n = LeadingNumber(std::string_view(low).substr(i), &used);
    if (used > 0) out.push_back({"", n, std::string(line)});
  }
  if (!out.empty()) return out;
  // "Superseded by #12" / "by 0005".
  for (size_t i = 0; i < low.size(); ++i) {
    if (low[i] == '#' && i + 1 < low.size() && std::isdigit(static_cast<unsigned char>(low[i + 1]))) {
      size_t used = 0;
      const int n = LeadingNumber(std::string_view(low).substr(i + 1), &used);
      out.push_back({"", n, std::string(line)});
    }
  }
  return out;
}

std::vector<AdrLink> FrontMatterLinks(const std::string& v) {
  std::vector<AdrLink> links = LinksIn(v);
  if (!links.empty()) return links;
  size_t used = 0;
  const int n = LeadingNumber(v, &used);
  if (used > 0 && used == v.size()) return {AdrLink{"", n, v}};
  if (v.empty()) return {};
  return {AdrLink{BaseName(v), NumberIn(v), v}};
}

std::optional<DecisionStatus> StatusWord(const std::string& word) {
  static const std::map<std::string, DecisionStatus> words = {
      {"proposed", DecisionStatus::kProposed},     {"draft", DecisionStatus::kProposed},
      {"pending", DecisionStatus::kProposed},      {"proposal", DecisionStatus::kProposed},
      {"open", DecisionStatus::kProposed},         {"wip", DecisionStatus::kProposed},
      {"hold", DecisionStatus::kProposed},         {"postponed", DecisionStatus::kProposed},
      {"deferred", DecisionStatus::kProposed},     {"paused", DecisionStatus::kProposed},
      {"review", DecisionStatus::kProposed},       {"discussion", DecisionStatus::kProposed},
      {"discussing", DecisionStatus::kProposed},   {"rfc", DecisionStatus::kProposed},
      {"accepted", DecisionStatus::kAccepted},     {"approved", DecisionStatus::kAccepted},
      {"adopted", DecisionStatus::kAccepted},      {"agreed", DecisionStatus::kAccepted},
      {"decided", DecisionStatus::kAccepted},      {"done", DecisionStatus::kAccepted},
      {"implemented", DecisionStatus::kAccepted},  {"active", DecisionStatus::kAccepted},
      {"final", DecisionStatus::kAccepted},        {"completed", DecisionStatus::kAccepted},
      {"rejected", DecisionStatus::kRejected},     {"declined", DecisionStatus::kRejected},
      {"withdrawn", DecisionStatus::kRejected},    {"abandoned", DecisionStatus::kRejected},
      {"deprecated", DecisionStatus::kDeprecated}, {"obsolete", DecisionStatus::kDeprecated},
      {"retired", DecisionStatus::kDeprecated},    {"superseded", DecisionStatus::kSuperseded},
      {"superceded", DecisionStatus::kSuperseded}, {"superseeded", DecisionStatus::kSuperseded},
      {"replaced", DecisionStatus::kSuperseded},
  };
  auto it = words.find(word);
  if (it == words.end()) return std::nullopt;
  return it->second;
}

std::optional<DecisionStatus> TitleTag(std::string* title, std::vector<AdrLink>* superseded_by) {
  std::string t = *title;
  for (char open : {'[', '('}) {
    const char close = open == '[' ? ']' : ')';
    for (size_t at = t.find(open); at != std::string::npos; at = t.find(open, at + 1)) {
      const size_t end = t.find(close, at);
      if (end == std::string::npos) break;
      const std::string inner = AsciiLower(Trim(std::string_view(t).substr(at + 1, end - at - 1)));
      std::string word;
      for (char c : inner) {
        if (!std::isalpha(static_cast<unsigned char>(c))) break;
        word.push_back(c);
      }
      std::optional<DecisionStatus> s = StatusWord(word);
      if (!s) continue;
      // "[superseded by ADR-5]" names its successor.
      if (*s == DecisionStatus::kSuperseded) {
        for (AdrLink& l : LinksIn(inner.substr(word.size()))) superseded_by->push_back(std::move(l));
      }
      // A Markdown link "[Accepted](x)" is not a tag.
      if (open == '[' && end + 1 < t.size() && t[end + 1] == '(') continue;
      t.erase(at, end - at + 1);
      *title = Trim(t);
      if (title->empty()) *title = Trim(inner);
      return s;
    }
  }
  // "Superseded: Use X", "DEPRECATED - Use X".
  std::string word;
  for (char c : t) {
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  std::optional<DecisionStatus> s = StatusWord(word);
  if (s && *s != DecisionStatus::kProposed && *s != DecisionStatus::kAccepted) {
    std::string_view rest = std::string_view(t).substr(word.size());
    for (std::string_view sep : {std::string_view(":"), std::string_view(" - "), std::string_view(" \xE2\x80\x93 "),
                                 std::string_view(" \xE2\x80\x94 ")}) {
      if (rest.substr(0, sep.size()) == sep && !Trim(rest.substr(sep.size())).empty()) {
        *title = Trim(rest.substr(sep.size()));
        return s;
      }
    }
  }
  return std::nullopt;
}

}  // namespace msp::adr_parse
