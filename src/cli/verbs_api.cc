// The verbs of src/api's operations: search (search), query
// (workflow_memory_query), write (memory_write), get (memory_get), history
// (memory_history), delete (memory_delete), list (memory_list), fact add
// (fact_add) and fact supersede (fact_supersede). Their flags are the operation's field table
// spelled with dashes (same limits, same defaults); the flags become the
// operation's JSON request, which the operation decodes and answers as it
// does for REST and MCP. These verbs only print: --json the answer itself,
// else a human form of it.
#include <algorithm>
#include <chrono>
#include <deque>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>

#include "api/operations.h"
#include "cli/answer_text.h"
#include "cli/cli.h"
#include "cli/resident_start.h"
#include "codec/memory_json.h"
#include "local/local_socket.h"
#include "msp/digest.h"

namespace msp {
namespace {

using nlohmann::json;

// Flag names and help made from the table live as long as the verb table
// (for ever: the verbs' flags are made on first use, from any thread).
std::string_view Keep(std::string text) {
  static std::mutex mutex;
  static auto* kept = new std::deque<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  return kept->emplace_back(std::move(text));
}

const api::Operation& OperationOfVerb(const Invocation& inv) {
  // The verb's flags name its operation (ApiFlags): only that one is declared.
  const std::string_view name = inv.verb->flags.operation();
  const api::Operation* op = name.empty() ? api::FindByCliVerb(inv.verb->name) : api::FindOperation(name);
  return *op;  // the verb table names only verbs of operations here
}

bool IsList(const api::FieldInfo& f) {
  return f.type == api::FieldType::kStrings || f.type == api::FieldType::kEnums ||
         f.type == api::FieldType::kProvenance || f.type == api::FieldType::kAlternatives;
}

// A boolean that is off by default is a switch; one that is on takes a value.
bool IsSwitch(const api::FieldInfo& f) { return f.type == api::FieldType::kBool && f.default_value != true; }

// The field's value from its flag, as JSON; null when the flag is absent.
Result<json> FlagValue(const Invocation& inv, const api::FieldInfo& f) {
  const std::string flag = f.Flag();
  if (!inv.flags.Has(flag)) return json();
  switch (f.type) {
    case api::FieldType::kInt: {
      MSP_ASSIGN_OR_RETURN(int64_t n, inv.flags.GetInt(flag, 0, std::numeric_limits<int64_t>::min(),
                                                       std::numeric_limits<int64_t>::max()));
      return json(n);
    }
    case api::FieldType::kNumber: {
      MSP_ASSIGN_OR_RETURN(double d, inv.flags.GetDouble(flag, 0.0, std::numeric_limits<double>::lowest(),
                                                         std::numeric_limits<double>::max()));
      return json(d);
    }
    case api::FieldType::kBool: {
      if (IsSwitch(f)) return json(true);
      const std::string v = inv.flags.Get(flag);
      if (v == "true") return json(true);
      if (v == "false") return json(false);
      return Status::InvalidArgument(flag + " must be true or false, got '" + v + "'");
    }
    case api::FieldType::kStrings:
    case api::FieldType::kEnums: {
      json out = json::array();
      for (const std::string& v : inv.flags.All(flag)) {
        size_t start = 0;
        while (start <= v.size()) {
          const size_t comma = std::min(v.find(',', start), v.size());
          if (comma > start) out.push_back(v.substr(start, comma - start));
          start = comma + 1;
        }
      }
      return out;
    }
    case api::FieldType::kObject: return ParseJsonObject(inv.flags.Get(flag), flag);
    case api::FieldType::kProvenance: {
      json out = json::array();
      for (const std::string& v : inv.flags.All(flag)) {
        const size_t colon = v.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == v.size()) {
          return Status::InvalidArgument(flag + " must be TYPE:REF (e.g. commit:abc123), got '" + v + "'");
        }
        out.push_back({{"type", v.substr(0, colon)}, {"ref", v.substr(colon + 1)}});
      }
      return out;
    }
    case api::FieldType::kAlternatives: {
      json out = json::array();
      for (const std::string& v : inv.flags.All(flag)) {
        const size_t cut = v.find(": ");
        if (cut == std::string::npos || cut == 0 || cut + 2 == v.size()) {
          return Status::InvalidArgument(flag + " must be 'OPTION: REASON' (the reason it was rejected), got '" + v +
                                         "'");
        }
        out.push_back({{"option", v.substr(0, cut)}, {"reason", v.substr(cut + 2)}});
      }
      return out;
    }
    default:
      return json(inv.flags.Get(flag));
  }
}

// The operation's JSON request from the verb's positional and flags.
Result<json> RequestFromFlags(Invocation& inv, const api::OperationInfo& info) {
  json request = json::object();
  // The positionals in the table's order; the last one, when it is text,
  // may be "-": standard input.
  size_t positionals = 0, positional = 0;
  for (const api::FieldInfo& f : info.fields) positionals += f.cli == api::CliForm::kPositional ? 1 : 0;
  // An operation without a positional field whose verb takes "-" (`decision
  // add -`): the whole request, one JSON object, on standard input; its
  // fields are not flags as well (the namespace flags still apply).
  const bool from_stdin = positionals == 0 && !inv.flags.positionals.empty();
  if (from_stdin) {
    if (inv.flags.positionals[0] != "-") {
      return Usage(inv, "the only argument is '-' (the request as one JSON object on standard input)");
    }
    std::string text(std::istreambuf_iterator<char>(*inv.in), {});
    Result<json> parsed = ParseJsonObject(text, "standard input");
    if (!parsed.ok()) return Usage(inv, parsed.status().message());
    request = std::move(parsed).value();
  }
  for (const api::FieldInfo& f : info.fields) {
    json value;
    if (f.cli == api::CliForm::kPositional) {
      const size_t at = positional++;
      if (at >= inv.flags.positionals.size()) continue;  // the operation says it is required
      // Files (`decision import DIR`): the verb reads the directory and
      // gives them (AnswerToPrint's `given`).
      if (f.type == api::FieldType::kFiles) continue;
      if (f.type == api::FieldType::kStrings) {
        // A list (`mark-used RETRIEVAL_ID ENTRY_ID...`): every positional from here on.
        value = json(std::vector<std::string>(inv.flags.positionals.begin() + at, inv.flags.positionals.end()));
      } else {
        const bool stdin_dash = at + 1 == positionals && f.type == api::FieldType::kText;
        MSP_ASSIGN_OR_RETURN(std::string text, TextArgument(inv, at, stdin_dash));
        value = std::move(text);
      }
    } else if (f.cli == api::CliForm::kFlag) {
      Result<json> v = FlagValue(inv, f);
      if (!v.ok()) return Usage(inv, v.status().message());
      value = std::move(v).value();
    }
    if (value.is_null()) continue;  // the namespace comes from the namespace flags (CallContext::ns)
    if (from_stdin) {
      return Usage(inv, "give the request either as flags or as JSON on standard input, not both (" + f.Flag() + ")");
    }
    if (f.group.empty()) {
      request[f.name] = std::move(value);
    } else {
      request[f.group][f.name] = std::move(value);
    }
  }
  return request;
}

// Runs the verb's operation on `engine`; a bad request is a usage error
// worded with the flags' names.
Result<json> CallOperation(Invocation& inv, MemoryLayer& engine, const json& request,
                           std::function<Result<WorkflowMemory*>()> workflow,
                           const api::Operation* other = nullptr) {
  const api::Operation& op = other != nullptr ? *other : OperationOfVerb(inv);
  api::CallContext context;
  context.engine = &engine;
  context.workflow = std::move(workflow);
  context.ns = inv.ns;
  context.caller = inv.caller;
  context.trusted_sources = inv.config.options.policy.context_trusted_sources;
  Result<json> answer = op.Call(context, request);
  if (!answer.ok() && answer.status().code() == StatusCode::kInvalidArgument) {
    return Usage(inv, api::CliMessage(op.info(), answer.status().message()));
  }
  return answer;
}

// The verb's request from its flags, with the fields the verb gives itself
// (`given`: what it read from its arguments, unless a flag gave it), checked
// by `other` (an operation taking the verb's request: `report corrections
// --export` asks report_correction_pairs too) or the verb's own operation,
// before the store is opened, so that a bad flag is a usage error even
// without a data directory.
Result<json> CheckedRequest(Invocation& inv, const json& given = json::object(),
                            const api::Operation* other = nullptr) {
  const api::Operation& op = other != nullptr ? *other : OperationOfVerb(inv);
  MSP_ASSIGN_OR_RETURN(json request, RequestFromFlags(inv, OperationOfVerb(inv).info()));
  for (const auto& [name, value] : given.items()) {
    if (!request.contains(name)) request[name] = value;
  }
  api::CallContext context;
  context.ns = inv.ns;
  Status s = op.Check(context, request);
  if (s.code() == StatusCode::kInvalidArgument) return Usage(inv, api::CliMessage(op.info(), s.message()));
  MSP_RETURN_IF_ERROR(s);
  return request;
}

// What the server on the resident path sent: the answer, or the text it
// printed for it.
struct ResidentReply {
  json answer;                          // when `printed` is unset
  std::optional<std::string> printed;  // what to write, as it is
};

// The resident path (src/local; docs/cli.md, "The resident path"): the
// verb's operation, when it only reads, answered by the `msp serve` that
// listens on the data directory's socket, if one does and it answers with
// the same settings (AnswerSettingsDigest). nullopt: answer here — there
// is no such server, it declined (other settings, stopping), or the
// exchange failed (a read is then simply run here, with a warning).
// `print` (a form of answer_text.h, or ""): the server prints the answer in
// that form and the reply holds the text (a server that does not know the
// form sends the answer).
Result<std::optional<ResidentReply>> ResidentAnswer(Invocation& inv, const json& request, std::string_view print) {
  const api::Operation& op = OperationOfVerb(inv);
  const Settings& options = inv.config.options;
  if (!op.info().read_only || !options.server.local_socket) return std::optional<ResidentReply>();
  const std::string path = local::SocketPath(options.store.data_dir);
  if (path.empty()) return std::optional<ResidentReply>();
  MSP_ASSIGN_OR_RETURN(std::optional<int> clearance, ClearanceFlag(inv));
  json call = {{"v", 1},
               {"settings", AnswerSettingsDigest(options)},
               {"operation", op.info().name},
               {"request", request},
               {"namespace", NamespaceToJson(inv.ns)},
               {"actor", inv.actor},
               {"clearance", clearance ? json(*clearance) : json()}};
  if (!print.empty()) call["print"] = print;
  Result<std::optional<json>> answer = local::Call(path, call, std::chrono::seconds(60));
  if (!answer.ok()) {
    *inv.err << "msp: warning: " << answer.status().message() << "; answering without the server\n";
    return std::optional<ResidentReply>();
  }
  if (!answer->has_value()) {
    inv.resident_absent = true;
    return std::optional<ResidentReply>();
  }
  json& frame = **answer;
  if (frame.contains("printed") && frame["printed"].is_string()) {
    return std::optional<ResidentReply>(ResidentReply{json(), frame["printed"].get<std::string>()});
  }
  if (frame.contains("answer")) return std::optional<ResidentReply>(ResidentReply{std::move(frame["answer"]), {}});
  if (!frame.contains("error")) return std::optional<ResidentReply>();  // declined
  const Status s = local::StatusOfError(frame["error"]);
  if (s.code() == StatusCode::kInvalidArgument) return Usage(inv, api::CliMessage(op.info(), s.message()));
  return s;
}

// The flags of `operation`'s field table (ApiFlags, made on first use);
// their help texts only `with_help`.
std::vector<FlagSpec> OperationFlags(std::string_view operation, const std::vector<FlagSpec>& extra,
                                     const std::vector<std::string_view>& without, bool with_help) {
  std::vector<FlagSpec> flags;
  const api::Operation* op = api::FindOperation(operation);
  for (const api::FieldInfo& f : op->info().fields) {
    if (f.cli != api::CliForm::kFlag) continue;
    if (std::find(without.begin(), without.end(), f.Flag()) != without.end()) continue;
    std::string help;
    if (with_help) {
      help = f.doc + " (" + f.TypeText();
      if (!f.default_value.is_null()) help += ", default " + f.default_value.dump();
      if (IsList(f)) help += "; repeatable";
      help += ")";
    }
    std::string value_name;
    if (!IsSwitch(f)) {
      value_name = f.type == api::FieldType::kBool ? "true|false" : f.Flag().substr(2);
      if (f.type != api::FieldType::kBool) {
        for (char& c : value_name) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
    }
    flags.push_back({Keep(f.Flag()), Keep(value_name), with_help ? Keep(help) : std::string_view(), IsList(f)});
  }
  flags.insert(flags.end(), extra.begin(), extra.end());
  return flags;
}

// The records a write evicted (the per-user limit), one line each.
void PrintEvicted(Invocation& inv, const json& answer) {
  for (const json& id : answer["evicted_ids"]) *inv.out << "evicted " << id.get<std::string>() << " (per-user limit)\n";
}

}  // namespace

struct VerbFlags::State {
  std::string_view operation;  // "": the listed flags
  std::vector<std::string_view> without;  // the operation's flags left out
  std::vector<FlagSpec> listed;            // the listed flags (an operation's: its extra ones)
  std::vector<FlagSpec> flags, described;  // an operation's: without and with help
  std::once_flag made, made_described;
};

VerbFlags::VerbFlags(std::vector<FlagSpec> listed) : state_(std::make_shared<State>()) {
  state_->listed = std::move(listed);
}

VerbFlags VerbFlags::OfOperation(std::string_view operation, std::vector<FlagSpec> extra,
                                 std::vector<std::string_view> without) {
  VerbFlags out(std::move(extra));
  out.state_->operation = operation;
  out.state_->without = std::move(without);
  return out;
}

const std::vector<FlagSpec>& VerbFlags::Made(bool with_help) const {
  static const std::vector<FlagSpec> kNone;
  if (!state_) return kNone;
  if (state_->operation.empty()) return state_->listed;
  std::once_flag& made = with_help ? state_->made_described : state_->made;
  std::vector<FlagSpec>& flags = with_help ? state_->described : state_->flags;
  std::call_once(made, [this, &flags, with_help] {
    flags = OperationFlags(state_->operation, state_->listed, state_->without, with_help);
  });
  return flags;
}

const std::vector<FlagSpec>& VerbFlags::get() const { return Made(/*with_help=*/false); }

const std::vector<FlagSpec>& VerbFlags::described() const { return Made(/*with_help=*/true); }

std::string_view VerbFlags::operation() const { return state_ ? state_->operation : std::string_view(); }

VerbFlags ApiFlags(std::string_view operation, std::vector<FlagSpec> extra, std::vector<std::string_view> without) {
  return VerbFlags::OfOperation(operation, std::move(extra), std::move(without));
}

Status RunSearch(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(json request, CheckedRequest(inv));
  // --timing: where a search process's time goes, on stderr.
  const bool timing = inv.flags.Has("--timing");
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  auto ms = [](Clock::time_point from, Clock::time_point to) {
    return Fixed(std::chrono::duration<double, std::milli>(to - from).count(), 2);
  };
  // Text or --json, printed by the server on the resident path.
  const std::string_view form = inv.json ? "json" : "search";
  MSP_ASSIGN_OR_RETURN(std::optional<ResidentReply> resident, ResidentAnswer(inv, request, form));
  std::unique_ptr<MemoryLayer> engine;
  if (!resident) {
    MSP_ASSIGN_OR_RETURN(engine, OpenEngine(inv, /*create=*/false));
  }
  const Clock::time_point opened = Clock::now();
  if (timing && engine) {
    MSP_RETURN_IF_ERROR(engine->CatchUpIndexes());
  }
  const Clock::time_point caught_up = Clock::now();
  json answer;
  if (resident) {
    answer = std::move(resident->answer);
  } else {
    MSP_ASSIGN_OR_RETURN(answer, CallOperation(inv, *engine, request, nullptr));
  }
  const Clock::time_point queried = Clock::now();
  if (resident && resident->printed) {
    *inv.out << *resident->printed;
  } else {
    PrintAnswer("search", form, answer, *inv.out);
  }
  if (engine) MaybeStartResident(inv, *engine);
  if (timing && !engine) {
    *inv.err << "timing: answered by the msp server on " << local::SocketPath(inv.config.options.store.data_dir)
             << " in " << ms(started, queried) << " ms, render " << ms(queried, Clock::now()) << " ms\n";
  } else if (timing) {
    const Clock::time_point rendered = Clock::now();
    engine.reset();  // what closing costs: the access spool, the store's checkpoint
    *inv.err << "timing: open " << ms(started, opened) << " ms, catch-up " << ms(opened, caught_up)
             << " ms, query " << ms(caught_up, queried) << " ms, render " << ms(queried, rendered) << " ms, close "
             << ms(rendered, Clock::now()) << " ms\n";
  }
  return Status::Ok();
}

namespace {

// `op`'s answer to `request`, run here on the store (opened, or made when
// `create`), with the mission interface (events, reports) opened when the
// operation asks for it.
Result<json> AnswerHere(Invocation& inv, const api::Operation& op, const json& request, bool create) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, create));
  std::unique_ptr<WorkflowMemory> wm;
  auto workflow = [&]() -> Result<WorkflowMemory*> {
    if (!wm) {
      Result<std::unique_ptr<WorkflowMemory>> opened = WorkflowMemory::Open(*engine, inv.config.options);
      if (!opened.ok()) return opened.status().WithContext("cannot set up the token counter (tokens.counter)");
      wm = std::move(opened).value();
    }
    return wm.get();
  };
  Result<json> answer = CallOperation(inv, *engine, request, workflow, &op);
  if (answer.ok()) MaybeStartResident(inv, *engine);
  return answer;
}

}  // namespace

