// Rule-based session summaries and the session index.
#include "coding/session_summary.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

#include "util/text.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/uuid.h"
#include "working/tokens.h"

namespace msp {
namespace {

using SJson = nlohmann::json;

constexpr size_t kAskedChars = 300;
constexpr size_t kMaxAsked = 20;
constexpr size_t kMaxCommands = 30;
constexpr size_t kMaxFiles = 100;

std::string JsonText(const SJson& j) { return j.dump(-1, ' ', false, SJson::error_handler_t::replace); }

// `text` cut to `max` characters (UTF-8 aware) with "…".
std::string Cut(std::string_view text, size_t max) {
  const std::string_view kept = Utf8PrefixChars(text, max);
  return kept.size() == text.size() ? std::string(text) : std::string(kept) + "…";
}

// Whitespace runs (newlines included) as one space.
std::string OneLineOf(std::string_view text) { return CollapseAsciiSpace(text); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void AddUnique(std::vector<std::string>* list, const std::string& item, size_t max) {
  if (item.empty() || list->size() >= max) return;
  if (std::find(list->begin(), list->end(), item) == list->end()) list->push_back(item);
}

// "a, b, c (+N more)".
std::string ListOf(const std::vector<std::string>& items, size_t shown) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > shown) out += " (+" + std::to_string(items.size() - shown) + " more)";
  return out;
}

}  // namespace

