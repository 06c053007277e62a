// Packing the working memory of one model call into a token budget.
#include "working/working_memory.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "util/fence.h"

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

std::string EpisodeLineImpl(const WorkingEpisode& e) {
  std::string line(RoleLabel(e.type));
  if (!e.tool_name.empty()) line += " (" + FenceLine(e.tool_name) + ")";
  line += " " + FenceLabelText({"episode", e.source, ShortId(e.id), e.trusted}) + ": ";
  line += FenceBody(e.text);
  return line;
}

std::string FactLine(const WorkingFact& f) {
  return "- " + FenceLabelText({"fact", f.source, ShortId(f.id), f.trusted}) + " " + FenceBody(f.text);
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
  for (size_t i = skip; i < episodes.size(); ++i) lines.push_back(EpisodeLineImpl(episodes[i]));
  return ListSection(header, lines);
}

constexpr std::string_view kCoreHeader =
    "Core memory (always in view; edit it with core_memory_append and core_memory_replace):";
constexpr std::string_view kFactsHeader = "Relevant facts from memory:";
constexpr std::string_view kRetrievedHeader = "Earlier conversation (retrieved from memory):";
constexpr std::string_view kSummaryHeader = "Summary of earlier conversation:";
constexpr std::string_view kRecentHeader = "Recent conversation history:";
constexpr std::string_view kToolsHeader = "Available tools:";
constexpr std::string_view kTurnHeader = "This turn so far:";

// Prompt order of the sections.
constexpr WorkingSectionId kOrder[] = {
    WorkingSectionId::kSystem,        WorkingSectionId::kCoreMemory,    WorkingSectionId::kFacts,
    WorkingSectionId::kRetrievedHistory, WorkingSectionId::kSummary,   WorkingSectionId::kRecentHistory,
    WorkingSectionId::kTools,         WorkingSectionId::kRequest,       WorkingSectionId::kTurn};
constexpr size_t kSections = sizeof(kOrder) / sizeof(kOrder[0]);

size_t CountChars(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string CoreSection(const std::vector<WorkingBlock>& blocks) {
  std::vector<std::string> lines;
  for (const WorkingBlock& b : blocks) {
    // The value behind the gutter: a stored "</persona>" cannot close the block.
    const std::string label = FenceLine(b.label);
    const std::string value = FenceBody(b.value);
    lines.push_back("<" + label + " chars=\"" + std::to_string(CountChars(b.value)) + "/" +
                    std::to_string(b.limit) + "\">" + (value.empty() ? "" : "\n" + std::string(kFenceGutter)) +
                    value + "\n</" + label + ">");
  }
  return ListSection(kCoreHeader, lines);
}

// The sections that are never cut, rendered once.
struct FixedTexts {
  std::string system, core, facts, tools, request, turn;
};

// The texts of the nine sections in prompt order, with the first `drop`
// history entries left out (retrieved first, then recent).
std::vector<std::string> SectionTexts(const WorkingMemoryInput& in, const FixedTexts& f, size_t drop,
                                      const std::string& summary) {
  const size_t drop_retrieved = std::min(drop, in.retrieved.size());
  const size_t drop_recent = drop - drop_retrieved;
  return {f.system,
          f.core,
          f.facts,
          HistorySection(kRetrievedHeader, in.retrieved, drop_retrieved),
          summary.empty() ? "" : std::string(kSummaryHeader) + "\n" + std::string(kFenceGutter) + FenceBody(summary),
          HistorySection(kRecentHeader, in.recent, drop_recent),
          f.tools,
          f.request,
          f.turn};
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
    case WorkingSectionId::kCoreMemory:
      return "core memory";
    case WorkingSectionId::kSummary:
      return "summary";
    case WorkingSectionId::kTurn:
      return "turn";
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
  e.source = m.source;
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

std::string WorkingMemory::RenderBefore(WorkingSectionId id) const {
  std::vector<std::string> texts;
  for (const auto& s : sections) {
    if (s.id == id) break;
    texts.push_back(s.text);
  }
  return Join(texts);
}

std::string WorkingEpisodeLine(const WorkingEpisode& e) { return EpisodeLineImpl(e); }

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
    if (s.id != WorkingSectionId::kSystem && s.id != WorkingSectionId::kRequest &&
        s.id != WorkingSectionId::kSummary) {
      out += ", " + std::to_string(s.items) + (s.items == 1 ? " item" : " items");
    }
    out += ") ==\n";
    if (s.id == WorkingSectionId::kFacts) {
      for (const auto& f : facts) {
        out += FactLine(f) + "  [id " + f.id + ", score " + FormatScore(f.score) + "]\n";
      }
    } else {
      out += s.text + "\n";
    }
  }
  if (!dropped.empty()) {
    size_t dropped_tokens = 0;
    for (const auto& d : dropped) dropped_tokens += d.tokens;
    out += "== dropped (" + std::to_string(dropped.size()) + " episodes, " + std::to_string(dropped_tokens) +
           " tokens" + (summarised ? ", summarised where marked" : "") + ") ==\n";
    for (const auto& d : dropped) {
      out += "- " + std::string(WorkingSectionName(d.section)) + ": " + d.id + " step " +
             std::to_string(d.step_number) + " (" + std::to_string(d.tokens) + " tokens)" +
             (d.summarised ? " [summarised]" : "") + "\n";
    }
    if (!summary_error.empty()) out += "(not summarised: " + summary_error + ")\n";
  }
  out += "== total " + std::to_string(total_tokens) + " of " + std::to_string(budget) + " tokens (" +
         counter_name + ") ==\n";
  return out;
}

