// Tasks: add / list / comment with compare-and-swap, the GitHub export
// import, and the Plane import against a scripted server speaking Plane's
// work-items API (cpp-httplib on a real socket).
#include <gtest/gtest.h>

#include <httplib.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "orchestrate/orchestrate_test_util.h"
#include "orchestrate/tasks.h"
#include "orchestrate/trackers.h"

namespace msp {
namespace {

using nlohmann::json;
using testing::kDay;

class TasksTest : public testing::EngineFixture {};

Task MakeTask(const std::string& id, const std::string& title) {
  Task t;
  t.task_id = id;
  t.title = title;
  t.labels = {"LONG-TERM", "nav"};
  t.paths = {"src/nav"};
  t.components = {"navigation"};
  return t;
}

TEST_F(TasksTest, AddGetListAndDuplicates) {
  ASSERT_OK_AND_ASSIGN(Task a, AddTask(*engine_, mission_, MakeTask("T-1", "Route planner rewrite"), "ann"));
  EXPECT_EQ(a.task_id, "T-1");
  EXPECT_TRUE(a.IsLongTerm());
  EXPECT_GT(a.seq, 0);
  Task b = MakeTask("T-2", "Short fix");
  b.labels = {"bug"};
  ASSERT_OK(AddTask(*engine_, mission_, b, "ann").status());
  Result<Task> dup = AddTask(*engine_, mission_, MakeTask("T-1", "again"), "ann");
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);

  ASSERT_OK_AND_ASSIGN(Task got, GetTask(*engine_, mission_, "T-1"));
  EXPECT_EQ(got.title, "Route planner rewrite");
  EXPECT_EQ(got.paths, (std::vector<std::string>{"src/nav"}));
  EXPECT_EQ(GetTask(*engine_, mission_, "T-9").status().code(), StatusCode::kNotFound);

  ASSERT_OK_AND_ASSIGN(std::vector<Task> all, ListTasks(*engine_, mission_, {}));
  ASSERT_EQ(all.size(), 2u);
  TaskFilter lt;
  lt.long_term_only = true;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> long_term, ListTasks(*engine_, mission_, lt));
  ASSERT_EQ(long_term.size(), 1u);
  EXPECT_EQ(long_term[0].task_id, "T-1");
  TaskFilter by_label;
  by_label.labels = {"BUG"};
  ASSERT_OK_AND_ASSIGN(std::vector<Task> bugs, ListTasks(*engine_, mission_, by_label));
  ASSERT_EQ(bugs.size(), 1u);
  EXPECT_EQ(bugs[0].task_id, "T-2");

  // Another mission does not see them; a mission is required.
  Namespace other = mission_;
  other.mission = "m2";
  ASSERT_OK_AND_ASSIGN(std::vector<Task> none, ListTasks(*engine_, other, {}));
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(ListTasks(*engine_, Namespace{}, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(TasksTest, ReadsHonourTheClearance) {
  Task secret = MakeTask("T-5", "Classified route");
  secret.access_level = 5;
  ASSERT_OK(AddTask(*engine_, mission_, secret, "ann").status());
  ASSERT_OK(AddTask(*engine_, mission_, MakeTask("T-6", "Open route"), "ann").status());
  TaskFilter low;
  low.clearance = 3;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> seen, ListTasks(*engine_, mission_, low));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].task_id, "T-6");
  EXPECT_EQ(GetTask(*engine_, mission_, "T-5", 3).status().code(), StatusCode::kNotFound);
  ASSERT_OK_AND_ASSIGN(Task got, GetTask(*engine_, mission_, "T-5", 5));
  EXPECT_EQ(got.access_level, 5);
  ASSERT_OK_AND_ASSIGN(std::vector<Task> all, ListTasks(*engine_, mission_, {}));
  EXPECT_EQ(all.size(), 2u);  // a trusted caller (the orchestrator) sees every task
}

