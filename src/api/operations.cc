// The operation table (see operations.h) and the field descriptions'
// helpers (operation.h).
#include "api/operations.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <utility>

namespace msp::api {
namespace {

std::string FormatNumber(double d) {
  std::string s = std::to_string(d);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

template <typename Pred>
const Operation* FindIf(Pred pred) {
  const std::vector<const Operation*>& ops = Operations();
  auto it = std::find_if(ops.begin(), ops.end(), pred);
  return it == ops.end() ? nullptr : *it;
}

}  // namespace

std::string FieldInfo::Flag() const {
  if (type == FieldType::kNamespace) return "--tenant, --user, --agent, --session, --mission, --operator";
  if (!flag.empty()) return flag;
  std::string dashed = "--" + name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  return dashed;
}

std::string FieldInfo::TypeText() const {
  switch (type) {
    case FieldType::kString: return "string";
    case FieldType::kText: return "string, not empty";
    case FieldType::kInt: return "integer " + std::to_string(min_int) + ".." + std::to_string(max_int);
    case FieldType::kNumber: return "number " + FormatNumber(min_number) + ".." + FormatNumber(max_number);
    case FieldType::kBool: return "boolean";
    case FieldType::kTime: return "time (ISO 8601)";
    case FieldType::kEnum: return "one of " + nlohmann::json(values).dump();
    case FieldType::kStrings: return "array of strings";
    case FieldType::kEnums: return "array of " + nlohmann::json(values).dump();
    case FieldType::kNamespace: return "object {tenant, user, agent, session, mission, operator}";
    case FieldType::kObject: return "JSON object";
    case FieldType::kProvenance: return "array of {type, ref, detail}";
    case FieldType::kAlternatives: return "array of {option, reason}";
    case FieldType::kFiles: return "array of {name, text, first_commit_at, last_author}";
  }
  return "";
}

const FieldInfo* OperationInfo::Find(const std::string& path) const {
  for (const FieldInfo& f : fields) {
    if (f.Path() == path) return &f;
  }
  return nullptr;
}

bool OperationInfo::InPath(const FieldInfo& f) const {
  return rest_path.find("{" + f.name + "}") != std::string::npos;
}

namespace {

// Replaces every "field 'PATH'" (PATH, or PATH[i]) and "'PATH'" by `flag`,
// in one pass: what it puts in ("parameter 'limit'") is not read again.
void ReplacePath(std::string& message, const std::string& path, const std::string& flag) {
  const std::string quoted = "'" + path;
  const std::string field = "field ";
  size_t at = 0;
  while ((at = message.find(quoted, at)) != std::string::npos) {
    size_t end = at + quoted.size();
    if (end < message.size() && message[end] == '[') {
      const size_t close = message.find(']', end);
      if (close != std::string::npos) end = close + 1;
    }
    if (end >= message.size() || message[end] != '\'') {
      at = end;
      continue;
    }
    if (at >= field.size() && message.compare(at - field.size(), field.size(), field) == 0) at -= field.size();
    message.replace(at, end + 1 - at, flag);
    at += flag.size();
  }
}

}  // namespace

std::string CliMessage(const OperationInfo& info, std::string message) {
  std::vector<std::pair<std::string, std::string>> names;  // path -> flag
  for (const FieldInfo& f : info.fields) {
    if (f.type == FieldType::kNamespace) {
      for (const char* part : {"tenant", "user", "agent", "session", "mission", "operator"}) {
        names.emplace_back(f.name + "." + part, std::string("--") + part);
      }
    } else if (f.cli == CliForm::kPositional) {
      std::string upper = f.name;
      std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
      names.emplace_back(f.Path(), upper);
    } else {
      names.emplace_back(f.Path(), f.Flag());
    }
  }
  // Longer paths first, so that "filters.created_to" is not cut by a prefix.
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [path, flag] : names) ReplacePath(message, path, flag);
  return message;
}

std::string RestMessage(const OperationInfo& info, std::string message) {
  if (info.HasBody()) return message;
  std::vector<std::pair<std::string, std::string>> names;  // path -> parameter
  for (const FieldInfo& f : info.fields) {
    if (f.type == FieldType::kNamespace) {
      for (const char* part : {"tenant", "user", "agent", "session", "mission", "operator"}) {
        names.emplace_back(f.name + "." + part, std::string("parameter '") + part + "'");
      }
    } else if (!info.InPath(f)) {
      names.emplace_back(f.Path(), "parameter '" + f.name + "'");
    }
  }
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [path, param] : names) ReplacePath(message, path, param);
  return message;
}

