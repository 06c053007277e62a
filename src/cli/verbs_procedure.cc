// Procedural memory verbs: procedure prompt / tool / rule / remove / list /
// show / history / diff / restore (include/msp/procedural.h). The
// procedural memory is the agent's: --tenant and --agent name it.
#include <ostream>

#include "cli/cli.h"
#include "msp/procedural.h"
#include "util/time.h"

namespace msp {
namespace {

using json = nlohmann::json;

Result<ProcedureChange> ChangeFlags(Invocation& inv) {
  ProcedureChange c;
  c.author = inv.actor;
  c.note = inv.flags.Get("--note");
  Result<int64_t> base = inv.flags.GetInt("--base-version", -1, 0, 1000000000);
  if (!base.ok()) return Usage(inv, base.status().message());
  c.base_version = static_cast<int>(*base);
  return c;
}

Result<ProcedureType> TypeArgument(Invocation& inv, size_t index) {
  const std::string& t = inv.flags.positionals.at(index);
  if (t == "prompt") return ProcedureType::kSystemPrompt;
  if (auto p = ParseProcedureType(t)) return *p;
  return Usage(inv, "unknown procedure type '" + t + "'; use system_prompt (or prompt), tool or rule");
}

// NAME at `index`, or "system" for the system prompt when it is absent.
Result<std::string> NameArgument(Invocation& inv, ProcedureType type, size_t index) {
  if (inv.flags.positionals.size() > index) return inv.flags.positionals[index];
  if (type == ProcedureType::kSystemPrompt) return std::string(kSystemPromptName);
  return Usage(inv, "give the " + std::string(ProcedureTypeName(type)) + "'s NAME");
}

json VersionJson(const ProcedureVersion& v) {
  json content = json::parse(v.content_json, nullptr, false);
  return {{"type", ProcedureTypeName(v.type)}, {"name", v.name},       {"version", v.version},
          {"removed", v.removed},              {"author", v.author},   {"note", v.note},
          {"created_at", FormatIso8601(v.created_at)}, {"current", v.current}, {"id", v.id},
          {"content", content.is_discarded() ? json(v.content_json) : content}};
}

std::string Header(const ProcedureVersion& v) {
  return std::string(ProcedureTypeName(v.type)) + " " + v.name + " version " + std::to_string(v.version) +
         (v.removed ? " (removed)" : "") + (v.current ? " [current]" : "") + " by " + v.author + " at " +
         FormatIso8601(v.created_at) + (v.note.empty() ? "" : " - " + v.note);
}

Status PrintVersion(Invocation& inv, const ProcedureVersion& v, bool with_content) {
  if (inv.json) {
    PrintJson(inv, VersionJson(v));
    return Status::Ok();
  }
  *inv.out << Header(v) << "\n";
  if (with_content) *inv.out << RenderVersion(v);
  return Status::Ok();
}

Result<ProceduralMemory> Open(Invocation& inv, std::unique_ptr<MemoryLayer>* engine, bool create) {
  MSP_ASSIGN_OR_RETURN(*engine, OpenEngine(inv, create));
  return ProceduralMemory(**engine, inv.ns);
}

}  // namespace

Status RunProcedurePrompt(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::string text, TextArgument(inv, 0, /*stdin_dash=*/true));
  MSP_ASSIGN_OR_RETURN(ProcedureChange change, ChangeFlags(inv));
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, true));
  MSP_ASSIGN_OR_RETURN(ProcedureVersion v, pm.SetSystemPrompt(text, change));
  return PrintVersion(inv, v, false);
}

Status RunProcedureTool(Invocation& inv) {
  ToolDefinition t;
  t.name = inv.flags.positionals[0];
  t.description = inv.flags.Get("--description");
  if (inv.flags.Has("--parameters")) t.parameters_json = inv.flags.Get("--parameters");
  MSP_ASSIGN_OR_RETURN(ProcedureChange change, ChangeFlags(inv));
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, true));
  MSP_ASSIGN_OR_RETURN(ProcedureVersion v, pm.PutTool(t, change));
  return PrintVersion(inv, v, false);
}

Status RunProcedureRule(Invocation& inv) {
  BehaviourRule r;
  r.name = inv.flags.positionals[0];
  r.when = inv.flags.Get("--when");
  r.tool = inv.flags.Get("--call");
  if (r.when.empty() || r.tool.empty()) return Usage(inv, "a rule needs --when CONDITION and --call TOOL");
  r.arguments_json = inv.flags.Get("--with", "{}");
  r.description = inv.flags.Get("--description");
  MSP_ASSIGN_OR_RETURN(ProcedureChange change, ChangeFlags(inv));
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, true));
  MSP_ASSIGN_OR_RETURN(ProcedureVersion v, pm.PutRule(r, change));
  return PrintVersion(inv, v, false);
}

