// src/api: the one declaration of each operation msp offers through its
// faces (the `msp` command line, the REST API, the MCP tools). An operation
// is a name, a request struct, a field table (JSON name, type, default,
// range, doc), an answer shape and a handler that calls the public engine
// API (include/msp/). From the table come the strict JSON request codec
// (codec.h), the MCP input schema (schema.h), the REST route's decoding, the
// command line's flags (same names with dashes, same limits, same defaults)
// and the reference page docs/operations.md (reference.h). The faces keep
// only transport and formatting.
//
// This header: the field table's types, the call context, and Operation,
// the type-erased face of one declaration that the faces and the tests walk.
#ifndef MSP_API_OPERATION_H_
#define MSP_API_OPERATION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/caller.h"
#include "msp/digest.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp::api {

enum class FieldType {
  kString,     // any string
  kText,       // a string with something other than whitespace in it
  kInt,        // an integer in [min_int, max_int]
  kNumber,     // a number in [min_number, max_number]
  kBool,
  kTime,       // an ISO 8601 string
  kEnum,       // one of `values`
  kStrings,    // an array of strings
  kEnums,      // an array of `values`
  kNamespace,  // {user, agent, session, mission, operator, tenant}: parts over the face's namespace
  kObject,     // a JSON object (the command line: its JSON text)
  kProvenance, // an array of {type, ref, detail} (the command line: TYPE:REF, repeatable)
  kAlternatives,  // an array of {option, reason} (the command line: 'OPTION: REASON', repeatable)
  kFiles,         // an array of {name, text, first_commit_at, last_author} (the command line: a directory)
};

// How the command line spells a field.
enum class CliForm {
  kFlag,            // --name-with-dashes (lists: repeatable and comma-separated)
  kPositional,      // the verb's positional argument ("-": standard input)
  kNamespaceFlags,  // the shared namespace flags --user, --agent, --session, --mission, --operator
};

// One row of a field table: what every face reads.
struct FieldInfo {
  std::string group{};  // "" (top level) or the object it sits in ("filters")
  std::string name{};   // JSON name within the group: "top_k"
  FieldType type = FieldType::kString;
  std::string doc{};
  bool required = false;
  int64_t min_int = 0, max_int = 0;           // kInt
  double min_number = 0.0, max_number = 0.0;  // kNumber
  std::vector<std::string> values{};          // kEnum, kEnums: the allowed names
  CliForm cli = CliForm::kFlag;
  // The command line's flag when it is not the name with dashes ("--tag"
  // for `tags`, the spelling every record-writing verb shares).
  std::string flag{};
  // REST's other name for the field's query parameter, still taken (GET
  // /v1/memories?kind=fact: memory_list's filters.kinds); "" when none.
  std::string param_alias{};
  // The default as JSON (from a default-constructed request, so it cannot
  // drift from the struct); null when there is none (absent means "any").
  nlohmann::json default_value{};

  std::string Path() const { return group.empty() ? name : group + "." + name; }
  // "--top-k"; the namespace field: "--user, --agent, ...".
  std::string Flag() const;
  // "integer 1..1000", "array of strings", ...: for messages and the docs.
  std::string TypeText() const;
};

// A JSON value made when first read: an operation's answer schema is built
// only by the faces that need it (MCP's tools/list, the docs), not by every
// command that declares the operation for its flags. From a JSON value (made
// at once) or from a function returning one (made by the first get()).
// Copies share the value. Thread-safe.
class LazyJson {
 public:
  LazyJson() : LazyJson(nlohmann::json()) {}
  LazyJson(nlohmann::json value) : state_(std::make_shared<State>()) {  // NOLINT: implicit, as a json field was
    state_->value = std::move(value);
  }
  LazyJson(nlohmann::json::initializer_list_t init) : LazyJson(nlohmann::json(init)) {}  // NOLINT
  template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<nlohmann::json, F> &&
                                                    !std::is_convertible_v<F, nlohmann::json>>>
  LazyJson(F make) : state_(std::make_shared<State>()) {  // NOLINT: implicit
    state_->make = std::move(make);
  }

  const nlohmann::json& get() const {
    State& s = *state_;
    std::call_once(s.once, [&s] {
      if (s.make) s.value = s.make();
      s.make = nullptr;
    });
    return s.value;
  }

 private:
  struct State {
    std::once_flag once;
    std::function<nlohmann::json()> make;  // set until the value is made
    nlohmann::json value;
  };
  std::shared_ptr<State> state_;
};

