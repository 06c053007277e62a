// The `msp` command line: the verb table, what every verb handler gets, and
// the helpers the handlers share (opening the store, output, exit codes).
//
// Each verb group lives in its own file (verbs_*.cc); cli.cc holds the verb
// table, the dispatcher and the one Status -> exit code mapping.
#ifndef MSP_CLI_CLI_H_
#define MSP_CLI_CLI_H_

#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/flags.h"
#include "codec/memory_json.h"
#include "config/config.h"
#include "msp/caller.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// Exit codes of `msp` (documented in docs/cli.md).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // any other engine or system error
constexpr int kExitUsage = 2;     // bad flags or arguments; invalid input (invalid_argument)
constexpr int kExitRefused = 3;   // the write policy refused the write
constexpr int kExitNotFound = 4;  // no such record, store or file

// The one mapping of Status codes to exit codes.
int ExitCodeFor(const Status& status);

struct Verb;

// What a verb handler works with: its parsed arguments, the loaded
// configuration and namespace, and where to print.
struct Invocation {
  const Verb* verb = nullptr;
  ParsedFlags flags;
  LoadedConfig config;    // loaded for verbs that take settings
  Namespace ns;           // from --tenant, --user, ...
  bool json = false;      // --json
  std::string actor;      // --operator, else options.actor, else "cli"
  // Who calls (set by OpenEngine): --tenant, the actor, and the clearance of
  // --clearance N on a verb that reads at it (kReadsAtClearance), else
  // --operator's in the registry, else none (the data directory's owner).
  Caller caller;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  std::istream* in = nullptr;
  // Set by Usage(): the dispatcher then prints the verb's usage.
  bool show_usage = false;
  // A handler that returns Ok may still ask for a non-zero exit (demo).
  int exit_code = kExitOk;
  // Set when the resident path found no server listening on the data
  // directory's socket (resident_start.h may then start one).
  bool resident_absent = false;
};

// Traits of a verb.
enum VerbTrait : unsigned {
  kTakesNamespace = 1u << 0,  // --tenant, --user, --agent, --session, --mission, --operator
  kTakesJson = 1u << 1,       // --json
  kTakesSettings = 1u << 2,   // every configuration flag, and --config
  kReadsAtClearance = 1u << 3,  // --clearance N: the caller reads at clearance N
};
// A verb that reads or writes records.
constexpr unsigned kRecordVerb = kTakesNamespace | kTakesJson | kTakesSettings;

// A verb's own flags: listed in the verb table, or those of a src/api
// operation's field table (ApiFlags), made the first time they are asked
// for, so that starting msp for one verb does not build the declaration of
// every operation. Safe to read from several threads.
class VerbFlags {
 public:
  VerbFlags() = default;
  VerbFlags(std::initializer_list<FlagSpec> listed) : VerbFlags(std::vector<FlagSpec>(listed)) {}
  VerbFlags(std::vector<FlagSpec> listed);  // NOLINT: the verb table lists them
  // The flags of `operation`'s field table but those in `without`, then
  // `extra`. A flag left out is neither listed by help nor accepted.
  static VerbFlags OfOperation(std::string_view operation, std::vector<FlagSpec> extra,
                               std::vector<std::string_view> without = {});
  // The flags, for parsing: an operation's flags without their help text.
  const std::vector<FlagSpec>& get() const;
  // The same flags with their help text, for --help (made when first asked:
  // a command that parses its flags never builds the texts).
  const std::vector<FlagSpec>& described() const;
  // The operation whose field table they are ("" for listed flags): the
  // operation a verb of src/api runs.
  std::string_view operation() const;

 private:
  struct State;
  const std::vector<FlagSpec>& Made(bool with_help) const;
  std::shared_ptr<State> state_;
};

struct Verb {
  std::string_view name;        // "episode add"
  std::string_view synopsis;    // "TEXT [flags]"
  std::string_view summary;     // one line
  VerbFlags flags;              // the verb's own flags
  std::vector<std::string_view> positionals;  // names, for messages: {"TEXT"}
  size_t min_positionals = 0;
  unsigned traits = 0;
  Status (*run)(Invocation&) = nullptr;
};

// The verb groups the table (cli.cc) takes from their files: the mission's
// records, retrieval and events (verbs_decision.cc), the coding agents'
// (verbs_coding.cc).
std::vector<Verb> MissionVerbs();
std::vector<Verb> CodingVerbs();

// Runs the command line `args` (argv without the program name). Returns the
// process exit code.
int RunCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

// --- Helpers for the handlers ---

// Marks the invocation as a usage error: returns InvalidArgument(message)
// and makes the dispatcher print the verb's usage after it.
Status Usage(Invocation& inv, std::string message);

