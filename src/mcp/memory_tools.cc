// memory_write, episode_add, fact_history (see memory_tools.h).
#include "mcp/memory_tools.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "codec/memory_json.h"
#include "core/idempotency.h"
#include "mcp/schema_builder.h"
#include "mcp/tool_args.h"
#include "util/fence.h"
#include "util/time.h"

namespace msp::mcp {
namespace {

using nlohmann::json;
namespace s = schema;

json Time(TimeMs t) { return t == 0 ? json(nullptr) : json(FormatIso8601(t)); }

template <typename E>
std::vector<std::string> Names(const std::vector<E>& values, std::string_view (*name)(E)) {
  std::vector<std::string> out;
  for (E v : values) out.emplace_back(name(v));
  return out;
}

template <typename E>
std::vector<E> AllOf(std::string_view (*name)(E)) {
  std::vector<E> out;
  for (int i = 0; i < 64 && name(static_cast<E>(i)) != "unknown"; ++i) out.push_back(static_cast<E>(i));
  return out;
}

// Kinds memory_write may write: not episodes (episode_add) nor the graph's
// entities and relations (create_entities, create_relations).
std::vector<Kind> WritableKinds() {
  std::vector<Kind> out;
  for (Kind k : AllKinds()) {
    if (k != Kind::kEpisode && k != Kind::kEntity && k != Kind::kRelation) out.push_back(k);
  }
  return out;
}

// memory_write is the agent's face of the write policy (docs/mcp.md,
// "Agent writes"): a note with no stable tag gets mcp.write_default_tag, and
// a write naming no source is labelled mcp.write_source ("agent": untrusted
// where it reaches a model). The model cannot name a trusted source
// (policy.context_trusted_sources) itself: trust is the operator's to give,
// through mcp.write_source.
Tool MemoryWrite(const McpOptions& mcp, const WritePolicyOptions& policy) {
  const std::vector<std::string>& stable_tags = policy.stable_tags;
  const std::vector<std::string>& trusted = policy.context_trusted_sources;
  const std::string tag = mcp.write_default_tag;
  std::string kinds;  // the stable tags but the default, for the model
  for (const std::string& k : stable_tags) {
    if (k != tag) kinds += (kinds.empty() ? "" : ", ") + k;
  }
  Tool t;
  t.name = "memory_write";
  t.title = "Write memory";
  t.description =
      "Remember something durable across sessions: a fact about the project or the user, a preference, a "
      "constraint, a decision, a procedure (\"the tests need Docker\", \"the user prefers tabs\"). Write one "
      "self-contained sentence. Tag it with what it is (one of " + kinds + ")" +
      (tag.empty() ? std::string(" (required)")
                   : "; without one of them it is tagged " + tag) +
      ". It is stored with source " + mcp.write_source +
      " unless you name another (not a trusted one: those are the operator's to give). The write policy may refuse it (text under the minimum length, a trivial "
      "acknowledgement, sensitivity high): the refusal names the rule and what to change. A fact close to an "
      "existing one updates it (merged: true).";
  t.input_schema = s::Object(
      {
          {"text", s::NonEmptyString("What to remember, as a self-contained sentence.")},
          {"kind", s::Enum("Record kind (default fact).", Names(WritableKinds(), &KindName))},
          {"tags", s::ArrayOf(s::String("a tag"),
                              "Tags: " + kinds +
                                  (tag.empty() ? std::string(" (one is required).")
                                               : " (default " + tag + ") and any others."))},
          {"source", s::String("Where it came from (default " + mcp.write_source +
                               "); a trusted source (policy.context_trusted_sources) is refused.")},
          {"confidence", s::Number("0..1 (default 1).", 0, 1)},
          {"criticality", s::Enum("Default normal.", Names(AllOf(&CriticalityName), &CriticalityName))},
          {"sensitivity", s::Enum("Default low; high is refused.", Names(AllOf(&SensitivityName), &SensitivityName))},
          {"ttl_days", s::Integer("Expire after this many days (1..36500; leave it out for the configured "
                                  "default, policy.default_ttl_days; 0 is refused).",
                                  1, 36500)},
          {"body", s::AnyObject("Typed JSON body for the kind (optional).")},
          {"request_id",
           s::String("Idempotency key (1..200 printable ASCII, e.g. a UUID): calling again with the same key "
                     "answers the first result and writes nothing; the same key with another write is an error.")},
      },
      {"text"});
  t.output_schema = s::Object(
      {
          {"id", s::String("The stored record (or the fact it merged into).")},
          {"merged", s::Boolean("A near-duplicate fact was updated instead of adding one.")},
          {"evicted_ids", s::ArrayOf(s::String("id"), "Records evicted by the per-user limit.")},
          {"tags", s::ArrayOf(s::String("a tag"), "The tags it was stored with (the default tag added).")},
          {"source", s::String("The source it was stored with.")},
      },
      {"id", "merged", "evicted_ids"}, /*closed=*/false);
  t.annotations = ToolAnnotations(false, false, false);
  t.handler = [mcp, stable_tags, trusted](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MemoryLayer& engine = *session.engine;
    WriteRequest r;
    r.ns = session.ns;
    r.actor = session.actor;
    r.text = args.at("text").get<std::string>();
    r.kind = EnumArg(args, "kind", Kind::kFact, &ParseKind);
    r.tags = StringList(args, "tags");
    r.source = args.value("source", mcp.write_source);
    if (r.source != mcp.write_source && IsTrustedSource(r.source, trusted)) {
      return Status::InvalidArgument("source '" + r.source +
                                     "' is trusted (policy.context_trusted_sources) and cannot be claimed by a "
                                     "memory_write call: omit source (stored as '" + mcp.write_source +
                                     "') or name an untrusted one; nothing was written");
    }
    r.confidence = args.value("confidence", r.confidence);
    r.criticality = EnumArg(args, "criticality", r.criticality, &ParseCriticality);
    r.sensitivity = EnumArg(args, "sensitivity", r.sensitivity, &ParseSensitivity);
    r.ttl_days = args.value("ttl_days", 0);
    if (args.contains("ttl_days") && (r.ttl_days < 1 || r.ttl_days > 36500)) {
      return Status::InvalidArgument("ttl_days " + std::to_string(r.ttl_days) +
                                     " is not a time to live: give 1..36500 days; to store without expiry leave it "
                                     "out (policy.default_ttl_days applies); nothing was written");
    }
    if (auto body = args.find("body"); body != args.end()) r.body_json = DumpJson(*body);
    r.request_id = args.value("request_id", std::string());
    if (args.contains("request_id")) MSP_RETURN_IF_ERROR(ValidateRequestId(r.request_id));
    const bool stable = std::any_of(r.tags.begin(), r.tags.end(), [&](const std::string& name) {
      return std::find(stable_tags.begin(), stable_tags.end(), name) != stable_tags.end();
    });
    if (!stable && !mcp.write_default_tag.empty()) r.tags.push_back(mcp.write_default_tag);
    Result<WriteResult> w = engine.Write(r);
    if (!w.ok()) {
      // A default tag the policy does not count as stable: say which setting.
      if (w.status().IsRefused() && !stable && !mcp.write_default_tag.empty() &&
          w.status().message().find("policy rule stable_tag") != std::string::npos) {
        return Status::Refused(w.status().message() + " (the default tag mcp.write_default_tag = '" +
                               mcp.write_default_tag + "' is not one of policy.stable_tags)");
      }
      return w.status();
    }
    json out = WriteResultToJson(*w);
    out["tags"] = r.tags;
    out["source"] = r.source;
    return ToolOutput{std::move(out), std::nullopt};
  };
  return t;
}

Tool EpisodeAdd() {
  Tool t;
  t.name = "episode_add";
  t.title = "Add an episode step";
  t.description =
      "Append one step (a user message, an agent response, a tool call or result, an observation) to a "
      "session's episodic memory. Give exactly one of text and content. Steps are numbered in order; facts "
      "are distilled from them in the background.";
  t.input_schema = s::Object(
      {
          {"session", s::NonEmptyString("Session id (default: the server's --session).")},
          {"text", s::NonEmptyString("The step as plain text.")},
          {"content", s::AnyObject("The step as a JSON object.")},
          {"type", s::Enum("Step type (default user_message).", Names(AllOf(&EpisodeTypeName), &EpisodeTypeName))},
          {"tool_name", s::String("The tool called in this step.")},
          {"duration_ms", s::Integer("How long the step took.", 0, 1LL << 40)},
          {"token_count", s::Integer("Tokens in the step.", 0, 1LL << 40)},
          {"tags", s::ArrayOf(s::String("a tag"), "Tags.")},
      });
  t.output_schema = s::Object(
      {
          {"id", s::String("The episode's record id.")},
          {"session", s::String("The session.")},
          {"step_number", s::Integer("The step's position in its session.", 1, 1LL << 62)},
          {"created_at", s::OptionalString("When it was stored (ISO 8601).")},
      },
      {"id", "session", "step_number"}, /*closed=*/false);
  t.annotations = ToolAnnotations(false, false, false);
  t.handler = [](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MemoryLayer& engine = *session.engine;
    EpisodeStep step;
    step.ns = session.ns;
    step.actor = session.actor;
    step.ns.session = args.value("session", session.ns.session);
    if (step.ns.session.empty()) {
      return Status::InvalidArgument("no session: pass \"session\" (the server has no default session)");
    }
    if (args.contains("text") == args.contains("content")) {
      return Status::InvalidArgument("give exactly one of \"text\" and \"content\"");
    }
    if (args.contains("text")) {
      step.text = args.at("text").get<std::string>();
    } else {
      step.content_json = DumpJson(args.at("content"));
    }
    step.type = EnumArg(args, "type", step.type, &ParseEpisodeType);
    step.tool_name = args.value("tool_name", "");
    step.duration_ms = args.value("duration_ms", int64_t{0});
    step.token_count = args.value("token_count", int64_t{0});
    step.tags = StringList(args, "tags");
    MSP_ASSIGN_OR_RETURN(Memory m, engine.AddEpisode(step));
    return ToolOutput{json{{"id", m.id},
                           {"session", m.ns.session},
                           {"step_number", m.step_number},
                           {"created_at", Time(m.created_at)}},
                      std::nullopt};
  };
  return t;
}

Tool FactHistory() {
  Tool t;
  t.name = "fact_history";
  t.title = "Fact history";
  t.description =
      "Every version of a fact, oldest first, following its supersede links: what was believed, when, and "
      "what replaced it.";
  t.input_schema = s::Object({{"id", s::NonEmptyString("Any version's record id.")}}, {"id"});
  t.output_schema = s::Object(
      {
          {"versions", s::ArrayOf(RecordSummarySchema(), "Oldest first.")},
          {"count", s::Integer("Number of versions.", 0, 1LL << 31)},
      },
      {"versions", "count"}, /*closed=*/false);
  t.annotations = ToolAnnotations(true, false, true);
  t.handler = [](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MemoryLayer& engine = *session.engine;
    const std::string id = args.at("id").get<std::string>();
    MSP_ASSIGN_OR_RETURN(std::vector<Memory> versions, engine.History(session.ns, id));
    json out = json::array();
    for (const Memory& m : versions) out.push_back(RecordSummary(m));
    const size_t n = out.size();
    return ToolOutput{json{{"versions", std::move(out)}, {"count", n}}, std::nullopt};
  };
  return t;
}

}  // namespace

json RecordSummary(const Memory& m) {
  return json{{"id", m.id},
              {"kind", KindName(m.kind)},
              {"layer", LayerName(m.layer)},
              {"text", m.text},
              {"tags", m.tags},
              {"source", m.source},
              {"state", RecordStateName(m.state)},
              {"confidence", m.confidence},
              {"created_at", Time(m.created_at)},
              {"updated_at", Time(m.updated_at)},
              {"valid_at", Time(m.valid_at)},
              {"invalid_at", Time(m.invalid_at)},
              {"supersedes", m.supersedes},
              {"superseded_by", m.superseded_by},
              {"session", m.ns.session},
              {"step_number", m.step_number}};
}

json RecordSummarySchema(const json& extra) {
  json o = s::Object(
      {
          {"id", s::String("Record id.")},
          {"kind", s::String("Record kind.")},
          {"layer", s::String("Memory layer.")},
          {"text", s::String("The record's text.")},
          {"tags", s::ArrayOf(s::String("a tag"))},
          {"source", s::String("Where it came from.")},
          {"state", s::String("active or superseded.")},
          {"confidence", json{{"type", "number"}, {"description", "0..1."}}},
          {"created_at", s::OptionalString("When msp learned it.")},
          {"updated_at", s::OptionalString("Last change.")},
          {"valid_at", s::OptionalString("When it started to hold.")},
          {"invalid_at", s::OptionalString("When it stopped holding.")},
          {"supersedes", s::String("The version it replaced.")},
          {"superseded_by", s::String("The version that replaced it.")},
          {"session", s::String("Episodes: the session.")},
          {"step_number", s::Integer("Episodes: the step.", 0, 1LL << 62)},
      },
      {"id", "kind", "layer", "text"}, /*closed=*/false);
  for (const auto& [k, v] : extra.items()) o["properties"][k] = v;
  return o;
}

void AddMemoryTools(ToolSet& tools, const Options& options) {
  tools.push_back(MemoryWrite(options.mcp, options.policy));
  tools.push_back(EpisodeAdd());
  tools.push_back(FactHistory());
}

}  // namespace msp::mcp
