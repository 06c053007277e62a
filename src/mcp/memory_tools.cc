// fact_history (see memory_tools.h; memory_write and episode_add are src/api's).
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
  t.profile = "core";
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
  tools.push_back(FactHistory());
}

}  // namespace msp::mcp