Result<std::optional<json>> MissionAnswerToPrint(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(json request, CheckedRequest(inv));
  MSP_ASSIGN_OR_RETURN(json answer, AnswerHere(inv, OperationOfVerb(inv), request, /*create=*/false));
  if (inv.json) {
    PrintJson(inv, answer);
    return std::optional<json>();
  }
  return std::optional<json>(std::move(answer));
}

Status RunQuery(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, MissionAnswerToPrint(inv));
  if (!answer) return Status::Ok();
  const std::string markdown = (*answer)["markdown"].get<std::string>();
  *inv.out << markdown;
  if (markdown.empty()) {
    *inv.err << "msp: budget " << (*answer)["token_budget"].get<int64_t>() << " tokens holds nothing; retrieval "
             << (*answer)["retrieval_id"].get<std::string>() << "\n";
  }
  return Status::Ok();
}

Result<std::optional<json>> AnswerToPrint(Invocation& inv, bool create) {
  return AnswerToPrint(inv, create, json::object());
}

Result<std::optional<json>> AnswerToPrint(Invocation& inv, bool create, const json& given) {
  MSP_ASSIGN_OR_RETURN(json request, CheckedRequest(inv, given));
  // --json is printed by the server on the resident path; the verbs' own
  // lines are printed here from the answer.
  MSP_ASSIGN_OR_RETURN(std::optional<ResidentReply> resident, ResidentAnswer(inv, request, inv.json ? "json" : ""));
  if (resident && resident->printed) {
    *inv.out << *resident->printed;
    return std::optional<json>();
  }
  json answer;
  if (resident) {
    answer = std::move(resident->answer);
  } else {
    MSP_ASSIGN_OR_RETURN(answer, AnswerHere(inv, OperationOfVerb(inv), request, create));
  }
  if (inv.json) {
    PrintJson(inv, answer);
    return std::optional<json>();
  }
  return std::optional<json>(std::move(answer));
}

