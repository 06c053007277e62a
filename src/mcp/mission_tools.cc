// decision_import_adr, handoff_digest and workflow_mark_used (see mission_tools.h).
#include "mcp/mission_tools.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codec/memory_json.h"
#include "mcp/schema_builder.h"
#include "mcp/tool_args.h"
#include "mission/records.h"
#include "msp/digest.h"
#include "msp/mission.h"
#include "util/time.h"

namespace msp::mcp {
namespace {

using nlohmann::json;
namespace s = schema;

template <typename E>
std::vector<std::string> AllNames(std::string_view (*name)(E)) {
  std::vector<std::string> out;
  for (int i = 0; i < 64 && name(static_cast<E>(i)) != "unknown"; ++i) out.emplace_back(name(static_cast<E>(i)));
  return out;
}

using Mission = MissionMemory;

json MissionArg() {
  return s::NonEmptyString("Mission id (default: the server's --mission).");
}

// The session's namespace with the call's mission; InvalidArgument without one.
Result<Namespace> MissionScope(const McpSession& session, const json& args) {
  Namespace ns = session.ns;
  ns.mission = args.value("mission", ns.mission);
  if (ns.mission.empty()) {
    return Status::InvalidArgument("no mission: pass \"mission\" (the server has no default --mission)");
  }
  return ns;
}

Result<json> ParsedJson(const std::string& text, std::string_view what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Internal(std::string(what) + " is not valid JSON");
  return j;
}

json CriticalityEnum(std::string_view description) {
  return s::Enum(description, AllNames(&CriticalityName));
}

// ADRs the agent read from the repository, sent as text: ImportAdrFiles.
Tool DecisionImportAdr() {
  Tool t;
  t.name = "decision_import_adr";
  t.title = "Import architecture decision records";
  t.description =
      "Import the repository's Architecture Decision Records (Markdown in any common form: YAML front matter, "
      "Nygard / adr-tools, MADR, log4brains, Docusaurus; e.g. docs/adr/*.md) as mission decisions, one each, in one "
      "write, keeping every section: send each file's name and text. Ids come from folder + name, so sending the "
      "same folder again leaves unchanged ADRs alone and stores a changed one as its next revision; supersede links "
      "between the files (status lines, sentences, admonitions, front matter) link both ways. A file that cannot be "
      "imported is a 'failed' entry with its error; the rest is imported. Not for a key with a clearance.";
  const json file = s::Object({{"name", s::NonEmptyString("The file name, e.g. 0005-use-udp.md (no '/').")},
                               {"text", s::NonEmptyString("The file's Markdown (at most 1 MiB).")}},
                              {"name", "text"});
  json file_list = s::ArrayOf(file, "The ADR files (1..1000).");
  file_list["minItems"] = 1;
  file_list["maxItems"] = 1000;
  t.input_schema = s::Object(
      {
          {"files", std::move(file_list)},
          {"folder", s::NonEmptyString("Where the files live, e.g. the repository's docs/adr (default \"adr\").")},
          {"component", s::String("The component of every imported decision (an identifier).")},
          {"criticality", CriticalityEnum("Of every imported decision; default normal.")},
          {"access_level", s::Integer("0..9: who may read them (default 0: everyone).", 0, kMaxAccessLevel)},
          {"decided_by", s::String("Who decided, when an ADR names no deciders.")},
          {"dry_run", s::Boolean("Parse and report; write nothing.")},
          {"mission", MissionArg()},
      },
      {"files"});
  t.output_schema = s::Object({{"entries", s::ArrayOf(s::AnyObject("{file, id, title, action, error}"))},
                               {"added", s::Integer("Decisions added.", 0, 1000)},
                               {"updated", s::Integer("Decisions updated.", 0, 1000)},
                               {"unchanged", s::Integer("Decisions unchanged.", 0, 1000)},
                               {"failed", s::Integer("Files not imported (entries with action failed).", 0, 1000)},
                               {"warnings", s::ArrayOf(s::String("FILE: what was tolerated"))}},
                              {"entries", "added", "updated", "unchanged", "warnings"}, /*closed=*/false);
  t.annotations = ToolAnnotations(false, true, true);
  t.profile = "mission";
  t.handler = [](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MemoryLayer& engine = *session.engine;
    if (session.clearance) {
      return Status::InvalidArgument("an ADR import may update any decision imported from the folder, but this API "
                                     "key is limited to clearance " + std::to_string(*session.clearance) +
                                     ": use a key without a clearance limit");
    }
    MSP_ASSIGN_OR_RETURN(Namespace ns, MissionScope(session, args));
    AdrImportOptions o;
    o.component = args.value("component", "");
    o.criticality = EnumArg(args, "criticality", Criticality::kNormal, &ParseCriticality);
    o.access_level = args.value("access_level", 0);
    o.decided_by = args.value("decided_by", "");
    o.dry_run = args.value("dry_run", false);
    std::vector<AdrFile> files;
    for (const json& f : args.at("files")) {
      AdrFile one;
      one.name = f.at("name").get<std::string>();
      one.text = f.at("text").get<std::string>();
      files.push_back(std::move(one));
    }
    MSP_ASSIGN_OR_RETURN(AdrImportReport report, ImportAdrFiles(engine, ns, args.value("folder", std::string("adr")),
                                                                std::move(files), o, session.actor));
    return ToolOutput{AdrImportReportToJson(report), std::nullopt};
  };
  return t;
}

Tool HandoffDigestTool(std::shared_ptr<Mission> mission) {
  Tool t;
  t.name = "handoff_digest";
  t.title = "Handoff digest";
  t.description =
      "For an operator taking over a mission: the decisions with their reasons, open questions and threats, "
      "what is escalating and what caused what, and the predecessor's correction profile, as Markdown within "
      "token_budget plus the same as JSON.";
  t.input_schema = s::Object(
      {
          {"from_operator", s::NonEmptyString("The predecessor.")},
          {"to_operator", s::NonEmptyString("The next operator (their clearance applies).")},
          {"since", s::String("Decisions and events from then on (ISO 8601; default: all).")},
          {"token_budget", s::Integer("Largest digest in tokens (default 8000).", 0, 1000000)},
          {"mission", MissionArg()},
      },
      {"from_operator", "to_operator"});
  t.output_schema = s::Object(
      {
          {"markdown", s::String("The digest, ready to read.")},
          {"tokens_used", s::Integer("Tokens of the markdown.", 0, 1LL << 40)},
          {"token_budget", s::Integer("The budget asked for.", 0, 1LL << 40)},
          {"counter", s::String("The token counter.")},
          {"digest", s::AnyObject("The structured digest (docs/mission.md).")},
      },
      {"markdown", "digest"}, /*closed=*/false);
  t.annotations = ToolAnnotations(true, false, true);
  t.profile = "mission";
  t.handler = [mission](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MemoryLayer& engine = *session.engine;
    MSP_RETURN_IF_ERROR(mission->open_status);
    MSP_ASSIGN_OR_RETURN(Namespace ns, MissionScope(session, args));
    HandoffRequest r;
    r.mission = ns;
    r.from_operator = args.at("from_operator").get<std::string>();
    r.to_operator = args.at("to_operator").get<std::string>();
    if (auto it = args.find("since"); it != args.end()) {
      Result<TimeMs> since = ParseIso8601(it->get<std::string>());
      if (!since.ok()) return since.status().WithContext("since");
      r.since = *since;
    }
    r.token_budget = args.value("token_budget", r.token_budget);
    MSP_ASSIGN_OR_RETURN(Asker next, CallerAsker(engine, ns, CallerOf(session), r.to_operator));
    r.clearance = next.clearance;
    MSP_ASSIGN_OR_RETURN(HandoffDigest d, mission->memory->Over(engine)->Handoff(r));
    MSP_ASSIGN_OR_RETURN(json digest, ParsedJson(d.json, "the handoff digest"));
    return ToolOutput{json{{"markdown", d.markdown},
                           {"tokens_used", d.tokens_used},
                           {"token_budget", d.token_budget},
                           {"counter", d.counter},
                           {"digest", std::move(digest)}},
                      std::nullopt};
  };
  return t;
}

Tool MarkUsedTool(std::shared_ptr<Mission> mission) {
  Tool t;
  t.name = "workflow_mark_used";
  t.title = "Mark served entries used";
  t.description =
      "After a task: say which entries of a workflow_memory_query digest you actually used (their ids, from "
      "digest.entries). Marks accumulate over calls; msp's redundancy report measures the share of served but "
      "unused context from them.";
  t.input_schema = s::Object(
      {
          {"retrieval_id", s::NonEmptyString("The retrieval_id workflow_memory_query returned.")},
          {"entries", json{{"type", "array"},
                           {"items", s::NonEmptyString("an entry id the digest served")},
                           {"minItems", 1},
                           {"maxItems", 1000},
                           {"description", "Ids of the served entries that were used."}}},
          {"mission", MissionArg()},
      },
      {"retrieval_id", "entries"});
  t.output_schema = s::Object(
      {
          {"retrieval_id", s::String("The retrieval.")},
          {"used", s::ArrayOf(s::String("an entry id"), "Every entry marked used so far.")},
          {"served", s::Integer("Entries the retrieval served.", 0, 1LL << 40)},
      },
      {"retrieval_id", "used", "served"}, /*closed=*/false);
  t.annotations = ToolAnnotations(false, false, true);  // marking twice changes nothing
  t.profile = "mission";
  t.handler = [mission](const McpSession& session, const json& args) -> Result<ToolOutput> {
    MSP_RETURN_IF_ERROR(mission->open_status);
    MSP_ASSIGN_OR_RETURN(Namespace ns, MissionScope(session, args));
    ns.operator_id.clear();
    ns.session.clear();
    std::vector<std::string> entries = StringList(args, "entries");
    MSP_ASSIGN_OR_RETURN(MarkUsedResult m,
                         mission->memory->Over(*session.engine)
                             ->MarkUsed(ns, args.at("retrieval_id").get<std::string>(), entries, session.actor,
                                        session.clearance));
    return ToolOutput{json{{"retrieval_id", m.retrieval_id}, {"used", m.used}, {"served", m.served}}, std::nullopt};
  };
  return t;
}


}  // namespace

std::shared_ptr<MissionMemory> OpenMissionMemory(MemoryLayer& engine, const Options& options) {
  auto mission = std::make_shared<MissionMemory>();
  Result<std::unique_ptr<WorkflowMemory>> memory = WorkflowMemory::Open(engine, options);
  if (memory.ok()) {
    mission->memory = std::move(memory).value();
  } else {
    mission->open_status = memory.status().WithContext("mission memory is unavailable");
  }
  return mission;
}

void AddMissionTools(std::shared_ptr<MissionMemory> mission, ToolSet& tools) {
  tools.push_back(DecisionImportAdr());
  tools.push_back(HandoffDigestTool(mission));
  tools.push_back(MarkUsedTool(mission));
}

}  // namespace msp::mcp
