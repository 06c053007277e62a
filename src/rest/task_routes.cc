// The task routes of the REST API (push mode, docs/orchestrate.md): a
// mission's tasks, their comments and status. Thin faces over
// orchestrate/tasks.h, as `msp task ...`; the orchestrator process reads the
// same records. Reads serve only tasks at or below the asker's clearance
// (the request's operator in the mission's registry, capped by the key's);
// the request's caller layer (AsCaller) refuses a task above the key's
// clearance.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec/json_reader.h"
#include "msp/memory.h"
#include "msp/mission.h"
#include "orchestrate/task_json.h"
#include "orchestrate/tasks.h"
#include "rest/request_json.h"
#include "rest/rest_route.h"

namespace msp {
namespace {

using nlohmann::json;
using Reply = RestReply;

Result<Namespace> TaskMission(Namespace ns, bool body) {
  if (ns.mission.empty()) {
    return Status::InvalidArgument(body ? "field 'namespace.mission' is required: tasks belong to a mission"
                                        : "parameter 'mission' is required: tasks belong to a mission");
  }
  return ns;
}

// The clearance a read runs with (CallerAsker): the operator's, capped by
// the key's; without an operator, the key's.
Result<int> ReaderClearance(const Namespace& ns, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Asker asker, CallerAsker(r.engine(), ns, r.caller, ns.operator_id));
  return *asker.clearance;
}

Result<Reply> AddTaskRoute(RestApi& api, const RestRequest& r) {
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known({"namespace", "task_id", "title", "description", "labels", "paths", "components",
                                  "refs", "status", "criticality", "access_level", "url"}));
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromBody(r.body, r.tenant()));
  MSP_ASSIGN_OR_RETURN(ns, TaskMission(std::move(ns), /*body=*/true));
  Task t;
  MSP_RETURN_IF_ERROR(body.String("task_id", &t.task_id));
  MSP_RETURN_IF_ERROR(body.String("title", &t.title));
  MSP_RETURN_IF_ERROR(body.String("description", &t.description));
  MSP_RETURN_IF_ERROR(body.Strings("labels", &t.labels));
  MSP_RETURN_IF_ERROR(body.Strings("paths", &t.paths));
  MSP_RETURN_IF_ERROR(body.Strings("components", &t.components));
  MSP_RETURN_IF_ERROR(body.Strings("refs", &t.refs));
  MSP_RETURN_IF_ERROR(body.Enum("status", &t.status, ParseTaskStatus, TaskStatusName));
  MSP_RETURN_IF_ERROR(body.Enum("criticality", &t.criticality, ParseCriticality, CriticalityName));
  MSP_RETURN_IF_ERROR(body.Int("access_level", &t.access_level, 0, kMaxAccessLevel));
  MSP_RETURN_IF_ERROR(body.String("url", &t.url));
  MSP_ASSIGN_OR_RETURN(Task stored, AddTask(r.engine(), ns, t, api.actor()));
  return Reply::Json(201, TaskToJson(stored));
}

Result<Reply> ListTasksRoute(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromQuery(r.query, r.tenant()));
  MSP_ASSIGN_OR_RETURN(ns, TaskMission(std::move(ns), /*body=*/false));
  TaskFilter f;
  f.labels = ListParam(r.query, "label");
  MSP_ASSIGN_OR_RETURN(f.statuses, EnumParams(r.query, "status", &ParseTaskStatus, &TaskStatusName));
  MSP_ASSIGN_OR_RETURN(f.long_term_only, BoolParam(r.query, "long_term", false));
  MSP_ASSIGN_OR_RETURN(f.clearance, ReaderClearance(ns, r));
  MSP_ASSIGN_OR_RETURN(std::vector<Task> tasks, ListTasks(r.engine(), ns, f));
  json out = json::array();
  for (const Task& t : tasks) out.push_back(TaskToJson(t));
  return Reply::Json(200, {{"tasks", std::move(out)}});
}

Result<Reply> GetTaskRoute(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromQuery(r.query, r.tenant()));
  MSP_ASSIGN_OR_RETURN(ns, TaskMission(std::move(ns), /*body=*/false));
  MSP_ASSIGN_OR_RETURN(int clearance, ReaderClearance(ns, r));
  MSP_ASSIGN_OR_RETURN(Task t, GetTask(r.engine(), ns, r.param("task"), clearance));
  return Reply::Json(200, TaskToJson(t));
}

// A write to an existing task: the asker must be able to read it.
Result<Namespace> WritableTask(RestApi&, const RestRequest& r) {
  MSP_ASSIGN_OR_RETURN(Namespace ns, NamespaceFromBody(r.body, r.tenant()));
  MSP_ASSIGN_OR_RETURN(ns, TaskMission(std::move(ns), /*body=*/true));
  MSP_ASSIGN_OR_RETURN(int clearance, ReaderClearance(ns, r));
  MSP_RETURN_IF_ERROR(GetTask(r.engine(), ns, r.param("task"), clearance).status());
  return ns;
}

Result<Reply> CommentTaskRoute(RestApi& api, const RestRequest& r) {
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known({"namespace", "text", "author"}));
  TaskComment c;
  MSP_RETURN_IF_ERROR(body.String("text", &c.text));
  MSP_RETURN_IF_ERROR(body.String("author", &c.author));
  if (c.text.empty()) return Status::InvalidArgument("field 'text' is required: the comment");
  MSP_ASSIGN_OR_RETURN(Namespace ns, WritableTask(api, r));
  if (c.author.empty()) c.author = ns.operator_id;
  MSP_ASSIGN_OR_RETURN(Task t, AddTaskComment(r.engine(), ns, r.param("task"), c, api.actor(), SystemClock()->NowMs()));
  return Reply::Json(201, TaskToJson(t));
}

Result<Reply> TaskStatusRoute(RestApi& api, const RestRequest& r) {
  JsonReader body(r.body, "");
  MSP_RETURN_IF_ERROR(body.Known({"namespace", "status"}));
  if (!body.Has("status")) {
    return Status::InvalidArgument("field 'status' is required: open, in_progress, done or cancelled");
  }
  TaskStatus status = TaskStatus::kOpen;
  MSP_RETURN_IF_ERROR(body.Enum("status", &status, ParseTaskStatus, TaskStatusName));
  MSP_ASSIGN_OR_RETURN(Namespace ns, WritableTask(api, r));
  MSP_ASSIGN_OR_RETURN(Task t, SetTaskStatus(r.engine(), ns, r.param("task"), status, api.actor()));
  return Reply::Json(200, TaskToJson(t));
}

}  // namespace

std::vector<RestRoute> TaskRoutes() {
  const std::vector<std::string> ns_tenant = {"namespace.tenant"};
  return {
      {"POST", "/v1/tasks", BodyKind::kJson, ns_tenant, {}, &AddTaskRoute},
      {"GET", "/v1/tasks", BodyKind::kNone, {}, {"mission", "operator", "label", "status", "long_term"}, &ListTasksRoute},
      {"GET", "/v1/tasks/{task}", BodyKind::kNone, {}, {"mission", "operator"}, &GetTaskRoute},
      {"POST", "/v1/tasks/{task}/comments", BodyKind::kJson, ns_tenant, {}, &CommentTaskRoute},
      {"POST", "/v1/tasks/{task}/status", BodyKind::kJson, ns_tenant, {}, &TaskStatusRoute},
  };
}

}  // namespace msp