Result<json> AnswerOfOperation(Invocation& inv, std::string_view operation, bool create) {
  const api::Operation* op = api::FindOperation(operation);
  if (op == nullptr) return Status::Internal("no operation " + std::string(operation));
  MSP_ASSIGN_OR_RETURN(json request, CheckedRequest(inv, json::object(), op));
  return AnswerHere(inv, *op, request, create);
}

Status RunWrite(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/true));
  if (!answer) return Status::Ok();
  *inv.out << ((*answer)["merged"].get<bool>() ? "merged into " : "stored ") << (*answer)["id"].get<std::string>()
           << "\n";
  PrintEvicted(inv, *answer);
  return Status::Ok();
}

Status RunFactAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/true));
  if (!answer) return Status::Ok();
  *inv.out << ((*answer)["merged"].get<bool>() ? "merged into fact " : "added fact ") << (*answer)["id"].get<std::string>()
           << "\n";
  PrintEvicted(inv, *answer);
  return Status::Ok();
}

Status RunFactSupersede(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  *inv.out << "superseded " << (*answer)["superseded"].get<std::string>() << " by " << (*answer)["id"].get<std::string>()
           << "\n";
  PrintEvicted(inv, *answer);
  return Status::Ok();
}

Status RunGet(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  answer->erase("trust");
  MSP_ASSIGN_OR_RETURN(Memory m, MemoryFromJson(*answer));
  PrintMemoryDetail(*inv.out, m);
  return Status::Ok();
}

Status RunHistory(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  for (const json& m : (*answer)["versions"]) {
    *inv.out << m.value("created_at", std::string()) << "  " << m["state"].get<std::string>() << "  "
             << m["id"].get<std::string>() << "  " << OneLine(m["text"].get<std::string>()) << "\n";
  }
  return Status::Ok();
}

Status RunDelete(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) *inv.out << "deleted " << (*answer)["id"].get<std::string>() << "\n";
  return Status::Ok();
}

Status RunList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const json& records = (*answer)["memories"];
  if (records.empty()) *inv.out << "no records\n";
  for (const json& m : records) {
    *inv.out << m.value("created_at", std::string()) << "  " << m["kind"].get<std::string>() << "  "
             << m["id"].get<std::string>() << "  " << OneLine(m["text"].get<std::string>()) << "\n";
  }
  return Status::Ok();
}

}  // namespace msp
