// Procedural memory: versioned system prompt, tools and rules stored with
// MemoryLayer::Commit and compare-and-swap (format in msp/procedural.h).
#include "msp/procedural.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

#include "procedural/line_diff.h"
#include "procedural/rules.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxDescriptionBytes = 4000;
constexpr size_t kMaxSchemaBytes = 64 * 1024;
constexpr int kChangeAttempts = 20;

std::string Tag(ProcedureType type, const std::string& name) {
  return "procedure:" + std::string(ProcedureTypeName(type)) + ":" + name;
}

// A deterministic UUID (version 8) for one version of one item.
std::string VersionRecordId(const Namespace& ns, ProcedureType type, const std::string& name, int version) {
  std::string key = "msp-procedure";
  for (std::string_view part : {std::string_view(ns.tenant), std::string_view(ns.agent), ProcedureTypeName(type),
                                std::string_view(name)}) {
    key += '\x1f';
    key += part;
  }
  key += '\x1f' + std::to_string(version);
  return NameUuid(key);
}

bool IsItemName(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

Status CheckName(ProcedureType type, const std::string& name) {
  if (type == ProcedureType::kSystemPrompt) {
    if (name != kSystemPromptName) {
      return Status::InvalidArgument("the system prompt item is named '" + std::string(kSystemPromptName) + "'");
    }
    return Status::Ok();
  }
  if (!IsItemName(name)) {
    return Status::InvalidArgument(std::string(ProcedureTypeName(type)) + " name '" + name.substr(0, 80) +
                                   "' must be 1..64 characters of A-Z a-z 0-9 _ -");
  }
  return Status::Ok();
}

Status CheckText(std::string_view field, const std::string& text, size_t max_bytes) {
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) {
    return Status::InvalidArgument(std::string(field) + " is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  if (text.size() > max_bytes) {
    return Status::InvalidArgument(std::string(field) + " is " + std::to_string(text.size()) +
                                   " bytes, over the limit of " + std::to_string(max_bytes));
  }
  return Status::Ok();
}

// The text a version's record is searched by.
std::string RecordText(ProcedureType type, const json& content, bool removed) {
  if (removed) return "";
  switch (type) {
    case ProcedureType::kSystemPrompt: return content.value("text", "");
    case ProcedureType::kTool:
      return "tool " + content.value("name", "") + ": " + content.value("description", "");
    case ProcedureType::kRule:
      return "rule " + content.value("name", "") + ": when " + content.value("when", "") + ", call " +
             content.value("tool", "") + " with " + content.value("arguments", json::object()).dump();
  }
  return "";
}

struct StoredVersion {
  ProcedureVersion version;
  Memory record;
};

Result<ProcedureVersion> VersionFromMemory(const Memory& m) {
  const json body = json::parse(m.body_json, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return Status::Corruption("procedure record " + m.id + " has a body that is not a JSON object");
  }
  ProcedureVersion v;
  const auto type = ParseProcedureType(body.value("type", ""));
  if (!type) return Status::Corruption("procedure record " + m.id + " has no known type");
  v.type = *type;
  v.name = body.value("name", "");
  v.version = body.value("version", 0);
  v.removed = body.value("removed", false);
  v.content_json = body.value("content", json::object()).dump();
  v.author = body.value("author", "");
  v.note = body.value("note", "");
  v.created_at = m.created_at;
  v.current = m.state == RecordState::kActive;
  v.id = m.id;
  v.seq = m.seq;
  if (v.name.empty() || v.version < 1) return Status::Corruption("procedure record " + m.id + " has no name or version");
  return v;
}

std::string Describe(ProcedureType type, const std::string& name) {
  return type == ProcedureType::kSystemPrompt ? std::string("the system prompt")
                                              : std::string(ProcedureTypeName(type)) + " '" + name + "'";
}

std::string FormatTime(TimeMs t) { return FormatIso8601(t); }

}  // namespace

std::string_view ProcedureTypeName(ProcedureType t) {
  switch (t) {
    case ProcedureType::kSystemPrompt: return "system_prompt";
    case ProcedureType::kTool: return "tool";
    case ProcedureType::kRule: return "rule";
  }
  return "tool";
}

