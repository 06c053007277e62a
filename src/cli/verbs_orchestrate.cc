// Tasks and the push-refresh orchestrator: task add / list / show / comment /
// status / import, and `msp orchestrate` (docs/orchestrate.md).
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>

#include "cli/cli.h"
#include "msp/mission.h"
#include "orchestrate/orchestrator.h"
#include "orchestrate/task_json.h"
#include "orchestrate/tasks.h"
#include "orchestrate/trackers.h"
#include "util/time.h"

namespace msp {
namespace {

constexpr int kSeedMinIntervalH = 24;
constexpr int kSeedMaxIntervalH = 168;

using nlohmann::json;

Status NeedMissionId(Invocation& inv) {
  if (inv.ns.mission.empty()) return Usage(inv, "this verb needs --mission ID");
  return Status::Ok();
}

// A task's list of strings ("labels", ...) as "a, b".
std::string Joined(const json& list) {
  std::string out;
  for (const json& s : list) out += (out.empty() ? "" : ", ") + s.get<std::string>();
  return out;
}

std::string TextOf(const json& value) { return value.is_string() ? value.get<std::string>() : std::string(); }

// A task (task_add's answer, TaskToJson) on one line.
void PrintTaskLine(std::ostream& out, const json& t) {
  out << TextOf(t["task_id"]) << "  " << TextOf(t["status"]) << "  " << OneLine(TextOf(t["title"]), 80);
  if (!t["labels"].empty()) out << "  [" << Joined(t["labels"]) << "]";
  out << "\n";
}

void PrintTaskDetail(std::ostream& out, const json& t) {
  out << "task:        " << TextOf(t["task_id"]) << "\n"
      << "title:       " << TextOf(t["title"]) << "\n"
      << "status:      " << TextOf(t["status"]) << "\n"
      << "labels:      " << Joined(t["labels"]) << (t.value("long_term", false) ? "  (followed by the orchestrator)" : "")
      << "\n"
      << "paths:       " << Joined(t["paths"]) << "\n"
      << "components:  " << Joined(t["components"]) << "\n";
  if (!t["refs"].empty()) out << "refs:        " << Joined(t["refs"]) << "\n";
  out << "criticality: " << TextOf(t["criticality"]) << "\n"
      << "access:      " << t["access_level"].get<int64_t>() << "\n";
  if (!TextOf(t["tracker"]).empty()) {
    out << "tracker:     " << TextOf(t["tracker"]) << " " << TextOf(t["external_id"]) << " " << TextOf(t["url"]) << "\n";
  }
  out << "record:      " << TextOf(t["id"]) << "\n";
  if (!TextOf(t["description"]).empty()) out << "\n" << TextOf(t["description"]) << "\n";
  for (const json& c : t["comments"]) {
    const std::string author = TextOf(c["author"]), at = TextOf(c["created_at"]);
    out << "\n[" << TextOf(c["id"]) << "] " << (author.empty() ? "someone" : author) << ", "
        << (at.empty() ? "?" : at) << ":\n" << TextOf(c["text"]) << "\n";
  }
}

Result<std::string> ReadFileOrStdin(Invocation& inv, const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(*inv.in), {});
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

PlaneSource PlaneFrom(const Settings& o) {
  PlaneSource s;
  s.base_url = o.orchestrate.plane_url;
  s.api_key = o.orchestrate.plane_api_key;
  s.workspace = o.orchestrate.plane_workspace;
  s.project_id = o.orchestrate.plane_project;
  return s;
}

void PrintImport(Invocation& inv, const TaskImportReport& r, bool dry_run) {
  if (inv.json) {
    json j = TaskImportReportToJson(r);
    j["dry_run"] = dry_run;
    PrintJson(inv, j);
    return;
  }
  for (const TaskImportEntry& e : r.entries) {
    *inv.out << e.action << "  " << e.task_id;
    if (e.new_comments > 0) *inv.out << "  (+" << e.new_comments << " comments)";
    *inv.out << "\n";
  }
  *inv.out << (dry_run ? "would add " : "added ") << r.added << ", updated " << r.updated << ", unchanged "
           << r.unchanged << "\n";
}

json RefreshJson(const RefreshResult& r) {
  return json{{"task_id", r.task_id},         {"refresh_id", r.refresh_id},   {"summary_id", r.summary_id},
              {"lineage_id", r.lineage_id},   {"questions_id", r.questions_id}, {"priority", r.priority},
              {"reason", r.reason},           {"generator", r.generator},     {"commits", r.commits},
              {"comments", r.comments},       {"tool_changes", r.tool_changes},
              {"open_questions", r.open_questions}};
}

void PrintPlan(std::ostream& out, const std::vector<TaskPlan>& plan) {
  for (const TaskPlan& p : plan) {
    out << (p.decision.due ? "due   " : "      ") << p.task.task_id << "  priority "
        << Fixed(p.decision.priority, 2) << "  " << DueReasonName(p.decision.reason) << "  commits "
        << p.signals.commits << "  comments " << p.signals.comments << "  "
        << CriticalityName(p.task.criticality) << "\n";
  }
}

}  // namespace

// task add / list / show / comment / status: src/api's task operations
// (api/tasks.cc), printed.
Status RunTaskAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/true));
  if (!answer) return Status::Ok();
  *inv.out << "added task " << TextOf((*answer)["task_id"])
           << ((*answer).value("long_term", false) ? " (LONG-TERM)" : "") << "\n";
  return Status::Ok();
}

