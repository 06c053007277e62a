// Intent rules, search, topics and project switches over captured prompts.
#include "coding/prompt_analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "provider/chat_client.h"
#include "util/text.h"

namespace msp {
namespace {

// The text lower-cased, trimmed, inner whitespace collapsed, with a leading
// run of punctuation removed.
std::string Normalised(std::string_view text) { return CollapseAsciiSpace(AsciiLower(text)); }

size_t WordCount(std::string_view s) {
  size_t n = 0;
  bool in = false;
  for (char c : s) {
    const bool w = !std::isspace(static_cast<unsigned char>(c));
    if (w && !in) ++n;
    in = w;
  }
  return n;
}

// True when `s` is `phrase` or starts with it followed by a non-letter.
bool StartsWithWord(std::string_view s, std::string_view phrase) {
  if (s.substr(0, phrase.size()) != phrase) return false;
  if (s.size() == phrase.size()) return true;
  const unsigned char next = static_cast<unsigned char>(s[phrase.size()]);
  return !std::isalnum(next) && next != '\'';
}

bool StartsWithAny(std::string_view s, std::initializer_list<std::string_view> phrases) {
  return std::any_of(phrases.begin(), phrases.end(), [&](std::string_view p) { return StartsWithWord(s, p); });
}

bool ContainsAny(std::string_view s, std::initializer_list<std::string_view> phrases) {
  return std::any_of(phrases.begin(), phrases.end(),
                     [&](std::string_view p) { return s.find(p) != std::string_view::npos; });
}

const std::unordered_set<std::string>& StopWords() {
  static const std::unordered_set<std::string> words = {
      "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
      "because", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "don't",
      "down", "each", "for", "from", "get", "go", "had", "has", "have", "he", "her", "here", "him", "his", "how",
      "i", "i'm", "if", "in", "into", "is", "it", "it's", "its", "just", "let", "let's", "like", "make", "me",
      "more", "my", "need", "no", "not", "now", "of", "off", "ok", "on", "once", "one", "only", "or", "other",
      "our", "out", "over", "please", "should", "so", "some", "still", "such", "than", "that", "that's", "the",
      "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "use",
      "very", "want", "was", "we", "were", "what", "when", "where", "which", "while", "who", "why", "will",
      "with", "would", "yes", "you", "your", "can't", "also", "way", "new", "file", "work", "add", "see",
      "try", "sure", "thanks", "there's", "we're", "you're", "isn't", "doesn't", "didn't", "won't"};
  return words;
}

TimeMs DayStart(TimeMs t) { return t - ((t % 86400000) + 86400000) % 86400000; }

}  // namespace

std::string_view IntentName(Intent intent) {
  switch (intent) {
    case Intent::kQuestion: return "question";
    case Intent::kInstruction: return "instruction";
    case Intent::kCorrection: return "correction";
    case Intent::kApproval: return "approval";
  }
  return "instruction";
}

std::optional<Intent> ParseIntent(std::string_view name) {
  for (Intent i : {Intent::kQuestion, Intent::kInstruction, Intent::kCorrection, Intent::kApproval}) {
    if (IntentName(i) == name) return i;
  }
  return std::nullopt;
}

Intent ClassifyIntent(std::string_view prompt) {
  const std::string s = Normalised(prompt);
  const bool has_question_mark = s.find('?') != std::string::npos;
  // 1. Approval: short assent.
  if (WordCount(s) <= 8 && !has_question_mark && !ContainsAny(s, {" but ", " however"}) &&
      StartsWithAny(s, {"yes", "yep", "yeah", "y", "ok", "okay", "k", "sure", "lgtm", "looks good", "look good",
                        "sounds good", "great", "perfect", "nice", "good", "thanks", "thank you", "ty", "go ahead",
                        "go for it", "proceed", "continue", "ship it", "do it", "approved", "correct", "exactly",
                        "that works", "works", "awesome", "excellent", "cool", "fine", "agreed", "+1", "👍"})) {
    return Intent::kApproval;
  }
  // 2. Correction: a rejection or a redirect.
  if (StartsWithAny(s, {"no", "nope", "nah", "wrong", "incorrect", "that's wrong", "that is wrong", "that's not",
                        "that is not", "this is not", "this isn't", "not quite", "not like that", "actually",
                        "instead", "rather", "revert", "undo", "roll back", "rollback", "stop", "don't", "do not",
                        "you forgot", "you missed", "you broke", "you didn't", "you did not", "you should not",
                        "you shouldn't", "still fails", "still failing", "still broken", "still doesn't",
                        "still does not", "it still", "that broke", "that didn't work", "that did not work",
                        "doesn't work", "does not work", "not working", "fix your", "why did you"}) ||
      ContainsAny(s, {"not what i", "that broke", "you broke", "that's not what", "wrong file", "i said",
                      "i told you", "as i said"})) {
    return Intent::kCorrection;
  }
  // 3. Question.
  size_t end = s.find_last_not_of(" .!\"'`)");
  const bool ends_with_q = !s.empty() && end != std::string::npos && s[end] == '?';
  const bool polite_request = StartsWithAny(s, {"can you", "could you", "would you", "will you", "please",
                                                "can we", "could we", "would you mind", "let's", "lets"});
  if (ends_with_q && !(polite_request && !ends_with_q)) {
    return Intent::kQuestion;
  }
  if (!polite_request &&
      StartsWithAny(s, {"what", "why", "how", "where", "when", "which", "who", "whose", "whom", "is", "are",
                        "does", "do", "did", "should", "shall", "was", "were", "has", "have", "am", "isn't",
                        "aren't", "doesn't", "is there", "are there", "any idea"})) {
    return Intent::kQuestion;
  }
  return Intent::kInstruction;
}

Result<std::vector<Intent>> ClassifyIntentsWithModel(const ChatClient& chat, const std::vector<std::string>& prompts) {
  constexpr size_t kBatch = 20;
  std::vector<Intent> out;
  out.reserve(prompts.size());
  for (size_t start = 0; start < prompts.size(); start += kBatch) {
    const size_t n = std::min(kBatch, prompts.size() - start);
    nlohmann::json items = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) {
      std::string text = prompts[start + i];
      if (text.size() > 2000) text.resize(2000);
      items.push_back({{"i", i}, {"prompt", text}});
    }
    JsonReplySpec spec;
    spec.name = "intents";
    spec.schema = {
        {"type", "object"},
        {"properties",
         {{"labels",
           {{"type", "array"},
            {"items",
             {{"type", "object"},
              {"properties",
               {{"i", {{"type", "integer"}}},
                {"intent", {{"type", "string"}, {"enum", {"question", "instruction", "correction", "approval"}}}}}},
              {"required", {"i", "intent"}},
              {"additionalProperties", false}}}}}}},
        {"required", {"labels"}},
        {"additionalProperties", false}};
    spec.check = [n](const nlohmann::json& j) -> Status {
      std::set<size_t> seen;
      for (const auto& l : j["labels"]) {
        const int64_t i = l["i"].get<int64_t>();
        if (i < 0 || static_cast<size_t>(i) >= n) return Status::InvalidArgument("label for unknown prompt " + std::to_string(i));
        seen.insert(static_cast<size_t>(i));
      }
      if (seen.size() != n) return Status::InvalidArgument("label every prompt exactly once");
      return Status::Ok();
    };
    const std::vector<ChatMessage> messages = {
        ChatMessage::System(
            "You label prompts that a developer typed to a coding agent with their intent: question (asks "
            "for information), instruction (asks for work to be done), correction (rejects or corrects what "
            "the agent did), approval (accepts what the agent did or lets it go on). Label every prompt by its "
            "index i."),
        ChatMessage::User(items.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))};
    MSP_ASSIGN_OR_RETURN(nlohmann::json reply, chat.CompleteJson(messages, spec));
    std::vector<Intent> batch(n, Intent::kInstruction);
    for (const auto& l : reply["labels"]) {
      batch[l["i"].get<size_t>()] = ParseIntent(l["intent"].get<std::string>()).value_or(Intent::kInstruction);
    }
    out.insert(out.end(), batch.begin(), batch.end());
  }
  return out;
}