Status RunProcedureRemove(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(ProcedureType type, TypeArgument(inv, 0));
  MSP_ASSIGN_OR_RETURN(std::string name, NameArgument(inv, type, 1));
  MSP_ASSIGN_OR_RETURN(ProcedureChange change, ChangeFlags(inv));
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, false));
  MSP_ASSIGN_OR_RETURN(ProcedureVersion v, pm.Remove(type, name, change));
  return PrintVersion(inv, v, false);
}

Status RunProcedureList(Invocation& inv) {
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, false));
  MSP_ASSIGN_OR_RETURN(std::vector<ProcedureVersion> all, pm.List());
  if (inv.json) {
    json arr = json::array();
    for (const auto& v : all) arr.push_back(VersionJson(v));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  if (all.empty()) *inv.out << "no procedural memory in " << pm.scope().ToString() << "\n";
  for (const auto& v : all) {
    std::string what;
    const json c = json::parse(v.content_json, nullptr, false);
    if (c.is_object()) {
      if (v.type == ProcedureType::kSystemPrompt) what = c.value("text", "");
      if (v.type == ProcedureType::kTool) what = c.value("description", "");
      if (v.type == ProcedureType::kRule) what = "when " + c.value("when", "") + ", call " + c.value("tool", "");
    }
    *inv.out << ProcedureTypeName(v.type) << "  " << v.name << "  v" << v.version << "  " << OneLine(what, 80)
             << "\n";
  }
  return Status::Ok();
}

Status RunProcedureShow(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(ProcedureType type, TypeArgument(inv, 0));
  MSP_ASSIGN_OR_RETURN(std::string name, NameArgument(inv, type, 1));
  Result<int64_t> version = inv.flags.GetInt("--version", 0, 0, 1000000000);
  if (!version.ok()) return Usage(inv, version.status().message());
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, false));
  MSP_ASSIGN_OR_RETURN(ProcedureVersion v, pm.Get(type, name, static_cast<int>(*version)));
  return PrintVersion(inv, v, true);
}

Status RunProcedureHistory(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(ProcedureType type, TypeArgument(inv, 0));
  MSP_ASSIGN_OR_RETURN(std::string name, NameArgument(inv, type, 1));
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, false));
  MSP_ASSIGN_OR_RETURN(std::vector<ProcedureVersion> all, pm.History(type, name));
  if (inv.json) {
    json arr = json::array();
    for (const auto& v : all) arr.push_back(VersionJson(v));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  for (const auto& v : all) *inv.out << Header(v) << "\n";
  return Status::Ok();
}

Status RunProcedureDiff(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(ProcedureType type, TypeArgument(inv, 0));
  if (inv.flags.positionals.size() != 4) return Usage(inv, "give TYPE NAME FROM TO");
  const std::string& name = inv.flags.positionals[1];
  int versions[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const std::string& s = inv.flags.positionals[2 + static_cast<size_t>(i)];
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      return Usage(inv, "versions are numbers, got '" + s + "'");
    }
    versions[i] = std::stoi(s);
  }
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, false));
  MSP_ASSIGN_OR_RETURN(std::string diff, pm.Diff(type, name, versions[0], versions[1]));
  if (inv.json) {
    PrintJson(inv, json{{"diff", diff}});
  } else {
    *inv.out << diff;
  }
  return Status::Ok();
}

Status RunProcedureRestore(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(ProcedureType type, TypeArgument(inv, 0));
  if (inv.flags.positionals.size() != 3) return Usage(inv, "give TYPE NAME VERSION");
  const std::string& name = inv.flags.positionals[1];
  const std::string& s = inv.flags.positionals[2];
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
    return Usage(inv, "VERSION is a number, got '" + s + "'");
  }
  MSP_ASSIGN_OR_RETURN(ProcedureChange change, ChangeFlags(inv));
  std::unique_ptr<MemoryLayer> engine;
  MSP_ASSIGN_OR_RETURN(ProceduralMemory pm, Open(inv, &engine, false));
  MSP_ASSIGN_OR_RETURN(ProcedureVersion v, pm.Restore(type, name, std::stoi(s), change));
  return PrintVersion(inv, v, false);
}

}  // namespace msp