Status RunTaskList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  for (const json& t : (*answer)["tasks"]) PrintTaskLine(*inv.out, t);
  return Status::Ok();
}

Status RunTaskShow(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (answer) PrintTaskDetail(*inv.out, *answer);
  return Status::Ok();
}

Status RunTaskComment(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  *inv.out << "comment " << TextOf((*answer)["comments"].back()["id"]) << " added to task "
           << TextOf((*answer)["task_id"]) << "\n";
  return Status::Ok();
}

Status RunTaskStatus(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  *inv.out << "task " << TextOf((*answer)["task_id"]) << " is " << TextOf((*answer)["status"]) << "\n";
  return Status::Ok();
}

Status RunTaskImport(Invocation& inv) {
  MSP_RETURN_IF_ERROR(NeedMissionId(inv));
  const bool github = inv.flags.Has("--github");
  const bool plane = inv.flags.Has("--plane");
  if (github == plane) return Usage(inv, "give exactly one of --github FILE and --plane");
  const bool dry_run = inv.flags.Has("--dry-run");
  std::vector<Task> tasks;
  if (github) {
    MSP_ASSIGN_OR_RETURN(std::string text, ReadFileOrStdin(inv, inv.flags.Get("--github")));
    MSP_ASSIGN_OR_RETURN(tasks, ParseGithubIssues(text, inv.flags.Get("--prefix", "gh-")));
  } else {
    PlaneSource source = PlaneFrom(inv.config.options);
    if (source.base_url.empty()) {
      return Usage(inv, "--plane needs orchestrate.plane_url, plane_workspace, plane_project and plane_api_key");
    }
    MSP_ASSIGN_OR_RETURN(tasks, FetchPlaneWorkItems(source));
  }
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(TaskImportReport report, UpsertTasks(*engine, inv.ns, tasks, inv.actor, dry_run));
  PrintImport(inv, report, dry_run);
  return Status::Ok();
}

