// What a refresh is made from: git commit records and their matching to
// tasks, the summarizers, the tool-lineage delta and question extraction.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "consolidate/llm_extractor.h"
#include "msp/procedural.h"
#include "orchestrate/orchestrator.h"
#include "procedural/line_diff.h"
#include "provider/chat_client.h"
#include "util/text.h"
#include "util/time.h"

namespace msp {
namespace {

using nlohmann::json;

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

char Low(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string NormalPath(std::string p) {
  while (p.size() >= 2 && p[0] == '.' && p[1] == '/') p.erase(0, 2);
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}

std::string Day(TimeMs t) { return FormatIso8601(t).substr(0, 10); }

std::string ShortHash(const std::string& h) { return h.substr(0, 10); }

// The first sentence (or line) of `text`, at most `max` bytes on a
// character boundary.
std::string FirstSentence(std::string_view text, size_t max = 200) {
  size_t end = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || ((text[i] == '.' || text[i] == '!' || text[i] == '?') &&
                            (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1]))))) {
      end = text[i] == '\n' ? i : i + 1;
      break;
    }
  }
  std::string s(text.substr(0, end));
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "…";
  }
  return s;
}

class ExtractiveSummarizer : public Summarizer {
 public:
  std::string name() const override { return "extractive"; }
  Result<std::string> Summarize(const SummaryInput& in) override {
    std::string out = std::to_string(in.commits.size()) + " commit" + (in.commits.size() == 1 ? "" : "s") +
                      " and " + std::to_string(in.comments.size()) + " comment" +
                      (in.comments.size() == 1 ? "" : "s") + " since " +
                      (in.from == 0 ? std::string("the task was first followed") : FormatIso8601(in.from)) + ".";
    if (in.commits.empty() && in.comments.empty()) {
      out += " Nothing touched the task's paths or named it.";
      return out;
    }
    if (!in.commits.empty()) {
      std::map<std::string, int> folders;
      std::set<std::string> authors;
      for (const CommitInfo& c : in.commits) {
        authors.insert(c.author);
        std::set<std::string> seen;
        for (const std::string& f : c.files) {
          const size_t slash = f.rfind('/');
          const std::string folder = slash == std::string::npos ? f : f.substr(0, slash);
          if (seen.insert(folder).second) ++folders[folder];
        }
      }
      std::vector<std::pair<std::string, int>> ranked(folders.begin(), folders.end());
      std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      out += "\nMost changed: ";
      for (size_t i = 0; i < ranked.size() && i < 5; ++i) {
        out += (i ? ", " : "") + ranked[i].first + " (" + std::to_string(ranked[i].second) + ")";
      }
      out += ". Authors: ";
      size_t n = 0;
      for (const std::string& a : authors) out += (n++ ? ", " : "") + a;
      out += ".\nCommits:";
      const size_t shown = std::min<size_t>(in.commits.size(), 40);
      for (size_t i = in.commits.size() - shown; i < in.commits.size(); ++i) {
        const CommitInfo& c = in.commits[i];
        out += "\n- " + ShortHash(c.hash) + " " + c.subject + " (" + c.author + ", " + Day(c.time) + ")";
        if (!c.files.empty()) {
          out += " — files: ";
          for (size_t k = 0; k < c.files.size() && k < 6; ++k) out += (k ? ", " : "") + c.files[k];
          if (c.files.size() > 6) out += " (+" + std::to_string(c.files.size() - 6) + " more)";
        }
      }
      if (shown < in.commits.size()) out += "\n(" + std::to_string(in.commits.size() - shown) + " earlier commits)";
    }
    if (!in.comments.empty()) {
      out += "\nComments:";
      const size_t shown = std::min<size_t>(in.comments.size(), 20);
      for (size_t i = in.comments.size() - shown; i < in.comments.size(); ++i) {
        const TaskComment& c = in.comments[i];
        out += "\n- " + (c.author.empty() ? std::string("someone") : c.author) + " (" + Day(c.created_at) +
               "): " + FirstSentence(c.text);
      }
      if (shown < in.comments.size()) {
        out += "\n(" + std::to_string(in.comments.size() - shown) + " earlier comments)";
      }
    }
    return out;
  }
};

