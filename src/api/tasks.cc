// The declarations of a mission's task operations (push mode,
// docs/orchestrate.md): task_add, task_list, task_show, task_comment and
// task_status (msp task ..., /v1/tasks..., the MCP tools of those names),
// over orchestrate/tasks.h. Every face reads a task as the same asker
// (CallerAsker: the namespace's operator at their registry clearance capped
// by the caller's; without one, the caller): a task above that clearance is
// not found, and cannot be commented on or moved. Writing a task above the
// caller's clearance is refused by the engine (AsCaller).
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "msp/mission.h"
#include "orchestrate/task_json.h"
#include "orchestrate/tasks.h"

namespace msp::api {
namespace {

using nlohmann::json;

struct TaskAddRequest {
  Namespace scope;
  Task task;
};

struct TaskListRequest {
  Namespace scope;
  std::vector<std::string> labels;
  std::vector<TaskStatus> statuses;
  bool long_term = false;
};

// task_show, task_comment and task_status: one task, and what changes.
struct TaskRequest {
  Namespace scope;
  std::string task_id;
  std::string text;    // task_comment
  std::string author;  // task_comment
  TimeMs at = 0;       // task_comment
  std::optional<TaskStatus> status;  // task_status
};

Status CheckAdd(const TaskAddRequest& r) { return NeedMission(r.scope, "tasks"); }
Status CheckList(const TaskListRequest& r) { return NeedMission(r.scope, "tasks"); }
Status CheckTask(const TaskRequest& r) { return NeedMission(r.scope, "tasks"); }

// The clearance the asker reads tasks at (CallerAsker).
Result<int> ReaderClearance(const CallContext& context, const Namespace& scope) {
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(*context.engine, scope, context.caller, scope.operator_id));
  return *asker.clearance;
}

Result<json> HandleAdd(const CallContext& context, TaskAddRequest& r) {
  MSP_ASSIGN_OR_RETURN(Task stored, AddTask(*context.engine, r.scope, r.task, context.caller.actor));
  return TaskToJson(stored);
}

Result<json> HandleList(const CallContext& context, TaskListRequest& r) {
  TaskFilter f;
  f.labels = r.labels;
  f.statuses = r.statuses;
  f.long_term_only = r.long_term;
  MSP_ASSIGN_OR_RETURN(f.clearance, ReaderClearance(context, r.scope));
  MSP_ASSIGN_OR_RETURN(std::vector<Task> tasks, ListTasks(*context.engine, r.scope, f));
  json out = json::array();
  for (const Task& t : tasks) out.push_back(TaskToJson(t));
  return json{{"tasks", std::move(out)}};
}

// The task as the asker may read it: NotFound above their clearance.
Result<Task> Readable(const CallContext& context, const TaskRequest& r) {
  MSP_ASSIGN_OR_RETURN(int clearance, ReaderClearance(context, r.scope));
  return GetTask(*context.engine, r.scope, r.task_id, clearance);
}

Result<json> HandleShow(const CallContext& context, TaskRequest& r) {
  MSP_ASSIGN_OR_RETURN(Task t, Readable(context, r));
  return TaskToJson(t);
}

Result<json> HandleComment(const CallContext& context, TaskRequest& r) {
  MSP_RETURN_IF_ERROR(Readable(context, r).status());
  TaskComment c;
  c.text = r.text;
  c.author = r.author.empty() ? r.scope.operator_id : r.author;
  c.created_at = r.at;
  MSP_ASSIGN_OR_RETURN(Task t, AddTaskComment(*context.engine, r.scope, r.task_id, c, context.caller.actor,
                                              SystemClock()->NowMs()));
  return TaskToJson(t);
}

Result<json> HandleStatus(const CallContext& context, TaskRequest& r) {
  MSP_RETURN_IF_ERROR(Readable(context, r).status());
  MSP_ASSIGN_OR_RETURN(Task t, SetTaskStatus(*context.engine, r.scope, r.task_id, *r.status, context.caller.actor));
  return TaskToJson(t);
}

json Typed(const char* type, const char* doc) { return json{{"type", type}, {"description", doc}}; }

// A task as every task operation answers it (TaskToJson).
json TaskSchema() {
  return {{"type", "object"},
          {"properties",
           {{"task_id", Typed("string", "The task's id in the mission.")},
            {"title", Typed("string", "One line.")},
            {"description", Typed("string", "What the task is about.")},
            {"labels", StringsSchema("Its labels (LONG-TERM: followed by the orchestrator).")},
            {"paths", StringsSchema("Repository paths it covers.")},
            {"components", StringsSchema("Components it covers.")},
            {"refs", StringsSchema("Other names commits use for it.")},
            {"status", {{"type", "string"}, {"enum", EnumValues(&TaskStatusName)}, {"description", "Where it stands."}}},
            {"criticality", Typed("string", "low, normal, high or critical.")},
            {"access_level", Typed("integer", "Readable by clearance this or above.")},
            {"long_term", Typed("boolean", "Labelled LONG-TERM.")},
            {"tracker", Typed("string", "The tracker it was imported from (\"\": none).")},
            {"external_id", Typed("string", "The tracker's id.")},
            {"url", Typed("string", "Where it lives in a tracker.")},
            {"comments",
             {{"type", "array"},
              {"items",
               {{"type", "object"},
                {"properties",
                 {{"id", Typed("string", "Unique in the task.")},
                  {"author", Typed("string", "Who wrote it.")},
                  {"text", Typed("string", "The comment.")},
                  {"created_at", TimeOrNullSchema("When (ISO 8601).")}}}}},
              {"description", "Oldest first."}}},
            {"id", Typed("string", "The task's record.")},
            {"opened_at", TimeOrNullSchema("When the tracker opened it (ISO 8601).")},
            {"created_at", TimeOrNullSchema("When it was added (ISO 8601).")},
            {"updated_at", TimeOrNullSchema("When it last changed (ISO 8601).")}}},
          {"required", {"task_id", "title", "status", "comments", "id"}}};
}

template <typename R, typename At>
Field<R> TaskIdField(At at) {
  return Fields<R>::Text({.name = "task_id", .doc = "The task's id in the mission (\"T-12\", \"gh-42\").",
                          .required = true, .cli = CliForm::kPositional},
                         at);
}

Field<TaskRequest> TaskIdField() {
  return TaskIdField<TaskRequest>([](TaskRequest& r) -> auto& { return r.task_id; });
}

}  // namespace

