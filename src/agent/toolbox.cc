// The agent's tools: msp's memory tools (search, write, fact history, core
// and archival memory, conversation search), external MCP servers' tools and
// procedural memory's registered tools.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "agent/agent.h"

namespace msp {
namespace {

using json = nlohmann::json;

constexpr int kDefaultTopK = 5;
constexpr int kMaxTopK = 50;
// Tool results longer than this are cut, with a note saying so.
constexpr size_t kMaxResultBytes = 16 * 1024;

ToolOutcome Ok(std::string text) { return {std::move(text), false}; }
ToolOutcome Err(std::string text) { return {std::move(text), true}; }
ToolOutcome FromStatus(const Status& s) { return Err(s.ToString()); }

json ObjectSchema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

// A required string argument, or an error naming it.
Result<std::string> StringArg(const json& args, const char* name, bool required = true) {
  const auto it = args.find(name);
  if (it == args.end() || it->is_null()) {
    if (!required) return std::string();
    return Status::InvalidArgument(std::string("missing argument \"") + name + "\"");
  }
  if (!it->is_string()) return Status::InvalidArgument(std::string("argument \"") + name + "\" must be a string");
  return it->get<std::string>();
}

Result<int> TopKArg(const json& args) {
  const auto it = args.find("top_k");
  if (it == args.end() || it->is_null()) return kDefaultTopK;
  if (!it->is_number_integer()) return Status::InvalidArgument("argument \"top_k\" must be an integer");
  const int k = it->get<int>();
  if (k < 1 || k > kMaxTopK) return Status::InvalidArgument("argument \"top_k\" must be 1.." + std::to_string(kMaxTopK));
  return k;
}

Result<std::vector<std::string>> TagsArg(const json& args) {
  std::vector<std::string> tags;
  const auto it = args.find("tags");
  if (it == args.end() || it->is_null()) return tags;
  if (!it->is_array()) return Status::InvalidArgument("argument \"tags\" must be an array of strings");
  for (const json& t : *it) {
    if (!t.is_string()) return Status::InvalidArgument("argument \"tags\" must be an array of strings");
    tags.push_back(t.get<std::string>());
  }
  return tags;
}

std::string Score(double s) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.3f", s);
  return buf;
}

std::string HitLines(const std::vector<SearchHit>& hits) {
  if (hits.empty()) return "no results";
  std::string out;
  for (const SearchHit& h : hits) {
    if (!out.empty()) out += "\n";
    out += "[" + h.memory.id + "] (" + std::string(KindName(h.memory.kind)) + ", score " + Score(h.score);
    if (h.memory.kind == Kind::kEpisode) out += ", session " + h.memory.ns.session + " step " + std::to_string(h.memory.step_number);
    // A long record's hit shows the passage that matched (SearchHit::passage).
    out += ") " + (h.passage.empty() ? h.memory.text : h.passage);
  }
  return out;
}

std::string BlockLine(const CoreBlock& b) {
  return "core memory block '" + b.label + "' now holds " + std::to_string(Utf8Length(b.value)) + " of " +
         std::to_string(b.limit) + " characters:\n" + b.value;
}

}  // namespace

std::string ToolSchemaLine(const ToolSpec& spec) {
  return json{{"name", spec.name}, {"description", spec.description}, {"parameters", spec.parameters}}.dump();
}

AgentToolbox::AgentToolbox(MemoryLayer& engine, Namespace scope, std::string session, const AgentOptions& options,
                           std::string actor)
    : engine_(engine),
      scope_(std::move(scope)),
      session_(std::move(session)),
      options_(options),
      actor_(std::move(actor)),
      core_(engine, scope_, options.core_block_limit) {
  AddBuiltins();
}

AgentToolbox::~AgentToolbox() = default;

