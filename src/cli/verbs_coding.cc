// Coding-agent verbs (docs/coding-agents.md): capture, prompts list /
// search / topics / switches / intents / import, hook session-start /
// post-tool-use, setup claude-code.
#include <chrono>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>

#include "cli/capture_command.h"
#include "cli/cli.h"
#include "coding/capture.h"
#include "coding/claude_setup.h"
#include "coding/hooks.h"
#include "coding/prompt_analysis.h"
#include "coding/prompt_store.h"
#include "coding/recent_prompts.h"
#include "coding/session_narrative.h"
#include "coding/session_summary.h"
#include "config/config.h"
#include "consolidate/llm_extractor.h"
#include "provider/chat_client.h"
#include "util/time.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

std::string PromptRepository(const Invocation& inv) { return PromptRepositoryPath(inv.config.options); }
std::string CaptureLog(const Invocation& inv) { return CaptureLogPath(inv.config.options); }

// The captured prompts the flags select: imports the spool first, so that
// what the hooks captured a moment ago is there.
Result<std::vector<CapturedPrompt>> LoadPrompts(Invocation& inv, size_t newest = 0) {
  const std::string repo = PromptRepository(inv);
  PromptFilter f;
  f.newest = newest;
  MSP_ASSIGN_OR_RETURN(f.from, TimeFlag(inv, "--since"));
  MSP_ASSIGN_OR_RETURN(f.to, TimeFlag(inv, "--until"));
  if (f.from != 0 && f.to != 0 && f.to <= f.from) return Usage(inv, "--until must be later than --since");
  f.session_id = inv.flags.Get("--in-session");
  f.repository = inv.flags.Get("--repository");
  if (Result<SpoolImportReport> r = ImportSpool(repo); !r.ok()) {
    *inv.err << "msp: warning: " << r.status().message() << "\n";
  }
  Result<std::unique_ptr<PromptStore>> store = PromptStore::Open(repo, /*create=*/false);
  if (!store.ok()) {
    if (store.status().IsNotFound()) return std::vector<CapturedPrompt>{};
    return store.status();
  }
  return (*store)->List(f);
}

// Intent labels by the configured classifier (prompts.classifier).
Result<std::vector<Intent>> Intents(Invocation& inv, const std::vector<CapturedPrompt>& prompts,
                                    std::string* classifier) {
  const Settings& o = inv.config.options;
  const bool llm = o.coding.classifier == ModelChoice::kLlm || (o.coding.classifier == ModelChoice::kAuto && !o.llm.model.empty());
  if (llm) {
    MSP_ASSIGN_OR_RETURN(ChatOptions chat_options, ChatOptionsFor(o.llm, o.openai_api_key));
    MSP_ASSIGN_OR_RETURN(auto chat, ChatClient::Create(chat_options));
    std::vector<std::string> texts;
    for (const CapturedPrompt& p : prompts) texts.push_back(p.text);
    Result<std::vector<Intent>> labels = ClassifyIntentsWithModel(*chat, texts);
    if (!labels.ok()) return labels.status().WithContext("prompts.classifier = llm (" + o.llm.model + ")");
    *classifier = "llm:" + o.llm.model;
    return labels;
  }
  std::vector<Intent> out;
  for (const CapturedPrompt& p : prompts) out.push_back(ClassifyIntent(p.text));
  *classifier = "rules";
  return out;
}

nlohmann::json PromptJson(const CapturedPrompt& p) {
  nlohmann::json j = {{"id", p.id},
                      {"ref", p.ref},
                      {"at", FormatIso8601(p.at)},
                      {"text", p.text},
                      {"session_id", p.session_id},
                      {"cwd", p.cwd},
                      {"repository", p.repository},
                      {"project", ProjectOf(p)},
                      {"branch", p.branch},
                      {"permission_mode", p.permission_mode}};
  return j;
}

void PrintPromptLine(Invocation& inv, const CapturedPrompt& p, const std::string& intent) {
  std::string where = ProjectOf(p);
  if (!p.branch.empty()) where += "@" + p.branch;
  *inv.out << FormatIso8601(p.at) << "  " << where << "  " << (intent.empty() ? "" : intent + "  ")
           << OneLine(p.text, 100) << "\n";
}