TEST_F(TasksTest, ValidationNamesTheField) {
  Task t = MakeTask("has space", "x");
  EXPECT_NE(AddTask(*engine_, mission_, t, "ann").status().message().find("task id"), std::string::npos);
  t = MakeTask("T-1", "");
  EXPECT_NE(AddTask(*engine_, mission_, t, "ann").status().message().find("title"), std::string::npos);
  t = MakeTask("T-1", "ok");
  t.components = {"two words"};
  EXPECT_NE(AddTask(*engine_, mission_, t, "ann").status().message().find("components"), std::string::npos);
  t = MakeTask("T-1", "ok");
  t.access_level = 10;
  EXPECT_EQ(AddTask(*engine_, mission_, t, "ann").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(TasksTest, CommentsFromConcurrentWritersAreAllKept) {
  ASSERT_OK(AddTask(*engine_, mission_, MakeTask("T-1", "Route planner"), "ann").status());
  constexpr int kThreads = 4;
  constexpr int kEach = 5;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < kEach; ++k) {
        TaskComment c;
        c.author = "w" + std::to_string(i);
        c.text = "note " + std::to_string(k);
        EXPECT_TRUE(AddTaskComment(*engine_, mission_, "T-1", c, "w", clock_->NowMs()).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_OK_AND_ASSIGN(Task t, GetTask(*engine_, mission_, "T-1"));
  ASSERT_EQ(t.comments.size(), static_cast<size_t>(kThreads * kEach));
  std::set<std::string> ids;
  for (const TaskComment& c : t.comments) ids.insert(c.id);
  EXPECT_EQ(ids.size(), t.comments.size());
  ASSERT_OK_AND_ASSIGN(Task done, SetTaskStatus(*engine_, mission_, "T-1", TaskStatus::kDone, "ann"));
  EXPECT_EQ(done.status, TaskStatus::kDone);
  EXPECT_EQ(done.comments.size(), t.comments.size());
}

constexpr const char* kGithubExport = R"([
  {"number": 42, "title": "Long-term: harden the route planner", "body": "Covers src/nav.",
   "labels": [{"name": "LONG-TERM"}, {"name": "nav"}], "state": "open",
   "html_url": "https://github.com/o/r/issues/42", "created_at": "2026-02-01T10:00:00Z",
   "comments": [{"id": 9001, "user": {"login": "bob"}, "body": "Should we keep A*?",
                 "created_at": "2026-02-03T08:00:00Z"}]},
  {"number": 43, "title": "Closed as not planned", "body": null, "labels": ["wontfix"],
   "state": "closed", "state_reason": "not_planned", "comments": 3},
  {"number": 44, "title": "A pull request", "pull_request": {"url": "x"}, "state": "open"}
])";

TEST_F(TasksTest, GithubExportMapsIssuesToTasks) {
  ASSERT_OK_AND_ASSIGN(std::vector<Task> tasks, ParseGithubIssues(kGithubExport));
  ASSERT_EQ(tasks.size(), 2u);  // the pull request is skipped
  const Task& t = tasks[0];
  EXPECT_EQ(t.task_id, "gh-42");
  EXPECT_EQ(t.refs, (std::vector<std::string>{"#42"}));
  EXPECT_EQ(t.title, "Long-term: harden the route planner");
  EXPECT_EQ(t.description, "Covers src/nav.");
  EXPECT_EQ(t.labels, (std::vector<std::string>{"LONG-TERM", "nav"}));
  EXPECT_TRUE(t.IsLongTerm());
  EXPECT_EQ(t.status, TaskStatus::kOpen);
  EXPECT_EQ(t.url, "https://github.com/o/r/issues/42");
  EXPECT_EQ(t.opened_at, *ParseIso8601("2026-02-01T10:00:00Z"));
  ASSERT_EQ(t.comments.size(), 1u);
  EXPECT_EQ(t.comments[0].id, "9001");
  EXPECT_EQ(t.comments[0].author, "bob");
  EXPECT_EQ(t.comments[0].created_at, *ParseIso8601("2026-02-03T08:00:00Z"));
  EXPECT_EQ(tasks[1].status, TaskStatus::kCancelled);
  EXPECT_EQ(tasks[1].labels, (std::vector<std::string>{"wontfix"}));
  EXPECT_TRUE(tasks[1].comments.empty());  // a comment count, not comments

  EXPECT_EQ(ParseGithubIssues("{").status().code(), StatusCode::kInvalidArgument);
  Result<std::vector<Task>> bad = ParseGithubIssues(R"([{"title": "no number"}])");
  EXPECT_NE(bad.status().message().find("issue 0"), std::string::npos);

  // Importing twice: added, then unchanged; a new tracker comment updates
  // and local comments and paths stay.
  ASSERT_OK_AND_ASSIGN(TaskImportReport r1, UpsertTasks(*engine_, mission_, tasks, "import"));
  EXPECT_EQ(r1.added, 2);
  ASSERT_OK_AND_ASSIGN(TaskImportReport r2, UpsertTasks(*engine_, mission_, tasks, "import"));
  EXPECT_EQ(r2.unchanged, 2);
  TaskComment local;
  local.text = "local note";
  ASSERT_OK(AddTaskComment(*engine_, mission_, "gh-42", local, "ann", clock_->NowMs()).status());
  std::vector<Task> again = tasks;
  again[0].comments.push_back({"9002", "carol", "Yes, keep it.", *ParseIso8601("2026-02-04T08:00:00Z")});
  ASSERT_OK_AND_ASSIGN(TaskImportReport r3, UpsertTasks(*engine_, mission_, again, "import"));
  EXPECT_EQ(r3.updated, 1);
  EXPECT_EQ(r3.unchanged, 1);
  ASSERT_OK_AND_ASSIGN(Task stored, GetTask(*engine_, mission_, "gh-42"));
  ASSERT_EQ(stored.comments.size(), 3u);
  EXPECT_EQ(stored.comments[1].id, "9002");
  EXPECT_EQ(stored.comments[2].text, "local note");
}

// A scripted Plane server: one project "WEB" with three work items over two
// pages, labels and states by id, comments on one item. Requests without
// the right X-API-Key get 401.
class PlaneServer {
 public:
  PlaneServer() {
    const std::string project = "/api/v1/workspaces/acme/projects/p-1";
    server_.Get(project + "/", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorised(req, res)) return;
      res.set_content(json{{"id", "p-1"}, {"identifier", "WEB"}, {"name", "Web"}}.dump(), "application/json");
    });
    server_.Get(project + "/labels/", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorised(req, res)) return;
      res.set_content(Page(json::array({{{"id", "l-1"}, {"name", "LONG-TERM"}}, {{"id", "l-2"}, {"name", "ui"}}}),
                           "", false)
                          .dump(),
                      "application/json");
    });
    server_.Get(project + "/states/", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorised(req, res)) return;
      res.set_content(Page(json::array({{{"id", "s-1"}, {"group", "started"}}, {{"id", "s-2"}, {"group", "completed"}}}),
                           "", false)
                          .dump(),
                      "application/json");
    });
    server_.Get(project + "/work-items/", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorised(req, res)) return;
      const std::string cursor = req.has_param("cursor") ? req.get_param_value("cursor") : "";
      {
        std::lock_guard<std::mutex> lock(mu_);
        cursors_.push_back(cursor);
        per_page_ = req.get_param_value("per_page");
      }
      json page1 = json::array(
          {{{"id", "w-1"}, {"sequence_id", 7}, {"name", "Sync engine overhaul"},
            {"description_html", "<p>Rework <b>sync</b> &amp; retry.</p>"}, {"labels", {"l-1", "l-2"}},
            {"state", "s-1"}, {"priority", "urgent"}, {"created_at", "2026-02-10T12:00:00.123456Z"}},
           {{"id", "w-2"}, {"sequence_id", 8}, {"name", "Fix typo"}, {"labels", json::array()}, {"state", "s-2"},
            {"priority", "none"}, {"created_at", "2026-02-11T12:00:00Z"}}});
      json page2 = json::array({{{"id", "w-3"}, {"sequence_id", 9}, {"name", "Expanded labels"},
                                  {"description_stripped", "Plain."},
                                  {"labels", {{{"id", "l-1"}, {"name", "LONG-TERM"}}}},
                                  {"state", {{"id", "s-x"}, {"group", "backlog"}}}, {"priority", "low"}}});
      if (cursor.empty()) {
        res.set_content(Page(page1, "2:1:0", true).dump(), "application/json");
      } else if (cursor == "2:1:0") {
        res.set_content(Page(page2, "2:2:0", false).dump(), "application/json");
      } else {
        res.status = 400;
      }
    });
    server_.Get(project + "/work-items/w-1/comments/", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorised(req, res)) return;
      res.set_content(Page(json::array({{{"id", "c-2"}, {"comment_html", "<p>Do we need offline mode?</p>"},
                                         {"actor_detail", {{"display_name", "dana"}}},
                                         {"created_at", "2026-02-12T09:00:00Z"}},
                                        {{"id", "c-1"}, {"comment_stripped", "Started."}, {"actor", "u-1"},
                                         {"created_at", "2026-02-11T09:00:00Z"}}}),
                           "", false)
                          .dump(),
                      "application/json");
    });
    server_.Get(R"(/api/v1/workspaces/acme/projects/p-1/work-items/w-\d/comments/)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  if (!Authorised(req, res)) return;
                  res.set_content(Page(json::array(), "", false).dump(), "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~PlaneServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> cursors() {
    std::lock_guard<std::mutex> lock(mu_);
    return cursors_;
  }
  std::string per_page() {
    std::lock_guard<std::mutex> lock(mu_);
    return per_page_;
  }

 private:
  static json Page(json results, const std::string& next, bool more) {
    return json{{"next_cursor", next.empty() ? "100:1:0" : next},
                {"prev_cursor", "100:-1:1"},
                {"next_page_results", more},
                {"prev_page_results", false},
                {"count", results.size()},
                {"total_pages", 1},
                {"total_results", results.size()},
                {"extra_stats", nullptr},
                {"results", results}};
  }
  bool Authorised(const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("X-API-Key") == "plane-key") return true;
    res.status = 401;
    res.set_content(R"({"error": "Invalid API key"})", "application/json");
    return false;
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> cursors_;
  std::string per_page_;
};