std::optional<ProcedureType> ParseProcedureType(std::string_view s) {
  if (s == "system_prompt") return ProcedureType::kSystemPrompt;
  if (s == "tool") return ProcedureType::kTool;
  if (s == "rule") return ProcedureType::kRule;
  return std::nullopt;
}

Result<std::string> ValidateToolDefinition(const ToolDefinition& tool) {
  MSP_RETURN_IF_ERROR(CheckName(ProcedureType::kTool, tool.name));
  MSP_RETURN_IF_ERROR(CheckText("tool description", tool.description, kMaxDescriptionBytes));
  if (tool.description.empty()) {
    return Status::InvalidArgument("tool '" + tool.name + "': the description is empty (the model chooses tools by it)");
  }
  MSP_RETURN_IF_ERROR(CheckText("tool parameters", tool.parameters_json, kMaxSchemaBytes));
  const json schema = json::parse(tool.parameters_json, nullptr, false);
  const std::string at = "tool '" + tool.name + "': parameters ";
  if (schema.is_discarded()) return Status::InvalidArgument(at + "are not valid JSON");
  if (!schema.is_object()) return Status::InvalidArgument(at + "must be a JSON Schema object, got " + schema.type_name());
  const auto type = schema.find("type");
  if (type == schema.end() || *type != "object") {
    return Status::InvalidArgument(at + "must be an object schema: {\"type\": \"object\", \"properties\": {...}}");
  }
  const auto props = schema.find("properties");
  if (props != schema.end()) {
    if (!props->is_object()) return Status::InvalidArgument(at + "\"properties\" must be an object");
    for (const auto& [key, value] : props->items()) {
      if (!value.is_object()) {
        return Status::InvalidArgument(at + "property '" + key + "' must be a schema (a JSON object)");
      }
    }
  }
  const auto required = schema.find("required");
  if (required != schema.end()) {
    if (!required->is_array()) return Status::InvalidArgument(at + "\"required\" must be an array of names");
    for (const auto& r : *required) {
      if (!r.is_string()) return Status::InvalidArgument(at + "\"required\" must be an array of names");
      if (props == schema.end() || !props->contains(r.get<std::string>())) {
        return Status::InvalidArgument(at + "\"required\" names '" + r.get<std::string>() +
                                       "', which is not in \"properties\"");
      }
    }
  }
  return json{{"name", tool.name}, {"description", tool.description}, {"parameters", schema}}.dump();
}

Result<std::string> ValidateBehaviourRule(const BehaviourRule& rule) {
  MSP_RETURN_IF_ERROR(CheckName(ProcedureType::kRule, rule.name));
  MSP_RETURN_IF_ERROR(CheckText("rule condition", rule.when, kMaxDescriptionBytes));
  MSP_RETURN_IF_ERROR(RuleCondition::Parse(rule.when).status().WithContext("rule '" + rule.name + "'"));
  if (!IsItemName(rule.tool)) {
    return Status::InvalidArgument("rule '" + rule.name + "': tool '" + rule.tool.substr(0, 80) +
                                   "' must be a tool name (1..64 characters of A-Z a-z 0-9 _ -)");
  }
  MSP_RETURN_IF_ERROR(CheckText("rule arguments", rule.arguments_json, kMaxSchemaBytes));
  const json args = json::parse(rule.arguments_json.empty() ? "{}" : rule.arguments_json, nullptr, false);
  if (args.is_discarded() || !args.is_object()) {
    return Status::InvalidArgument("rule '" + rule.name + "': arguments must be a JSON object");
  }
  MSP_RETURN_IF_ERROR(CheckText("rule description", rule.description, kMaxDescriptionBytes));
  return json{{"name", rule.name},
              {"when", rule.when},
              {"tool", rule.tool},
              {"arguments", args},
              {"description", rule.description}}
      .dump();
}