Status PrintPrompts(Invocation& inv, const std::vector<CapturedPrompt>& prompts, const std::vector<size_t>& order,
                    const std::vector<double>* scores) {
  std::vector<CapturedPrompt> shown;
  for (size_t i : order) shown.push_back(prompts[i]);
  std::string classifier;
  MSP_ASSIGN_OR_RETURN(std::vector<Intent> intents, Intents(inv, shown, &classifier));
  std::optional<Intent> only;
  if (inv.flags.Has("--intent")) {
    MSP_ASSIGN_OR_RETURN(only, EnumFlag(inv, "--intent", inv.flags.Get("--intent"), &ParseIntent, &IntentName));
  }
  nlohmann::json arr = nlohmann::json::array();
  for (size_t k = 0; k < shown.size(); ++k) {
    if (only && intents[k] != *only) continue;
    if (inv.json) {
      nlohmann::json j = PromptJson(shown[k]);
      j["intent"] = IntentName(intents[k]);
      if (scores != nullptr) j["score"] = (*scores)[k];
      arr.push_back(std::move(j));
    } else {
      PrintPromptLine(inv, shown[k], std::string(IntentName(intents[k])));
    }
  }
  if (inv.json) PrintJson(inv, {{"classifier", classifier}, {"prompts", arr}});
  return Status::Ok();
}

Result<size_t> LimitFlag(Invocation& inv, int64_t fallback) {
  Result<int64_t> n = inv.flags.GetInt("--limit", fallback, 0, 100000000);
  if (!n.ok()) return Usage(inv, n.status().message());
  return static_cast<size_t>(*n);
}

// The hook payload on standard input.
Result<HookInput> ReadHook(Invocation& inv) {
  const std::string text((std::istreambuf_iterator<char>(*inv.in)), std::istreambuf_iterator<char>());
  return ParseHookInput(text);
}

std::string HookUser(const Invocation& inv) {
  if (!inv.ns.user.empty()) return inv.ns.user;
  const char* user = std::getenv("USER");
  return user == nullptr ? "" : user;
}

// Imports the observation spool into the store (opened, created if new).
Result<ObservationImportReport> ImportSpooledObservations(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<MemoryLayer> engine, OpenEngine(inv, /*create=*/true));
  return ImportObservations(PromptRepository(inv), *engine, inv.actor);
}

}  // namespace

int RunCaptureHook(const std::vector<std::string>& args, std::istream& in) {
  return RunCaptureCommand(args, in, SelfExecutable(), /*lean=*/false);
}

Status RunCapture(Invocation& inv) {
  // Reached only through `msp capture --help`-free invocations that the
  // dispatcher did not hand to RunCaptureCommand (it always does).
  (void)RunCaptureCommand({}, *inv.in, SelfExecutable(), /*lean=*/false);
  return Status::Ok();
}

Status RunPromptsList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(size_t limit, LimitFlag(inv, 50));
  // Only the newest `limit` are read, unless --intent filters after reading.
  MSP_ASSIGN_OR_RETURN(std::vector<CapturedPrompt> prompts,
                       LoadPrompts(inv, inv.flags.Has("--intent") ? 0 : limit));
  std::vector<size_t> order;
  const size_t start = limit == 0 || prompts.size() <= limit ? 0 : prompts.size() - limit;
  for (size_t i = start; i < prompts.size(); ++i) order.push_back(i);
  return PrintPrompts(inv, prompts, order, nullptr);
}

Status RunPromptsSearch(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(size_t limit, LimitFlag(inv, 20));
  MSP_ASSIGN_OR_RETURN(std::string query, TextArgument(inv, 0, /*stdin_dash=*/true));
  if (PromptTerms(query).empty()) return Usage(inv, "QUERY has no searchable words (stop words are ignored)");
  MSP_ASSIGN_OR_RETURN(std::vector<CapturedPrompt> prompts, LoadPrompts(inv));
  std::vector<size_t> order;
  std::vector<double> scores;
  for (const PromptMatch& m : SearchPrompts(prompts, query, limit)) {
    order.push_back(m.index);
    scores.push_back(m.score);
  }
  return PrintPrompts(inv, prompts, order, &scores);
}

Status RunPromptsTopics(Invocation& inv) {
  Period period = Period::kWeek;
  if (inv.flags.Has("--by")) {
    std::optional<Period> p = ParsePeriod(inv.flags.Get("--by"));
    if (!p) return Usage(inv, "--by: day, week or month");
    period = *p;
  }
  Result<int64_t> top = inv.flags.GetInt("--top", 10, 1, 1000);
  if (!top.ok()) return Usage(inv, top.status().message());
  MSP_ASSIGN_OR_RETURN(std::vector<CapturedPrompt> prompts, LoadPrompts(inv));
  const TopicTable t = TopicFrequencies(prompts, period, static_cast<size_t>(*top));
  if (inv.json) {
    nlohmann::json topics = nlohmann::json::array();
    for (size_t i = 0; i < t.topics.size(); ++i) {
      topics.push_back({{"topic", t.topics[i]}, {"prompts", t.totals[i]}, {"per_period", t.counts[i]}});
    }
    PrintJson(inv, {{"periods", t.periods}, {"topics", topics}, {"prompts", prompts.size()}});
    return Status::Ok();
  }
  *inv.out << prompts.size() << " prompts; prompts per " << inv.flags.Get("--by", "week")
           << " holding each of the " << t.topics.size() << " most frequent topics\n";
  size_t width = 5;
  for (const std::string& s : t.topics) width = std::max(width, s.size());
  *inv.out << std::string(width + 2, ' ');
  for (const std::string& p : t.periods) *inv.out << p << "  ";
  *inv.out << "total\n";
  for (size_t i = 0; i < t.topics.size(); ++i) {
    *inv.out << t.topics[i] << std::string(width + 2 - t.topics[i].size(), ' ');
    for (size_t k = 0; k < t.periods.size(); ++k) {
      const std::string n = std::to_string(t.counts[i][k]);
      *inv.out << std::string(t.periods[k].size() > n.size() ? t.periods[k].size() - n.size() : 0, ' ') << n << "  ";
    }
    *inv.out << t.totals[i] << "\n";
  }
  return Status::Ok();
}

