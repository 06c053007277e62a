// Procedural memory (seed 000, section 2.3): how an agent acts — its system
// prompt, the tools registered for it (name, description, JSON Schema of the
// parameters) and its behaviour rules ("when <condition>, call tool <name>
// with <arguments>"; the condition language is in docs/agent.md and
// src/procedural/rules.h).
//
// Every item is versioned. A change (set, remove, restore) never edits a
// version: it adds the next one, keeping who made it, when and why; any past
// version can be shown, diffed against another (a line diff of the rendered
// JSON) and restored (a restore is a new version equal to the old one).
// Changes are administrative — CLI, API — never made by the agent loop.
//
// Storage: each version is one record written with MemoryLayer::Commit:
// Kind::kProcedure, Layer::kProcedural, namespace {tenant, agent} of the
// scope (its other parts are ignored), a deterministic id (tenant, agent,
// type, name, version), tags "procedure" and "procedure:<type>:<name>", body
// {"type", "name", "version", "removed", "author", "note", "content"}. The
// current version is active; older ones are superseded and linked
// (supersedes / superseded_by). Version N+1 is written with "must not exist
// yet" and version N with "seq unchanged", in one Commit: of two concurrent
// changes (threads or processes) exactly one lands; the other is retried on
// top of it when the caller named no base version, or gets kConflict naming
// the current version when it did. No change is ever lost.
//
// Thread-safe (the engine is); holds no state besides the scope.
#ifndef MSP_PROCEDURAL_H_
#define MSP_PROCEDURAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

enum class ProcedureType { kSystemPrompt, kTool, kRule };
// "system_prompt", "tool", "rule".
std::string_view ProcedureTypeName(ProcedureType t);
std::optional<ProcedureType> ParseProcedureType(std::string_view s);

// The name of the (single) system prompt item.
inline constexpr std::string_view kSystemPromptName = "system";

// A registered tool, as the model sees it (OpenAI function calling).
struct ToolDefinition {
  std::string name;             // [A-Za-z0-9_-], 1..64 characters
  std::string description;      // required, <= 4,000 bytes
  // JSON Schema of the arguments: an object schema ({"type": "object", ...});
  // "properties" an object of schemas, "required" names among them.
  std::string parameters_json = R"({"type":"object","properties":{}})";
};

// "when <condition>, call tool <tool> with <arguments>".
struct BehaviourRule {
  std::string name;             // as a tool name
  std::string when;             // the condition (rules.h); parsed on write
  std::string tool;             // the tool to call
  // A JSON object; string values may hold {{request}}, {{last.tool}} and
  // {{last.text}}, replaced when the rule fires.
  std::string arguments_json = "{}";
  std::string description;      // optional, for people
};

// Who makes a change, why, and on top of which version.
struct ProcedureChange {
  std::string author;           // who; empty: "unknown"
  std::string note;             // why (optional)
  // The version this change is based on (compare-and-swap): 0 for a new
  // item; -1: whatever is current (a concurrent change is then retried on
  // top, never lost).
  int base_version = -1;
};

// One version of one item.
struct ProcedureVersion {
  ProcedureType type = ProcedureType::kTool;
  std::string name;
  int version = 0;              // 1, 2, ...
  bool removed = false;         // this version retires the item
  // The item as JSON text: system_prompt {"text"}; tool {"name",
  // "description", "parameters"}; rule {"name", "when", "tool",
  // "arguments", "description"}. "{}" for a removal.
  std::string content_json;
  std::string author;
  std::string note;             // e.g. "restored from version 2"
  TimeMs created_at = 0;        // when the change was made
  bool current = false;         // the latest version
  std::string id;               // the record
  int64_t seq = 0;
};

// The current procedural memory of one agent: what the agent loop uses.
struct ProceduralSnapshot {
  std::string system_prompt;           // empty when none is set
  std::vector<ToolDefinition> tools;   // by name
  std::vector<BehaviourRule> rules;    // by name
};

class ProceduralMemory {
 public:
  // `scope`: tenant and agent name whose procedural memory this is.
  ProceduralMemory(MemoryLayer& engine, Namespace scope);

  // Each returns the version written. InvalidArgument for a bad item
  // (named field and rule); Conflict for a stale base_version.
  Result<ProcedureVersion> SetSystemPrompt(const std::string& text, const ProcedureChange& change);
  Result<ProcedureVersion> PutTool(const ToolDefinition& tool, const ProcedureChange& change);
  Result<ProcedureVersion> PutRule(const BehaviourRule& rule, const ProcedureChange& change);
  // A version that retires the item (NotFound when it does not exist or is
  // already removed).
  Result<ProcedureVersion> Remove(ProcedureType type, const std::string& name, const ProcedureChange& change);
  // A new version equal to version `version` (a removal restores as a
  // removal); note defaults to "restored from version N".
  Result<ProcedureVersion> Restore(ProcedureType type, const std::string& name, int version,
                                   const ProcedureChange& change);

  // Version `version`, or the current one when 0 (even a removal).
  Result<ProcedureVersion> Get(ProcedureType type, const std::string& name, int version = 0) const;
  // Every version, oldest first; NotFound when the item never existed.
  Result<std::vector<ProcedureVersion>> History(ProcedureType type, const std::string& name) const;
  // A line diff of versions `from` and `to` rendered as JSON (RenderVersion):
  // a header naming both (author, time), then each line prefixed with
  // "  " (both), "- " (only in `from`) or "+ " (only in `to`).
  Result<std::string> Diff(ProcedureType type, const std::string& name, int from, int to) const;
  // The current version of every item that is not removed, by type and name.
  Result<std::vector<ProcedureVersion>> List() const;
  // The current system prompt, tools and rules.
  Result<ProceduralSnapshot> Snapshot() const;

  const Namespace& scope() const { return scope_; }

 private:
  Result<ProcedureVersion> Change(ProcedureType type, const std::string& name, const std::string& content_json,
                                  bool removed, const ProcedureChange& change, bool must_exist);
  Result<std::vector<ProcedureVersion>> Versions(ProcedureType type, const std::string& name) const;

  MemoryLayer& engine_;
  Namespace scope_;  // {tenant, agent}
};

// A version as pretty-printed JSON (keys sorted, two-space indent):
// {"content": ..., "removed": ...}; what Diff compares.
std::string RenderVersion(const ProcedureVersion& v);

// Checks a tool definition (name, description, object schema) and returns
// its content JSON; InvalidArgument naming the field otherwise.
Result<std::string> ValidateToolDefinition(const ToolDefinition& tool);
// Checks a rule (name, condition syntax, tool name, arguments object).
Result<std::string> ValidateBehaviourRule(const BehaviourRule& rule);

// The typed items of a version's content (InvalidArgument when the version
// is of another type or malformed).
Result<ToolDefinition> ToolFromVersion(const ProcedureVersion& v);
Result<BehaviourRule> RuleFromVersion(const ProcedureVersion& v);

}  // namespace msp

#endif  // MSP_PROCEDURAL_H_
