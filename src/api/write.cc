// The declaration of `memory_write`: one record through the write policy
// (msp write, POST /v1/memories, MCP memory_write).
#include <algorithm>

#include "api/declare.h"
#include "api/operations.h"

namespace msp::api {
namespace {

using nlohmann::json;
using WriteField = Fields<WriteRequest>;

// Kinds a write may take: not episodes (episode add), corrections (their
// structured form: correction add) nor the graph's entities and relations
// (its own tools).
std::vector<Kind> WritableKinds() {
  std::vector<Kind> out;
  for (Kind k : AllKinds()) {
    if (k != Kind::kEpisode && k != Kind::kCorrection && k != Kind::kEntity && k != Kind::kRelation) {
      out.push_back(k);
    }
  }
  return out;
}

std::vector<Field<WriteRequest>> WriteFields() {
  Field<WriteRequest> ttl = WriteField::Int(
      {.name = "ttl_days",
       .doc = "Expire after this many days (also within policy.ttl_min_days..ttl_max_days). Leave it out for "
              "policy.default_ttl_days; an explicit 0 is refused."},
      1, 36500, [](WriteRequest& r) -> auto& { return r.ttl_days; });
  ttl.show = [](WriteRequest&) { return json(); };
  // 0 reads as "expire after 0 days" but would mean "the configured
  // default": its own error, on every face.
  ttl.read = [in_range = ttl.read](const JsonReader& reader, WriteRequest& r) -> Status {
    if (reader.Has("ttl_days")) {
      const json& v = reader.obj().at("ttl_days");
      if (v.is_number_integer() && v.get<int64_t>() == 0) {
        return Status::InvalidArgument("field '" + reader.prefix() +
                                       "ttl_days' 0 is not a time to live: give 1..36500 days; to store without "
                                       "expiry leave it out (policy.default_ttl_days applies)");
      }
    }
    return in_range(reader, r);
  };
  Field<WriteRequest> request_id = RequestIdField<WriteRequest>(
      "Idempotency key (1..200 printable ASCII, e.g. a UUID): a repeat with the same key (same tenant, within "
      "store.idempotency_ttl_hours) answers the first result and writes nothing; the same key with another write "
      "is a conflict. REST also takes it as the Idempotency-Key header (both must agree).",
      [](WriteRequest& r) -> auto& { return r.request_id; });
  Field<WriteRequest> source = SourceField<WriteRequest>(
      "Where it came from. MCP: default mcp.write_source (\"agent\"), and a trusted source "
      "(policy.context_trusted_sources) is refused: trust is the operator's to give.",
      [](WriteRequest& r) -> auto& { return r.source; });
  return {
      WriteField::Text({.name = "text",
                        .doc = "What to remember, as a self-contained sentence.",
                        .required = true,
                        .cli = CliForm::kPositional},
                       [](WriteRequest& r) -> auto& { return r.text; }),
      WriteField::EnumOf({.name = "kind", .doc = "Record kind."}, WritableKinds(), &ParseKind, &KindName,
                         [](WriteRequest& r) -> auto& { return r.kind; }),
      WriteField::OptionalEnum({.name = "layer", .doc = "Memory layer (default: the kind's)."}, &ParseLayer,
                               &LayerName, [](WriteRequest& r) -> auto& { return r.layer; }),
      WriteField::Strings({.name = "tags",
                           .doc = "Tags. MCP: a note without one of policy.stable_tags gets mcp.write_default_tag.",
                           .flag = "--tag"},
                          [](WriteRequest& r) -> auto& { return r.tags; }),
      std::move(source),
      WriteField::Enum({.name = "sensitivity", .doc = "high is refused by the write policy."}, &ParseSensitivity,
                       &SensitivityName, [](WriteRequest& r) -> auto& { return r.sensitivity; }),
      WriteField::Enum({.name = "criticality", .doc = "How much it matters."}, &ParseCriticality, &CriticalityName,
                       [](WriteRequest& r) -> auto& { return r.criticality; }),
      WriteField::Number({.name = "confidence", .doc = "How sure the writer is."}, 0.0, 1.0,
                         [](WriteRequest& r) -> auto& { return r.confidence; }),
      std::move(ttl),
      WriteField::Time({.name = "valid_at", .doc = "When it started to hold (ISO 8601)."},
                       [](WriteRequest& r) -> auto& { return r.valid_at; }),
      WriteField::Object({.name = "body", .doc = "Typed body for the kind, a JSON object."},
                         [](WriteRequest& r) -> auto& { return r.body_json; }),
      WriteField::Provenance({.name = "provenance",
                              .doc = "Where it came from, e.g. {\"type\": \"commit\", \"ref\": \"abc123\"} (the "
                                     "command line: commit:abc123)."},
                             [](WriteRequest& r) -> auto& { return r.provenance; }),
      std::move(request_id),
      WriteField::Scope({.name = "namespace",
                         .doc = "Where to write: tenant (the caller's), user, agent, session, mission, operator; "
                                "parts left out are the face's (MCP: the session's)."},
                        [](WriteRequest& r) -> auto& { return r.ns; }),
  };
}

Result<json> HandleWrite(const CallContext& context, WriteRequest& r) {
  r.actor = context.caller.actor;
  bool stable = true;
  if (context.agent_writes) {
    const CallContext::AgentWrites& agent = *context.agent_writes;
    MSP_RETURN_IF_ERROR(CheckClaimedSource(context, r.source, "memory_write"));
    stable = std::any_of(r.tags.begin(), r.tags.end(), [&](const std::string& tag) {
      return std::find(agent.stable_tags.begin(), agent.stable_tags.end(), tag) != agent.stable_tags.end();
    });
    if (!stable && !agent.default_tag.empty()) r.tags.push_back(agent.default_tag);
  }
  Result<WriteResult> w = context.engine->Write(r);
  if (!w.ok()) {
    // A default tag the policy does not count as stable: say which setting.
    if (w.status().IsRefused() && !stable && !context.agent_writes->default_tag.empty() &&
        w.status().message().find("policy rule stable_tag") != std::string::npos) {
      return Status::Refused(w.status().message() + " (the default tag mcp.write_default_tag = '" +
                             context.agent_writes->default_tag + "' is not one of policy.stable_tags)");
    }
    return w.status();
  }
  json out = WriteResultToJson(*w);
  out["tags"] = r.tags;
  out["source"] = r.source;
  return out;
}

json WriteAnswerSchema() {
  return {{"type", "object"},
          {"properties",
           {{"id", {{"type", "string"}, {"description", "The stored record (or the fact it merged into)."}}},
            {"merged", {{"type", "boolean"}, {"description", "A near-duplicate fact was updated instead of adding one."}}},
            {"evicted_ids",
             {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "Records evicted by the per-user limit."}}},
            {"tags",
             {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "The tags it was stored with."}}},
            {"source", {{"type", "string"}, {"description", "The source it was stored with."}}}}},
          {"required", {"id", "merged", "evicted_ids", "tags", "source"}}};
}

}  // namespace

