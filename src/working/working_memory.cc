// Packing the working memory of one model call into a token budget.
#include "working/working_memory.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace msp {
namespace {

using json = nlohmann::json;

constexpr std::string_view kSeparator = "\n\n";

std::string_view RoleLabel(EpisodeType type) {
  switch (type) {
    case EpisodeType::kUserMessage:
      return "User";
    case EpisodeType::kAgentResponse:
      return "Agent";
    case EpisodeType::kToolCall:
      return "Tool call";
    case EpisodeType::kToolResult:
      return "Tool result";
    case EpisodeType::kObservation:
      return "Observation";
  }
  return "Step";
}

std::string EpisodeLine(const WorkingEpisode& e) {
  std::string line(RoleLabel(e.type));
  if (!e.tool_name.empty()) line += " (" + e.tool_name + ")";
  line += ": ";
  line += e.text;
  return line;
}

// A header line followed by one line per item; empty when there are no items.
std::string ListSection(std::string_view header, const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  std::string text(header);
  for (const auto& l : lines) {
    text += '\n';
    text += l;
  }
  return text;
}

std::string HistorySection(std::string_view header, const std::vector<WorkingEpisode>& episodes,
                           size_t skip) {
  std::vector<std::string> lines;
  for (size_t i = skip; i < episodes.size(); ++i) lines.push_back(EpisodeLine(episodes[i]));
  return ListSection(header, lines);
}

constexpr std::string_view kFactsHeader = "Relevant facts from memory:";
constexpr std::string_view kRetrievedHeader = "Earlier conversation (retrieved from memory):";
constexpr std::string_view kRecentHeader = "Recent conversation history:";
constexpr std::string_view kToolsHeader = "Available tools:";

// The texts of the six sections with the first `drop` history entries left
// out (retrieved first, then recent), in prompt order.
std::vector<std::string> SectionTexts(const WorkingMemoryInput& in, const std::string& system,
                                      const std::string& facts, const std::string& tools,
                                      const std::string& request, size_t drop) {
  const size_t drop_retrieved = std::min(drop, in.retrieved.size());
  const size_t drop_recent = drop - drop_retrieved;
  return {system,
          facts,
          HistorySection(kRetrievedHeader, in.retrieved, drop_retrieved),
          HistorySection(kRecentHeader, in.recent, drop_recent),
          tools,
          request};
}

std::string Join(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& t : texts) {
    if (t.empty()) continue;
    if (!out.empty()) out += kSeparator;
    out += t;
  }
  return out;
}

std::string FormatScore(double score) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", score);
  return buf;
}

}  // namespace

std::string_view WorkingSectionName(WorkingSectionId id) {
  switch (id) {
    case WorkingSectionId::kSystem:
      return "system";
    case WorkingSectionId::kFacts:
      return "facts";
    case WorkingSectionId::kRetrievedHistory:
      return "retrieved history";
    case WorkingSectionId::kRecentHistory:
      return "recent history";
    case WorkingSectionId::kTools:
      return "tools";
    case WorkingSectionId::kRequest:
      return "request";
  }
  return "unknown";
}

Result<WorkingEpisode> WorkingEpisodeFromMemory(const Memory& m) {
  if (m.kind != Kind::kEpisode) {
    return Status::InvalidArgument("record " + m.id + " is a " + std::string(KindName(m.kind)) +
                                   ", not an episode");
  }
  const json body = json::parse(m.body_json, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return Status::InvalidArgument("episode " + m.id + " has a body that is not a JSON object");
  }
  const auto type_it = body.find("type");
  if (type_it == body.end() || !type_it->is_string()) {
    return Status::InvalidArgument("episode " + m.id + " has no \"type\" in its body");
  }
  const auto type = ParseEpisodeType(type_it->get<std::string>());
  if (!type) {
    return Status::InvalidArgument("episode " + m.id + " has an unknown type '" +
                                   type_it->get<std::string>() + "'");
  }
  WorkingEpisode e;
  e.id = m.id;
  e.type = *type;
  e.text = m.text;
  e.step_number = m.step_number;
  const auto meta = body.find("metadata");
  if (meta != body.end() && meta->is_object()) {
    const auto tool = meta->find("tool_name");
    if (tool != meta->end() && tool->is_string()) e.tool_name = tool->get<std::string>();
  }
  return e;
}

const WorkingSection& WorkingMemory::section(WorkingSectionId id) const {
  for (const auto& s : sections) {
    if (s.id == id) return s;
  }
  static const WorkingSection kEmpty;  // only when `sections` was built by hand
  return kEmpty;
}

std::string WorkingMemory::Render() const {
  std::vector<std::string> texts;
  texts.reserve(sections.size());
  for (const auto& s : sections) texts.push_back(s.text);
  return Join(texts);
}