// Opens the engine on the configured data directory, as the command line's
// caller (AsCaller with inv.caller, which it sets): every verb reads and
// writes through it, so the engine enforces the caller's tenant and
// clearance. With `create`, the directory is created when missing; without,
// a missing directory is NotFound ("run `msp init`"). Errors name the
// directory and where the setting came from.
Result<std::unique_ptr<MemoryLayer>> OpenEngine(Invocation& inv, bool create);
// The command line's caller (Invocation::caller's rule), from the flags and
// the operator registry of `engine`.
Result<Caller> CliCaller(Invocation& inv, MemoryLayer& engine);
// The rule behind it, for a caller described elsewhere (the resident path,
// src/local): tenant and actor as given; the clearance `clearance` when
// set, else that of ns.operator_id in the registry of `engine` (the
// tenant's, or ns.mission's), else none.
Result<Caller> CallerOf(MemoryLayer& engine, const Namespace& ns, const std::string& actor,
                        std::optional<int> clearance);
// --clearance N on a verb that reads at a clearance (kReadsAtClearance);
// nullopt when not given.
Result<std::optional<int>> ClearanceFlag(Invocation& inv);
// The engine itself, for the servers (`msp serve`, `msp mcp`), which make a
// caller of each request or session.
Result<std::unique_ptr<MemoryLayer>> OpenServedEngine(Invocation& inv, bool create);

// Parses an enum flag (e.g. --kind) with the engine's canonical names;
// an unknown name is a usage error listing the allowed ones.
template <typename E>
Result<E> EnumFlag(Invocation& inv, std::string_view flag, std::string_view value,
                   std::optional<E> (*parse)(std::string_view), std::string_view (*name)(E));
// Every value of a repeatable enum flag.
template <typename E>
Result<std::vector<E>> EnumFlags(Invocation& inv, std::string_view flag,
                                 std::optional<E> (*parse)(std::string_view), std::string_view (*name)(E));

template <typename E>
Result<E> EnumFlag(Invocation& inv, std::string_view flag, std::string_view value,
                   std::optional<E> (*parse)(std::string_view), std::string_view (*name)(E)) {
  if (std::optional<E> e = parse(value)) return *e;
  return Usage(inv, std::string(flag) + ": unknown value '" + std::string(value) + "'; allowed: " +
                        EnumNames(name));
}

template <typename E>
Result<std::vector<E>> EnumFlags(Invocation& inv, std::string_view flag,
                                 std::optional<E> (*parse)(std::string_view), std::string_view (*name)(E)) {
  std::vector<E> out;
  for (const std::string& v : inv.flags.All(flag)) {
    MSP_ASSIGN_OR_RETURN(E e, EnumFlag(inv, flag, v, parse, name));
    out.push_back(e);
  }
  return out;
}

// An ISO 8601 time flag (--since); absent: 0.
Result<TimeMs> TimeFlag(Invocation& inv, std::string_view flag);

// --access-level N (0..kMaxAccessLevel); absent: `fallback`.
Result<int> AccessLevelFlag(Invocation& inv, int fallback);

// `d` with `digits` decimals: Fixed(0.8234, 2) is "0.82".
std::string Fixed(double d, int digits);

// The positional at `index`, with "-" read from standard input when
// `stdin_dash` (for TEXT arguments).
Result<std::string> TextArgument(Invocation& inv, size_t index, bool stdin_dash);

// --provenance TYPE:REF values.
Result<std::vector<ProvenanceRef>> ProvenanceFlags(Invocation& inv);

// Output.
void PrintJson(Invocation& inv, const nlohmann::json& j);
// One line: the text with whitespace runs collapsed, cut at `max_chars`
// characters (UTF-8 aware) with "…".
std::string OneLine(std::string_view text, size_t max_chars = 100);
// "<id>  <kind>  <text>".
void PrintMemoryLine(std::ostream& out, const Memory& m);
// Every field, one per line.
void PrintMemoryDetail(std::ostream& out, const Memory& m);

// The flags of src/api's operation `operation` ("search"): its field table
// with dashes (verbs_api.cc), then `extra` (the verb's own, e.g. --timing);
// made when the verb's flags are first read. `without`: fields the verb
// does not take ("--base-version" of principle add), left out of both.
VerbFlags ApiFlags(std::string_view operation, std::vector<FlagSpec> extra = {},
                   std::vector<std::string_view> without = {});

// The common part of a verb of a src/api operation: the request from its
// flags, the operation run on the store (opened, or made when `create`);
// with --json the answer is printed and none is returned (nothing is left
// to do), else the answer is returned for the verb to print its way.
Result<std::optional<nlohmann::json>> AnswerToPrint(Invocation& inv, bool create);
// The same with fields the verb read from its arguments (`given`: decision
// import's files of DIR), each unless a flag gave it.
Result<std::optional<nlohmann::json>> AnswerToPrint(Invocation& inv, bool create, const nlohmann::json& given);
// The same for an operation over the mission retrieval interface
// (WorkflowMemory: workflow_memory_query, handoff_digest,
// workflow_mark_used), on the store, never over the resident path.
Result<std::optional<nlohmann::json>> MissionAnswerToPrint(Invocation& inv);
// The answer of `operation` (the verb's, or another one taking the same
// request: `report corrections --export` asks report_correction_pairs too)
// to the verb's flags, run here on the store; nothing is printed.
Result<nlohmann::json> AnswerOfOperation(Invocation& inv, std::string_view operation, bool create);