Result<WriteRequest> DecodeWrite(const CallContext& context, const json& record, const std::string& prefix) {
  static const std::vector<Field<WriteRequest>> fields = WriteFields();
  WriteRequest r;
  MSP_RETURN_IF_ERROR(DecodeRequest(fields, context, record, r, prefix));
  r.actor = context.caller.actor;
  return r;
}

std::unique_ptr<Operation> WriteOperation() {
  Declaration<WriteRequest> d;
  d.info = {
      .name = "memory_write",
      .title = "Write memory",
      .summary = "Remember something durable: a fact about the project or the user, a preference, a constraint, a "
                 "decision, a procedure, written as one self-contained sentence and tagged with what it is. The "
                 "write policy may refuse it (text under the minimum length, a trivial acknowledgement, "
                 "sensitivity high, no stable tag): the refusal names the rule and what to change, and nothing "
                 "is stored. A fact close to an existing one updates it (merged: true).",
      .cli_verb = "write",
      .rest_method = "POST",
      .rest_path = "/v1/memories",
      .mcp_tool = "memory_write",
      .mcp_profile = "core",
      .read_only = false,
      .idempotent = false,
      .rest_status = 201,
      .example = {{"text", "The billing ledger export runs every night at two"},
                  {"kind", "procedure"},
                  {"tags", {"note"}},
                  {"source", "tool"},
                  {"confidence", 0.9},
                  {"ttl_days", 365},
                  {"provenance", {{{"type", "doc"}, {"ref", "runbook.md"}}}}},
      .answer = "{id, merged, evicted_ids: [id], tags: [tag], source}",
      .answer_schema = WriteAnswerSchema,
  };
  d.fields = WriteFields();
  d.handle = &HandleWrite;
  return Declare(std::move(d));
}

}  // namespace msp::api
