// GitHub issue exports and Plane's work-items API -> tasks.
#include "orchestrate/trackers.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "util/text.h"
#include "util/time.h"

namespace msp {
namespace {

using nlohmann::json;

// Tracker times: ISO 8601 with any number of fractional digits (Plane sends
// microseconds); cut to milliseconds for ParseIso8601. 0 when absent or
// unreadable.
TimeMs TrackerTime(const json& v) {
  if (!v.is_string()) return 0;
  std::string s = v.get<std::string>();
  const size_t dot = s.find('.');
  if (dot != std::string::npos) {
    size_t end = dot + 1;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
    std::string frac = s.substr(dot + 1, end - dot - 1);
    frac = frac.substr(0, 3);
    while (frac.size() < 3) frac += '0';
    s = s.substr(0, dot + 1) + frac + s.substr(end);
  }
  Result<TimeMs> t = ParseIso8601(s);
  return t.ok() ? *t : 0;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return it->dump();
}

// The first line of `s`, for one-line fields.
std::string FirstLine(const std::string& s) {
  const size_t nl = s.find_first_of("\r\n");
  return std::string(TrimAsciiSpace(std::string_view(s).substr(0, nl)));
}

}  // namespace

std::string StripHtml(std::string_view html) {
  std::string out;
  out.reserve(html.size());
  size_t i = 0;
  while (i < html.size()) {
    const char c = html[i];
    if (c == '<') {
      const size_t close = html.find('>', i);
      if (close == std::string_view::npos) break;
      std::string tag(html.substr(i + 1, close - i - 1));
      for (char& t : tag) t = static_cast<char>(std::tolower(static_cast<unsigned char>(t)));
      const size_t from = !tag.empty() && tag[0] == '/' ? 1 : 0;
      const size_t to = tag.find_first_of(" \t/", from);
      const std::string name = tag.substr(from, to == std::string::npos ? std::string::npos : to - from);
      if (name == "br" || name == "p" || name == "div" || name == "li" || name == "h1" || name == "h2" ||
          name == "h3" || name == "tr") {
        if (!out.empty() && out.back() != '\n') out += '\n';
      }
      i = close + 1;
      continue;
    }
    if (c == '&') {
      static const std::pair<std::string_view, std::string_view> kEntities[] = {
          {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", " "}};
      bool done = false;
      for (const auto& [entity, text] : kEntities) {
        if (html.substr(i, entity.size()) == entity) {
          out += text;
          i += entity.size();
          done = true;
          break;
        }
      }
      if (done) continue;
    }
    out += c;
    ++i;
  }
  return std::string(TrimAsciiSpace(out));
}

Result<std::vector<Task>> ParseGithubIssues(std::string_view json_text, std::string_view id_prefix) {
  json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded()) return Status::InvalidArgument("GitHub export: not JSON");
  if (doc.is_object() && doc.contains("issues")) doc = doc["issues"];
  if (!doc.is_array()) return Status::InvalidArgument("GitHub export: expected an array of issues");
  std::vector<Task> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const json& issue = doc[i];
    const std::string where = "GitHub export: issue " + std::to_string(i);
    if (!issue.is_object()) return Status::InvalidArgument(where + " is not an object");
    if (issue.contains("pull_request")) continue;
    if (!issue.contains("number") || !issue["number"].is_number_integer()) {
      return Status::InvalidArgument(where + " has no integer \"number\"");
    }
    const std::string number = std::to_string(issue["number"].get<int64_t>());
    Task t;
    t.task_id = std::string(id_prefix) + number;
    t.refs = {"#" + number};
    t.title = FirstLine(Str(issue, "title"));
    if (t.title.empty()) return Status::InvalidArgument(where + " (#" + number + ") has no title");
    t.description = Str(issue, "body");
    if (issue.contains("labels") && issue["labels"].is_array()) {
      for (const json& l : issue["labels"]) {
        std::string name = l.is_string() ? l.get<std::string>() : (l.is_object() ? Str(l, "name") : "");
        if (!name.empty()) t.labels.push_back(FirstLine(name));
      }
    }
    const std::string state = Str(issue, "state");
    if (state == "closed") {
      t.status = Str(issue, "state_reason") == "not_planned" ? TaskStatus::kCancelled : TaskStatus::kDone;
    } else if (state == "open" || state.empty()) {
      t.status = TaskStatus::kOpen;
    } else {
      return Status::InvalidArgument(where + " (#" + number + ") has an unknown state '" + state + "'");
    }
    t.tracker = "github";
    t.external_id = number;
    t.url = Str(issue, "html_url");
    t.opened_at = TrackerTime(issue.value("created_at", json()));
    if (issue.contains("comments") && issue["comments"].is_array()) {
      for (const json& c : issue["comments"]) {
        if (!c.is_object()) return Status::InvalidArgument(where + ": a comment is not an object");
        TaskComment tc;
        tc.id = Str(c, "id");
        if (c.contains("user") && c["user"].is_object()) tc.author = Str(c["user"], "login");
        tc.text = Str(c, "body");
        tc.created_at = TrackerTime(c.value("created_at", json()));
        if (tc.id.empty()) tc.id = "gh-comment-" + std::to_string(t.comments.size() + 1);
        if (tc.text.empty()) continue;
        t.comments.push_back(std::move(tc));
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

// GETs every page of a Plane list endpoint: results of {"results": [...],
// "next_cursor", "next_page_results"} pages, or a plain array.
Result<std::vector<json>> PlaneList(const net::HttpClient& http, const std::string& path, int per_page) {
  std::vector<json> out;
  std::string cursor;
  for (int page = 0; page < 10000; ++page) {
    std::string url = path + "?per_page=" + std::to_string(per_page);
    if (!cursor.empty()) url += "&cursor=" + cursor;
    MSP_ASSIGN_OR_RETURN(net::HttpResponse r, http.Get(url));
    if (r.status < 200 || r.status >= 300) return net::HttpStatusError(http.base_url().Join(url), r);
    json body = json::parse(r.body, nullptr, false);
    if (body.is_array()) {
      for (json& x : body) out.push_back(std::move(x));
      return out;
    }
    if (!body.is_object() || !body.contains("results") || !body["results"].is_array()) {
      return Status::InvalidArgument("Plane: " + http.base_url().Join(url) + " did not return a results list");
    }
    for (json& x : body["results"]) out.push_back(std::move(x));
    const bool more = body.value("next_page_results", false);
    const std::string next = Str(body, "next_cursor");
    if (!more || next.empty() || next == cursor) return out;
    cursor = next;
  }
  return Status::InvalidArgument("Plane: " + path + " has more than 10,000 pages");
}

Criticality PlanePriority(const std::string& p) {
  if (p == "urgent") return Criticality::kCritical;
  if (p == "high") return Criticality::kHigh;
  if (p == "low") return Criticality::kLow;
  return Criticality::kNormal;
}

TaskStatus PlaneGroup(const std::string& group) {
  if (group == "started") return TaskStatus::kInProgress;
  if (group == "completed") return TaskStatus::kDone;
  if (group == "cancelled") return TaskStatus::kCancelled;
  return TaskStatus::kOpen;
}

std::string IdOf(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object()) return Str(v, "id");
  return "";
}

}  // namespace

Result<std::vector<Task>> FetchPlaneWorkItems(const PlaneSource& source) {
  if (source.workspace.empty() || source.project_id.empty()) {
    return Status::InvalidArgument("Plane: the workspace slug and the project id are required "
                                   "(orchestrate.plane_workspace, orchestrate.plane_project)");
  }
  if (source.per_page < 1 || source.per_page > 100) return Status::InvalidArgument("Plane: per_page must be 1..100");
  net::HttpClientOptions ho;
  std::string base = source.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  ho.base_url = base + "/api/v1";
  if (!source.api_key.empty()) ho.headers.push_back({"X-API-Key", source.api_key});
  ho.read_timeout_ms = source.timeout_ms;
  ho.max_retries = source.max_retries;
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<net::HttpClient> http, net::HttpClient::Create(std::move(ho)));
  const std::string project = "/workspaces/" + source.workspace + "/projects/" + source.project_id;

  MSP_ASSIGN_OR_RETURN(net::HttpResponse pr, http->Get(project + "/"));
  if (pr.status < 200 || pr.status >= 300) return net::HttpStatusError(http->base_url().Join(project + "/"), pr);
  json pj = json::parse(pr.body, nullptr, false);
  if (!pj.is_object()) return Status::InvalidArgument("Plane: the project reply is not a JSON object");
  const std::string identifier = Str(pj, "identifier");

  std::map<std::string, std::string> label_names;
  MSP_ASSIGN_OR_RETURN(std::vector<json> labels, PlaneList(*http, project + "/labels/", source.per_page));
  for (const json& l : labels) label_names[Str(l, "id")] = Str(l, "name");
  std::map<std::string, std::string> state_groups;
  MSP_ASSIGN_OR_RETURN(std::vector<json> states, PlaneList(*http, project + "/states/", source.per_page));
  for (const json& s : states) state_groups[Str(s, "id")] = Str(s, "group");

  MSP_ASSIGN_OR_RETURN(std::vector<json> items, PlaneList(*http, project + "/work-items/", source.per_page));
  std::vector<Task> out;
  for (const json& item : items) {
    if (!item.is_object()) return Status::InvalidArgument("Plane: a work item is not an object");
    const std::string uuid = Str(item, "id");
    const std::string seq = Str(item, "sequence_id");
    if (uuid.empty() || seq.empty()) return Status::InvalidArgument("Plane: a work item has no id or sequence_id");
    Task t;
    const std::string key = (identifier.empty() ? std::string("PLANE") : identifier) + "-" + seq;
    t.task_id = key;
    t.refs = {key};
    t.title = FirstLine(Str(item, "name"));
    if (t.title.empty()) return Status::InvalidArgument("Plane: work item " + key + " has no name");
    t.description = Str(item, "description_stripped");
    if (t.description.empty()) t.description = StripHtml(Str(item, "description_html"));
    if (item.contains("labels") && item["labels"].is_array()) {
      for (const json& l : item["labels"]) {
        std::string name = l.is_object() ? Str(l, "name") : "";
        if (name.empty()) {
          auto it = label_names.find(IdOf(l));
          if (it != label_names.end()) name = it->second;
        }
        if (!name.empty()) t.labels.push_back(FirstLine(name));
      }
    }
    const json state = item.value("state", json());
    std::string group = state.is_object() ? Str(state, "group") : "";
    if (group.empty()) {
      auto it = state_groups.find(IdOf(state));
      if (it != state_groups.end()) group = it->second;
    }
    t.status = PlaneGroup(group);
    t.criticality = PlanePriority(Str(item, "priority"));
    t.tracker = "plane";
    t.external_id = uuid;
    t.url = base + "/" + source.workspace + "/projects/" + source.project_id + "/issues/" + uuid;
    t.opened_at = TrackerTime(item.value("created_at", json()));
    if (source.with_comments) {
      MSP_ASSIGN_OR_RETURN(std::vector<json> comments,
                           PlaneList(*http, project + "/work-items/" + uuid + "/comments/", source.per_page));
      for (const json& c : comments) {
        TaskComment tc;
        tc.id = Str(c, "id");
        const json actor = c.value("actor_detail", c.value("actor", json()));
        tc.author = actor.is_object() ? Str(actor, "display_name") : IdOf(actor);
        tc.text = Str(c, "comment_stripped");
        if (tc.text.empty()) tc.text = StripHtml(Str(c, "comment_html"));
        tc.created_at = TrackerTime(c.value("created_at", json()));
        if (tc.id.empty() || tc.text.empty()) continue;
        t.comments.push_back(std::move(tc));
      }
      std::stable_sort(t.comments.begin(), t.comments.end(),
                       [](const TaskComment& a, const TaskComment& b) { return a.created_at < b.created_at; });
    }
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const Task& a, const Task& b) { return a.task_id < b.task_id; });
  return out;
}

}  // namespace msp