// What a face knows about a call besides the request: who calls, and the
// engine as that caller. Field tables never see the caller.
struct CallContext {
  // AsCaller(engine, caller) (msp/caller.h): the engine enforces the
  // caller's tenant and clearance on every call the handler makes.
  MemoryLayer* engine = nullptr;
  Caller caller;
  // The mission retrieval interface, or why it is unavailable (a token
  // counter without its vocabulary). Opened on first use by the CLI.
  std::function<Result<WorkflowMemory*>()> workflow;
  // The namespace field's defaults: the tenant (always the caller's; a
  // request naming another one is refused) and the face's other parts
  // (MCP: the session's; REST: none; CLI: the namespace flags).
  Namespace ns;
  // policy.context_trusted_sources: served records are labelled "trust":
  // "trusted" or "untrusted" by their source (util/fence.h).
  std::vector<std::string> trusted_sources = WritePolicyOptions{}.context_trusted_sources;
  // A face whose writes come from a model (MCP; docs/mcp.md, "Agent
  // writes"): memory_write stores a write naming no source with `source`,
  // refuses a trusted source the model names, and tags a note without one
  // of `stable_tags` with `default_tag` (when set). Unset (REST, the
  // command line): the source defaults to "user" and no tag is added.
  struct AgentWrites {
    std::string source;
    std::string default_tag;
    std::vector<std::string> stable_tags;
  };
  std::optional<AgentWrites> agent_writes;
};

// What an operation's declaration says, for faces, docs and tests.
struct OperationInfo {
  std::string name{};        // "search"
  std::string title{};       // "Search memory"
  std::string summary{};     // what it does, for every face's help
  std::string cli_verb{};    // "search"
  std::string rest_method{}; // "POST"
  std::string rest_path{};   // "/v1/search"
  std::string mcp_tool{};    // "memory_search"; "": not an MCP tool (mcp_withheld says why)
  // The smallest MCP tool profile that offers the tool: "core" (what every
  // agent needs in its session), "mission" or "graph" (docs/mcp.md).
  std::string mcp_profile = "mission";
  // Why the operation is not offered to a model (an administrative act);
  // set exactly when mcp_tool is "".
  std::string mcp_withheld{};
  bool read_only = false;  // MCP annotations
  bool idempotent = false;
  bool destructive = false;
  int rest_status = 200;  // REST's status for a success (201: created)
  // When set, REST's status for a success with this answer instead (a PUT
  // that creates or replaces: 201 or 200).
  int (*rest_status_of)(const nlohmann::json& answer) = nullptr;
  std::vector<FieldInfo> fields{};
  // A request that succeeds on a mission with a decision about the billing
  // ledger and a preference for dark mode (docs; the faces test sends it
  // through every face).
  nlohmann::json example{};
  std::string answer{};            // the answer's shape in one line
  LazyJson answer_schema{};  // its JSON Schema (MCP outputSchema), made when first read

  const FieldInfo* Find(const std::string& path) const;
  // True when the REST route takes the request as a JSON body (POST, PUT);
  // else its fields are the target's parameters (GET, DELETE).
  bool HasBody() const { return rest_method == "POST" || rest_method == "PUT"; }
  // True when the REST path names the field ("/v1/memories/{id}"): the
  // route takes it from the path, not from the body or a parameter.
  bool InPath(const FieldInfo& f) const;
};

// One declared operation, type-erased.
class Operation {
 public:
  virtual ~Operation() = default;
  const OperationInfo& info() const { return info_; }

  // Decodes `request` strictly with the field table (unknown fields, wrong
  // types, values out of range and missing required fields are
  // InvalidArgument naming the field), then runs the handler. The answer is
  // the operation's one shape, the same on every face.
  virtual Result<nlohmann::json> Call(const CallContext& context, const nlohmann::json& request) const = 0;

  // Call's answer as compact JSON text: byte for byte DumpJson(*Call(...)).
  // An operation that writes its answer as text (search) skips the tree;
  // the REST and MCP faces send this.
  virtual Result<std::string> CallText(const CallContext& context, const nlohmann::json& request) const = 0;

  // Only the decoding of Call: OK when `request` would be accepted.
  virtual Status Check(const CallContext& context, const nlohmann::json& request) const = 0;

 protected:
  explicit Operation(OperationInfo info) : info_(std::move(info)) {}

 private:
  OperationInfo info_;
};

}  // namespace msp::api

#endif  // MSP_API_OPERATION_H_