// Verb handlers (verbs_*.cc).
Status RunInit(Invocation& inv);
Status RunWrite(Invocation& inv);
Status RunFactAdd(Invocation& inv);
Status RunFactSupersede(Invocation& inv);
Status RunList(Invocation& inv);
Status RunDelete(Invocation& inv);
Status RunEpisodeAdd(Invocation& inv);
Status RunEpisodeList(Invocation& inv);
Status RunSessionEnd(Invocation& inv);
Status RunConsolidate(Invocation& inv);
Status RunSearch(Invocation& inv);  // verbs_api.cc
Status RunGet(Invocation& inv);
Status RunHistory(Invocation& inv);
Status RunStats(Invocation& inv);
Status RunAudit(Invocation& inv);
Status RunImport(Invocation& inv);
Status RunExport(Invocation& inv);
Status RunReindex(Invocation& inv);
Status RunReembed(Invocation& inv);
Status RunModelPull(Invocation& inv);
Status RunModelList(Invocation& inv);
Status RunModelRemove(Invocation& inv);
// verbs_decision.cc: mission records.
Status RunDecisionAdd(Invocation& inv);
Status RunDecisionList(Invocation& inv);
Status RunDecisionShow(Invocation& inv);
Status RunDecisionStatus(Invocation& inv);
Status RunDecisionSupersede(Invocation& inv);
Status RunDecisionImport(Invocation& inv);
Status RunPrincipleAdd(Invocation& inv);
Status RunPrincipleEdit(Invocation& inv);
Status RunPrincipleShow(Invocation& inv);
Status RunPrincipleList(Invocation& inv);
Status RunOperatorSet(Invocation& inv);
Status RunOperatorList(Invocation& inv);
Status RunOperatorShow(Invocation& inv);
Status RunCorrectionAdd(Invocation& inv);
Status RunCorrectionList(Invocation& inv);
Status RunCorrectionShow(Invocation& inv);
Status RunDemoVerb(Invocation& inv);
// verbs_procedure.cc and verbs_agent.cc: procedural memory, core memory,
// working memory, the agent loop.
Status RunProcedurePrompt(Invocation& inv);
Status RunProcedureTool(Invocation& inv);
Status RunProcedureRule(Invocation& inv);
Status RunProcedureRemove(Invocation& inv);
Status RunProcedureList(Invocation& inv);
Status RunProcedureShow(Invocation& inv);
Status RunProcedureHistory(Invocation& inv);
Status RunProcedureDiff(Invocation& inv);
Status RunProcedureRestore(Invocation& inv);
Status RunCoreShow(Invocation& inv);
Status RunCoreSet(Invocation& inv);
Status RunCoreAppend(Invocation& inv);
Status RunCoreReplace(Invocation& inv);
Status RunContext(Invocation& inv);
Status RunAgent(Invocation& inv);
Status RunServe(Invocation& inv);        // verbs_serve.cc, in libmsp_serve.so
Status RunServeModule(Invocation& inv);  // serve_loader.cc: loads libmsp_serve.so, runs RunServe
Status RunMcp(Invocation& inv);  // verbs_mcp.cc, when MCP is built
// verbs_query.cc: mission retrieval.
Status RunQuery(Invocation& inv);  // verbs_api.cc
Status RunHandoff(Invocation& inv);
Status RunMarkUsed(Invocation& inv);
Status RunReportCorrections(Invocation& inv);
Status RunReportCorrectionPairs(Invocation& inv);
Status RunReportRedundancy(Invocation& inv);
Status RunReportLoad(Invocation& inv);
Status RunEventAdd(Invocation& inv);
Status RunEventList(Invocation& inv);
// verbs_orchestrate.cc: tasks and the push-refresh orchestrator.
Status RunTaskAdd(Invocation& inv);
Status RunTaskList(Invocation& inv);
Status RunTaskShow(Invocation& inv);
Status RunTaskComment(Invocation& inv);
Status RunTaskStatus(Invocation& inv);
Status RunTaskImport(Invocation& inv);
Status RunOrchestrate(Invocation& inv);
// verbs_ingest.cc: documents and git commits into a mission.
Status RunIngest(Invocation& inv);

// verbs_coding.cc: coding agents (docs/coding-agents.md).
// `msp capture` is dispatched before flag parsing and settings (it never
// fails the agent): the capture hook's arguments after the verb word.
int RunCaptureHook(const std::vector<std::string>& args, std::istream& in);
Status RunCapture(Invocation& inv);
Status RunPromptsList(Invocation& inv);
Status RunPromptsSearch(Invocation& inv);
Status RunPromptsTopics(Invocation& inv);
Status RunPromptsSwitches(Invocation& inv);
Status RunPromptsIntents(Invocation& inv);
Status RunPromptsImport(Invocation& inv);
Status RunHookSessionStart(Invocation& inv);
Status RunHookPostToolUse(Invocation& inv);
Status RunHookSessionEnd(Invocation& inv);
Status RunSetupClaudeCode(Invocation& inv);

}  // namespace msp

#endif  // MSP_CLI_CLI_H_
