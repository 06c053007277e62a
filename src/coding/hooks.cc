// SessionStart digest and PostToolUse episodes.
#include "coding/hooks.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "coding/session_summary.h"
#include "msp/digest.h"
#include "util/fence.h"
#include "util/time.h"
#include "util/utf8.h"
#include "working/tokens.h"

namespace msp {
namespace {

std::string LastComponent(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
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
    for (const std::string& p : recent) task += " " + CapUtf8Chars(p, kSessionStartPromptChars);
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
           FenceBody(CapUtf8Chars(p.text, kSessionStartPromptChars));
  }
  return out;
}

Result<std::string> SessionStartDigest(MemoryLayer& engine, const Options& options, const HookInput& input,
                                       const Namespace& scope, int64_t budget, const std::string& actor,
                                       const std::vector<CapturedPrompt>& recent_prompts,
                                       const std::vector<Memory>& recent_sessions) {
  std::string cwd = input.cwd;
  if (cwd.empty()) {
    std::error_code ec;
    cwd = std::filesystem::current_path(ec).string();
  }
  const WorkTree tree = FindWorkTree(cwd);
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<TokenCounter> counter, MakeTokenCounter(options.tokens));
  // (+kJoin: the blank line between sections, with slack for tokens that
  // merge across the join)
  constexpr int64_t kJoin = 4;
  // The session index first, within half of the budget.
  const std::string index = SessionIndexSection(recent_sessions, *counter, budget / 2 - kJoin);
  const int64_t index_tokens = index.empty() ? 0 : static_cast<int64_t>(counter->Count(index)) + kJoin;
  budget -= index_tokens;
  auto with_index = [&](const std::string& rest) -> std::string {
    if (index.empty()) return rest;
    if (rest.empty()) return index;
    return index + "\n\n" + rest;
  };
  // The prompts next, within the budget: the oldest dropped until they fit.
  std::vector<CapturedPrompt> shown(recent_prompts.begin(),
                                    recent_prompts.begin() + std::min(recent_prompts.size(), kSessionStartPrompts));
  std::string prompts = RecentPromptsSection(shown);
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
  if (d.markdown.empty()) return with_index(prompts);
  if (prompts.empty()) return with_index(d.markdown);
  std::string both = d.markdown + "\n\n" + prompts;
  // The budget holds, whatever the counter makes of the join.
  if (static_cast<int64_t>(counter->Count(both)) > budget) return with_index(d.markdown);
  return with_index(both);
}

std::string SessionStartOutput(const std::string& context, std::string_view source) {
  if (context.empty()) return "";
  nlohmann::json j = {{"hookSpecificOutput", {{"hookEventName", "SessionStart"}, {"additionalContext", context}}}};
  (void)source;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

EpisodeStep ObservationEpisode(const Observation& o, const ObservationScope& scope, const std::string& actor) {
  EpisodeStep step;
  step.ns.tenant = scope.tenant.empty() ? "default" : scope.tenant;
  step.ns.user = scope.user;
  step.ns.mission = scope.mission;
  step.ns.session = o.session_id;
  step.type = EpisodeType::kToolCall;
  step.tool_name = o.tool;
  step.content_json = ObservationJson(o);
  step.text = ObservationLine(o);
  step.timestamp = o.at;
  step.source = "tool";
  step.tags = {"claude-code", "observation"};
  step.actor = actor;
  return step;
}

namespace {

std::vector<std::string> ObservationFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 5 && name[0] != '.' && name.ends_with(".json")) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool HasSpooledObservations(const std::string& repository) {
  return !ObservationFiles(ObservationSpoolDir(repository)).empty();
}

Result<ObservationImportReport> ImportObservations(const std::string& repository, MemoryLayer& engine,
                                                   const std::string& actor) {
  namespace fs = std::filesystem;
  ObservationImportReport report;
  const std::string dir = ObservationSpoolDir(repository);
  if (ObservationFiles(dir).empty()) return report;
  const std::string lock_path = dir + "/.import.lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IoError("cannot open the observation spool lock '" + lock_path + "'");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    report.busy = true;
    return report;
  }
  Status status = Status::Ok();
  std::error_code ec;
  for (std::vector<std::string> files = ObservationFiles(dir); !files.empty() && status.ok();
       files = ObservationFiles(dir)) {
    for (const std::string& file : files) {
      std::ifstream f(file, std::ios::binary);
      if (!f) continue;  // imported meanwhile
      std::stringstream ss;
      ss << f.rdbuf();
      f.close();
      const nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
      Result<Observation> o = Status::InvalidArgument("not a spooled observation");
      ObservationScope scope;
      if (j.is_object() && j.contains("observation") && j.contains("scope") && j["scope"].is_object()) {
        o = ParseObservationJson(j["observation"].dump());
        const nlohmann::json& sc = j["scope"];
        if (sc.contains("tenant") && sc["tenant"].is_string()) scope.tenant = sc["tenant"].get<std::string>();
        if (sc.contains("user") && sc["user"].is_string()) scope.user = sc["user"].get<std::string>();
        if (sc.contains("mission") && sc["mission"].is_string()) scope.mission = sc["mission"].get<std::string>();
      }
      if (!o.ok()) {
        fs::create_directories(dir + "/bad", ec);
        fs::rename(file, dir + "/bad/" + fs::path(file).filename().string(), ec);
        if (ec) fs::remove(file, ec);
        ++report.failed;
        continue;
      }
      // Keyed by the spool file's name (its time and random bits): a file
      // left behind by an importer that stopped between the episode's
      // commit and the file's removal is added once, not twice.
      EpisodeStep step = ObservationEpisode(*o, scope, actor);
      step.request_id = "observation-spool:" + fs::path(file).stem().string();
      if (Result<Memory> m = engine.AddEpisode(step);
          !m.ok() && m.status().code() != StatusCode::kAlreadyExists) {  // AlreadyExists: added, since deleted
        status = m.status();
        break;
      }
      fs::remove(file, ec);
      ++report.imported;
    }
  }
  ::close(fd);  // releases the lock
  if (!status.ok()) return status;
  return report;
}

}  // namespace msp
