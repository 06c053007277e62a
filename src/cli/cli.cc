// The verb table, the dispatcher, help, and the helpers the verbs share.
#include "cli/cli.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <sstream>

#include "codec/memory_json.h"
#include "msp/mission.h"
#include "util/data_file.h"
#include "util/time.h"
#include "util/utf8.h"

#ifndef MSP_VERSION
#define MSP_VERSION "unknown"
#endif

namespace msp {
namespace {

namespace fs = std::filesystem;

const std::vector<FlagSpec>& NamespaceFlags() {
  static const std::vector<FlagSpec> flags = {
      {"--tenant", "NAME", "tenant (default \"default\")"},
      {"--user", "ID", "user"},
      {"--agent", "ID", "agent"},
      {"--session", "ID", "session"},
      {"--mission", "ID", "mission"},
      {"--operator", "ID", "operator"},
  };
  return flags;
}

const FlagSpec kJsonFlag{"--json", "", "machine-readable JSON output"};
const FlagSpec kConfigFlag{"--config", "PATH", "TOML configuration file"};
const FlagSpec kHelpFlag{"--help", "", "show this help"};

// Every verb, in the order help lists them; the mission's and the coding
// agents' are their files' (MissionVerbs, CodingVerbs).
std::vector<Verb> AllVerbs() {
  std::vector<Verb> verbs = {
      {"init", "[flags]", "create the data directory and the store; print where", {}, {}, 0,
       kTakesJson | kTakesSettings, &RunInit},
      {"write",
       "TEXT [flags]",
       "write a record through the write policy (TEXT - reads standard input); docs/operations.md",
       ApiFlags("memory_write"),
       {"TEXT"},
       1,
       kRecordVerb,
       &RunWrite},
      {"episode add", "--session ID (--text TEXT | --content JSON) [flags]",
       "append one step to a session's episodic memory; docs/operations.md", ApiFlags("episode_add"), {}, 0,
       kRecordVerb, &RunEpisodeAdd},
      {"episode list", "--session ID [--last K] [flags]", "the steps of a session, oldest first; docs/operations.md",
       ApiFlags("session_steps"), {}, 0, kRecordVerb, &RunEpisodeList},
      {"session end", "--session ID [flags]", "end a session: consolidate what is left of it; docs/operations.md",
       ApiFlags("session_end"), {}, 0, kRecordVerb, &RunSessionEnd},
      {"fact add", "TEXT [flags]",
       "add a fact, or merge it into a near-duplicate (TEXT - reads standard input); docs/operations.md",
       ApiFlags("fact_add"), {"TEXT"}, 1, kRecordVerb, &RunFactAdd},
      {"fact supersede", "ID TEXT [flags]",
       "replace fact ID by a new fact; the old one stays in history; docs/operations.md", ApiFlags("fact_supersede"),
       {"ID", "TEXT"}, 2, kRecordVerb, &RunFactSupersede},
      {"search",
       "QUERY [flags]",
       "hybrid retrieval (BM25 + vectors, fused by score by default: retrieval.fusion; each episode by its own "
       "match, its context a bounded prior: retrieval.context), then the sessions the query is about; "
       "docs/operations.md",
       ApiFlags("search", {{"--timing", "", "print open, catch-up, query, render and close times (ms) on stderr"}}),
       {"QUERY"},
       1,
       kRecordVerb,
       &RunSearch},
      {"get", "ID [flags]", "show one record; docs/operations.md", ApiFlags("memory_get"), {"ID"}, 1, kRecordVerb,
       &RunGet},
      {"history", "ID [flags]", "every version of a record, oldest first; docs/operations.md",
       ApiFlags("memory_history"), {"ID"}, 1, kRecordVerb, &RunHistory},
      {"delete", "ID [--reason TEXT] [flags]", "delete a record (audited); docs/operations.md",
       ApiFlags("memory_delete"), {"ID"}, 1, kRecordVerb, &RunDelete},
      {"list", "[flags]", "the records of a namespace, filtered, a page at a time; docs/operations.md",
       ApiFlags("memory_list"), {}, 0, kRecordVerb, &RunList},
      {"consolidate", "[--session ID] [flags]",
       "distil facts from episodes not yet consolidated; docs/operations.md", ApiFlags("consolidate"), {}, 0,
       kRecordVerb, &RunConsolidate},
      {"reindex", "[flags]", "rebuild the derived indexes from the store", {}, {}, 0, kTakesSettings,
       &RunReindex},
      {"reembed", "[--batch-size N] [--max-batches N] [flags]",
       "rebuild every record's vector with the configured embedder (resumable; progress on stderr)",
       {{"--batch-size", "N", "records per batch, each one atomic write (default embedder.batch_size)"},
        {"--max-batches", "N", "stop after N batches; run again to continue (default: all)"}},
       {}, 0, kTakesJson | kTakesSettings, &RunReembed},
      // The native embedder's models (verbs_model.cc; docs/embeddings.md).
      {"model pull", "NAME|URL [--sha256 HEX] [--name NAME] [--retries N] [flags]",
       "download a native embedder model into <data_dir>/models (resumable; progress on stderr)",
       {{"--sha256", "HEX", "the expected sha256 of model.safetensors"},
        {"--name", "NAME", "the model's name (default: from the catalogue or the URL)"},
        {"--retries", "N", "retries per file, each resuming where the last stopped (default 3)"}},
       {"NAME|URL"}, 1, kTakesJson | kTakesSettings, &RunModelPull},
      {"model list", "[flags]", "the models in <data_dir>/models: size, source, whether they open", {}, {}, 0,
       kTakesJson | kTakesSettings, &RunModelList},
      {"model remove", "NAME [flags]", "delete a model from <data_dir>/models", {}, {"NAME"}, 1,
       kTakesJson | kTakesSettings, &RunModelRemove},
      {"import", "FILE|- [--on-oversize refuse|split|truncate] [flags]", "load records from JSONL (all or nothing)",
       {{"--on-oversize", "refuse|split|truncate",
         "a record over policy.max_record_bytes: fail the import (default), store it as several records, or "
         "keep its first policy.max_record_bytes (policy.on_oversize)"}},
       {"FILE"}, 1, kTakesJson | kTakesSettings, &RunImport},
      {"export", "[FILE|-] [flags]", "write the records visible to the namespace as JSONL", {}, {"FILE"}, 0,
       kTakesNamespace | kTakesSettings, &RunExport},
      {"stats", "[flags]", "record counts and index state; docs/operations.md", ApiFlags("memory_stats"), {}, 0,
       kRecordVerb, &RunStats},
      {"audit", "[flags]", "the audit log, newest first; docs/operations.md", ApiFlags("memory_audit"), {}, 0,
       kRecordVerb, &RunAudit},
  };
  // Mission records, retrieval and events (verbs_decision.cc; docs/mission.md).
  for (Verb& verb : MissionVerbs()) verbs.push_back(std::move(verb));
  std::vector<Verb> more = {
      // Ingestion (verbs_ingest.cc; docs/ingest.md).
      {"ingest",
       "PATH... --mission ID [flags] | --git REPO --mission ID [flags]",
       "ingest documents (PDF, DOCX, Markdown, HTML, text; directories walked) into the mission's domain "
       "layer, or a git repository's commits into its workflow layer; re-running skips what is stored",
       {{"--git", "REPO", "ingest the commits of this repository (its work tree or git directory)"},
        {"--rev", "REV", "with --git: a branch, commit or range A..B (default HEAD)"},
        {"--since", "TIME", "with --git: only commits at or after (ISO 8601)"},
        {"--max-count", "N", "with --git: at most N commits, newest first"},
        {"--tag", "TAG", "documents: a tag on every chunk (repeatable)", true},
        {"--access-level", "N", "0..9: readable by clearance N and above (default 0)"},
        {"--dry-run", "", "read and report; write nothing"},
        {"--verbose", "", "also list the files a directory walk skipped"}},
       {"PATH..."},
       0,
       kRecordVerb,
       &RunIngest},
      // Tasks and the push-refresh orchestrator (verbs_orchestrate.cc; docs/orchestrate.md).
      {"task add", "ID --title TEXT --mission ID [flags]",
       "add a task (label LONG-TERM puts it under `msp orchestrate`); docs/operations.md", ApiFlags("task_add"),
       {"ID"}, 1, kRecordVerb, &RunTaskAdd},
      {"task list", "--mission ID [--label L] [--status S] [--long-term] [flags]", "the mission's tasks, by id",
       ApiFlags("task_list", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}), {}, 0,
       kRecordVerb | kReadsAtClearance, &RunTaskList},
      {"task show", "ID --mission ID [flags]", "one task with its comments",
       ApiFlags("task_show", {{"--clearance", "N", "read at clearance N (0..9) instead of the caller's"}}), {"ID"},
       1, kRecordVerb | kReadsAtClearance, &RunTaskShow},
      {"task comment", "ID TEXT|- --mission ID [flags]", "add a comment to a task", ApiFlags("task_comment"),
       {"ID", "TEXT"}, 2, kRecordVerb, &RunTaskComment},
      {"task status", "ID STATUS --mission ID [flags]", "move a task to open | in_progress | done | cancelled",
       ApiFlags("task_status"), {"ID", "STATUS"}, 2, kRecordVerb, &RunTaskStatus},
      {"task import", "(--github FILE|- | --plane) --mission ID [flags]",
       "import tasks from a GitHub issues export (JSON) or Plane's API (orchestrate.plane_*); re-importing updates",
       {{"--github", "FILE", "a JSON array of GitHub REST issue objects (- for standard input)"},
        {"--prefix", "TEXT", "task id prefix for GitHub issues (default gh-)"},
        {"--plane", "", "read the work items of orchestrate.plane_project"},
        {"--dry-run", "", "report what would change; write nothing"}},
       {}, 0, kRecordVerb, &RunTaskImport},
      {"orchestrate", "--mission ID [--once | --plan] [flags]",
       "the push-refresh orchestrator: refresh due LONG-TERM tasks every orchestrate.interval_s until SIGINT",
       {{"--once", "", "one pass, then exit"}, {"--plan", "", "show each task's priority and whether it is due"}},
       {}, 0, kRecordVerb, &RunOrchestrate},
      {"demo", "[--data-dir DIR]", "replay seed 000's example on the embedded default", {}, {}, 0,
       kTakesSettings, &RunDemoVerb},
      // Procedural memory, core memory, working memory and the agent loop (docs/agent.md).
      {"procedure prompt", "TEXT|- [--agent NAME] [flags]", "set the agent's system prompt (a new version)",
       {{"--base-version", "N", "the version this change is based on (0: new); a stale one is a conflict"},
        {"--note", "TEXT", "why (kept with the version)"}},
       {"TEXT"}, 1, kRecordVerb, &RunProcedurePrompt},
      {"procedure tool", "NAME --description TEXT [--parameters JSON] [flags]",
       "register or change a tool (name, description, JSON Schema of its parameters)",
       {{"--description", "TEXT", "what the tool does (the model chooses by it)"},
        {"--parameters", "JSON", "an object schema: {\"type\":\"object\",\"properties\":{...}}"},
        {"--base-version", "N", "the version this change is based on (0: new)"},
        {"--note", "TEXT", "why"}},
       {"NAME"}, 1, kRecordVerb, &RunProcedureTool},
      {"procedure rule", "NAME --when CONDITION --call TOOL [--with JSON] [flags]",
       "add or change a behaviour rule: when CONDITION, call TOOL with arguments",
       {{"--when", "CONDITION", "e.g. 'request contains \"remember\"' (docs/agent.md)"},
        {"--call", "TOOL", "the tool to call"},
        {"--with", "JSON", "the arguments, a JSON object ({{request}}, {{last.tool}}, {{last.text}})"},
        {"--description", "TEXT", "for people"},
        {"--base-version", "N", "the version this change is based on (0: new)"},
        {"--note", "TEXT", "why"}},
       {"NAME"}, 1, kRecordVerb, &RunProcedureRule},
      {"procedure remove", "TYPE NAME [flags]", "retire a tool, rule or the system prompt (a new version)",
       {{"--base-version", "N", "the version this change is based on"}, {"--note", "TEXT", "why"}},
       {"TYPE", "NAME"}, 1, kRecordVerb, &RunProcedureRemove},
      {"procedure list", "[flags]", "the agent's current system prompt, tools and rules", {}, {}, 0, kRecordVerb,
       &RunProcedureList},
      {"procedure show", "TYPE [NAME] [--version N] [flags]", "one version (default: the current one) as JSON",
       {{"--version", "N", "the version to show"}}, {"TYPE", "NAME"}, 1, kRecordVerb, &RunProcedureShow},
      {"procedure history", "TYPE [NAME] [flags]", "every version, oldest first, with author and time", {},
       {"TYPE", "NAME"}, 1, kRecordVerb, &RunProcedureHistory},
      {"procedure diff", "TYPE NAME FROM TO [flags]", "a line diff of two versions", {},
       {"TYPE", "NAME", "FROM", "TO"}, 4, kRecordVerb, &RunProcedureDiff},
      {"procedure restore", "TYPE NAME VERSION [flags]", "a new version equal to an old one",
       {{"--note", "TEXT", "why (default: restored from version N)"}}, {"TYPE", "NAME", "VERSION"}, 3, kRecordVerb,
       &RunProcedureRestore},
      {"core show", "[--user ID] [--agent NAME] [flags]", "the core memory blocks (persona, user, task, ...)", {},
       {}, 0, kRecordVerb, &RunCoreShow},
      {"core set", "LABEL TEXT|- [--limit N] [flags]", "set a core memory block (creating it)",
       {{"--limit", "N", "the block's limit in characters (default agent.core_block_limit)"}}, {"LABEL", "TEXT"}, 2,
       kRecordVerb, &RunCoreSet},
      {"core append", "LABEL TEXT|- [flags]", "append a line to a core memory block (refused past its limit)", {},
       {"LABEL", "TEXT"}, 2, kRecordVerb, &RunCoreAppend},
      {"core replace", "LABEL OLD NEW [flags]", "replace text in a core memory block (refused past its limit)", {},
       {"LABEL", "OLD", "NEW"}, 3, kRecordVerb, &RunCoreReplace},
      {"context", "REQUEST|- [--session ID] [flags]",
       "the working memory a model call for REQUEST would get, with the tokens of each section", {}, {"REQUEST"}, 1,
       kRecordVerb, &RunContext},
      {"agent", "[--session ID] [--message TEXT]... [flags]",
       "chat with the configured model (llm.*) using msp's memory and tools; one message a line on stdin",
       {{"--message", "TEXT", "a message to send instead of reading standard input (repeatable)", true},
        {"--keep-open", "", "do not end (consolidate) the session at the end"}},
       {}, 0, kRecordVerb, &RunAgent},
  };
  verbs.insert(verbs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  // Coding agents (verbs_coding.cc; docs/coding-agents.md).
  for (Verb& verb : CodingVerbs()) verbs.push_back(std::move(verb));
  std::vector<Verb> servers = {
      {"serve", "[--port N] [--bind ADDR] [--api-keys KEY=TENANT,...] [--local-only [--idle-exit SECONDS]] [flags]",
       "serve the REST API (/v1), MCP over HTTP (/mcp) and the web console (/ui) until SIGINT or SIGTERM",
       {{"--local-only", "", "serve only msp commands on this data directory, through <data_dir>/msp.sock (no HTTP)"},
        {"--idle-exit", "SECONDS",
         "with --local-only: stop after SECONDS without a call, and give the socket to a server started later "
         "(how a command starts one, server.resident_autostart)"}},
       {}, 0, kTakesSettings, &RunServeModule},
#ifdef MSP_HAVE_MCP
      {"mcp", "[flags]", "serve MCP on stdio: one JSON-RPC message a line (see docs/mcp.md)", {}, {}, 0,
       kTakesNamespace | kTakesSettings, &RunMcp},
#endif
  };
  verbs.insert(verbs.end(), std::make_move_iterator(servers.begin()), std::make_move_iterator(servers.end()));
  return verbs;
}

const std::vector<Verb>& Verbs() {
  static const auto& verbs = *new std::vector<Verb>(AllVerbs());  // never taken apart at exit
  return verbs;
}

const Verb* FindVerb(std::string_view name) {
  for (const Verb& v : Verbs()) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

bool IsGroup(std::string_view word) {
  const std::string prefix = std::string(word) + " ";
  for (const Verb& v : Verbs()) {
    if (v.name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

std::vector<std::string> GroupVerbs(std::string_view word) {
  std::vector<std::string> out;
  const std::string prefix = std::string(word) + " ";
  for (const Verb& v : Verbs()) {
    if (v.name.substr(0, prefix.size()) == prefix) out.emplace_back(v.name.substr(prefix.size()));
  }
  return out;
}

// The verb's flags, including the shared ones its traits bring.
std::vector<FlagSpec> AllFlags(const Verb& v) {
  std::vector<FlagSpec> flags = v.flags.get();
  if (v.traits & kTakesNamespace) {
    for (const FlagSpec& f : NamespaceFlags()) {
      if (std::none_of(flags.begin(), flags.end(), [&](const FlagSpec& g) { return g.name == f.name; })) {
        flags.push_back(f);
      }
    }
  }
  if (v.traits & kTakesJson) flags.push_back(kJsonFlag);
  if (v.traits & kTakesSettings) flags.push_back(kConfigFlag);
  flags.push_back(kHelpFlag);
  return flags;
}

void PrintFlagList(std::ostream& out, const std::vector<FlagSpec>& flags) {
  size_t width = 0;
  auto label = [](const FlagSpec& f) {
    return std::string(f.name) + (f.value_name.empty() ? "" : " " + std::string(f.value_name));
  };
  for (const FlagSpec& f : flags) width = std::max(width, label(f).size());
  for (const FlagSpec& f : flags) {
    const std::string l = label(f);
    out << "  " << l << std::string(width - l.size() + 2, ' ') << f.help << "\n";
  }
}

void PrintVerbHelp(std::ostream& out, const Verb& v) {
  out << "usage: msp " << v.name << " " << v.synopsis << "\n" << v.summary << "\n";
  out << "\nflags:\n";
  PrintFlagList(out, v.flags.described());
  if (v.traits & kTakesNamespace) {
    out << "namespace:\n";
    PrintFlagList(out, NamespaceFlags());
  }
  std::vector<FlagSpec> common;
  if (v.traits & kTakesJson) common.push_back(kJsonFlag);
  if (v.traits & kTakesSettings) common.push_back(kConfigFlag);
  common.push_back(kHelpFlag);
  out << "common:\n";
  PrintFlagList(out, common);
  if (v.traits & kTakesSettings) {
    out << "  and every configuration flag (--data-dir DIR, ...): see `msp help config`\n";
  }
}

void PrintGeneralHelp(std::ostream& out) {
  out << "msp " << MSP_VERSION << " - persistent memory for LLM agents\n\n"
      << "usage: msp VERB [ARGS] [flags]\n\nverbs:\n";
  size_t width = 0;
  for (const Verb& v : Verbs()) width = std::max(width, v.name.size());
  for (const Verb& v : Verbs()) {
    out << "  " << v.name << std::string(width - v.name.size() + 2, ' ') << v.summary << "\n";
  }
  out << "  help" << std::string(width - 2, ' ') << "help [VERB | config]: this text, a verb's flags, or the settings\n"
      << "  version" << std::string(width - 5, ' ') << "print the version\n\n"
      << "Records belong to a namespace: --tenant (default \"default\"), --user, --agent, --session,\n"
      << "--mission, --operator. The data directory is --data-dir (default .msp); `msp help config`\n"
      << "lists every setting with its TOML key, MSP_* variable and flag.\n"
      << "Exit codes: 0 ok, 1 failure, 2 usage or invalid input, 3 refused by the write policy, 4 not found.\n";
}

int RunHelp(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  if (words.empty()) {
    PrintGeneralHelp(out);
    return kExitOk;
  }
  std::string name = words[0];
  for (size_t i = 1; i < words.size(); ++i) name += " " + words[i];
  if (name == "config") {
    out << SettingsHelp();
    return kExitOk;
  }
  if (const Verb* v = FindVerb(name)) {
    PrintVerbHelp(out, *v);
    return kExitOk;
  }
  if (IsGroup(name)) {
    for (const std::string& sub : GroupVerbs(name)) {
      PrintVerbHelp(out, *FindVerb(name + " " + sub));
      out << "\n";
    }
    return kExitOk;
  }
  if (name == "help" || name == "version") {
    PrintGeneralHelp(out);
    return kExitOk;
  }
  err << "msp: no help for '" << name << "'; verbs are listed by `msp help`\n";
  return kExitUsage;
}

// Flags (outside any verb) that take a value, so that `msp --data-dir X
// write ...` finds the verb after X.
bool TakesValueOutsideVerb(std::string_view flag) {
  if (IsSettingFlag(flag) || flag == "--config") return true;
  for (const FlagSpec& f : NamespaceFlags()) {
    if (f.name == flag) return true;
  }
  return false;
}

// Splits off the verb words: returns their positions in `args`.
std::vector<size_t> FindVerbWords(const std::vector<std::string>& args) {
  std::vector<size_t> at;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() > 1 && a[0] == '-' && a != "-") {
      if (a.find('=') == std::string::npos && TakesValueOutsideVerb(a)) ++i;
      continue;
    }
    at.push_back(i);
    if (at.size() == 1 && IsGroup(a)) {
      // The sub-verb must follow directly.
      if (i + 1 < args.size()) at.push_back(i + 1);
    }
    break;
  }
  return at;
}

Status LoadSettings(Invocation& inv) {
  ConfigInput input;
  input.config_path = inv.flags.Get("--config");
  if (inv.flags.Has("--config") && input.config_path.empty()) {
    return Usage(inv, "--config needs a file path");
  }
  input.env = ProcessEnvironment();
  input.flags = inv.flags.setting_flags;
  MSP_ASSIGN_OR_RETURN(inv.config, LoadConfig(input));
  // The operator acts, when one is named (procedure versions, the audit log).
  inv.actor = !inv.ns.operator_id.empty()        ? inv.ns.operator_id
              : inv.config.options.actor.empty() ? "cli"
                                                 : inv.config.options.actor;
  return Status::Ok();
}

Status LoadNamespace(Invocation& inv) {
  inv.ns.tenant = inv.flags.Get("--tenant", "default");
  if (inv.ns.tenant.empty()) return Usage(inv, "--tenant must not be empty");
  inv.ns.user = inv.flags.Get("--user");
  inv.ns.agent = inv.flags.Get("--agent");
  inv.ns.session = inv.flags.Get("--session");
  inv.ns.mission = inv.flags.Get("--mission");
  inv.ns.operator_id = inv.flags.Get("--operator");
  return Status::Ok();
}

}  // namespace

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kRefused: return kExitRefused;
    case StatusCode::kNotFound: return kExitNotFound;
    default: return kExitFailure;
  }
}

Status Usage(Invocation& inv, std::string message) {
  inv.show_usage = true;
  return Status::InvalidArgument(std::move(message));
}

int RunCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  const std::vector<size_t> at = FindVerbWords(args);
  if (at.empty()) {
    const bool help = std::any_of(args.begin(), args.end(), [](const std::string& a) {
      return a == "--help" || a == "-h";
    });
    const bool version = std::any_of(args.begin(), args.end(), [](const std::string& a) {
      return a == "--version";
    });
    if (version) {
      out << "msp " << MSP_VERSION << "\n";
      return kExitOk;
    }
    if (help) {
      PrintGeneralHelp(out);
      return kExitOk;
    }
    err << "msp: no verb given\n";
    PrintGeneralHelp(err);
    return kExitUsage;
  }
  std::string name = args[at[0]];
  for (size_t k = 1; k < at.size(); ++k) name += " " + args[at[k]];
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::find(at.begin(), at.end(), i) == at.end()) rest.push_back(args[i]);
  }

  if (args[at[0]] == "help") {
    std::vector<std::string> words;
    for (size_t i = at[0] + 1; i < args.size(); ++i) words.push_back(args[i]);
    return RunHelp(words, out, err);
  }
  if (name == "version") {
    out << "msp " << MSP_VERSION << "\n";
    return kExitOk;
  }
  // The capture hook never fails the agent: it reads its own flags and
  // settings, logs failures and exits 0 (verbs_coding.cc).
  if (name == "capture" && std::none_of(rest.begin(), rest.end(), [](const std::string& a) {
        return a == "--help" || a == "-h";
      })) {
    return RunCaptureHook(rest, in);
  }
  const Verb* verb = FindVerb(name);
  if (verb == nullptr) {
    size_t bad = 0;
    const std::string shown = IsValidUtf8(name, &bad) ? name : name.substr(0, bad) + "...";
    if (IsGroup(args[at[0]])) {
      std::string subs;
      for (const std::string& s : GroupVerbs(args[at[0]])) subs += (subs.empty() ? "" : ", ") + s;
      err << "msp: '" << shown << "' is not a verb; after '" << args[at[0]] << "' use one of: " << subs << "\n";
    } else {
      err << "msp: unknown verb '" << shown << "'; run `msp help` for the list\n";
    }
    return kExitUsage;
  }

  Invocation inv;
  inv.verb = verb;
  inv.out = &out;
  inv.err = &err;
  inv.in = &in;
  auto fail = [&](const Status& s) {
    err << "msp: " << s.message() << "\n";
    if (inv.show_usage) {
      err << "\n";
      PrintVerbHelp(err, *verb);
    }
    return ExitCodeFor(s);
  };

  Result<ParsedFlags> parsed = ParseFlags(rest, AllFlags(*verb), (verb->traits & kTakesSettings) != 0);
  if (!parsed.ok()) {
    inv.show_usage = true;
    return fail(parsed.status());
  }
  inv.flags = std::move(parsed).value();
  if (inv.flags.Has("--help")) {
    PrintVerbHelp(out, *verb);
    return kExitOk;
  }
  const size_t n = inv.flags.positionals.size();
  if (n < verb->min_positionals) {
    return fail(Usage(inv, "missing " + std::string(verb->positionals[n])));
  }
  // A last positional named "X..." takes any number of arguments.
  const bool variadic = !verb->positionals.empty() && verb->positionals.back().ends_with("...");
  if (n > verb->positionals.size() && !variadic) {
    return fail(Usage(inv, "unexpected argument '" + OneLine(inv.flags.positionals[verb->positionals.size()], 40) +
                               "'" + (verb->positionals.empty() ? "" : " (quote text with spaces)")));
  }
  for (size_t i = 0; i < n; ++i) {
    size_t bad = 0;
    if (!IsValidUtf8(inv.flags.positionals[i], &bad)) {
      return fail(Status::InvalidArgument(std::string(verb->positionals[std::min(i, verb->positionals.size() - 1)]) +
                                          " is not valid UTF-8 (bad byte at offset " + std::to_string(bad) + ")"));
    }
  }
  inv.json = inv.flags.Has("--json");
  if (verb->traits & kTakesNamespace) {
    if (Status s = LoadNamespace(inv); !s.ok()) return fail(s);
  }
  if (verb->traits & kTakesSettings) {
    if (Status s = LoadSettings(inv); !s.ok()) return fail(s);
  }
  if (Status s = verb->run(inv); !s.ok()) return fail(s);
  out.flush();
  if (!out) {
    err << "msp: cannot write the output\n";
    return kExitFailure;
  }
  return inv.exit_code;
}