class LlmSummarizer : public Summarizer {
 public:
  explicit LlmSummarizer(std::unique_ptr<ChatClient> chat) : chat_(std::move(chat)) {}
  std::string name() const override { return "llm:" + chat_->options().model; }
  Result<std::string> Summarize(const SummaryInput& in) override {
    std::string facts = "Task " + in.task.task_id + ": " + in.task.title + "\nWindow: " +
                        (in.from == 0 ? std::string("start") : FormatIso8601(in.from)) + " to " +
                        FormatIso8601(in.to) + "\n";
    for (const CommitInfo& c : in.commits) {
      facts += "\nCommit " + ShortHash(c.hash) + " by " + c.author + " on " + Day(c.time) + ":\n" + c.message +
               "\nFiles: ";
      for (size_t k = 0; k < c.files.size() && k < 20; ++k) facts += (k ? ", " : "") + c.files[k];
      facts += "\n";
      if (facts.size() > 24000) break;
    }
    for (const TaskComment& c : in.comments) {
      facts += "\nComment by " + c.author + " on " + Day(c.created_at) + ":\n" + c.text + "\n";
      if (facts.size() > 32000) break;
    }
    JsonReplySpec spec;
    spec.name = "executive_summary";
    spec.schema = json{{"type", "object"},
                       {"properties", {{"summary", {{"type", "string"}, {"minLength", 1}}}}},
                       {"required", json::array({"summary"})},
                       {"additionalProperties", false}};
    std::vector<ChatMessage> messages = {
        ChatMessage::System("You brief an operator returning to a long-running task. From the commits "
                            "and comments given, write an executive summary of what changed since the last "
                            "briefing: the significant events, in a few short paragraphs, naming commits "
                            "by their short hash. Say only what the material supports."),
        ChatMessage::User(facts)};
    MSP_ASSIGN_OR_RETURN(json reply, chat_->CompleteJson(messages, spec));
    return reply["summary"].get<std::string>();
  }

 private:
  std::unique_ptr<ChatClient> chat_;
};

}  // namespace

Result<CommitInfo> CommitFromMemory(const Memory& m) {
  if (m.kind != Kind::kEvent) return Status::InvalidArgument("record " + m.id + " is not a git commit");
  json b = json::parse(m.body_json, nullptr, false);
  if (!b.is_object() || b.value("type", "") != "git_commit") {
    return Status::InvalidArgument("record " + m.id + " is not a git commit");
  }
  try {
    CommitInfo c;
    c.record_id = m.id;
    c.hash = b.value("hash", "");
    c.author = b.value("author", "");
    c.subject = b.value("subject", "");
    c.message = b.value("message", c.subject);
    if (b.contains("files") && b["files"].is_array()) {
      for (const json& f : b["files"]) {
        if (f.is_string()) c.files.push_back(f.get<std::string>());
      }
    }
    c.repo = b.value("repo", "");
    c.time = b.value("time", m.valid_at);
    c.ingested_at = m.created_at;
    c.access_level = m.access_level;
    if (c.hash.empty()) return Status::InvalidArgument("git commit record " + m.id + " has no hash");
    if (c.subject.empty()) c.subject = FirstSentence(c.message);
    return c;
  } catch (const json::exception& e) {
    return Status::InvalidArgument("git commit record " + m.id + " is malformed: " + e.what());
  }
}

bool MentionsWord(std::string_view text, std::string_view word) {
  if (word.empty() || word.size() > text.size()) return false;
  for (size_t i = 0; i + word.size() <= text.size(); ++i) {
    bool eq = true;
    for (size_t k = 0; k < word.size(); ++k) {
      if (Low(text[i + k]) != Low(word[k])) {
        eq = false;
        break;
      }
    }
    if (!eq) continue;
    // A word boundary on each side, where the word itself starts / ends
    // with a word character.
    const bool left_ok = i == 0 || !WordChar(word.front()) || !WordChar(text[i - 1]);
    const size_t after = i + word.size();
    const bool right_ok = after == text.size() || !WordChar(word.back()) || !WordChar(text[after]);
    if (left_ok && right_ok) return true;
  }
  return false;
}

bool CommitTouchesTask(const CommitInfo& c, const Task& t) {
  if (MentionsWord(c.message, t.task_id) || MentionsWord(c.subject, t.task_id)) return true;
  for (const std::string& r : t.refs) {
    if (MentionsWord(c.message, r) || MentionsWord(c.subject, r)) return true;
  }
  for (const std::string& raw : c.files) {
    const std::string file = NormalPath(raw);
    for (const std::string& p : t.paths) {
      const std::string path = NormalPath(p);
      if (path.empty()) continue;
      if (file == path || (file.size() > path.size() && file.compare(0, path.size(), path) == 0 &&
                           file[path.size()] == '/')) {
        return true;
      }
    }
    if (!t.components.empty()) {
      size_t start = 0;
      while (start <= file.size()) {
        size_t slash = file.find('/', start);
        const std::string segment = file.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (std::find(t.components.begin(), t.components.end(), segment) != t.components.end()) return true;
        if (slash == std::string::npos) break;
        start = slash + 1;
      }
    }
  }
  return false;
}

std::unique_ptr<Summarizer> MakeExtractiveSummarizer() { return std::make_unique<ExtractiveSummarizer>(); }

std::unique_ptr<Summarizer> MakeLlmSummarizer(std::unique_ptr<ChatClient> chat) {
  return std::make_unique<LlmSummarizer>(std::move(chat));
}

