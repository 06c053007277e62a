// The rule-based fact extractor's matcher: a normalised clause matched
// against the rule table, the captured object cleaned and put in the third
// person, the version and "without" scanners, and the merging of facts; the
// extractor's entry points. The rules and word lists are in rule_table.h, the
// clause splitter in rule_clauses.h; what the rules do is described in
// rule_extractor.h.
#include "consolidate/rule_extractor.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>

#include "consolidate/rule_clauses.h"
#include "consolidate/rule_table.h"
#include "util/text.h"

namespace msp {
namespace rules {
namespace {

// ---------------------------------------------------------------------------
// Objects: cleaning, the third person, requirements.

// Drops trailing punctuation and filler words ("too", "please").
std::string CleanObject(std::string_view raw) {
  std::string s(TrimAsciiSpace(raw));
  for (bool changed = true; changed;) {
    changed = false;
    while (!s.empty() && (s.back() == '.' || s.back() == ',' || s.back() == '!' || s.back() == ';' ||
                          s.back() == ':' || IsAsciiSpace(s.back()))) {
      s.pop_back();
      changed = true;
    }
    const std::string lower = AsciiLower(s);
    for (auto tail : kTails) {
      if (lower.size() > tail.size() + 1 && lower.compare(lower.size() - tail.size(), tail.size(), tail) == 0 &&
          !IsWordChar(lower[lower.size() - tail.size() - 1])) {
        s.resize(s.size() - tail.size());
        changed = true;
        break;
      }
    }
  }
  return s;
}

// "my script before I leave" -> "their script before they leave".
std::string ThirdPerson(std::string_view s) {
  static const std::unordered_map<std::string, std::string> kMap = {
      {"i", "they"},         {"me", "them"},         {"my", "their"},     {"mine", "theirs"},
      {"myself", "themselves"}, {"i'm", "they're"}, {"i've", "they've"}, {"i'd", "they'd"},
      {"i'll", "they'll"}};
  std::string out;
  bool after_i = false;
  size_t i = 0;
  while (i < s.size()) {
    if (!IsWordChar(s[i])) {
      out += s[i++];
      continue;
    }
    size_t end = i;
    while (end < s.size() && IsWordChar(s[end])) ++end;
    const std::string word(s.substr(i, end - i));
    const std::string lower = AsciiLower(word);
    auto it = kMap.find(lower);
    if (it != kMap.end()) {
      out += it->second;
    } else if (after_i && lower == "am") {
      out += "are";
    } else if (after_i && lower == "was") {
      out += "were";
    } else {
      out += word;
    }
    after_i = lower == "i";
    i = end;
  }
  return out;
}

bool MentionsProduct(std::string_view text) {
  const std::string lower = AsciiLower(text);
  for (const auto& p : kProducts) {
    for (auto name : SplitBar(p.names)) {
      const std::string lname = AsciiLower(name);
      for (size_t pos = FindPhrase(lower, lname); pos != std::string::npos; pos = FindPhrase(lower, lname, pos + 1)) {
        if (!p.exact_case || text.compare(pos, name.size(), name) == 0) return true;
      }
    }
  }
  return false;
}

bool Meets(Require r, std::string_view x) {
  const std::string lower = AsciiLower(x);
  const std::string_view first = WordAt(lower, 0);
  switch (r) {
    case Require::kAny:
      return true;
    case Require::kProblemVerb:
      return InList(first, kProblemVerbs);
    case Require::kTrouble:
      for (auto w : kTroubleWords) {
        if (lower.find(w) != std::string::npos) return true;
      }
      return false;
    case Require::kProduct:
      return MentionsProduct(x);
    case Require::kArticle: {
      if (first != "a" && first != "an") return false;
      const size_t second_at = first.size() + 1;
      if (second_at >= lower.size()) return false;
      return !InList(WordAt(lower, second_at), "bit|little|lot|tad|few|couple|fan|big|huge");
    }
    case Require::kAge: {
      if (first.empty() || !std::all_of(first.begin(), first.end(), IsDigit)) return false;
      const std::string_view rest = TrimAsciiSpace(std::string_view(lower).substr(first.size()));
      return rest == "years old" || rest == "year old" || rest == "yo" || rest == "y/o";
    }
    case Require::kNotRequest:
      for (auto v : SplitBar(kRequestVerbs)) {
        if (PhraseAt(lower, 0, v)) return false;
      }
      return true;
  }
  return false;
}

// A free {y} names a thing; "goal is to fix what" holds a verb and is not one.
bool HasVerb(std::string_view y) {
  const std::string lower = AsciiLower(y);
  for (std::string_view verb : {"is", "are", "was", "were", "to"}) {
    if (FindPhrase(lower, verb) != std::string::npos) return true;
  }
  return false;
}

bool IsVague(std::string_view x) { return x.empty() || InList(AsciiLower(x), kVagueObjects); }

// ---------------------------------------------------------------------------
// Facts.

std::string_view CategoryTag(Category c) {
  switch (c) {
    case Category::kPreference:
      return "preference";
    case Category::kProfile:
      return "profile";
    case Category::kEnvironment:
      return "environment";
    case Category::kGoal:
      return "goal";
    case Category::kConstraint:
      return "constraint";
    case Category::kProblem:
      return "problem";
  }
  return "profile";
}

std::vector<std::string> TagsFor(Category c) {
  std::vector<std::string> tags = {std::string(CategoryTag(c))};
  if (c == Category::kEnvironment || c == Category::kProblem) tags.emplace_back("profile");
  return tags;
}

// Fills the template and tidies spacing: "User's {y} {m} {x}." with an
// empty x gives "User's script fails."
std::string Fill(std::string_view tmpl, const std::string& x, const std::string& y, const std::string& m,
                 const std::string& l) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{' && i + 2 < tmpl.size() && tmpl[i + 2] == '}') {
      const char k = tmpl[i + 1];
      out += k == 'x' ? x : k == 'y' ? y : k == 'm' ? m : l;
      i += 2;
    } else {
      out += tmpl[i];
    }
  }
  std::string tidy;
  for (char c : out) {
    if (c == ' ' && (tidy.empty() || tidy.back() == ' ')) continue;
    if ((c == '.' || c == ',') && !tidy.empty() && tidy.back() == ' ') tidy.pop_back();
    tidy += c;
  }
  return tidy;
}