Result<ToolDefinition> ToolFromVersion(const ProcedureVersion& v) {
  if (v.type != ProcedureType::kTool || v.removed) {
    return Status::InvalidArgument("version " + std::to_string(v.version) + " of '" + v.name + "' is not a tool");
  }
  const json c = json::parse(v.content_json, nullptr, false);
  if (c.is_discarded() || !c.is_object()) return Status::Corruption("tool '" + v.name + "' has malformed content");
  ToolDefinition t;
  t.name = c.value("name", "");
  t.description = c.value("description", "");
  t.parameters_json = c.value("parameters", json::object()).dump();
  return t;
}

Result<BehaviourRule> RuleFromVersion(const ProcedureVersion& v) {
  if (v.type != ProcedureType::kRule || v.removed) {
    return Status::InvalidArgument("version " + std::to_string(v.version) + " of '" + v.name + "' is not a rule");
  }
  const json c = json::parse(v.content_json, nullptr, false);
  if (c.is_discarded() || !c.is_object()) return Status::Corruption("rule '" + v.name + "' has malformed content");
  BehaviourRule r;
  r.name = c.value("name", "");
  r.when = c.value("when", "");
  r.tool = c.value("tool", "");
  r.arguments_json = c.value("arguments", json::object()).dump();
  r.description = c.value("description", "");
  return r;
}

std::string RenderVersion(const ProcedureVersion& v) {
  json content = json::parse(v.content_json, nullptr, false);
  if (content.is_discarded()) content = v.content_json;
  return json{{"content", content}, {"removed", v.removed}}.dump(2) + "\n";
}

ProceduralMemory::ProceduralMemory(MemoryLayer& engine, Namespace scope) : engine_(engine) {
  scope_.tenant = scope.tenant;
  scope_.agent = scope.agent;
}

Result<std::vector<ProcedureVersion>> ProceduralMemory::Versions(ProcedureType type, const std::string& name) const {
  ListRequest req;
  req.scope = scope_;
  req.filter.kinds = {Kind::kProcedure};
  req.filter.layers = {Layer::kProcedural};
  req.filter.tags = {Tag(type, name)};
  req.filter.include_superseded = true;
  req.include_expired = true;
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, engine_.List(req));
  std::vector<ProcedureVersion> out;
  for (const Memory& m : records) {
    if (!(m.ns == scope_)) continue;  // another agent's (a scope without agent sees all)
    MSP_ASSIGN_OR_RETURN(ProcedureVersion v, VersionFromMemory(m));
    if (v.type != type || v.name != name) continue;
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  // The latest version is the current one.
  for (size_t i = 0; i < out.size(); ++i) out[i].current = i + 1 == out.size();
  return out;
}