std::vector<std::string> PromptTerms(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && (cur.back() == '.' || cur.back() == '-')) cur.pop_back();
    while (!cur.empty() && (cur.front() == '.' || cur.front() == '-')) cur.erase(cur.begin());
    const bool numeric = !cur.empty() && std::all_of(cur.begin(), cur.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    });
    if (cur.size() >= 2 && cur.size() <= 40 && !numeric && !StopWords().count(cur)) out.push_back(cur);
    cur.clear();
  };
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '\'' || c >= 0x80) {
      cur += static_cast<char>(std::tolower(c));
    } else {
      flush();
    }
  }
  flush();
  return out;
}

std::string ProjectOf(const CapturedPrompt& p) {
  if (p.repository.empty()) return "(none)";
  std::string r = p.repository;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  const size_t slash = r.find_last_of('/');
  return slash == std::string::npos ? r : r.substr(slash + 1);
}

std::vector<PromptMatch> SearchPrompts(const std::vector<CapturedPrompt>& prompts, std::string_view query,
                                       size_t limit) {
  std::vector<std::string> q = PromptTerms(query);
  std::sort(q.begin(), q.end());
  q.erase(std::unique(q.begin(), q.end()), q.end());
  std::vector<std::unordered_set<std::string>> docs;
  docs.reserve(prompts.size());
  std::unordered_map<std::string, size_t> df;
  for (const CapturedPrompt& p : prompts) {
    std::vector<std::string> t = PromptTerms(p.text);
    docs.emplace_back(t.begin(), t.end());
    for (const std::string& term : q) {
      if (docs.back().count(term)) ++df[term];
    }
  }
  std::vector<PromptMatch> out;
  const double n = static_cast<double>(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    double score = 0.0;
    for (const std::string& term : q) {
      if (docs[i].count(term)) score += std::log(1.0 + n / static_cast<double>(df[term]));
    }
    if (score > 0.0) out.push_back({i, score});
  }
  std::sort(out.begin(), out.end(), [&](const PromptMatch& a, const PromptMatch& b) {
    if (a.score != b.score) return a.score > b.score;
    return prompts[a.index].at > prompts[b.index].at;
  });
  if (limit != 0 && out.size() > limit) out.resize(limit);
  return out;
}