// Collects candidates; identical texts (case and spacing aside) merge.
class FactSink {
 public:
  void Add(std::string text, double confidence, bool hedged, std::vector<std::string> tags,
           const std::string& episode_id) {
    if (hedged) confidence = std::min(confidence, 0.6);
    std::string key = AsciiLower(text);
    auto it = index_.find(key);
    if (it == index_.end()) {
      index_.emplace(std::move(key), facts_.size());
      FactCandidate f;
      f.text = std::move(text);
      f.confidence = confidence;
      f.tags = std::move(tags);
      if (!episode_id.empty()) f.source_episodes.push_back(episode_id);
      facts_.push_back(std::move(f));
      return;
    }
    FactCandidate& f = facts_[it->second];
    f.confidence = std::max(f.confidence, confidence);
    for (auto& t : tags) {
      if (std::find(f.tags.begin(), f.tags.end(), t) == f.tags.end()) f.tags.push_back(std::move(t));
    }
    if (!episode_id.empty() &&
        std::find(f.source_episodes.begin(), f.source_episodes.end(), episode_id) == f.source_episodes.end()) {
      f.source_episodes.push_back(episode_id);
    }
  }
  std::vector<FactCandidate> Take() { return std::move(facts_); }

 private:
  std::vector<FactCandidate> facts_;
  std::unordered_map<std::string, size_t> index_;
};

// A rule with its alternatives expanded, built once.
struct CompiledRule {
  const Rule* rule;
  std::vector<std::string> leads;
  std::vector<std::string> mids;
  std::vector<std::string> y_in;
};

const std::vector<CompiledRule>& CompiledRules() {
  static const std::vector<CompiledRule> kCompiled = [] {
    std::vector<CompiledRule> out;
    for (const Rule& r : kRules) {
      CompiledRule c{&r, ExpandAlternatives(r.lead), {}, {}};
      if (!r.mid.empty()) c.mids = ExpandAlternatives(r.mid);
      for (auto y : SplitBar(r.y_in)) {
        if (!y.empty()) c.y_in.emplace_back(y);
      }
      out.push_back(std::move(c));
    }
    return out;
  }();
  return kCompiled;
}

struct Match {
  const Rule* rule = nullptr;
  std::string text;
};