Result<ProcedureVersion> ProceduralMemory::Change(ProcedureType type, const std::string& name,
                                                  const std::string& content_json, bool removed,
                                                  const ProcedureChange& change, bool must_exist) {
  MSP_RETURN_IF_ERROR(CheckName(type, name));
  MSP_RETURN_IF_ERROR(CheckText("author", change.author, 256));
  MSP_RETURN_IF_ERROR(CheckText("note", change.note, kMaxDescriptionBytes));
  if (change.base_version < -1) {
    return Status::InvalidArgument("base_version must be -1 (current), 0 (new item) or a version");
  }
  const json content = json::parse(content_json, nullptr, false);
  if (content.is_discarded() || !content.is_object()) return Status::InvalidArgument("content must be a JSON object");
  const std::string what = Describe(type, name);
  for (int attempt = 1;; ++attempt) {
    MSP_ASSIGN_OR_RETURN(std::vector<ProcedureVersion> versions, Versions(type, name));
    const ProcedureVersion* current = versions.empty() ? nullptr : &versions.back();
    const int current_version = current ? current->version : 0;
    if (change.base_version >= 0 && change.base_version != current_version) {
      return Status::Conflict(what + ": the change is based on version " + std::to_string(change.base_version) +
                              " but the current version is " + std::to_string(current_version) +
                              " (show it, then change version " + std::to_string(current_version) + ")");
    }
    if (must_exist && (current == nullptr || current->removed)) {
      return Status::NotFound(current ? what + " was already removed (version " + std::to_string(current_version) + ")"
                                      : "no " + what + " in " + scope_.ToString());
    }
    Memory next;
    next.id = VersionRecordId(scope_, type, name, current_version + 1);
    next.ns = scope_;
    next.layer = Layer::kProcedural;
    next.kind = Kind::kProcedure;
    next.text = RecordText(type, content, removed);
    next.body_json = json{{"type", ProcedureTypeName(type)},
                          {"name", name},
                          {"version", current_version + 1},
                          {"removed", removed},
                          {"author", change.author.empty() ? "unknown" : change.author},
                          {"note", change.note},
                          {"content", content}}
                         .dump();
    next.tags = {"procedure", Tag(type, name)};
    next.source = "procedural";
    RecordBatch batch;
    batch.scope = scope_;
    batch.actor = change.author;
    batch.reason = "procedure " + std::string(ProcedureTypeName(type)) + " " + name + " v" +
                   std::to_string(current_version + 1) + (removed ? " (removed)" : "");
    batch.puts.push_back(next);
    batch.expected_seq.push_back(0);
    if (current != nullptr) {
      Result<Memory> old = engine_.Get(scope_, current->id);
      if (!old.ok()) {
        if (old.status().IsNotFound() && attempt < kChangeAttempts) continue;  // replaced meanwhile
        return old.status();
      }
      Memory old_m = std::move(old).value();
      old_m.state = RecordState::kSuperseded;
      old_m.superseded_by = next.id;
      batch.puts[0].supersedes = old_m.id;
      batch.puts.push_back(old_m);
      batch.expected_seq.push_back(current->seq);
    }
    Result<std::vector<Memory>> stored = engine_.Commit(batch);
    if (stored.ok()) return VersionFromMemory(stored->at(0));
    if (stored.status().code() != StatusCode::kConflict) return stored.status();
    if (change.base_version >= 0 || attempt >= kChangeAttempts) {
      Result<std::vector<ProcedureVersion>> now = Versions(type, name);
      const int latest = now.ok() && !now->empty() ? now->back().version : current_version;
      return Status::Conflict(what + ": a concurrent change won (the current version is now " +
                              std::to_string(latest) + "); show it and change version " + std::to_string(latest));
    }
  }
}

Result<ProcedureVersion> ProceduralMemory::SetSystemPrompt(const std::string& text, const ProcedureChange& change) {
  MSP_RETURN_IF_ERROR(CheckText("system prompt", text, 1u << 20));
  if (text.empty()) return Status::InvalidArgument("the system prompt is empty (remove it instead)");
  const std::string content = json{{"text", text}}.dump();
  if (change.base_version < 0) {
    Result<ProcedureVersion> cur = Get(ProcedureType::kSystemPrompt, std::string(kSystemPromptName));
    if (cur.ok() && !cur->removed && cur->content_json == content) return cur;  // unchanged
  }
  return Change(ProcedureType::kSystemPrompt, std::string(kSystemPromptName), content, false, change, false);
}

Result<ProcedureVersion> ProceduralMemory::PutTool(const ToolDefinition& tool, const ProcedureChange& change) {
  MSP_ASSIGN_OR_RETURN(std::string content, ValidateToolDefinition(tool));
  if (change.base_version < 0) {
    Result<ProcedureVersion> cur = Get(ProcedureType::kTool, tool.name);
    if (cur.ok() && !cur->removed && cur->content_json == content) return cur;
  }
  return Change(ProcedureType::kTool, tool.name, content, false, change, false);
}

Result<ProcedureVersion> ProceduralMemory::PutRule(const BehaviourRule& rule, const ProcedureChange& change) {
  MSP_ASSIGN_OR_RETURN(std::string content, ValidateBehaviourRule(rule));
  if (change.base_version < 0) {
    Result<ProcedureVersion> cur = Get(ProcedureType::kRule, rule.name);
    if (cur.ok() && !cur->removed && cur->content_json == content) return cur;
  }
  return Change(ProcedureType::kRule, rule.name, content, false, change, false);
}

Result<ProcedureVersion> ProceduralMemory::Remove(ProcedureType type, const std::string& name,
                                                  const ProcedureChange& change) {
  return Change(type, name, "{}", true, change, true);
}