// --- Helpers ---

Result<std::optional<int>> ClearanceFlag(Invocation& inv) {
  if (!(inv.verb->traits & kReadsAtClearance) || !inv.flags.Has("--clearance")) return std::optional<int>();
  Result<int64_t> c = inv.flags.GetInt("--clearance", 0, 0, kMaxAccessLevel);
  if (!c.ok()) return Usage(inv, c.status().message());
  return std::optional<int>(static_cast<int>(*c));
}

Result<Caller> CallerOf(MemoryLayer& engine, const Namespace& ns, const std::string& actor,
                        std::optional<int> clearance) {
  Caller caller;
  caller.tenant = ns.tenant;
  caller.actor = actor;
  if (clearance) {
    caller.clearance = *clearance;
  } else if (!ns.operator_id.empty()) {
    Namespace registry;
    registry.tenant = ns.tenant;
    registry.mission = ns.mission;
    MSP_ASSIGN_OR_RETURN(caller.clearance, ClearanceOf(engine, registry, ns.operator_id));
  }
  return caller;
}

Result<Caller> CliCaller(Invocation& inv, MemoryLayer& engine) {
  MSP_ASSIGN_OR_RETURN(std::optional<int> clearance, ClearanceFlag(inv));
  return CallerOf(engine, inv.ns, inv.actor, clearance);
}