std::optional<Period> ParsePeriod(std::string_view name) {
  if (name == "day") return Period::kDay;
  if (name == "week") return Period::kWeek;
  if (name == "month") return Period::kMonth;
  return std::nullopt;
}

std::string PeriodLabel(TimeMs t, Period period) {
  const std::time_t secs = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  switch (period) {
    case Period::kDay: std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm); break;
    case Period::kWeek: std::strftime(buf, sizeof buf, "%G-W%V", &tm); break;
    case Period::kMonth: std::strftime(buf, sizeof buf, "%Y-%m", &tm); break;
  }
  return buf;
}

TopicTable TopicFrequencies(const std::vector<CapturedPrompt>& prompts, Period period, size_t top) {
  TopicTable table;
  std::map<std::string, size_t> period_index;
  std::vector<std::pair<std::string, std::vector<std::string>>> per_prompt;  // (period, distinct terms)
  std::unordered_map<std::string, size_t> total;
  for (const CapturedPrompt& p : prompts) {
    std::vector<std::string> t = PromptTerms(p.text);
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    for (const std::string& term : t) ++total[term];
    std::string label = PeriodLabel(p.at, period);
    period_index.emplace(label, 0);
    per_prompt.emplace_back(std::move(label), std::move(t));
  }
  for (auto& [label, index] : period_index) {
    index = table.periods.size();
    table.periods.push_back(label);
  }
  std::vector<std::pair<std::string, size_t>> ranked(total.begin(), total.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (ranked.size() > top) ranked.resize(top);
  std::unordered_map<std::string, size_t> topic_index;
  for (const auto& [term, n] : ranked) {
    topic_index[term] = table.topics.size();
    table.topics.push_back(term);
    table.totals.push_back(n);
  }
  table.counts.assign(table.topics.size(), std::vector<size_t>(table.periods.size(), 0));
  for (const auto& [label, terms] : per_prompt) {
    const size_t pi = period_index[label];
    for (const std::string& term : terms) {
      if (auto it = topic_index.find(term); it != topic_index.end()) ++table.counts[it->second][pi];
    }
  }
  return table;
}

std::vector<SwitchDay> ProjectSwitches(const std::vector<CapturedPrompt>& prompts) {
  std::vector<const CapturedPrompt*> sorted;
  for (const CapturedPrompt& p : prompts) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const CapturedPrompt* a, const CapturedPrompt* b) { return a->at < b->at; });
  std::vector<SwitchDay> days;
  std::set<std::string> projects;
  std::map<std::string, size_t> transitions;
  TimeMs day = -1;
  std::string last;
  auto close_day = [&] {
    if (days.empty()) return;
    days.back().projects = projects.size();
    std::vector<std::pair<std::string, size_t>> t(transitions.begin(), transitions.end());
    std::stable_sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    days.back().transitions = std::move(t);
  };
  for (const CapturedPrompt* p : sorted) {
    const TimeMs d = DayStart(p->at);
    const std::string project = ProjectOf(*p);
    if (d != day) {
      close_day();
      days.push_back({PeriodLabel(p->at, Period::kDay), 0, 0, 0, {}});
      projects.clear();
      transitions.clear();
      day = d;
      last.clear();
    }
    SwitchDay& sd = days.back();
    ++sd.prompts;
    projects.insert(project);
    if (!last.empty() && last != project) {
      ++sd.switches;
      ++transitions[last + " -> " + project];
    }
    last = project;
  }
  close_day();
  return days;
}

}  // namespace msp