Result<std::unique_ptr<Summarizer>> MakeConfiguredSummarizer(const Settings& options,
                                                             std::string_view openai_env_key) {
  const std::string& kind = options.orchestrate.summarizer;
  if (kind != "auto" && kind != "llm" && kind != "extractive") {
    return Status::InvalidArgument("orchestrate.summarizer: unknown value '" + kind +
                                   "'; allowed: auto, llm, extractive");
  }
  if (kind == "extractive" || (kind == "auto" && options.llm.model.empty())) return MakeExtractiveSummarizer();
  if (options.llm.model.empty()) {
    return Status::InvalidArgument("orchestrate.summarizer llm needs a chat model: set llm.model (and llm.base_url)");
  }
  MSP_ASSIGN_OR_RETURN(ChatOptions chat_options, ChatOptionsFor(options.llm, openai_env_key));
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<ChatClient> chat, ChatClient::Create(chat_options));
  return MakeLlmSummarizer(std::move(chat));
}

Result<std::vector<ToolChange>> ToolLineageDelta(MemoryLayer& engine, const Namespace& scope,
                                                 const std::string& agent, TimeMs from, TimeMs to) {
  ListRequest req;
  req.scope.tenant = scope.tenant;
  req.scope.agent = agent;
  req.filter.kinds = {Kind::kProcedure};
  req.filter.include_superseded = true;
  if (from > 0) req.filter.created_from = from + 1;
  if (to > 0) req.filter.created_to = to + 1;
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, engine.List(req));
  std::set<std::pair<std::string, std::string>> items;  // (agent, tool name) changed in the window
  for (const Memory& m : records) {
    json b = json::parse(m.body_json, nullptr, false);
    if (!b.is_object() || b.value("type", "") != "tool" || !b.contains("name") || !b["name"].is_string()) continue;
    items.insert({m.ns.agent, b["name"].get<std::string>()});
  }
  std::vector<ToolChange> out;
  for (const auto& [agent_name, tool] : items) {
    Namespace ns;
    ns.tenant = scope.tenant;
    ns.agent = agent_name;
    ProceduralMemory memory(engine, ns);
    MSP_ASSIGN_OR_RETURN(std::vector<ProcedureVersion> versions, memory.History(ProcedureType::kTool, tool));
    const ProcedureVersion* before = nullptr;
    const ProcedureVersion* after = nullptr;
    for (const ProcedureVersion& v : versions) {
      if (from > 0 && v.created_at <= from) before = &v;
      if (to == 0 || v.created_at <= to) after = &v;
    }
    if (after == nullptr || after == before) continue;
    const bool existed = before != nullptr && !before->removed;
    ToolChange change;
    change.agent = agent_name;
    change.name = tool;
    change.to_version = after->version;
    change.version_record_id = after->id;
    if (!existed && after->removed) continue;  // added and retired inside the window
    if (!existed) {
      change.change = "added";
    } else if (after->removed) {
      change.change = "retired";
      change.from_version = before->version;
    } else {
      Result<ToolDefinition> old_tool = ToolFromVersion(*before);
      Result<ToolDefinition> new_tool = ToolFromVersion(*after);
      if (!old_tool.ok()) return old_tool.status();
      if (!new_tool.ok()) return new_tool.status();
      const json old_schema = json::parse(old_tool->parameters_json, nullptr, false);
      const json new_schema = json::parse(new_tool->parameters_json, nullptr, false);
      change.description_changed = old_tool->description != new_tool->description;
      if (old_schema == new_schema && !change.description_changed) continue;
      change.change = "changed";
      change.from_version = before->version;
      if (old_schema != new_schema) change.schema_diff = LineDiff(old_schema.dump(2), new_schema.dump(2));
    }
    out.push_back(std::move(change));
  }
  return out;
}

std::vector<std::string> QuestionsIn(std::string_view text) {
  std::vector<std::string> out;
  auto add = [&](std::string q) {
    q = std::string(TrimAsciiSpace(q));
    while (!q.empty() && (q.front() == '-' || q.front() == '*' || q.front() == '>')) {
      q = std::string(TrimAsciiSpace(q.substr(1)));
    }
    if (q.size() >= 8 && std::find(out.begin(), out.end(), q) == out.end()) out.push_back(std::move(q));
  };
  size_t line_start = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string line(TrimAsciiSpace(text.substr(line_start, line_end - line_start)));
    std::string lower;
    for (char c : line) lower += Low(c);
    std::string_view bare = lower;
    while (!bare.empty() && (bare.front() == '-' || bare.front() == '*' || bare.front() == ' ')) bare.remove_prefix(1);
    if (bare.rfind("open question", 0) == 0 || bare.rfind("question:", 0) == 0 || bare.rfind("tbd", 0) == 0 ||
        bare.rfind("unresolved", 0) == 0) {
      add(line);
    } else {
      // Sentences ending in '?'.
      size_t s = 0;
      for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        const bool end = (c == '.' || c == '!' || c == '?') && (i + 1 == line.size() || line[i + 1] == ' ');
        if (!end) continue;
        if (c == '?') add(line.substr(s, i + 1 - s));
        s = i + 1;
      }
    }
    line_start = line_end + 1;
  }
  return out;
}

}  // namespace msp