Result<std::unique_ptr<MemoryLayer>> OpenEngine(Invocation& inv, bool create) {
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<MemoryLayer> engine, OpenServedEngine(inv, create));
  MSP_ASSIGN_OR_RETURN(inv.caller, CliCaller(inv, *engine));
  return AsCaller(std::move(engine), inv.caller);
}

Result<std::unique_ptr<MemoryLayer>> OpenServedEngine(Invocation& inv, bool create) {
  const Settings& options = inv.config.options;
  const std::string& dir = options.store.data_dir;
  const SettingOrigin& origin = inv.config.OriginOf("store.data_dir");
  const std::string named = "data directory '" + dir + "' (store.data_dir, from " + origin.where + ")";
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    // On PostgreSQL the store is the database; the directory holds only
    // this machine's derived indexes, made on first use.
    if (!create && options.store.backend != StoreBackend::kPostgres) {
      return Status::NotFound("no msp store in " + named + "; run `msp init` first or pass --data-dir");
    }
    CreatePrivateDirectories(dir, ec);
    if (ec) return Status::IoError("cannot create " + named + ": " + ec.message());
  } else if (!fs::is_directory(dir, ec)) {
    return Status::IoError(named + " is not a directory");
  }
  Result<std::unique_ptr<MemoryLayer>> engine = MemoryLayer::Open(options);
  if (!engine.ok()) return engine.status().WithContext("cannot open the store in " + named);
  return engine;
}