Status RunPromptsSwitches(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::vector<CapturedPrompt> prompts, LoadPrompts(inv));
  const std::vector<SwitchDay> days = ProjectSwitches(prompts);
  if (inv.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const SwitchDay& d : days) {
      nlohmann::json t = nlohmann::json::object();
      for (const auto& [pair, n] : d.transitions) t[pair] = n;
      arr.push_back({{"day", d.day}, {"prompts", d.prompts}, {"projects", d.projects}, {"switches", d.switches},
                     {"transitions", t}});
    }
    PrintJson(inv, {{"days", arr}});
    return Status::Ok();
  }
  for (const SwitchDay& d : days) {
    *inv.out << d.day << "  " << d.prompts << " prompts, " << d.projects << " projects, " << d.switches
             << " switches";
    for (size_t i = 0; i < d.transitions.size() && i < 5; ++i) {
      *inv.out << (i == 0 ? ": " : ", ") << d.transitions[i].first << " x" << d.transitions[i].second;
    }
    *inv.out << "\n";
  }
  return Status::Ok();
}

Status RunPromptsIntents(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::vector<CapturedPrompt> prompts, LoadPrompts(inv));
  std::string classifier;
  MSP_ASSIGN_OR_RETURN(std::vector<Intent> intents, Intents(inv, prompts, &classifier));
  std::map<std::string, std::map<std::string, size_t>> by_project;
  std::map<std::string, size_t> totals;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string name(IntentName(intents[i]));
    ++by_project[ProjectOf(prompts[i])][name];
    ++totals[name];
  }
  if (inv.json) {
    PrintJson(inv, {{"classifier", classifier}, {"prompts", prompts.size()}, {"intents", totals},
                    {"by_project", by_project}});
    return Status::Ok();
  }
  *inv.out << prompts.size() << " prompts, labelled by " << classifier << "\n";
  for (const char* name : {"instruction", "question", "correction", "approval"}) {
    *inv.out << "  " << name << ": " << totals[name] << "\n";
  }
  for (const auto& [project, counts] : by_project) {
    *inv.out << project << ":";
    for (const auto& [name, n] : counts) *inv.out << " " << name << " " << n;
    *inv.out << "\n";
  }
  return Status::Ok();
}

Status RunPromptsImport(Invocation& inv) {
  const std::string repo = PromptRepository(inv);
  Result<SpoolImportReport> r = ImportSpool(repo);
  if (!r.ok()) {
    if (inv.flags.Has("--log-failures")) {
      AppendToLog(CaptureLog(inv), "prompts import", r.status().ToString());
      return Status::Ok();
    }
    return r.status();
  }
  if (r->failed > 0 && inv.flags.Has("--log-failures")) {
    AppendToLog(CaptureLog(inv), "prompts import",
                std::to_string(r->failed) + " spool files could not be read; moved to " + SpoolDir(repo) + "/bad");
  }
  // Tool observations spooled by the PostToolUse hook: episodes.
  ObservationImportReport obs;
  if (HasSpooledObservations(repo)) {
    Result<ObservationImportReport> o = ImportSpooledObservations(inv);
    if (!o.ok()) {
      if (!inv.flags.Has("--log-failures")) return o.status();
      AppendToLog(CaptureLog(inv), "prompts import", o.status().ToString());
    } else {
      obs = *o;
      if (obs.failed > 0 && inv.flags.Has("--log-failures")) {
        AppendToLog(CaptureLog(inv), "prompts import",
                    std::to_string(obs.failed) + " observation spool files could not be read; moved to " +
                        ObservationSpoolDir(repo) + "/bad");
      }
    }
  }
  if (inv.json) {
    PrintJson(inv, {{"imported", r->imported}, {"failed", r->failed}, {"busy", r->busy}, {"repository", repo},
                    {"observations", {{"imported", obs.imported}, {"failed", obs.failed}, {"busy", obs.busy}}}});
  } else {
    *inv.out << "imported " << r->imported << " prompts into " << repo
             << (r->failed ? ", " + std::to_string(r->failed) + " unreadable (moved to msp-spool/bad)" : "")
             << (r->busy ? " (another importer is running)" : "") << "\n";
    if (obs.imported + obs.failed > 0 || obs.busy) {
      *inv.out << "imported " << obs.imported << " tool observations as episodes"
               << (obs.failed ? ", " + std::to_string(obs.failed) + " unreadable" : "")
               << (obs.busy ? " (another importer is running)" : "") << "\n";
    }
  }
  return Status::Ok();
}