void AgentToolbox::AddBuiltins() {
  auto add = [&](std::string name, std::string description, json parameters, Handler h) {
    ToolSpec spec;
    spec.name = name;
    spec.description = std::move(description);
    spec.parameters = std::move(parameters);
    const std::string key = name;
    tools_[key] = Entry{std::move(spec), std::move(h)};
  };
  const json query = {{"type", "string"}, {"description", "what to look for"}};
  const json top_k = {{"type", "integer"}, {"description", "results to return (1..50, default 5)"}};
  const json tags = {{"type", "array"}, {"items", {{"type", "string"}}}};

  // Reads see the user's memory (every agent's); writes carry this agent.
  Namespace read_scope;
  read_scope.tenant = scope_.tenant;
  read_scope.user = scope_.user;
  auto search = [this, read_scope](const json& args, std::vector<Kind> kinds) -> ToolOutcome {
    Result<std::string> q = StringArg(args, "query");
    if (!q.ok()) return FromStatus(q.status());
    Result<int> k = TopKArg(args);
    if (!k.ok()) return FromStatus(k.status());
    RetrieveRequest r;
    r.scope = read_scope;
    r.query = *q;
    r.top_k = *k;
    r.filter.kinds = std::move(kinds);
    Result<std::vector<SearchHit>> hits = engine_.Retrieve(r);
    if (!hits.ok()) return FromStatus(hits.status());
    return Ok(HitLines(*hits));
  };

  add("memory_search", "Search all of msp's memory (facts, past conversation, documents) for a query.",
      ObjectSchema({{"query", query}, {"top_k", top_k}}, {"query"}),
      [search](const json& a) { return search(a, {}); });
  add("memory_write",
      "Store something worth remembering through msp's write policy. Give a tag among preference, constraint, "
      "profile, goal, note; trivial or short texts are refused with the reason.",
      ObjectSchema({{"text", {{"type", "string"}}}, {"tags", tags}}, {"text", "tags"}),
      [this](const json& a) -> ToolOutcome {
        Result<std::string> text = StringArg(a, "text");
        if (!text.ok()) return FromStatus(text.status());
        Result<std::vector<std::string>> t = TagsArg(a);
        if (!t.ok()) return FromStatus(t.status());
        WriteRequest w;
        w.ns = scope_;
        w.text = *text;
        w.tags = *t;
        w.source = "tool";
        w.actor = actor_;
        Result<WriteResult> r = engine_.Write(w);
        if (!r.ok()) return FromStatus(r.status());
        return Ok(std::string(r->merged ? "merged into " : "stored as ") + r->id);
      });
  add("fact_history", "Every version of a fact, oldest first (following supersede links).",
      ObjectSchema({{"id", {{"type", "string"}, {"description", "the fact's id"}}}}, {"id"}),
      [this, read_scope](const json& a) -> ToolOutcome {
        Result<std::string> id = StringArg(a, "id");
        if (!id.ok()) return FromStatus(id.status());
        Result<std::vector<Memory>> h = engine_.History(read_scope, *id);
        if (!h.ok()) return FromStatus(h.status());
        std::string out;
        for (const Memory& m : *h) {
          if (!out.empty()) out += "\n";
          out += "[" + m.id + "] (" + std::string(RecordStateName(m.state)) + ") " + m.text;
        }
        return Ok(out);
      });
  add("core_memory_append",
      "Append a line to one of your core memory blocks (persona, user, task), which are always in your context. "
      "Refused, unchanged, if the block would exceed its limit.",
      ObjectSchema({{"label", {{"type", "string"}, {"description", "persona, user or task"}}},
                    {"content", {{"type", "string"}}}},
                   {"label", "content"}),
      [this](const json& a) -> ToolOutcome {
        Result<std::string> label = StringArg(a, "label");
        Result<std::string> content = StringArg(a, "content");
        if (!label.ok()) return FromStatus(label.status());
        if (!content.ok()) return FromStatus(content.status());
        Result<CoreBlock> b = core_.Append(*label, *content, actor_);
        if (!b.ok()) return FromStatus(b.status());
        return Ok(BlockLine(*b));
      });
  add("core_memory_replace",
      "Replace text in one of your core memory blocks (every occurrence of old_content becomes new_content; an "
      "empty new_content deletes it). Refused, unchanged, if the block would exceed its limit.",
      ObjectSchema({{"label", {{"type", "string"}}},
                    {"old_content", {{"type", "string"}}},
                    {"new_content", {{"type", "string"}}}},
                   {"label", "old_content", "new_content"}),
      [this](const json& a) -> ToolOutcome {
        Result<std::string> label = StringArg(a, "label");
        Result<std::string> old_c = StringArg(a, "old_content");
        Result<std::string> new_c = StringArg(a, "new_content", /*required=*/false);
        if (!label.ok()) return FromStatus(label.status());
        if (!old_c.ok()) return FromStatus(old_c.status());
        if (!new_c.ok()) return FromStatus(new_c.status());
        Result<CoreBlock> b = core_.Replace(*label, *old_c, *new_c, actor_);
        if (!b.ok()) return FromStatus(b.status());
        return Ok(BlockLine(*b));
      });
  add("archival_memory_insert",
      "Store a durable fact in long-term (archival) memory; a near-duplicate of a stored fact updates it.",
      ObjectSchema({{"content", {{"type", "string"}}}, {"tags", tags}}, {"content"}),
      [this](const json& a) -> ToolOutcome {
        Result<std::string> content = StringArg(a, "content");
        if (!content.ok()) return FromStatus(content.status());
        Result<std::vector<std::string>> t = TagsArg(a);
        if (!t.ok()) return FromStatus(t.status());
        FactRequest f;
        f.ns = scope_;
        f.text = *content;
        f.tags = *t;
        f.source = "agent";
        f.actor = actor_;
        f.provenance = {{"session", session_, "archival_memory_insert"}};
        Result<WriteResult> r = engine_.AddFact(f);
        if (!r.ok()) return FromStatus(r.status());
        return Ok(std::string(r->merged ? "merged into fact " : "stored as fact ") + r->id);
      });
  add("archival_memory_search", "Search long-term (archival) memory: the facts msp holds.",
      ObjectSchema({{"query", query}, {"top_k", top_k}}, {"query"}),
      [search](const json& a) { return search(a, {Kind::kFact}); });
  add("conversation_search", "Search past conversation (every session's messages and tool calls).",
      ObjectSchema({{"query", query}, {"top_k", top_k}}, {"query"}),
      [search](const json& a) { return search(a, {Kind::kEpisode}); });
}