Result<ProcedureVersion> ProceduralMemory::Restore(ProcedureType type, const std::string& name, int version,
                                                   const ProcedureChange& change) {
  MSP_ASSIGN_OR_RETURN(ProcedureVersion old, Get(type, name, version));
  if (version <= 0) return Status::InvalidArgument("restore needs a version number (1, 2, ...)");
  ProcedureChange c = change;
  if (c.note.empty()) c.note = "restored from version " + std::to_string(version);
  return Change(type, name, old.content_json, old.removed, c, false);
}

Result<ProcedureVersion> ProceduralMemory::Get(ProcedureType type, const std::string& name, int version) const {
  MSP_RETURN_IF_ERROR(CheckName(type, name));
  if (version < 0) return Status::InvalidArgument("version must be >= 0 (0: the current one)");
  MSP_ASSIGN_OR_RETURN(std::vector<ProcedureVersion> versions, Versions(type, name));
  if (versions.empty()) return Status::NotFound("no " + Describe(type, name) + " in " + scope_.ToString());
  if (version == 0) return versions.back();
  for (const ProcedureVersion& v : versions) {
    if (v.version == version) return v;
  }
  return Status::NotFound(Describe(type, name) + " has no version " + std::to_string(version) +
                          "; versions are 1.." + std::to_string(versions.back().version));
}

Result<std::vector<ProcedureVersion>> ProceduralMemory::History(ProcedureType type, const std::string& name) const {
  MSP_RETURN_IF_ERROR(CheckName(type, name));
  MSP_ASSIGN_OR_RETURN(std::vector<ProcedureVersion> versions, Versions(type, name));
  if (versions.empty()) return Status::NotFound("no " + Describe(type, name) + " in " + scope_.ToString());
  return versions;
}

Result<std::string> ProceduralMemory::Diff(ProcedureType type, const std::string& name, int from, int to) const {
  if (from < 1 || to < 1) return Status::InvalidArgument("diff needs two version numbers (1, 2, ...)");
  MSP_ASSIGN_OR_RETURN(ProcedureVersion a, Get(type, name, from));
  MSP_ASSIGN_OR_RETURN(ProcedureVersion b, Get(type, name, to));
  auto header = [](const char* mark, const ProcedureVersion& v) {
    return std::string(mark) + " " + std::string(ProcedureTypeName(v.type)) + " " + v.name + " version " +
           std::to_string(v.version) + " (" + v.author + ", " + FormatTime(v.created_at) +
           (v.note.empty() ? "" : ", " + v.note) + ")\n";
  };
  return header("---", a) + header("+++", b) + LineDiff(RenderVersion(a), RenderVersion(b));
}

Result<std::vector<ProcedureVersion>> ProceduralMemory::List() const {
  ListRequest req;
  req.scope = scope_;
  req.filter.kinds = {Kind::kProcedure};
  req.filter.layers = {Layer::kProcedural};
  req.include_expired = true;
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, engine_.List(req));
  std::vector<ProcedureVersion> out;
  for (const Memory& m : records) {
    if (!(m.ns == scope_)) continue;
    Result<ProcedureVersion> v = VersionFromMemory(m);
    if (!v.ok() || v->removed) continue;
    v->current = true;
    out.push_back(std::move(v).value());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::make_pair(static_cast<int>(a.type), a.name) < std::make_pair(static_cast<int>(b.type), b.name);
  });
  return out;
}

Result<ProceduralSnapshot> ProceduralMemory::Snapshot() const {
  MSP_ASSIGN_OR_RETURN(std::vector<ProcedureVersion> all, List());
  ProceduralSnapshot s;
  for (const ProcedureVersion& v : all) {
    switch (v.type) {
      case ProcedureType::kSystemPrompt: {
        const json c = json::parse(v.content_json, nullptr, false);
        if (c.is_object()) s.system_prompt = c.value("text", "");
        break;
      }
      case ProcedureType::kTool: {
        MSP_ASSIGN_OR_RETURN(ToolDefinition t, ToolFromVersion(v));
        s.tools.push_back(std::move(t));
        break;
      }
      case ProcedureType::kRule: {
        MSP_ASSIGN_OR_RETURN(BehaviourRule r, RuleFromVersion(v));
        s.rules.push_back(std::move(r));
        break;
      }
    }
  }
  return s;
}

}  // namespace msp