std::string WorkingMemory::Report() const {
  std::string out;
  for (const auto& s : sections) {
    out += "== ";
    out += WorkingSectionName(s.id);
    if (s.text.empty()) {
      out += " (empty) ==\n";
      continue;
    }
    out += " (" + std::to_string(s.tokens) + " tokens";
    if (s.id != WorkingSectionId::kSystem && s.id != WorkingSectionId::kRequest) {
      out += ", " + std::to_string(s.items) + (s.items == 1 ? " item" : " items");
    }
    out += ") ==\n";
    if (s.id == WorkingSectionId::kFacts) {
      for (const auto& f : facts) {
        out += "- " + f.text + "  [id " + f.id + ", score " + FormatScore(f.score) + "]\n";
      }
    } else {
      out += s.text + "\n";
    }
  }
  if (!dropped.empty()) {
    size_t dropped_tokens = 0;
    for (const auto& d : dropped) dropped_tokens += d.tokens;
    out += "== dropped (" + std::to_string(dropped.size()) + " episodes, " + std::to_string(dropped_tokens) +
           " tokens) ==\n";
    for (const auto& d : dropped) {
      out += "- " + std::string(WorkingSectionName(d.section)) + ": " + d.id + " step " +
             std::to_string(d.step_number) + " (" + std::to_string(d.tokens) + " tokens)\n";
    }
  }
  out += "== total " + std::to_string(total_tokens) + " of " + std::to_string(budget) + " tokens (" +
         counter_name + ") ==\n";
  return out;
}

Result<WorkingMemory> PackWorkingMemory(const WorkingMemoryInput& input, const WorkingMemoryBudget& budget,
                                        const TokenCounter& counter) {
  if (budget.reply_reserve < 0) {
    return Status::InvalidArgument("reply_reserve must be >= 0, got " + std::to_string(budget.reply_reserve));
  }
  if (budget.context_tokens <= budget.reply_reserve) {
    return Status::InvalidArgument("the budget is empty: context_tokens " + std::to_string(budget.context_tokens) +
                                   " must exceed reply_reserve " + std::to_string(budget.reply_reserve));
  }
  const size_t limit = static_cast<size_t>(budget.context_tokens - budget.reply_reserve);

  const std::string system = input.system_prompt.empty() ? "" : "System: " + input.system_prompt;
  std::vector<std::string> fact_lines;
  for (const auto& f : input.facts) fact_lines.push_back("- " + f.text);
  const std::string facts = ListSection(kFactsHeader, fact_lines);
  const std::string tools = ListSection(kToolsHeader, input.tool_schemas);
  const std::string request = input.request.empty() ? "" : "User's current request: " + input.request;

  // Find the fewest history entries to drop (front first) that make the
  // whole prompt fit. The count falls as entries go, so binary search finds
  // the fewest; counting the joined prompt each time keeps the result exact
  // for any counter, additive or not, and the chosen drop always fits.
  const size_t history = input.retrieved.size() + input.recent.size();
  auto fits = [&](size_t drop, size_t* tokens) {
    *tokens = counter.Count(Join(SectionTexts(input, system, facts, tools, request, drop)));
    return *tokens <= limit;
  };
  size_t total = 0;
  size_t drop = 0;
  if (!fits(0, &total)) {
    size_t fixed_total = 0;
    if (!fits(history, &fixed_total)) {
      const std::string msg =
          "the system prompt (" + std::to_string(counter.Count(system)) + " tokens), facts (" +
          std::to_string(counter.Count(facts)) + " tokens, " + std::to_string(input.facts.size()) +
          " facts), tools (" + std::to_string(counter.Count(tools)) + " tokens, " +
          std::to_string(input.tool_schemas.size()) + " tools) and request (" + std::to_string(counter.Count(request)) +
          " tokens) need " + std::to_string(fixed_total) + " tokens, over the budget of " + std::to_string(limit) +
          " (context " + std::to_string(budget.context_tokens) + " - reply reserve " +
          std::to_string(budget.reply_reserve) +
          "); pass fewer facts, shorten the system prompt, tools or request, or raise the context size";
      return Status::FailedPrecondition(msg);
    }
    size_t lo = 0;        // does not fit
    size_t hi = history;  // fits
    total = fixed_total;
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      size_t mid_total = 0;
      if (fits(mid, &mid_total)) {
        hi = mid;
        total = mid_total;
      } else {
        lo = mid;
      }
    }
    drop = hi;
  }

  WorkingMemory wm;
  wm.budget = limit;
  wm.total_tokens = total;
  wm.counter_name = std::string(counter.name());
  wm.facts = input.facts;
  const std::vector<std::string> texts = SectionTexts(input, system, facts, tools, request, drop);
  const size_t drop_retrieved = std::min(drop, input.retrieved.size());
  const size_t drop_recent = drop - drop_retrieved;
  const size_t items[] = {system.empty() ? 0u : 1u,
                          input.facts.size(),
                          input.retrieved.size() - drop_retrieved,
                          input.recent.size() - drop_recent,
                          input.tool_schemas.size(),
                          request.empty() ? 0u : 1u};
  const WorkingSectionId ids[] = {WorkingSectionId::kSystem,         WorkingSectionId::kFacts,
                                  WorkingSectionId::kRetrievedHistory, WorkingSectionId::kRecentHistory,
                                  WorkingSectionId::kTools,          WorkingSectionId::kRequest};
  for (size_t i = 0; i < texts.size(); ++i) {
    WorkingSection s;
    s.id = ids[i];
    s.text = texts[i];
    s.tokens = counter.Count(s.text);
    s.items = items[i];
    wm.sections.push_back(std::move(s));
  }
  for (size_t i = 0; i < drop_retrieved; ++i) {
    const auto& e = input.retrieved[i];
    wm.dropped.push_back({WorkingSectionId::kRetrievedHistory, e.id, e.step_number, counter.Count(EpisodeLine(e))});
  }
  for (size_t i = 0; i < drop_recent; ++i) {
    const auto& e = input.recent[i];
    wm.dropped.push_back({WorkingSectionId::kRecentHistory, e.id, e.step_number, counter.Count(EpisodeLine(e))});
  }
  return wm;
}

}  // namespace msp