std::vector<std::string> DecisionSentences(const std::string& text) {
  static const char* const kMarkers[] = {"we decided", "i decided", "decision:", "decided to", "let's use",
                                         "lets use",   "let's go with", "go with ", "from now on", "instead of",
                                         "don't use",  "do not use", "we will use", "we'll use", "always use",
                                         "never use",  "switch to ", "stick with"};
  std::vector<std::string> out;
  // Sentences: split at '.', '!', '?', ';' followed by a space, and at newlines.
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size() || text[i] == '\n' ||
                     ((text[i] == '.' || text[i] == '!' || text[i] == '?' || text[i] == ';') &&
                      (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n'));
    if (!end) continue;
    std::string sentence = OneLineOf(std::string_view(text).substr(start, i - start + (i < text.size() && text[i] != '\n' ? 1 : 0)));
    start = i + 1;
    if (sentence.size() < 8) continue;
    const std::string lower = Lower(sentence);
    for (const char* m : kMarkers) {
      if (lower.find(m) != std::string::npos) {
        out.push_back(Cut(sentence, 200));
        break;
      }
    }
  }
  return out;
}

SessionSummary SummarizeSession(const std::string& session_id, const std::vector<CapturedPrompt>& prompts,
                                const std::vector<Memory>& episodes, TimeMs end) {
  SessionSummary s;
  s.session_id = session_id;
  s.ended_at = end;
  for (const CapturedPrompt& p : prompts) {
    if (s.started_at == 0 || p.at < s.started_at) s.started_at = p.at;
    if (s.repository.empty()) s.repository = p.repository;
    if (s.branch.empty()) s.branch = p.branch;
    if (s.asked.size() < kMaxAsked) s.asked.push_back(Cut(OneLineOf(p.text), kAskedChars));
    for (const std::string& d : DecisionSentences(p.text)) AddUnique(&s.decisions, d, 20);
    if (!p.id.empty()) s.provenance.push_back({"commit", p.id, "prompt"});
  }
  for (const Memory& m : episodes) {
    const SJson body = SJson::parse(m.body_json, nullptr, /*allow_exceptions=*/false);
    // The observation is the episode's content (ObservationEpisode).
    const SJson* content = &body;
    if (body.is_object() && body.contains("content") && body["content"].is_object()) content = &body["content"];
    if (!content->is_object() || !content->contains("tool")) continue;
    Result<Observation> o = ParseObservationJson(JsonText(*content));
    if (!o.ok()) continue;
    ++s.tool_uses;
    if (s.started_at == 0 || (o->at > 0 && o->at < s.started_at)) s.started_at = o->at;
    if (s.repository.empty()) s.repository = o->repository;
    if (s.branch.empty()) s.branch = o->branch;
    for (const std::string& f : o->files) AddUnique(o->changed_files ? &s.files_changed : &s.files_read, f, kMaxFiles);
    if (o->tool == "Bash" && !o->command.empty() && s.commands.size() < kMaxCommands) {
      s.commands.push_back({Cut(OneLineOf(o->command), 200), o->exit_code, o->failed});
    }
    if (o->failed) ++s.failures;
    s.provenance.push_back({"episode", m.id, o->tool});
  }
  // Files read that were also changed are listed once, as changed.
  s.files_read.erase(std::remove_if(s.files_read.begin(), s.files_read.end(),
                                    [&](const std::string& f) {
                                      return std::find(s.files_changed.begin(), s.files_changed.end(), f) !=
                                             s.files_changed.end();
                                    }),
                     s.files_read.end());
  if (s.started_at == 0) s.started_at = end;
  if (s.tool_uses == 0 && s.asked.empty()) {
    s.outcome = "nothing recorded";
  } else if (!s.commands.empty() && s.commands.back().failed) {
    s.outcome = "ended after a failing command (" + s.commands.back().command + ")";
  } else if (s.failures > 0) {
    s.outcome = std::to_string(s.failures) + " failed tool use" + (s.failures == 1 ? "" : "s") +
                ", the last command succeeded";
  } else {
    s.outcome = s.files_changed.empty() ? "no files changed, no failures"
                                        : std::to_string(s.files_changed.size()) + " file" +
                                              (s.files_changed.size() == 1 ? "" : "s") + " changed, no failures";
  }
  return s;
}

std::string SessionSummaryText(const SessionSummary& s) {
  std::string out = "# Session " + s.session_id;
  if (!s.repository.empty()) out += " in " + s.repository;
  if (!s.branch.empty()) out += " (branch " + s.branch + ")";
  out += "\n" + FormatIso8601(s.started_at) + " to " + FormatIso8601(s.ended_at) + ": " +
         std::to_string(s.asked.size()) + " prompt" + (s.asked.size() == 1 ? "" : "s") + ", " +
         std::to_string(s.tool_uses) + " tool use" + (s.tool_uses == 1 ? "" : "s") + ". Outcome: " + s.outcome + ".";
  if (!s.narrative.empty()) out += "\n## Summary (" + s.made_by + ")\n" + s.narrative;
  if (!s.asked.empty()) {
    out += "\n## Asked";
    for (const std::string& a : s.asked) out += "\n- " + a;
  }
  if (!s.files_changed.empty()) out += "\n## Files changed\n" + ListOf(s.files_changed, 30);
  if (!s.files_read.empty()) out += "\n## Files read\n" + ListOf(s.files_read, 15);
  if (!s.commands.empty()) {
    out += "\n## Commands";
    for (const SessionSummary::Command& c : s.commands) {
      out += "\n- `" + c.command + "`";
      if (c.exit_code >= 0) out += " (exit " + std::to_string(c.exit_code) + ")";
      if (c.failed && c.exit_code <= 0) out += " (failed)";
    }
  }
  if (!s.decisions.empty()) {
    out += "\n## Decisions mentioned";
    for (const std::string& d : s.decisions) out += "\n- " + d;
  }
  return out;
}

std::string SessionSummaryBody(const SessionSummary& s) {
  SJson commands = SJson::array();
  for (const SessionSummary::Command& c : s.commands) {
    commands.push_back({{"command", c.command}, {"exit_code", c.exit_code}, {"failed", c.failed}});
  }
  SJson j = {{"type", "session_summary"},
            {"session_id", s.session_id},
            {"repository", s.repository},
            {"branch", s.branch},
            {"reason", s.reason},
            {"started_at", FormatIso8601(s.started_at)},
            {"ended_at", FormatIso8601(s.ended_at)},
            {"asked", s.asked},
            {"files_changed", s.files_changed},
            {"files_read", s.files_read},
            {"commands", commands},
            {"tool_uses", s.tool_uses},
            {"failures", s.failures},
            {"decisions", s.decisions},
            {"outcome", s.outcome},
            {"made_by", s.made_by}};
  if (!s.narrative.empty()) j["narrative"] = s.narrative;
  return JsonText(j);
}

std::string SessionSummaryId(const std::string& tenant, const std::string& session_id) {
  return NameUuid("msp/coding/session-summary/" + tenant + "/" + session_id);
}

Result<Memory> WriteSessionSummary(MemoryLayer& engine, const Namespace& scope, const SessionSummary& s,
                                   const std::string& actor, bool* written) {
  if (written != nullptr) *written = false;
  if (s.session_id.empty()) return Status::InvalidArgument("a session summary needs the session id");
  Namespace ns = scope;
  ns.session.clear();
  const std::string id = SessionSummaryId(ns.tenant, s.session_id);
  if (Result<Memory> existing = engine.Get(ns, id); existing.ok()) return existing;
  Memory m;
  m.id = id;
  m.ns = ns;
  m.kind = Kind::kEvent;
  m.layer = Layer::kEpisodic;
  m.text = SessionSummaryText(s);
  m.body_json = SessionSummaryBody(s);
  m.tags = {"claude-code", kSessionSummaryTag};
  // (a tag holds at most 256 bytes: a longer path or branch is not tagged)
  if (!s.repository.empty() && s.repository.size() <= 240) m.tags.push_back("repository:" + s.repository);
  if (!s.branch.empty() && s.branch.size() <= 240) m.tags.push_back("branch:" + s.branch);
  m.source = kSessionSummarySource;
  m.valid_at = s.started_at;
  m.provenance = s.provenance;
  RecordBatch batch;
  batch.scope = ns;
  batch.puts = {m};
  batch.expected_seq = {0};  // written once: a second writer's put is a conflict
  batch.actor = actor;
  batch.reason = "session summary (SessionEnd)";
  Result<std::vector<Memory>> r = engine.Commit(batch);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kConflict || r.status().code() == StatusCode::kAlreadyExists) {
      if (Result<Memory> existing = engine.Get(ns, id); existing.ok()) return existing;
    }
    return r.status();
  }
  if (written != nullptr) *written = true;
  return r->empty() ? m : r->front();
}