Status AgentToolbox::StartMcpServers(const std::vector<std::string>& specs, int timeout_ms) {
  for (const std::string& text : specs) {
    MSP_ASSIGN_OR_RETURN(McpServerSpec spec, ParseMcpServerSpec(text));
    MSP_ASSIGN_OR_RETURN(std::unique_ptr<McpClient> client, McpClient::Start(spec, timeout_ms));
    Result<std::vector<McpTool>> listed = client->ListTools();
    if (!listed.ok()) return listed.status().WithContext("MCP server '" + spec.name + "': tools/list");
    McpClient* raw = client.get();
    mcp_.push_back(std::move(client));
    for (const McpTool& t : *listed) {
      ToolSpec s;
      s.name = spec.name + "__" + t.name;
      s.description = t.description.empty() ? "(" + spec.name + ") " + t.name : t.description;
      s.parameters = t.input_schema.is_object() ? t.input_schema : json::object();
      if (!s.parameters.contains("type")) s.parameters["type"] = "object";
      const std::string remote = t.name;
      const std::string key = s.name;
      tools_[key] = Entry{std::move(s), [raw, remote](const json& args) -> ToolOutcome {
                               Result<McpCallResult> r = raw->CallTool(remote, args);
                               if (!r.ok()) return FromStatus(r.status());
                               return ToolOutcome{r->text, r->is_error};
                             }};
    }
  }
  return Status::Ok();
}

void AgentToolbox::ApplyProcedural(const std::vector<ToolDefinition>& registered) {
  for (const ToolDefinition& t : registered) {
    ToolSpec spec;
    spec.name = t.name;
    spec.description = t.description;
    spec.parameters = json::parse(t.parameters_json, nullptr, false);
    if (spec.parameters.is_discarded()) spec.parameters = json::object();
    auto it = tools_.find(t.name);
    if (it != tools_.end()) {
      it->second.spec = std::move(spec);
    } else {
      const std::string key = t.name;
      tools_[key] = Entry{std::move(spec), Handler()};
    }
  }
}

std::vector<ToolSpec> AgentToolbox::Specs() const {
  std::vector<ToolSpec> out;
  for (const auto& [name, e] : tools_) out.push_back(e.spec);
  return out;
}

bool AgentToolbox::Has(const std::string& name) const { return tools_.count(name) > 0; }

ToolOutcome AgentToolbox::Call(const std::string& name, const std::string& arguments_json) {
  auto it = tools_.find(name);
  if (it == tools_.end()) return Err("no tool named '" + name + "'");
  if (!it->second.handler) {
    return Err("tool '" + name + "' is registered in procedural memory, but neither msp nor a configured MCP "
               "server implements it");
  }
  const json args = json::parse(arguments_json.empty() ? "{}" : arguments_json, nullptr, false);
  if (args.is_discarded() || !args.is_object()) {
    return Err("the arguments of '" + name + "' are not a JSON object: " + arguments_json.substr(0, 200));
  }
  ToolOutcome out = it->second.handler(args);
  if (out.text.size() > kMaxResultBytes) {
    size_t cut = kMaxResultBytes;
    while (cut > 0 && (static_cast<unsigned char>(out.text[cut]) & 0xC0) == 0x80) --cut;
    const size_t more = out.text.size() - cut;
    out.text.resize(cut);
    out.text += "\n[result cut: " + std::to_string(more) + " more bytes]";
  }
  return out;
}

}  // namespace msp