namespace {

// `hook session-start --keep-store-out-of-git` (the plugin's hook): a store
// inside the session's repository ($CLAUDE_PROJECT_DIR, else the work tree of
// the hook's cwd) gets its line in the repository's info/exclude, once.
// Failures are logged; the session goes on.
void KeepHookStoreOutOfGit(const Invocation& inv, const HookInput& hook, const std::string& log) {
  std::string project;
  if (const char* dir = std::getenv("CLAUDE_PROJECT_DIR"); dir != nullptr && *dir != '\0') project = dir;
  if (project.empty()) project = FindWorkTree(hook.cwd).top_level;
  if (project.empty()) return;
  std::error_code ec;
  const fs::path top = fs::weakly_canonical(project, ec);
  if (ec) return;
  const fs::path store = fs::weakly_canonical(AbsolutePath(inv.config.options.store.data_dir), ec);
  if (ec) return;
  const fs::path rel = store.lexically_relative(top);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return;  // not inside the repository
  Result<ClaudeSetupChange> kept = KeepStoreOutOfGit(top.string(), rel.string(), /*remove=*/false);
  if (!kept.ok()) AppendToLog(log, "hook session-start", kept.status().ToString());
}

}  // namespace

Status RunHookSessionStart(Invocation& inv) {
  const std::string log = CaptureLog(inv);
  Result<HookInput> hook = ReadHook(inv);
  if (!hook.ok()) {
    AppendToLog(log, "hook session-start", hook.status().ToString());
    return Status::Ok();
  }
  if (inv.flags.Has("--keep-store-out-of-git")) KeepHookStoreOutOfGit(inv, *hook, log);
  // No store yet: nothing to say.
  std::error_code ec;
  if (inv.config.options.store.backend == StoreBackend::kSqlite && !fs::exists(inv.config.options.store.data_dir, ec)) {
    return Status::Ok();
  }
  Result<std::unique_ptr<MemoryLayer>> engine = OpenEngine(inv, /*create=*/false);
  if (!engine.ok()) {
    AppendToLog(log, "hook session-start", engine.status().ToString());
    return Status::Ok();
  }
  Namespace scope = inv.ns;
  scope.user = HookUser(inv);
  // The last prompts captured in this repository, most recent first: shown,
  // and they sharpen the task.
  std::vector<CapturedPrompt> recent;
  const WorkTree tree = FindWorkTree(hook->cwd);
  if (!tree.top_level.empty()) {
    const std::string repo = PromptRepository(inv);
    // From the recent-prompts file when it can answer for sure (no
    // libgit2 in this process), else from the repository.
    if (auto fast = RecentPromptsFromFile(repo, tree.top_level, kSessionStartPrompts)) {
      recent = std::move(*fast);
    } else if (auto store = PromptStore::Open(repo, /*create=*/false); store.ok()) {
      PromptFilter f;
      f.repository = tree.top_level;
      f.newest = kSessionStartPrompts;
      if (auto prompts = (*store)->List(f); prompts.ok()) recent.assign(prompts->rbegin(), prompts->rend());
    }
  }
  // The index of the last sessions on this repository and branch.
  std::vector<Memory> sessions;
  if (!tree.top_level.empty()) {
    Result<std::vector<Memory>> s =
        RecentSessionSummaries(**engine, scope, tree.top_level, tree.branch, kSessionIndexSessions);
    if (s.ok()) {
      sessions = std::move(s).value();
    } else {
      AppendToLog(log, "hook session-start", s.status().ToString());
    }
  }
  Result<std::string> digest = SessionStartDigest(**engine, inv.config.options, *hook, scope,
                                                  inv.config.options.coding.session_start_budget, inv.actor, recent,
                                                  sessions);
  if (!digest.ok()) {
    AppendToLog(log, "hook session-start", digest.status().ToString());
    return Status::Ok();
  }
  *inv.out << SessionStartOutput(*digest, hook->source);
  return Status::Ok();
}