std::string SessionIndexLine(const Memory& summary, size_t detail_tokens) {
  const SJson b = SJson::parse(summary.body_json, nullptr, /*allow_exceptions=*/false);
  auto str = [&](const char* k) { return b.is_object() && b.contains(k) && b[k].is_string() ? b[k].get<std::string>() : ""; };
  auto list = [&](const char* k) {
    std::vector<std::string> v;
    if (b.is_object() && b.contains(k) && b[k].is_array()) {
      for (const SJson& x : b[k]) {
        if (x.is_string()) v.push_back(x.get<std::string>());
      }
    }
    return v;
  };
  std::string when = str("started_at");
  if (when.size() >= 16) when = when.substr(0, 10) + " " + when.substr(11, 5);
  const std::string session = str("session_id");
  std::string line = "- " + when + " [session " + session.substr(0, 8) + " · record " + summary.id + "]";
  const std::vector<std::string> asked = list("asked");
  if (!asked.empty()) {
    line += " asked: \"" + Cut(asked.front(), 80) + "\"";
    if (asked.size() > 1) line += " (+" + std::to_string(asked.size() - 1) + " more)";
  }
  const std::vector<std::string> files = list("files_changed");
  if (!files.empty()) line += " · files: " + ListOf(files, 3);
  const std::string outcome = str("outcome");
  if (!outcome.empty()) line += " · outcome: " + Cut(outcome, 80);
  line += " · details ~" + std::to_string(detail_tokens) + " tokens";
  return line;
}

std::string SessionIndexSection(const std::vector<Memory>& summaries, const TokenCounter& counter, int64_t budget) {
  std::vector<std::string> lines;
  for (const Memory& m : summaries) lines.push_back(SessionIndexLine(m, counter.Count(m.text)));
  const std::string heading =
      "# Last sessions on this repository and branch (most recent first; open one by its record id: "
      "memory_get or msp get)";
  while (!lines.empty()) {
    std::string out = heading;
    for (const std::string& l : lines) out += "\n" + l;
    if (static_cast<int64_t>(counter.Count(out)) <= budget) return out;
    lines.pop_back();
  }
  return "";
}

Result<std::vector<Memory>> RecentSessionSummaries(MemoryLayer& engine, const Namespace& scope,
                                                   const std::string& repository, const std::string& branch,
                                                   size_t limit) {
  // The repository's summaries, newest first, a few pages of them: the
  // source (filtered by the store) leaves out every other event, such as the
  // retrieval log each search and SessionStart writes, before rows are read
  // into records; the tag leaves out other repositories' summaries.
  ListRequest req;
  req.scope = scope;
  req.scope.session.clear();
  req.filter.kinds = {Kind::kEvent};
  req.filter.sources = {kSessionSummarySource};
  req.filter.tags = {"repository:" + repository};
  req.newest_first = true;
  req.limit = static_cast<int>(std::clamp<size_t>(4 * limit, 8, 200));
  constexpr int kPages = 10;
  std::vector<Memory> out;
  for (int page = 0; page < kPages && out.size() < limit; ++page) {
    req.offset = page * req.limit;
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> some, engine.List(req));
    for (Memory& m : some) {
      if (out.size() >= limit) break;
      if (std::find(m.tags.begin(), m.tags.end(), kSessionSummaryTag) == m.tags.end()) continue;
      if (!branch.empty() && std::find(m.tags.begin(), m.tags.end(), "branch:" + branch) == m.tags.end()) continue;
      out.push_back(std::move(m));
    }
    if (static_cast<int>(some.size()) < req.limit) break;
  }
  return out;
}

}  // namespace msp