// The first rule the clause fires, if any.
Match MatchRules(const Clause& c) {
  for (const CompiledRule& cr : CompiledRules()) {
    const Rule& r = *cr.rule;
    for (const std::string& lead : cr.leads) {
      if (!PhraseAt(c.lower, 0, lead)) continue;
      std::string y;
      std::string m;
      std::string_view rest = std::string_view(c.text).substr(lead.size());
      if (!cr.mids.empty()) {
        // The earliest mid phrase after the lead (longest at that place).
        size_t best = std::string::npos;
        size_t best_len = 0;
        for (const auto& mid : cr.mids) {
          const size_t pos = FindPhrase(c.lower, mid, lead.size());
          if (pos < best || (pos == best && pos != std::string::npos && mid.size() > best_len)) {
            best = pos;
            best_len = mid.size();
          }
        }
        if (best == std::string::npos) break;
        y = std::string(TrimAsciiSpace(std::string_view(c.text).substr(lead.size(), best - lead.size())));
        m = c.text.substr(best, best_len);
        rest = std::string_view(c.text).substr(best + best_len);
        if (!cr.y_in.empty()) {
          if (std::find(cr.y_in.begin(), cr.y_in.end(), AsciiLower(y)) == cr.y_in.end()) break;
        } else if (CountWords(y) > 6 || (y.empty() && r.tmpl.find("{l}") == std::string_view::npos) ||
                   HasVerb(y)) {
          break;
        }
      }
      std::string x = CleanObject(rest);
      if (r.category == Category::kGoal && AsciiLower(x).rfind("to ", 0) == 0) x.erase(0, 3);
      if (cr.mids.empty() && IsVague(x)) break;
      if (x.size() > 200 || CountWords(x) > 30) break;
      if (!Meets(r.require, x)) break;
      return {&r, Fill(r.tmpl, ThirdPerson(x), ThirdPerson(y), m, lead)};
    }
  }
  return {};
}

// "My colleague uses ...", "my boss's laptop ...": about someone else.
bool IsAboutSomeoneElse(std::string_view lower) {
  if (lower.compare(0, 3, "my ") != 0) return false;
  const std::string_view who = WordAt(lower, 3);
  for (auto person : SplitBar(kPeople)) {
    if (who == person || (who.size() > person.size() && who.compare(0, person.size(), person) == 0 &&
                          who[person.size()] == '\'')) {
      return true;
    }
  }
  return false;
}

// The clause's subject is the user (I, we, my <thing>).
bool IsUsersOwn(std::string_view lower) {
  for (std::string_view s : {"i ", "i'm ", "i've ", "i'd ", "i am ", "we ", "we're ", "our ", "my "}) {
    if (lower.compare(0, s.size(), s) == 0) return !IsAboutSomeoneElse(lower);
  }
  return false;
}

// "Python 3.11", "Windows 11", "C++20" in a clause that is the user's own.
void ScanVersions(const Clause& c, bool hedged, const std::string& episode_id, FactSink* sink) {
  for (auto phrase : kDisownPhrases) {
    if (c.lower.find(phrase) != std::string::npos) return;
  }
  std::vector<std::pair<size_t, size_t>> taken;  // spans already read (longer names first)
  for (const Product& p : kProducts) {
    for (auto name : SplitBar(p.names)) {
      const std::string lname = AsciiLower(name);
      for (size_t pos = FindPhrase(c.lower, lname); pos != std::string::npos;
           pos = FindPhrase(c.lower, lname, pos + 1)) {
        if (p.exact_case && c.text.compare(pos, name.size(), name) != 0) continue;
        const size_t name_end = pos + name.size();
        bool overlaps = false;
        for (const auto& [b, e] : taken) overlaps = overlaps || (pos < e && name_end > b);
        if (overlaps) continue;
        // The version: an optional space (none after "C++"), digits and dots.
        size_t v = name_end;
        if (v < c.text.size() && c.text[v] == ' ') ++v;
        if (v < c.text.size() && (c.text[v] == 'v' || c.text[v] == 'V') && v + 1 < c.text.size() &&
            IsDigit(c.text[v + 1])) {
          ++v;
        }
        size_t end = v;
        while (end < c.text.size() &&
               (IsDigit(c.text[end]) || (c.text[end] == '.' && end + 1 < c.text.size() && IsDigit(c.text[end + 1]) &&
                                         end > v))) {
          ++end;
        }
        if (end == v || (end < c.text.size() && IsAlnum(c.text[end]))) continue;
        // The word before the name must not disown it.
        size_t before_end = pos;
        while (before_end > 0 && IsAsciiSpace(c.lower[before_end - 1])) --before_end;
        size_t before_start = before_end;
        while (before_start > 0 && IsWordChar(c.lower[before_start - 1])) --before_start;
        if (InList(std::string_view(c.lower).substr(before_start, before_end - before_start), kDisownBefore)) continue;
        taken.emplace_back(pos, end);
        const std::string fact =
            "User uses " + std::string(p.canonical) + std::string(p.joiner) + c.text.substr(v, end - v) + ".";
        sink->Add(fact, 0.7, hedged, TagsFor(Category::kEnvironment), episode_id);
      }
    }
  }
}