Result<WorkingMemory> PackWorkingMemory(const WorkingMemoryInput& input, const WorkingMemoryBudget& budget,
                                        const TokenCounter& counter, const WorkingMemoryPackOptions& options) {
  if (budget.reply_reserve < 0) {
    return Status::InvalidArgument("reply_reserve must be >= 0, got " + std::to_string(budget.reply_reserve));
  }
  if (budget.context_tokens <= budget.reply_reserve) {
    return Status::InvalidArgument("the budget is empty: context_tokens " + std::to_string(budget.context_tokens) +
                                   " must exceed reply_reserve " + std::to_string(budget.reply_reserve));
  }
  const size_t limit = static_cast<size_t>(budget.context_tokens - budget.reply_reserve);

  FixedTexts f;
  f.system = input.system_prompt.empty() ? "" : "System: " + input.system_prompt;
  f.core = CoreSection(input.core_blocks);
  std::vector<std::string> fact_lines;
  for (const auto& fact : input.facts) fact_lines.push_back(FactLine(fact));
  f.facts = ListSection(kFactsHeader, fact_lines);
  std::vector<std::string> tool_lines;
  for (const auto& t : input.tool_schemas) tool_lines.push_back(FenceLine(t));
  f.tools = ListSection(kToolsHeader, tool_lines);
  f.request = input.request.empty() ? "" : "User's current request: " + input.request;
  f.turn = ListSection(kTurnHeader, input.turn);

  // Find the fewest history entries to drop (front first) that make the
  // whole prompt fit. The count falls as entries go, so binary search finds
  // the fewest; counting the joined prompt each time keeps the result exact
  // for any counter, additive or not, and the chosen drop always fits.
  const size_t history = input.retrieved.size() + input.recent.size();
  auto fits = [&](size_t drop, const std::string& summary, size_t* tokens) {
    *tokens = counter.Count(Join(SectionTexts(input, f, drop, summary)));
    return *tokens <= limit;
  };
  // The fewest drops in [lo, history] that fit with `summary`, given that
  // `history` fits (*total gets its count).
  auto fewest = [&](size_t lo, const std::string& summary, size_t* total) {
    size_t hi = history;
    size_t hi_total = *total;
    if (lo < hi) {
      size_t t = 0;
      if (fits(lo, summary, &t)) return *total = t, lo;
    }
    // invariant: lo does not fit, hi fits
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      size_t t = 0;
      if (fits(mid, summary, &t)) {
        hi = mid;
        hi_total = t;
      } else {
        lo = mid;
      }
    }
    *total = hi_total;
    return hi;
  };
  size_t total = 0;
  size_t drop = 0;
  std::string summary;
  std::string summary_error;
  size_t summarised = 0;
  if (!fits(0, "", &total)) {
    size_t fixed_total = 0;
    if (!fits(history, "", &fixed_total)) {
      const std::string msg =
          "the system prompt (" + std::to_string(counter.Count(f.system)) + " tokens), core memory (" +
          std::to_string(counter.Count(f.core)) + " tokens, " + std::to_string(input.core_blocks.size()) +
          " blocks), facts (" + std::to_string(counter.Count(f.facts)) + " tokens, " +
          std::to_string(input.facts.size()) + " facts), tools (" + std::to_string(counter.Count(f.tools)) +
          " tokens, " + std::to_string(input.tool_schemas.size()) + " tools), request (" +
          std::to_string(counter.Count(f.request)) + " tokens) and this turn (" + std::to_string(counter.Count(f.turn)) +
          " tokens) need " + std::to_string(fixed_total) + " tokens (" + std::string(counter.name()) +
          "), over the budget of " + std::to_string(limit) + " (context " + std::to_string(budget.context_tokens) +
          " - reply reserve " + std::to_string(budget.reply_reserve) + ") by " + std::to_string(fixed_total - limit) +
          "; pass fewer facts, shorten the system prompt, core memory, tools or request, or raise the context size";
      return Status::FailedPrecondition(msg);
    }
    total = fixed_total;
    drop = fewest(0, "", &total);
    if (options.summarise && drop > 0) {
      std::vector<WorkingEpisode> dropped;
      for (size_t i = 0; i < drop; ++i) {
        dropped.push_back(i < input.retrieved.size() ? input.retrieved[i] : input.recent[i - input.retrieved.size()]);
      }
      Result<std::string> s = options.summarise(dropped);
      if (!s.ok()) {
        summary_error = s.status().ToString();
      } else if (s->empty()) {
        summary_error = "the summariser returned nothing";
      } else {
        size_t with_all = 0;
        if (fits(history, *s, &with_all)) {
          size_t t = with_all;
          drop = fewest(drop, *s, &t);
          total = t;
          summary = *s;
          summarised = dropped.size();
        } else {
          summary_error = "the summary (" + std::to_string(counter.Count(*s)) + " tokens) does not fit the budget";
        }
      }
    }
  }

  WorkingMemory wm;
  wm.budget = limit;
  wm.total_tokens = total;
  wm.counter_name = std::string(counter.name());
  wm.facts = input.facts;
  wm.summarised = !summary.empty();
  wm.summary_error = summary_error;
  const std::vector<std::string> texts = SectionTexts(input, f, drop, summary);
  const size_t drop_retrieved = std::min(drop, input.retrieved.size());
  const size_t drop_recent = drop - drop_retrieved;
  const size_t items[kSections] = {f.system.empty() ? 0u : 1u,
                                   input.core_blocks.size(),
                                   input.facts.size(),
                                   input.retrieved.size() - drop_retrieved,
                                   summary.empty() ? 0u : 1u,
                                   input.recent.size() - drop_recent,
                                   input.tool_schemas.size(),
                                   f.request.empty() ? 0u : 1u,
                                   input.turn.size()};
  for (size_t i = 0; i < kSections; ++i) {
    WorkingSection s;
    s.id = kOrder[i];
    s.text = texts[i];
    s.tokens = counter.Count(s.text);
    s.items = items[i];
    wm.sections.push_back(std::move(s));
  }
  for (size_t i = 0; i < drop; ++i) {
    const bool retrieved = i < input.retrieved.size();
    const auto& e = retrieved ? input.retrieved[i] : input.recent[i - input.retrieved.size()];
    wm.dropped.push_back({retrieved ? WorkingSectionId::kRetrievedHistory : WorkingSectionId::kRecentHistory, e.id,
                          e.step_number, counter.Count(EpisodeLineImpl(e)), i < summarised});
  }
  return wm;
}

}  // namespace msp