Status RunHookPostToolUse(Invocation& inv) {
  // The same fast path as msp-capture: the observation is spooled and a
  // detached `msp prompts import` stores it (capture_command.cc).
  const std::string log = CaptureLog(inv);
  const CodingOptions& coding = inv.config.options.coding;
  if (!coding.post_tool_use && inv.config.OriginOf("hooks.post_tool_use").source != SettingSource::kDefault) {
    return Status::Ok();
  }
  Result<HookInput> hook = ReadHook(inv);
  if (!hook.ok()) {
    AppendToLog(log, "hook post-tool-use", hook.status().ToString());
    return Status::Ok();
  }
  Result<Observation> o = ObservationFromHook(*hook, WallClockMs(), coding.tool_max_chars);
  if (!o.ok()) {
    AppendToLog(log, "hook post-tool-use", o.status().ToString());
    return Status::Ok();
  }
  ObservationScope scope{inv.ns.tenant, HookUser(inv), inv.ns.mission};
  const std::string repo = PromptRepository(inv);
  if (Result<std::string> spooled = SpoolObservation(*o, scope, repo); !spooled.ok()) {
    AppendToLog(log, "hook post-tool-use", spooled.status().ToString());
    return Status::Ok();
  }
  std::vector<std::string> argv = {SelfExecutable(), "prompts", "import", "--log-failures", "--data-dir",
                                   AbsolutePath(inv.config.options.store.data_dir), "--capture-repository", repo,
                                   "--capture-log-file", log};
  if (!inv.config.config_file.empty()) argv.insert(argv.end(), {"--config", AbsolutePath(inv.config.config_file)});
  if (Status s = SpawnImporter(argv); !s.ok()) AppendToLog(log, "hook post-tool-use", s.ToString());
  return Status::Ok();
}

namespace {

// The session in prose by the llm.* chat model, held to the hook's limits.
Result<std::string> NarrateSession(const LlmOptions& llm, const std::string& openai_api_key,
                                   const SessionSummary& summary) {
  MSP_ASSIGN_OR_RETURN(ChatOptions chat_options, ChatOptionsFor(llm, openai_api_key));
  MSP_ASSIGN_OR_RETURN(auto chat, ChatClient::Create(SessionNarrativeChatOptions(std::move(chat_options))));
  return NarrateSessionWithModel(*chat, summary);
}

}  // namespace