Status RunOrchestrate(Invocation& inv) {
  MSP_RETURN_IF_ERROR(NeedMissionId(inv));
  const Settings& options = inv.config.options;
  if (options.orchestrate.max_interval_h < options.orchestrate.min_interval_h) {
    return Status::InvalidArgument("orchestrate.max_interval_h (" + std::to_string(options.orchestrate.max_interval_h) +
                                   ") must be at least orchestrate.min_interval_h (" +
                                   std::to_string(options.orchestrate.min_interval_h) + ")");
  }
  // Seed 003's clamp: once per 24 h at most, once per 7 days at least.
  // Outside it only on purpose, and said every time.
  const int min_h = options.orchestrate.min_interval_h, max_h = options.orchestrate.max_interval_h;
  if (min_h < kSeedMinIntervalH || max_h > kSeedMaxIntervalH) {
    const std::string what = "orchestrate.min_interval_h = " + std::to_string(min_h) +
                             ", orchestrate.max_interval_h = " + std::to_string(max_h) +
                             " is outside seed 003's clamp (once per 24 h at most, once per 7 days (168 h) at least)";
    if (!options.orchestrate.interval_override) {
      return Status::InvalidArgument(what + "; to run outside it on purpose add --orchestrate-interval-override true "
                                            "(orchestrate.interval_override = true), and each run logs it");
    }
    *inv.err << "msp orchestrate: warning: " << what << ", allowed by orchestrate.interval_override\n";
  }
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<Summarizer> summarizer,
                       MakeConfiguredSummarizer(options, options.openai_api_key));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  Orchestrator orchestrator(*engine, inv.ns, OrchestratorConfigFrom(options), nullptr, std::move(summarizer));
  const PlaneSource plane = PlaneFrom(options);
  Namespace mission = inv.ns;
  std::string actor = inv.actor;
  // Each pass polls Plane first when it is configured (seed 003).
  auto poll_plane = [&]() -> Status {
    if (plane.base_url.empty()) return Status::Ok();
    MSP_ASSIGN_OR_RETURN(std::vector<Task> tasks, FetchPlaneWorkItems(plane));
    return UpsertTasks(*engine, mission, tasks, actor).status();
  };

  if (inv.flags.Has("--plan")) {
    MSP_ASSIGN_OR_RETURN(std::vector<TaskPlan> plan, orchestrator.Plan());
    if (inv.json) {
      json arr = json::array();
      for (const TaskPlan& p : plan) arr.push_back(TaskPlanToJson(p));
      PrintJson(inv, arr);
    } else {
      PrintPlan(*inv.out, plan);
    }
    return Status::Ok();
  }
  if (inv.flags.Has("--once")) {
    Status polled = poll_plane();
    if (!polled.ok()) *inv.err << "msp orchestrate: Plane: " << polled.ToString() << " (going on)\n";
    MSP_ASSIGN_OR_RETURN(PassReport pass, orchestrator.RunOnce());
    if (inv.json) {
      json plan = json::array();
      for (const TaskPlan& p : pass.plan) plan.push_back(TaskPlanToJson(p));
      json refreshed = json::array();
      for (const RefreshResult& r : pass.refreshed) refreshed.push_back(RefreshJson(r));
      PrintJson(inv, json{{"at", FormatIso8601(pass.at)},
                          {"degraded", pass.degraded},
                          {"plan", plan},
                          {"refreshed", refreshed},
                          {"errors", pass.errors}});
    } else {
      PrintPlan(*inv.out, pass.plan);
      for (const RefreshResult& r : pass.refreshed) {
        *inv.out << "refreshed " << r.task_id << " (" << r.reason << ", " << r.commits << " commits, " << r.comments
                 << " comments, " << r.tool_changes << " tool changes, " << r.open_questions
                 << " open questions; " << r.generator << ")\n";
      }
      for (const std::string& e : pass.errors) *inv.err << "msp orchestrate: " << e << "\n";
    }
    if (!pass.errors.empty()) inv.exit_code = kExitFailure;
    return Status::Ok();
  }
  // The long-running process: SIGINT / SIGTERM end it between passes.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop, &previous);
  *inv.err << "msp orchestrate: mission " << mission.mission << ", a pass every "
           << options.orchestrate.interval_s << " s (SIGINT or SIGTERM stops)\n";
  auto wait = [&](std::chrono::seconds interval) {
    timespec ts{static_cast<time_t>(interval.count()), 0};
    while (true) {
      const int sig = sigtimedwait(&stop, nullptr, &ts);
      if (sig == SIGINT || sig == SIGTERM) return false;
      if (sig < 0 && errno == EINTR) continue;
      return true;  // timed out: next pass
    }
  };
  Status s = RunOrchestratorLoop(orchestrator, std::chrono::seconds(options.orchestrate.interval_s), wait, inv.err,
                                 poll_plane);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return s;
}

}  // namespace msp
