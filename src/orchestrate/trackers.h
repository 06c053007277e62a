// Importing tasks from issue trackers: a JSON export of GitHub issues, and
// Plane's work-items REST API (the tracker seed 003's orchestrator polls).
// Both produce Task values (tasks.h) that UpsertTasks stores; the mappings
// are documented in docs/orchestrate.md.
#ifndef MSP_ORCHESTRATE_TRACKERS_H_
#define MSP_ORCHESTRATE_TRACKERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"
#include "orchestrate/tasks.h"

namespace msp {

// Parses a GitHub issues export: a JSON array of the REST API's issue
// objects (GET /repos/{owner}/{repo}/issues), or an object with an "issues"
// array. Per issue: number -> task id "<prefix><number>" and ref
// "#<number>"; title; body -> description; labels[].name (or plain strings)
// -> labels; state "open"/"closed" (state_reason "not_planned" ->
// cancelled) -> status; html_url -> url; created_at -> opened_at; a
// "comments" array of {id, user.login, body, created_at} -> comments (a
// number there, the REST API's comment count, is ignored). Pull requests
// (objects with "pull_request") are skipped. InvalidArgument naming the
// issue index for a malformed entry.
Result<std::vector<Task>> ParseGithubIssues(std::string_view json_text, std::string_view id_prefix = "gh-");

struct PlaneSource {
  std::string base_url;      // e.g. "https://api.plane.so" (no /api/v1)
  std::string api_key;       // sent as X-API-Key
  std::string workspace;     // workspace slug
  std::string project_id;    // project UUID
  int per_page = 100;        // 1..100
  bool with_comments = true; // one more request per work item
  int timeout_ms = 30000;
  int max_retries = 3;
};

// Reads every work item of a Plane project through its REST API:
//   GET {base}/api/v1/workspaces/{slug}/projects/{project_id}/
//       -> identifier (the work items' key prefix, "WEB")
//   GET .../projects/{project_id}/labels/        -> label id -> name
//   GET .../projects/{project_id}/states/        -> state id -> group
//   GET .../projects/{project_id}/work-items/?per_page=N[&cursor=C]
//       cursor pagination: follow next_cursor while next_page_results
//   GET .../work-items/{id}/comments/ (paginated the same way)
// Mapping: "<identifier>-<sequence_id>" -> task id (and ref); name ->
// title; description_stripped (else description_html without tags) ->
// description; labels (ids or expanded objects) -> label names; the state's
// group backlog/unstarted -> open, started -> in_progress, completed ->
// done, cancelled -> cancelled; priority urgent -> critical, high -> high,
// low -> low, else normal; created_at -> opened_at; comments: id, actor
// (display_name when expanded, else the id), comment_stripped (else
// comment_html without tags), created_at.
// Errors: the HTTP client's (FailedPrecondition for 401/403: check the API
// key), InvalidArgument for a reply that is not the expected JSON.
Result<std::vector<Task>> FetchPlaneWorkItems(const PlaneSource& source);

// Markup-free text of an HTML fragment (tags dropped, entities &amp; &lt;
// &gt; &quot; &#39; &nbsp; decoded, block tags turned into line breaks).
std::string StripHtml(std::string_view html);

}  // namespace msp

#endif  // MSP_ORCHESTRATE_TRACKERS_H_