Result<TimeMs> TimeFlag(Invocation& inv, std::string_view flag) {
  if (!inv.flags.Has(flag)) return TimeMs{0};
  Result<TimeMs> t = ParseIso8601(inv.flags.Get(flag));
  if (!t.ok()) return Usage(inv, std::string(flag) + ": " + t.status().message());
  return t;
}

Result<int> AccessLevelFlag(Invocation& inv, int fallback) {
  Result<int64_t> v = inv.flags.GetInt("--access-level", fallback, 0, kMaxAccessLevel);
  if (!v.ok()) return Usage(inv, v.status().message());
  return static_cast<int>(*v);
}

std::string Fixed(double d, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, d);
  return buf;
}

Result<std::string> TextArgument(Invocation& inv, size_t index, bool stdin_dash) {
  std::string text = inv.flags.positionals.at(index);
  if (stdin_dash && text == "-") {
    text.assign(std::istreambuf_iterator<char>(*inv.in), std::istreambuf_iterator<char>());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    size_t bad = 0;
    if (!IsValidUtf8(text, &bad)) {
      return Status::InvalidArgument(std::string(inv.verb->positionals.at(index)) +
                                     " from standard input is not valid UTF-8 (bad byte at offset " +
                                     std::to_string(bad) + ")");
    }
  }
  return text;
}