TEST_F(TasksTest, PlaneImportFollowsCursorsAndMapsFields) {
  PlaneServer plane;
  PlaneSource source;
  source.base_url = plane.url();
  source.api_key = "plane-key";
  source.workspace = "acme";
  source.project_id = "p-1";
  source.per_page = 2;
  source.max_retries = 0;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> tasks, FetchPlaneWorkItems(source));
  EXPECT_EQ(plane.cursors(), (std::vector<std::string>{"", "2:1:0"}));
  EXPECT_EQ(plane.per_page(), "2");
  ASSERT_EQ(tasks.size(), 3u);
  const Task& t = tasks[0];
  EXPECT_EQ(t.task_id, "WEB-7");
  EXPECT_EQ(t.refs, (std::vector<std::string>{"WEB-7"}));
  EXPECT_EQ(t.title, "Sync engine overhaul");
  EXPECT_EQ(t.description, "Rework sync & retry.");
  EXPECT_EQ(t.labels, (std::vector<std::string>{"LONG-TERM", "ui"}));
  EXPECT_EQ(t.status, TaskStatus::kInProgress);
  EXPECT_EQ(t.criticality, Criticality::kCritical);
  EXPECT_EQ(t.tracker, "plane");
  EXPECT_EQ(t.external_id, "w-1");
  EXPECT_EQ(t.opened_at, *ParseIso8601("2026-02-10T12:00:00.123Z"));
  ASSERT_EQ(t.comments.size(), 2u);  // oldest first
  EXPECT_EQ(t.comments[0].id, "c-1");
  EXPECT_EQ(t.comments[0].author, "u-1");
  EXPECT_EQ(t.comments[1].author, "dana");
  EXPECT_EQ(t.comments[1].text, "Do we need offline mode?");
  EXPECT_EQ(tasks[1].task_id, "WEB-8");
  EXPECT_EQ(tasks[1].status, TaskStatus::kDone);
  EXPECT_TRUE(tasks[1].labels.empty());
  EXPECT_EQ(tasks[2].labels, (std::vector<std::string>{"LONG-TERM"}));
  EXPECT_EQ(tasks[2].status, TaskStatus::kOpen);
  EXPECT_EQ(tasks[2].description, "Plain.");
  EXPECT_EQ(tasks[2].criticality, Criticality::kLow);

  ASSERT_OK_AND_ASSIGN(TaskImportReport report, UpsertTasks(*engine_, mission_, tasks, "plane"));
  EXPECT_EQ(report.added, 3);
  TaskFilter lt;
  lt.long_term_only = true;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> long_term, ListTasks(*engine_, mission_, lt));
  ASSERT_EQ(long_term.size(), 2u);
  EXPECT_EQ(long_term[0].task_id, "WEB-7");

  source.api_key = "wrong";
  Result<std::vector<Task>> denied = FetchPlaneWorkItems(source);
  EXPECT_EQ(denied.status().code(), StatusCode::kFailedPrecondition) << denied.status().ToString();
}

TEST(StripHtmlTest, TagsAndEntities) {
  EXPECT_EQ(StripHtml("<p>a &lt;b&gt;</p><p>c&nbsp;d</p>"), "a <b>\nc d");
  EXPECT_EQ(StripHtml("no tags"), "no tags");
  EXPECT_EQ(StripHtml("<br/>x<br>"), "x");
}

}  // namespace
}  // namespace msp