// "... need to deploy without Docker" -> "User's constraint: without Docker."
void ScanWithout(const Clause& c, bool hedged, const std::string& episode_id, FactSink* sink) {
  const size_t at = FindPhrase(c.lower, "without");
  if (at == std::string::npos) return;
  bool needs = false;
  for (auto n : kNeeds) {
    const size_t pos = FindPhrase(c.lower, n);
    needs = needs || (pos != std::string::npos && pos < at);
  }
  if (!needs) return;
  const std::string x = CleanObject(std::string_view(c.text).substr(at + 7));
  const std::string lower = AsciiLower(x);
  if (IsVague(x) || lower.rfind("a doubt", 0) == 0 || lower.rfind("any doubt", 0) == 0) return;
  sink->Add("User's constraint: without " + ThirdPerson(x) + ".", 0.75, hedged, TagsFor(Category::kConstraint),
            episode_id);
}

void ExtractInto(std::string_view user_text, const std::string& episode_id, FactSink* sink) {
  const std::string text = NormalizeQuotes(user_text);
  for (const Sentence& sentence : SplitSentences(text)) {
    const std::vector<std::string> clauses = SplitClauses(sentence.text);
    for (size_t i = 0; i < clauses.size(); ++i) {
      if (sentence.question && i + 1 == clauses.size()) continue;  // the asking part
      Clause c(clauses[i]);
      Normalize(&c);
      if (c.text.empty()) continue;
      if (StartsWithAny(c.lower, kQuestionOpeners, std::size(kQuestionOpeners))) continue;
      if (StartsWithAny(c.lower, kSubordinators, std::size(kSubordinators))) continue;
      if (IsAboutSomeoneElse(c.lower)) continue;
      const Match m = MatchRules(c);
      if (m.rule != nullptr) {
        sink->Add(m.text, m.rule->confidence, c.hedged, TagsFor(m.rule->category), episode_id);
      }
      if (m.rule != nullptr ? m.rule->env : IsUsersOwn(c.lower)) ScanVersions(c, c.hedged, episode_id, sink);
      ScanWithout(c, c.hedged, episode_id, sink);
    }
  }
}

}  // namespace
}  // namespace rules

namespace {

using json = nlohmann::json;

}  // namespace

std::vector<FactCandidate> RuleExtractor::ExtractFromText(std::string_view user_text) const {
  rules::FactSink sink;
  rules::ExtractInto(user_text, "", &sink);
  return sink.Take();
}

Result<std::vector<FactCandidate>> RuleExtractor::Extract(const std::vector<Memory>& episodes) {
  rules::FactSink sink;
  for (const Memory& m : episodes) {
    if (m.kind != Kind::kEpisode || m.sensitivity == Sensitivity::kHigh) continue;
    const json body = json::parse(m.body_json, nullptr, false);
    if (body.is_discarded() || !body.is_object()) continue;
    const auto type = body.find("type");
    if (type == body.end() || !type->is_string() || type->get<std::string>() != "user_message") continue;
    std::string text = m.text;
    if (text.empty()) {
      const auto content = body.find("content");
      if (content != body.end() && content->is_object()) {
        const auto t = content->find("text");
        if (t != content->end() && t->is_string()) text = t->get<std::string>();
      }
    }
    rules::ExtractInto(text, m.id, &sink);
  }
  return sink.Take();
}

Result<std::unique_ptr<Extractor>> MakeExtractor(const ConsolidationOptions& options) {
  if (options.extractor == ExtractorKind::kRules) return std::unique_ptr<Extractor>(std::make_unique<RuleExtractor>());
  return Status::InvalidArgument("extractor '" + std::string(NameOf(options.extractor)) +
                                 "' needs the chat model: make it with MakeConfiguredExtractor "
                                 "(consolidate/llm_extractor.h); MakeExtractor makes the rules extractor only");
}

}  // namespace msp