namespace {

// One row of the table: the operation's name and its declaration. The
// order is the reference page's, and the order faces_test calls them in.
struct Declared {
  std::string_view name;
  std::unique_ptr<Operation> (*make)();
};

constexpr Declared kTable[] = {
    {"search", &SearchOperation},
    // Before anything writes: the counts of the store every face starts
    // from (faces_test compares them).
    {"memory_stats", &StatsOperation},
    // Before anything deletes the example record: its events are its
    // import's on every face's store.
    {"memory_audit", &AuditOperation},
    {"workflow_memory_query", &WorkflowQueryOperation},
    // Before anything changes the mission's decisions, corrections or tasks
    // (each face's calls change its own store).
    {"handoff_digest", &HandoffOperation},
    {"workflow_mark_used", &MarkUsedOperation},
    {"memory_write", &WriteOperation},
    {"memory_get", &GetOperation},
    {"memory_history", &HistoryOperation},
    {"memory_delete", &DeleteOperation},
    {"memory_list", &ListOperation},
    {"episode_add", &EpisodeAddOperation},
    {"session_steps", &SessionStepsOperation},
    // After session_steps: it consolidates the session session_steps reads.
    {"session_end", &SessionEndOperation},
    // The second face's fact merges into the first's; superseding is final.
    {"fact_add", &FactAddOperation},
    {"fact_supersede", &FactSupersedeOperation},
    {"consolidate", &ConsolidateOperation},
    {"task_add", &TaskAddOperation},
    {"task_list", &TaskListOperation},
    {"task_show", &TaskShowOperation},
    {"task_status", &TaskStatusOperation},
    // After task_status: a comment changes what the task shows.
    {"task_comment", &TaskCommentOperation},
    // Before anything changes the example decision, and before
    // decision_record adds to the list (each face adds its own).
    {"decision_list", &DecisionListOperation},
    {"decision_show", &DecisionShowOperation},
    {"decision_status", &DecisionStatusOperation},
    {"decision_record", &DecisionRecordOperation},
    // Last: superseded is final (the second face's call is refused).
    {"decision_supersede", &DecisionSupersedeOperation},
    // A dry run (its example): changes nothing.
    {"decision_import_adr", &AdrImportOperation},
    // Before correction_record adds to the list (each face adds its own).
    {"correction_list", &CorrectionListOperation},
    {"correction_show", &CorrectionShowOperation},
    {"correction_record", &CorrectionRecordOperation},
    // Before principle_put edits the example principle (P-1, version 1).
    {"principle_list", &PrincipleListOperation},
    {"principle_show", &PrincipleShowOperation},
    // An edit of version 1: the second face's call is a conflict.
    {"principle_put", &PrinciplePutOperation},
    // Before operator_set sets the example operator (bob) again.
    {"operator_list", &OperatorListOperation},
    {"operator_show", &OperatorShowOperation},
    {"operator_set", &OperatorSetOperation},
    // The reports and event_list before event_add adds to the mission's
    // events (each face adds its own, counted by report_load).
    {"report_load", &ReportLoadOperation},
    {"report_corrections", &ReportCorrectionsOperation},
    {"report_correction_pairs", &ReportCorrectionPairsOperation},
    {"report_redundancy", &ReportRedundancyOperation},
    {"event_list", &EventListOperation},
    {"event_add", &EventAddOperation},
};
constexpr size_t kDeclared = sizeof kTable / sizeof kTable[0];

// Row i's operation, declared on first use (a command-line verb declares
// only its own). Never taken apart: a short `msp` process would spend a
// measurable part of its life destroying declarations as it exits.
const Operation* DeclaredAt(size_t i) {
  static std::once_flag made[kDeclared];
  static const Operation* ops[kDeclared] = {};
  std::call_once(made[i], [i] { ops[i] = kTable[i].make().release(); });
  return ops[i];
}

}  // namespace

const std::vector<const Operation*>& Operations() {
  static const std::vector<const Operation*>& ops = *new std::vector<const Operation*>([] {
    std::vector<const Operation*> v;
    for (size_t i = 0; i < kDeclared; ++i) v.push_back(DeclaredAt(i));
    return v;
  }());
  return ops;
}

const Operation* FindOperation(std::string_view name) {
  for (size_t i = 0; i < kDeclared; ++i) {
    if (kTable[i].name == name) return DeclaredAt(i);
  }
  return nullptr;
}

const Operation* FindByCliVerb(std::string_view verb) {
  return FindIf([&](const Operation* op) { return op->info().cli_verb == verb; });
}

const Operation* FindByMcpTool(std::string_view tool) {
  if (tool.empty()) return nullptr;
  return FindIf([&](const Operation* op) { return op->info().mcp_tool == tool; });
}

}  // namespace msp::api
