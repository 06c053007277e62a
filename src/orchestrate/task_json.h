// JSON forms of tasks and of the orchestrator's reports, for the CLI
// (--json) and the import parsers. Internal header (nlohmann::json allowed).
#ifndef MSP_ORCHESTRATE_TASK_JSON_H_
#define MSP_ORCHESTRATE_TASK_JSON_H_

#include <nlohmann/json.hpp>

#include "orchestrate/orchestrator.h"
#include "orchestrate/tasks.h"

namespace msp {

// The body fields (see tasks.h) plus id, criticality, access_level,
// created_at and updated_at (ISO 8601).
nlohmann::json TaskToJson(const Task& t);
nlohmann::json TaskImportReportToJson(const TaskImportReport& r);
// One task of the orchestrator's plan (`msp orchestrate --plan --json`, GET
// /v1/reports/plan): {task_id, title, criticality, priority, due, reason,
// commits, comments, hours_since_pull, hours_since_refresh,
// never_refreshed, last_refresh_at}.
nlohmann::json TaskPlanToJson(const TaskPlan& p);

}  // namespace msp

#endif  // MSP_ORCHESTRATE_TASK_JSON_H_
