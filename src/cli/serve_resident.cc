// ResidentCalls: a command's call on `msp serve`'s socket, answered by the
// declared operation (see serve_resident.h).
#include "cli/serve_resident.h"

#include <sstream>

#include "api/operations.h"
#include "cli/answer_text.h"
#include "cli/cli.h"
#include "codec/memory_json.h"
#include "config/config.h"
#include "local/local_socket.h"
#include "msp/caller.h"

namespace msp {

using nlohmann::json;

ResidentCalls::ResidentCalls(MemoryLayer& engine, const Settings& options)
    : engine_(engine),
      settings_(AnswerSettingsDigest(options)),
      trusted_sources_(options.policy.context_trusted_sources),
      options_(options) {}

Result<const WorkflowMemory*> ResidentCalls::Workflow() const {
  // Opened by the first call that needs it (the token counter's vocabulary
  // is not loaded at the server's start), then shared.
  std::call_once(workflow_opened_, [this] {
    Result<std::unique_ptr<WorkflowMemory>> wm = WorkflowMemory::Open(engine_, options_);
    if (wm.ok()) {
      workflow_ = std::move(wm).value();
    } else {
      workflow_status_ = wm.status().WithContext("mission retrieval is unavailable (tokens.counter)");
    }
  });
  if (!workflow_) return workflow_status_;
  return static_cast<const WorkflowMemory*>(workflow_.get());
}

json ResidentCalls::Answer(const json& call) const {
  auto error = [](const Status& s) { return local::ErrorFrame(s); };
  if (!call.is_object() || call.value("v", 0) != 1) {
    return error(Status::InvalidArgument("a call is an object with \"v\": 1 (this server speaks version 1)"));
  }
  if (!call.contains("settings") || call["settings"] != settings_) {
    return json{{"declined", "the server answers with other settings than the command's"}};
  }
  const api::Operation* op =
      call.contains("operation") && call["operation"].is_string() ? api::FindOperation(call["operation"].get<std::string>())
                                                                 : nullptr;
  if (op == nullptr) return error(Status::InvalidArgument("\"operation\" names no operation"));
  if (!op->info().read_only) {
    return error(Status::InvalidArgument("'" + op->info().name + "' changes the store: run it without the server"));
  }
  Result<Namespace> ns = NamespaceFromJson(call.value("namespace", json::object()));
  if (!ns.ok()) return error(ns.status());
  if (ns->tenant.empty()) return error(Status::InvalidArgument("the call's namespace names no tenant"));
  std::optional<int> clearance;
  if (call.contains("clearance") && !call["clearance"].is_null()) {
    if (!call["clearance"].is_number_integer()) return error(Status::InvalidArgument("\"clearance\" is an integer"));
    const int64_t c = call["clearance"].get<int64_t>();
    if (c < 0 || c > kMaxAccessLevel) {
      return error(Status::InvalidArgument("\"clearance\" is 0.." + std::to_string(kMaxAccessLevel)));
    }
    clearance = static_cast<int>(c);
  }
  const std::string actor = call.contains("actor") && call["actor"].is_string() ? call["actor"].get<std::string>() : "cli";
  Result<Caller> caller = CallerOf(engine_, *ns, actor, clearance);
  if (!caller.ok()) return error(caller.status());
  std::unique_ptr<MemoryLayer> layer = AsCaller(engine_, *caller);

  api::CallContext context;
  context.engine = layer.get();
  context.caller = *caller;
  context.ns = *ns;
  context.trusted_sources = trusted_sources_;
  std::unique_ptr<WorkflowMemory> workflow;
  context.workflow = [this, &layer, &workflow]() -> Result<WorkflowMemory*> {
    MSP_ASSIGN_OR_RETURN(const WorkflowMemory* shared, Workflow());
    workflow = shared->Over(*layer);
    return workflow.get();
  };
  Result<json> answer = op->Call(context, call.value("request", json::object()));
  if (!answer.ok()) return error(answer.status());
  // The command asked for its printed text (answer_text.h); a form this
  // build does not know gets the answer, which the command prints itself.
  if (call.contains("print") && call["print"].is_string()) {
    std::ostringstream printed;
    if (PrintAnswer(op->info().name, call["print"].get<std::string>(), *answer, printed)) {
      return json{{"printed", printed.str()}};
    }
  }
  return json{{"answer", std::move(answer).value()}};
}

}  // namespace msp
