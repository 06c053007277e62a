// SessionStart digest and PostToolUse episodes.
#include "coding/hooks.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "msp/digest.h"
#include "util/fence.h"
#include "util/time.h"
#include "working/tokens.h"

namespace msp {
namespace {

std::string LastComponent(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Number of characters (UTF-8 code points) in `s`.
size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace

std::string SessionStartTask(const std::string& cwd, const WorkTree& tree, const std::vector<std::string>& recent) {
  std::string task;
  if (tree.top_level.empty()) {
    task = "Directory " + cwd + ": continue the work there.";
  } else {
    task = "Repository " + LastComponent(tree.top_level) + " (" + tree.top_level + ")";
    if (!tree.branch.empty()) {
      task += ", branch " + tree.branch;
    } else if (!tree.head.empty()) {
      task += ", detached HEAD " + tree.head.substr(0, 12);
    }
    task += ": continue the work there.";
  }
  if (!recent.empty()) {
    task += " Recent prompts:";
    for (const std::string& p : recent) task += " " + TruncateForEpisode(p, kSessionStartPromptChars);
  }
  return task;
}

std::string SessionMission(const std::string& mission, const std::string& cwd, const WorkTree& tree) {
  if (!mission.empty()) return mission;
  if (!tree.top_level.empty()) return LastComponent(tree.top_level);
  return LastComponent(cwd);
}

std::string RecentPromptsSection(const std::vector<CapturedPrompt>& recent) {
  if (recent.empty()) return "";
  std::string out = "# Recent prompts in this repository (most recent first)";
  for (size_t i = 0; i < recent.size() && i < kSessionStartPrompts; ++i) {
    const CapturedPrompt& p = recent[i];
    const std::string id = p.id.substr(0, 12);
    out += "\n- " + FormatIso8601(p.at) + " " + FenceLabelText({"prompt", p.agent, id, /*trusted=*/false}) + " " +
           FenceBody(TruncateForEpisode(p.text, kSessionStartPromptChars));
  }
  return out;
}

Result<std::string> SessionStartDigest(MemoryLayer& engine, const Options& options, const HookInput& input,
                                       const Namespace& scope, int64_t budget, const std::string& actor,
                                       const std::vector<CapturedPrompt>& recent_prompts) {
  std::string cwd = input.cwd;
  if (cwd.empty()) {
    std::error_code ec;
    cwd = std::filesystem::current_path(ec).string();
  }
  const WorkTree tree = FindWorkTree(cwd);
  // The prompts first, within the budget: the oldest dropped until they fit.
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<TokenCounter> counter, MakeTokenCounter(options.tokens));
  std::vector<CapturedPrompt> shown(recent_prompts.begin(),
                                    recent_prompts.begin() + std::min(recent_prompts.size(), kSessionStartPrompts));
  std::string prompts = RecentPromptsSection(shown);
  // (+kJoin: the blank line between the digest and the section, with slack
  // for tokens that merge across the join)
  constexpr int64_t kJoin = 4;
  while (!shown.empty() && static_cast<int64_t>(counter->Count(prompts)) + kJoin > budget) {
    shown.pop_back();
    prompts = RecentPromptsSection(shown);
  }
  const int64_t prompt_tokens = prompts.empty() ? 0 : static_cast<int64_t>(counter->Count(prompts)) + kJoin;
  std::vector<std::string> texts;
  for (const CapturedPrompt& p : recent_prompts) texts.push_back(p.text);
  MissionQuery q;
  q.mission = scope;
  q.mission.mission = SessionMission(scope.mission, cwd, tree);
  q.mission.session = input.session_id;
  q.mission.operator_id.clear();
  q.asker.operator_id = scope.operator_id;
  q.task_description = SessionStartTask(cwd, tree, texts);
  q.title = SessionStartTask(cwd, tree);
  q.token_budget = std::max<int64_t>(0, budget - prompt_tokens);
  q.actor = actor;
  MSP_ASSIGN_OR_RETURN(auto wm, WorkflowMemory::Open(engine, options));
  MSP_ASSIGN_OR_RETURN(QueryDigest d, wm->Query(q));
  if (d.markdown.empty()) return prompts;
  if (prompts.empty()) return d.markdown;
  std::string both = d.markdown + "\n\n" + prompts;
  // The budget holds, whatever the counter makes of the join.
  if (static_cast<int64_t>(counter->Count(both)) > budget) return d.markdown;
  return both;
}

std::string SessionStartOutput(const std::string& context, std::string_view source) {
  if (context.empty()) return "";
  nlohmann::json j = {{"hookSpecificOutput", {{"hookEventName", "SessionStart"}, {"additionalContext", context}}}};
  (void)source;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string TruncateForEpisode(std::string_view text, size_t max_chars) {
  const size_t total = CodePoints(text);
  if (total <= max_chars) return std::string(text);
  size_t chars = 0, cut = 0;
  while (cut < text.size() && chars < max_chars) {
    ++cut;
    while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) ++cut;
    ++chars;
  }
  return std::string(text.substr(0, cut)) + "… [" + std::to_string(total - chars) + " more characters]";
}

Result<EpisodeStep> ToolUseEpisode(const HookInput& input, const Namespace& scope, size_t max_chars,
                                   const std::string& actor) {
  if (input.tool_name.empty()) return Status::InvalidArgument("the PostToolUse payload names no tool (tool_name)");
  if (input.session_id.empty()) return Status::InvalidArgument("the PostToolUse payload has no session_id");
  // A part as JSON when it fits, else as truncated text. A response that is
  // an object with a long text field keeps its shape: each long string is cut.
  auto part = [&](const std::string& json_text) -> nlohmann::json {
    if (json_text.empty()) return nullptr;
    nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return TruncateForEpisode(json_text, max_chars);
    if (CodePoints(json_text) <= max_chars) return j;
    if (j.is_string()) return TruncateForEpisode(j.get<std::string>(), max_chars);
    if (j.is_object()) {
      // Cut every string field to a share of the budget; drop what still
      // does not fit into one truncated text.
      const size_t share = std::max<size_t>(100, max_chars / std::max<size_t>(1, j.size()));
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it->is_string()) *it = TruncateForEpisode(it->get<std::string>(), share);
      }
      const std::string dumped = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (CodePoints(dumped) <= max_chars + 200) return j;
      return TruncateForEpisode(dumped, max_chars);
    }
    return TruncateForEpisode(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_chars);
  };
  nlohmann::json content = {{"tool", input.tool_name}, {"input", part(input.tool_input)},
                            {"response", part(input.tool_response)}};
  if (!input.tool_use_id.empty()) content["tool_use_id"] = input.tool_use_id;
  if (!input.cwd.empty()) content["cwd"] = input.cwd;
  EpisodeStep step;
  step.ns = scope;
  step.ns.session = input.session_id;
  step.type = EpisodeType::kToolCall;
  step.tool_name = input.tool_name;
  step.content_json = content.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  step.source = "tool";
  step.tags = {"claude-code"};
  step.actor = actor;
  return step;
}

}  // namespace msp