Result<std::vector<ProvenanceRef>> ProvenanceFlags(Invocation& inv) {
  std::vector<ProvenanceRef> out;
  for (const std::string& v : inv.flags.All("--provenance")) {
    const size_t colon = v.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == v.size()) {
      return Usage(inv, "--provenance must be TYPE:REF (e.g. commit:abc123), got '" + v + "'");
    }
    out.push_back(ProvenanceRef{v.substr(0, colon), v.substr(colon + 1), ""});
  }
  return out;
}

void PrintJson(Invocation& inv, const nlohmann::json& j) { *inv.out << DumpJson(j) << "\n"; }

std::string OneLine(std::string_view text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  bool space = false;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
      ++i;
      continue;
    }
    size_t len = 1;
    if (c >= 0xF0) {
      len = 4;
    } else if (c >= 0xE0) {
      len = 3;
    } else if (c >= 0xC0) {
      len = 2;
    }
    len = std::min(len, text.size() - i);
    if (chars + (space ? 1 : 0) >= max_chars) {
      out += "…";
      return out;
    }
    if (space) {
      out += ' ';
      ++chars;
      space = false;
    }
    // Control characters would garble a terminal; show them as '?'.
    if (c < 0x20 || c == 0x7F) {
      out += '?';
    } else {
      out.append(text.substr(i, len));
    }
    ++chars;
    i += len;
  }
  return out;
}

