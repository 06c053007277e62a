// docs/operations.md from the operation table (see reference.h).
#include "api/reference.h"

#include <algorithm>
#include <sstream>

#include "api/operations.h"
#include "api/schema.h"

namespace msp::api {
namespace {

std::string CliSpelling(const FieldInfo& f) {
  switch (f.cli) {
    case CliForm::kPositional:
      if (f.type == FieldType::kFiles) return "the argument: a directory, whose files it reads";
      return f.type == FieldType::kStrings ? "the arguments" : "the argument";
    case CliForm::kNamespaceFlags: return "`--tenant`, `--user`, `--agent`, `--session`, `--mission`, `--operator`";
    case CliForm::kFlag: break;
  }
  std::string flag = "`" + f.Flag() + "`";
  if (f.type == FieldType::kStrings || f.type == FieldType::kEnums) flag += " (repeatable, or a,b)";
  if (f.type == FieldType::kProvenance) flag += " TYPE:REF (repeatable)";
  if (f.type == FieldType::kAlternatives) flag += " 'OPTION: REASON' (repeatable)";
  if (f.type == FieldType::kBool && f.default_value == true) flag += " true or false";
  return flag;
}

std::string Escaped(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string ReferenceMarkdown() {
  std::ostringstream out;
  out << "# Operations\n\n"
         "<!-- Generated from src/api by `api_doc > docs/operations.md`; api_test fails when it is out of date. -->\n\n"
         "Each operation is declared once (src/api): its fields, their types, limits and defaults, and its\n"
         "answer. The command line, the REST API and the MCP tools all decode a request with that table and\n"
         "answer the same shape, so the same request gets the same answer and the same bad input the same\n"
         "error on every face (the command line names a field by its flag). REST and MCP take the fields as\n"
         "one JSON object (fields in a group, such as `filters`, as a nested object); an unknown field, a\n"
         "wrong type or a value out of range is an error naming the field (REST `400 invalid_argument`, MCP a\n"
         "tool result with `isError`, the command line exit code 2). The command line spells a field\n"
         "`--name-with-dashes`; a list is repeatable (`--kinds fact --kinds decision`) or comma-separated; a\n"
         "boolean that is off by default is a switch, one that is on takes `true` or `false`; `--json` prints\n"
         "the answer as below.\n\n"
         "A request's `namespace` gives parts of where the operation reads: the tenant is always the\n"
         "caller's (an API key's tenant; naming another one is refused), and parts left out are the face's:\n"
         "none over REST, the session's over MCP (`msp mcp --user ...`), the namespace flags on the command\n"
         "line. A caller with a clearance (an API key's) is served only records at or below it.\n";
  for (const Operation* op : Operations()) {
    const OperationInfo& info = op->info();
    out << "\n## " << info.name << "\n\n" << info.summary << "\n\n";
    out << "| face | call |\n|---|---|\n";
    std::string positional;
    for (const FieldInfo& f : info.fields) {
      if (f.cli == CliForm::kPositional) positional += " " + f.name;
    }
    for (char& c : positional) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out << "| command line | `msp " << info.cli_verb << positional << " [flags]` |\n";
    if (info.HasBody()) {
      out << "| REST | `" << info.rest_method << " " << info.rest_path << "` with a JSON body |\n";
    } else {
      const bool scoped = std::any_of(info.fields.begin(), info.fields.end(),
                                      [](const FieldInfo& f) { return f.type == FieldType::kNamespace; });
      out << "| REST | `" << info.rest_method << " " << info.rest_path << "`, the other fields as parameters"
          << (scoped ? " (the namespace's parts as `user`, `agent`, `session`, `mission`, `operator`)" : "")
          << " |\n";
    }
    if (info.mcp_tool.empty()) {
      out << "| MCP | not a tool: " << info.mcp_withheld << " |\n\n";
    } else {
      out << "| MCP | tool `" << info.mcp_tool << "` ("
          << (info.mcp_profile == "core" ? std::string("every tool profile")
                                         : "tool profiles `" + info.mcp_profile + "` and `all`")
          << ") |\n\n";
    }
    out << "| field | command line | type | default | meaning |\n|---|---|---|---|---|\n";
    for (const FieldInfo& f : info.fields) {
      std::string def = f.default_value.is_null() ? "" : f.default_value.dump();
      if (f.required) def = "required";
      out << "| `" << f.Path() << "` | " << CliSpelling(f) << " | " << Escaped(f.TypeText()) << " | "
          << (def.empty() ? "" : "`" + def + "`") << " | " << Escaped(f.doc) << " |\n";
    }
    out << "\nExample request: `" << info.example.dump() << "`\n";
    out << "\nAnswer: `" << info.answer << "`.\n";
  }
  return out.str();
}

Result<std::string> OpenApiWithOperations(std::string_view document) {
  using ordered = nlohmann::ordered_json;
  ordered doc = ordered::parse(document, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Status::InvalidArgument("the OpenAPI document is not JSON");
  for (const Operation* op : Operations()) {
    const OperationInfo& info = op->info();
    std::string method = info.rest_method;
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // "/v1/search" is one key: escape its slashes for the pointer.
    std::string path_key = info.rest_path;
    for (size_t i = 0; (i = path_key.find('/', i)) != std::string::npos; i += 2) path_key.replace(i, 1, "~1");
    const ordered::json_pointer route("/paths/" + path_key + "/" + method);
    if (!doc.contains(route)) return Status::InvalidArgument("the OpenAPI document has no " + info.rest_path);
    ordered& r = doc[route];
    if (!info.HasBody()) {  // no body: the fields are the route's parameters
      r["summary"] = info.title;
      r["description"] = info.summary;
      continue;
    }
    // The schema, or the first of its oneOf (POST /v1/memories: one record
    // or a batch of them).
    const ordered::json_pointer body("/requestBody/content/application~1json/schema/$ref");
    const ordered::json_pointer first("/requestBody/content/application~1json/schema/oneOf/0/$ref");
    if (!r.contains(body) && !r.contains(first)) {
      return Status::InvalidArgument(info.rest_path + " has no request schema $ref");
    }
    const std::string ref = r[r.contains(body) ? body : first].get<std::string>();
    const std::string prefix = "#/components/schemas/";
    if (ref.rfind(prefix, 0) != 0) return Status::InvalidArgument(info.rest_path + ": unexpected $ref " + ref);
    if (r.contains(body)) {  // a route of more forms keeps its own words for them
      r["summary"] = info.title;
      r["description"] = info.summary;
    }
    // A field the path names (POST /v1/tasks/{task_id}/comments, PUT
    // /v1/principles/{principle_id}) is not the body's to give.
    nlohmann::json schema = InputSchema(info);
    for (const FieldInfo& f : info.fields) {
      if (!info.InPath(f)) continue;
      schema["properties"].erase(f.name);
      if (schema.contains("required")) {
        nlohmann::json& required = schema["required"];
        required.erase(std::remove(required.begin(), required.end(), f.name), required.end());
        if (required.empty()) schema.erase("required");
      }
    }
    doc["components"]["schemas"][ref.substr(prefix.size())] = ordered::parse(schema.dump());
  }
  return doc.dump(1) + "\n";
}

}  // namespace msp::api
