// episode_add, fact_history (see memory_tools.h; memory_write is src/api's).
#include "mcp/memory_tools.h"

#include <string>
#include <utility>
#include <vector>

#include "codec/memory_json.h"
#include "mcp/schema_builder.h"
#include "mcp/tool_args.h"
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

void AddMemoryTools(ToolSet& tools) {
  tools.push_back(EpisodeAdd());
  tools.push_back(FactHistory());
}

}  // namespace msp::mcp