void PrintMemoryLine(std::ostream& out, const Memory& m) {
  out << m.id << "  " << KindName(m.kind) << "  " << OneLine(m.text) << "\n";
}

void PrintMemoryDetail(std::ostream& out, const Memory& m) {
  auto time = [](TimeMs t) { return t == 0 ? std::string("-") : FormatIso8601(t); };
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("-") : s;
  };
  out << "id:            " << m.id << "\n"
      << "namespace:     " << m.ns.ToString() << "\n"
      << "kind:          " << KindName(m.kind) << " (" << LayerName(m.layer) << ")\n"
      << "state:         " << RecordStateName(m.state) << "\n"
      << "text:          " << m.text << "\n";
  if (!m.body_json.empty() && m.body_json != "{}") out << "body:          " << m.body_json << "\n";
  out << "tags:          " << join(m.tags) << "\n"
      << "source:        " << (m.source.empty() ? "-" : m.source) << "\n"
      << "sensitivity:   " << SensitivityName(m.sensitivity) << "\n"
      << "criticality:   " << CriticalityName(m.criticality) << "\n"
      << "confidence:    " << m.confidence << "\n"
      << "created:       " << time(m.created_at) << "\n"
      << "updated:       " << time(m.updated_at) << "\n";
  if (m.expires_at != 0) out << "expires:       " << time(m.expires_at) << "\n";
  if (m.valid_at != 0) out << "valid from:    " << time(m.valid_at) << "\n";
  if (m.invalid_at != 0) out << "valid until:   " << time(m.invalid_at) << "\n";
  out << "accessed:      " << m.access_count << " times, last " << time(m.last_accessed) << "\n";
  if (m.kind == Kind::kEpisode) out << "step:          " << m.step_number << "\n";
  for (const ProvenanceRef& p : m.provenance) {
    out << "provenance:    " << p.type << ":" << p.ref << (p.detail.empty() ? "" : " (" + p.detail + ")") << "\n";
  }
  if (!m.supersedes.empty()) out << "supersedes:    " << m.supersedes << "\n";
  if (!m.superseded_by.empty()) out << "superseded by: " << m.superseded_by << "\n";
  if (!m.embedder_id.empty()) out << "vector by:     " << m.embedder_id << "\n";
}

}  // namespace msp