Status RunHookSessionEnd(Invocation& inv) {
  const std::string log = CaptureLog(inv);
  auto logged = [&](const Status& st) {
    AppendToLog(log, "hook session-end", st.ToString());
    return Status::Ok();
  };
  Result<HookInput> hook = ReadHook(inv);
  if (!hook.ok()) return logged(hook.status());
  if (hook->session_id.empty()) return logged(Status::InvalidArgument("the SessionEnd payload has no session_id"));
  const std::string repo = PromptRepository(inv);
  // What the hooks spooled a moment ago first; while a detached importer
  // holds a spool (busy), wait for it (at most ~5 s).
  for (int i = 0; i < 250; ++i) {
    Result<SpoolImportReport> r = ImportSpool(repo);
    if (!r.ok()) (void)logged(r.status());
    if (!r.ok() || !r->busy) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Result<std::unique_ptr<MemoryLayer>> engine = OpenEngine(inv, /*create=*/true);
  if (!engine.ok()) return logged(engine.status());
  for (int i = 0; i < 250; ++i) {
    Result<ObservationImportReport> r = ImportObservations(repo, **engine, inv.actor);
    if (!r.ok()) (void)logged(r.status());
    if (!r.ok() || !r->busy) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<CapturedPrompt> prompts;
  if (auto store = PromptStore::Open(repo, /*create=*/false); store.ok()) {
    PromptFilter f;
    f.session_id = hook->session_id;
    if (auto p = (*store)->List(f); p.ok()) prompts = std::move(p).value();
  }
  Namespace scope = inv.ns;
  scope.user = HookUser(inv);
  ListRequest req;
  req.scope = scope;
  req.scope.session = hook->session_id;
  req.session = hook->session_id;
  req.filter.kinds = {Kind::kEpisode};
  req.limit = 0;
  Result<std::vector<Memory>> episodes = (*engine)->List(req);
  if (!episodes.ok()) return logged(episodes.status());
  SessionSummary summary = SummarizeSession(hook->session_id, prompts, *episodes, WallClockMs());
  if (summary.asked.empty() && summary.tool_uses == 0) return Status::Ok();  // nothing to summarise
  if (summary.repository.empty()) {
    const WorkTree tree = FindWorkTree(hook->cwd);
    summary.repository = tree.top_level;
    summary.branch = tree.branch;
  }
  if (!hook->other_json.empty()) {
    const nlohmann::json other = nlohmann::json::parse(hook->other_json, nullptr, /*allow_exceptions=*/false);
    if (other.is_object() && other.contains("reason") && other["reason"].is_string()) {
      summary.reason = other["reason"].get<std::string>();
    }
  }
  // Written once: a hook that fires again neither asks the model nor writes.
  Namespace summary_scope = scope;
  summary_scope.session.clear();
  if ((*engine)->Get(summary_scope, SessionSummaryId(scope.tenant, summary.session_id)).ok()) return Status::Ok();
  const Settings& o = inv.config.options;
  if (SessionSummaryUsesModel(o.coding, o.llm)) {
    // The model's paragraph beside the rules' sections; without it (no
    // server, too slow, a bad reply), the rules' summary alone and a line in
    // the capture log.
    Result<std::string> narrative = NarrateSession(o.llm, o.openai_api_key, summary);
    if (narrative.ok()) {
      summary.narrative = std::move(narrative).value();
      summary.made_by = "llm:" + o.llm.model;
    } else {
      (void)logged(narrative.status().WithContext("hooks.session_summary = llm (" + o.llm.model +
                                                  "): the rules' summary was written instead"));
    }
  }
  bool written = false;
  if (Result<Memory> m = WriteSessionSummary(**engine, scope, summary, inv.actor, &written); !m.ok()) {
    return logged(m.status());
  }
  return Status::Ok();
}

namespace {

// `word` as one shell word: in single quotes, a quote in it as '\''.
std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Status RunSetupClaudeCode(Invocation& inv) {
  const std::string scope = inv.flags.Get("--scope", "project");
  if (scope != "project" && scope != "user") {
    return Usage(inv, "--scope is project or user, not '" + scope + "'");
  }
  if (inv.flags.Has("--project") && scope == "user") return Usage(inv, "--project or --scope user, not both");
  const bool plugin = inv.flags.Has("--plugin");
  if (plugin && (inv.flags.Has("--scope") || inv.flags.Has("--project") || inv.flags.Has("--project-dir"))) {
    return Usage(inv, "--plugin writes a plugin for every project: not with --scope, --project or --project-dir");
  }
  ClaudeSetupRequest r;
  r.user = scope == "user";
  if (plugin) {
    r.plugin_dir = AbsolutePath(inv.flags.Get("--plugin"));
    if (inv.flags.Get("--plugin").empty()) return Usage(inv, "--plugin needs the directory to write the plugin in");
    r.version = MSP_VERSION;
  }
  r.remove = inv.flags.Has("--remove");
  // Tool observations are recorded by default now that they take the
  // capture hook's fast path (docs/coding-agents.md, "Tool observations").
  r.post_tool_use = !inv.flags.Has("--no-post-tool-use");
  r.mcp = !inv.flags.Has("--no-mcp");
  std::error_code ec;
  // The project is the repository holding the current directory (its top),
  // so that setup run in a subdirectory writes where Claude Code reads.
  if (inv.flags.Has("--project-dir")) {
    r.project_dir = AbsolutePath(inv.flags.Get("--project-dir"));
  } else {
    r.project_dir = fs::current_path(ec).string();
    if (const std::string root = RepositoryRoot(r.project_dir); !root.empty()) r.project_dir = root;
  }
  if (const char* home = std::getenv("HOME")) r.home = home;
  // The commands: this msp (or --msp), with the data directory absolute for
  // user scope; for project scope a relative one stays relative to the
  // project ($CLAUDE_PROJECT_DIR).
  std::string msp = inv.flags.Get("--msp", SelfExecutable());
  if (msp.empty()) msp = "msp";
  const bool capture_given = inv.flags.Has("--capture");
  std::string capture = inv.flags.Get("--capture");
  if (capture.empty()) {
    // Always the lean hook (it starts in a third of msp's time): beside this
    // msp, or on PATH when msp is named by PATH too.
    const fs::path dir = fs::path(msp).parent_path();
    capture = dir.empty() ? "msp-capture" : (dir / "msp-capture").string();
    if (!dir.empty() && !fs::exists(capture, ec)) {
      return Status::FailedPrecondition("the capture hook msp-capture is not beside " + msp + " (looked for " +
                                        capture + "); build it (cmake --build BUILD --target msp-capture) or "
                                        "install both (cmake --install BUILD), or name the hook's command with "
                                        "--capture");
    }
  }
  // The store: given relative, it lives in the project. The hooks name it
  // from $CLAUDE_PROJECT_DIR; the MCP server, which Claude Code starts in
  // whatever directory it was started in, finds the repository's top itself
  // (store.data_dir_base = repository); git is told to leave it alone.
  // Relative to the directory setup ran in, not to the repository: the
  // configuration loader has already resolved it when --data-dir-base says so.
  const std::string& dir = inv.config.options.store.data_dir;
  const bool relative = !fs::path(dir).is_absolute();
  std::string data_flag;
  if (!relative) {
    data_flag = " --data-dir " + ShellQuote(dir);
  } else if (r.user) {
    data_flag = " --data-dir " + ShellQuote(AbsolutePath(dir));
  } else {
    data_flag = " --data-dir \"$CLAUDE_PROJECT_DIR\"/" + ShellQuote(dir);
    // A plugin serves every repository: its SessionStart hook keeps each
    // one's store out of git.
    if (plugin) {
      r.keep_store_out_of_git = true;
    } else {
      r.store_in_project = dir;
    }
  }
  std::string ns_flags;
  if (inv.ns.tenant != "default") ns_flags += " --tenant " + ShellQuote(inv.ns.tenant);
  if (!inv.ns.user.empty()) ns_flags += " --user " + ShellQuote(inv.ns.user);
  if (!inv.ns.mission.empty()) ns_flags += " --mission " + ShellQuote(inv.ns.mission);
  // A command given with --capture is taken as written (it may be "msp
  // capture"); a path msp found is one word, whatever it holds.
  r.capture_command = (capture_given ? capture : ShellQuote(capture)) + data_flag;
  // The observation hook is the same command; it names the namespace the
  // episodes go to.
  r.observe_command = r.capture_command + ns_flags;
  r.msp_command = ShellQuote(msp) + data_flag + ns_flags;
  r.mcp_program = msp;
  r.mcp_args = {"mcp", "--data-dir", r.user || !relative ? AbsolutePath(dir) : dir};
  if (!r.user && relative) r.mcp_args.insert(r.mcp_args.end(), {"--data-dir-base", "repository"});
  if (inv.ns.tenant != "default") r.mcp_args.insert(r.mcp_args.end(), {"--tenant", inv.ns.tenant});
  if (!inv.ns.user.empty()) r.mcp_args.insert(r.mcp_args.end(), {"--user", inv.ns.user});
  if (!inv.ns.mission.empty()) r.mcp_args.insert(r.mcp_args.end(), {"--mission", inv.ns.mission});
  // A tool profile given to setup is the server's (docs/mcp.md, "Tool profiles").
  if (inv.config.OriginOf("mcp.tools").source != SettingSource::kDefault) {
    r.mcp_args.insert(r.mcp_args.end(), {"--mcp-tools", inv.config.options.mcp.tools});
  }
  MSP_ASSIGN_OR_RETURN(std::vector<ClaudeSetupChange> changes, plugin ? WriteClaudePlugin(r) : SetupClaudeCode(r));
  if (inv.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const ClaudeSetupChange& c : changes) arr.push_back({{"path", c.path}, {"changed", c.changed}, {"summary", c.summary}});
    PrintJson(inv, {{"files", arr}});
    return Status::Ok();
  }
  for (const ClaudeSetupChange& c : changes) {
    *inv.out << (c.changed ? "wrote " : "kept  ") << c.path << ": " << c.summary << "\n";
  }
  if (plugin && !r.remove) {
    *inv.out << "install it for your user:\n  claude plugin marketplace add " << ShellQuote(r.plugin_dir)
             << "\n  claude plugin install msp@msp\n(or for one session: claude --plugin-dir "
             << ShellQuote(r.plugin_dir) << ")\n";
  }
  return Status::Ok();
}

// The coding agents' verbs of the table (cli.h): capture, prompts, hooks, setup.
std::vector<Verb> CodingVerbs() {
  return {
      {"capture", "[--data-dir DIR] [flags] < HOOK_JSON",
       "the UserPromptSubmit hook: store the prompt of the hook's JSON (stdin) in the prompt repository; "
       "prints nothing, exits 0 (failures go to capture.log_file)",
       {}, {}, 0, kTakesSettings, &RunCapture},
      {"prompts list", "[--since TIME] [--until TIME] [--repository R] [--in-session ID] [--intent I] [flags]",
       "captured prompts, oldest first, with their intent label",
       {{"--since", "TIME", "captured at or after (ISO 8601)"},
        {"--until", "TIME", "captured before (ISO 8601)"},
        {"--repository", "R", "only this repository (its path or last component)"},
        {"--in-session", "ID", "only this agent session"},
        {"--intent", "INTENT", "only question | instruction | correction | approval"},
        {"--limit", "N", "the newest N (default 50; 0: all)"}},
       {}, 0, kTakesJson | kTakesSettings, &RunPromptsList},
      {"prompts search", "QUERY [flags]", "captured prompts holding the query's words, best first",
       {{"--since", "TIME", "captured at or after (ISO 8601)"},
        {"--until", "TIME", "captured before (ISO 8601)"},
        {"--repository", "R", "only this repository (its path or last component)"},
        {"--in-session", "ID", "only this agent session"},
        {"--intent", "INTENT", "only question | instruction | correction | approval"},
        {"--limit", "N", "at most N (default 20; 0: all)"}},
       {"QUERY"}, 1, kTakesJson | kTakesSettings, &RunPromptsSearch},
      {"prompts topics", "[--by day|week|month] [--top N] [flags]",
       "the most frequent topics (words) of the prompts and how many prompts held each, per period",
       {{"--by", "PERIOD", "day | week | month (default week)"},
        {"--top", "N", "topics to show (default 10)"},
        {"--since", "TIME", "captured at or after (ISO 8601)"},
        {"--until", "TIME", "captured before (ISO 8601)"},
        {"--repository", "R", "only this repository"},
        {"--in-session", "ID", "only this agent session"}},
       {}, 0, kTakesJson | kTakesSettings, &RunPromptsTopics},
      {"prompts switches", "[--since TIME] [--until TIME] [flags]",
       "switches between projects per day: prompts, projects, transitions",
       {{"--since", "TIME", "captured at or after (ISO 8601)"},
        {"--until", "TIME", "captured before (ISO 8601)"},
        {"--repository", "R", "only this repository"},
        {"--in-session", "ID", "only this agent session"}},
       {}, 0, kTakesJson | kTakesSettings, &RunPromptsSwitches},
      {"prompts intents", "[flags]", "intent labels (question, instruction, correction, approval): counts, per project",
       {{"--since", "TIME", "captured at or after (ISO 8601)"},
        {"--until", "TIME", "captured before (ISO 8601)"},
        {"--repository", "R", "only this repository"},
        {"--in-session", "ID", "only this agent session"}},
       {}, 0, kTakesJson | kTakesSettings, &RunPromptsIntents},
      {"prompts import", "[--log-failures] [flags]",
       "commit the prompts the capture hook spooled (the hook starts this itself)",
       {{"--log-failures", "", "log failures to capture.log_file and exit 0"}},
       {}, 0, kTakesJson | kTakesSettings, &RunPromptsImport},
      {"hook session-start", "[--mission ID] [flags] < HOOK_JSON",
       "the SessionStart hook: print the digest for the repository and branch of the hook's cwd (Claude Code's "
       "additionalContext JSON)",
       {{"--keep-store-out-of-git", "",
         "first add the store to the repository's info/exclude when it lies inside the repository (the plugin's "
         "hook; once)"}},
       {}, 0, kTakesNamespace | kTakesSettings, &RunHookSessionStart},
      {"hook post-tool-use", "[flags] < HOOK_JSON",
       "the PostToolUse hook: spool the tool use as an observation (an episode of the hook's session once "
       "imported); msp-capture does the same, faster",
       {}, {}, 0, kTakesNamespace | kTakesSettings, &RunHookPostToolUse},
      {"hook session-end", "[flags] < HOOK_JSON",
       "the SessionEnd hook: write the session's summary record (prompts, files changed, commands and failures, "
       "decisions mentioned), once per session",
       {}, {}, 0, kTakesNamespace | kTakesSettings, &RunHookSessionEnd},
      {"setup claude-code", "[--scope project|user | --plugin DIR] [--remove] [flags]",
       "register msp's hooks and MCP server with Claude Code, merged into its settings files, or write them as a "
       "Claude Code plugin (--remove: take them out)",
       {{"--scope", "project|user",
         "project (default): this project's .claude/settings.json and .mcp.json, the store in the repository "
         "and kept out of git; user: every project, ~/.claude/settings.json and ~/.claude.json"},
        {"--project", "", "the same as --scope project"},
        {"--plugin", "DIR",
         "write a Claude Code plugin in DIR instead (manifest, one-plugin marketplace, hooks, MCP server), to install "
         "with `claude plugin marketplace add DIR` and `claude plugin install msp@msp`; the store in each "
         "repository, kept out of git by the SessionStart hook"},
        {"--project-dir", "DIR", "the project's directory (default: the current one)"},
        {"--remove", "", "remove msp's hooks and MCP server, nothing else"},
        {"--post-tool-use", "", "register the PostToolUse hooks (the default; kept for old scripts)"},
        {"--no-post-tool-use", "", "do not register the PostToolUse / PostToolUseFailure observation hooks"},
        {"--no-mcp", "", "do not register the MCP server"},
        {"--msp", "PATH", "the msp executable the hooks run (default: this one)"},
        {"--capture", "COMMAND", "the capture hook command (default: msp-capture beside msp)"}},
       {}, 0, kTakesNamespace | kTakesJson | kTakesSettings, &RunSetupClaudeCode},
  };
}

}  // namespace msp