std::unique_ptr<Operation> TaskAddOperation() {
  using F = Fields<TaskAddRequest>;
  Declaration<TaskAddRequest> d;
  d.info = {
      .name = "task_add",
      .title = "Add a mission task",
      .summary = "Add a task to the mission: what the refresh orchestrator follows (label LONG-TERM puts it under "
                 "`msp orchestrate`). Paths and components say which commits and decisions touch it. A task id "
                 "the mission has is a conflict.",
      .cli_verb = "task add",
      .rest_method = "POST",
      .rest_path = "/v1/tasks",
      .mcp_tool = "task_add",
      .rest_status = 201,
      .example = {{"task_id", "T-2"},
                  {"title", "Move the billing ledger to serializable transactions"},
                  {"namespace", {{"mission", "m1"}}},
                  {"labels", {"LONG-TERM"}},
                  {"components", {"billing"}}},
      .answer = "task: {task_id, title, description, labels, paths, components, refs, status, criticality, "
                "access_level, long_term, tracker, external_id, url, comments, id, opened_at, created_at, updated_at}",
      .answer_schema = TaskSchema,
  };
  d.fields = {
      TaskIdField<TaskAddRequest>([](TaskAddRequest& r) -> auto& { return r.task.task_id; }),
      MissionScopeField<TaskAddRequest>(),
      F::Text({.name = "title", .doc = "One line, at most 300 characters.", .required = true},
              [](TaskAddRequest& r) -> auto& { return r.task.title; }),
      F::String({.name = "description", .doc = "What the task is about."},
                [](TaskAddRequest& r) -> auto& { return r.task.description; }),
      F::Strings({.name = "labels", .doc = "Labels (LONG-TERM: followed by the orchestrator).", .flag = "--label"},
                 [](TaskAddRequest& r) -> auto& { return r.task.labels; }),
      F::Strings({.name = "paths", .doc = "Repository paths it covers (\"src/nav\" covers src/nav/a.cc).",
                  .flag = "--path"},
                 [](TaskAddRequest& r) -> auto& { return r.task.paths; }),
      F::Strings({.name = "components", .doc = "Components it covers.", .flag = "--component"},
                 [](TaskAddRequest& r) -> auto& { return r.task.components; }),
      F::Strings({.name = "refs", .doc = "Other names commits use for it (\"#42\").", .flag = "--ref"},
                 [](TaskAddRequest& r) -> auto& { return r.task.refs; }),
      F::Enum({.name = "status", .doc = "Where it stands."}, &ParseTaskStatus, &TaskStatusName,
              [](TaskAddRequest& r) -> auto& { return r.task.status; }),
      F::Enum({.name = "criticality", .doc = "How much it matters."}, &ParseCriticality, &CriticalityName,
              [](TaskAddRequest& r) -> auto& { return r.task.criticality; }),
      F::Int({.name = "access_level", .doc = "Readable by clearance this or above."}, 0, kMaxAccessLevel,
             [](TaskAddRequest& r) -> auto& { return r.task.access_level; }),
      F::String({.name = "url", .doc = "Where the task lives in a tracker."},
                [](TaskAddRequest& r) -> auto& { return r.task.url; }),
  };
  d.check = &CheckAdd;
  d.handle = &HandleAdd;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> TaskListOperation() {
  using F = Fields<TaskListRequest>;
  Declaration<TaskListRequest> d;
  d.info = {
      .name = "task_list",
      .title = "List mission tasks",
      .summary = "The mission's tasks the asker may read, by task id; filtered by labels (any of them), statuses "
                 "or LONG-TERM.",
      .cli_verb = "task list",
      .rest_method = "GET",
      .rest_path = "/v1/tasks",
      .mcp_tool = "task_list",
      .read_only = true,
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}}, {"statuses", {"open"}}},
      .answer = "{tasks: [task]}",
      .answer_schema = {{"type", "object"},
                        {"properties", {{"tasks", {{"type", "array"}, {"items", TaskSchema()},
                                                   {"description", "By task id."}}}}},
                        {"required", {"tasks"}}},
  };
  d.fields = {
      MissionScopeField<TaskListRequest>(),
      F::Strings({.name = "labels", .doc = "Only tasks with one of these labels (case-insensitive).",
                  .flag = "--label", .param_alias = "label"},
                 [](TaskListRequest& r) -> auto& { return r.labels; }),
      F::Enums({.name = "statuses", .doc = "Only tasks with one of these statuses.", .flag = "--status",
                .param_alias = "status"},
               &ParseTaskStatus, &TaskStatusName, [](TaskListRequest& r) -> auto& { return r.statuses; }),
      F::Bool({.name = "long_term", .doc = "Only tasks labelled LONG-TERM."},
              [](TaskListRequest& r) -> auto& { return r.long_term; }),
  };
  d.check = &CheckList;
  d.handle = &HandleList;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> TaskShowOperation() {
  Declaration<TaskRequest> d;
  d.info = {
      .name = "task_show",
      .title = "Show a mission task",
      .summary = "One task with its comments; not found when its access level is above the asker's clearance.",
      .cli_verb = "task show",
      .rest_method = "GET",
      .rest_path = "/v1/tasks/{task_id}",
      .mcp_tool = "task_show",
      .read_only = true,
      .idempotent = true,
      .example = {{"task_id", "T-1"}, {"namespace", {{"mission", "m1"}}}},
      .answer = "task",
      .answer_schema = TaskSchema,
  };
  d.fields = {TaskIdField(), MissionScopeField<TaskRequest>()};
  d.check = &CheckTask;
  d.handle = &HandleShow;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> TaskCommentOperation() {
  using F = Fields<TaskRequest>;
  Declaration<TaskRequest> d;
  d.info = {
      .name = "task_comment",
      .title = "Comment on a mission task",
      .summary = "Append a comment to a task the asker may read (comments count towards its refresh priority). "
                 "Answers the task with its comments.",
      .cli_verb = "task comment",
      .rest_method = "POST",
      .rest_path = "/v1/tasks/{task_id}/comments",
      .mcp_tool = "task_comment",
      .rest_status = 201,
      .example = {{"task_id", "T-1"},
                  {"text", "The ledger's nightly export now runs after the reconciliation."},
                  {"namespace", {{"mission", "m1"}, {"operator", "ann"}}},
                  {"at", "2026-11-30T09:00:00Z"}},
      .answer = "task",
      .answer_schema = TaskSchema,
  };
  d.fields = {
      TaskIdField(),
      F::Text({.name = "text", .doc = "The comment, at most 16,000 bytes.", .required = true,
               .cli = CliForm::kPositional},
              [](TaskRequest& r) -> auto& { return r.text; }),
      MissionScopeField<TaskRequest>(),
      F::String({.name = "author", .doc = "Who wrote it (default: the namespace's operator)."},
                [](TaskRequest& r) -> auto& { return r.author; }),
      F::Time({.name = "at", .doc = "When it was written (ISO 8601; default now)."},
              [](TaskRequest& r) -> auto& { return r.at; }),
  };
  d.check = &CheckTask;
  d.handle = &HandleComment;
  return Declare(std::move(d));
}

std::unique_ptr<Operation> TaskStatusOperation() {
  using F = Fields<TaskRequest>;
  Declaration<TaskRequest> d;
  d.info = {
      .name = "task_status",
      .title = "Set a mission task's status",
      .summary = "Move a task the asker may read to open, in_progress, done or cancelled (the same status twice "
                 "changes nothing). Answers the task.",
      .cli_verb = "task status",
      .rest_method = "POST",
      .rest_path = "/v1/tasks/{task_id}/status",
      .mcp_tool = "task_status",
      .idempotent = true,
      .example = {{"task_id", "T-1"}, {"status", "in_progress"}, {"namespace", {{"mission", "m1"}}}},
      .answer = "task",
      .answer_schema = TaskSchema,
  };
  d.fields = {
      TaskIdField(),
      F::OptionalEnum({.name = "status", .doc = "The new status.", .required = true, .cli = CliForm::kPositional},
                      &ParseTaskStatus, &TaskStatusName, [](TaskRequest& r) -> auto& { return r.status; }),
      MissionScopeField<TaskRequest>(),
  };
  d.check = &CheckTask;
  d.handle = &HandleStatus;
  return Declare(std::move(d));
}

}  // namespace msp::api
