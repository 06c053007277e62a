// One test for the three faces of every operation of src/api's table: the
// command line (msp as a process), REST and MCP (msp serve, real sockets)
// take the same field names with the same limits (the MCP input schema and
// the CLI help come from the table), answer the same request with the same
// answer, and refuse the same bad input with the same error (the command
// line naming a field by its flag). The bad inputs come from the table: each
// number one past its range, each enum a value it does not have, each time
// one that is not ISO 8601, and a field nobody declared. And one caller
// (tenant, clearance) gets the same records from every face: the engine
// enforces its clearance (msp/caller.h), not the faces.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "api/operations.h"
#include "api/schema.h"
#include "msp/types.h"
#include "tests/support/child_process.h"
#include "tests/support/test_util.h"


namespace msp {
namespace {

using nlohmann::json;

const std::string kKey = "faces-test-key-0123456789";
// A key of the same tenant limited to clearance 4: the command line's
// `--operator low` once low's clearance is 4.
const std::string kKey4 = "faces-test-key-clearance-4";
const std::string kTenant = "acme";
// The record the examples of memory_get, memory_history and memory_delete
// name (src/api/record.cc): Seed imports it.
const std::string kExampleRecord = "0190e5c2-0000-7000-8000-0000000000e1";
// The decisions the decision operations' examples name (src/api/decisions.cc):
// Seed imports them, the one about the billing ledger and its successor.
const std::string kExampleDecision = "0190e5c2-0000-7000-8000-0000000000d1";
const std::string kExampleSuccessor = "0190e5c2-0000-7000-8000-0000000000d2";
// The correction correction_show's example names (src/api/corrections.cc):
// Seed imports it, ann's about the billing component.
const std::string kExampleCorrection = "0190e5c2-0000-7000-8000-0000000000c1";
// The mission's November (the period of the report operations' examples,
// src/api/reports.cc, and of event_list's): Seed imports an incident, a
// retrieval that served the two decisions, and ann's correction of it.
const std::string kExampleEvent = "0190e5c2-0000-7000-8000-0000000000a1";
const std::string kExampleRetrieval = "0190e5c2-0000-7000-8000-0000000000f1";
const std::string kExampleLinkedCorrection = "0190e5c2-0000-7000-8000-0000000000c2";

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FacesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    data_ = dir_.path() + "/data";
    cli_data_ = data_;
  }

  void TearDown() override {
    msp::testing::Stop(serve_);
  }

  // `msp ARGS` as a process, its output in files.
  Outcome Msp(std::vector<std::string> args) {
    const std::string out = dir_.path() + "/out", err = dir_.path() + "/err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    args.insert(args.begin(), MSP_BINARY);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> env = msp::testing::EnvironmentWithoutMsp();
    Outcome run;
    pid_t pid = -1;
    if (posix_spawn(&pid, MSP_BINARY, &actions, nullptr, argv.data(), env.data()) == 0) {
      int status = 0;
      waitpid(pid, &status, 0);
      run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    posix_spawn_file_actions_destroy(&actions);
    run.out = ReadFile(out);
    run.err = ReadFile(err);
    return run;
  }

  Outcome MspIn(std::vector<std::string> args) {
    args.insert(args.end(), {"--data-dir", cli_data_, "--tenant", kTenant});
    return Msp(std::move(args));
  }

  // The records every operation's example finds.
  void Seed() {
    ASSERT_EQ(Msp({"init", "--data-dir", data_}).code, 0);
    for (const char* text : {"The user prefers dark mode in every editor", "The user keeps the editor font at 14 pt",
                             "The deploy pipeline runs on GitHub Actions runners"}) {
      Outcome w = MspIn({"write", text, "--tag", "preference"});
      ASSERT_EQ(w.code, 0) << w.err;
    }
    // The session session_steps's example opens (episode_add's adds to s1).
    for (const char* text : {"Which database holds the billing ledger?", "PostgreSQL, with serializable transactions",
                             "Then archive it every Sunday night"}) {
      Outcome e = MspIn({"episode", "add", "--session", "s2", "--text", text});
      ASSERT_EQ(e.code, 0) << e.err;
    }
    // The task the examples of task_show, task_comment and task_status name.
    Outcome t = MspIn({"task", "add", "T-1", "--mission", "m1", "--title", "Keep the billing ledger current",
                       "--component", "billing"});
    ASSERT_EQ(t.code, 0) << t.err;
    {
      std::ofstream line(dir_.path() + "/example.jsonl");
      line << R"({"id": ")" << kExampleRecord << R"(", "namespace": {"tenant": "acme"}, "kind": "fact", )"
           << R"("text": "The billing ledger is archived every Sunday night", "tags": ["preference"]})" << "\n";
      // The mission's decisions, with the ids the examples name: as `msp
      // decision add` stores them.
      line << DecisionLine(kExampleDecision, "Keep the billing ledger in PostgreSQL", "The ledger needs transactions.",
                           "The billing ledger lives in PostgreSQL with serializable transactions.",
                           "2026-11-02T09:00:00.000Z")
           << DecisionLine(kExampleSuccessor, "Partition the billing ledger by month",
                           "One table of the ledger outgrew its indexes.",
                           "The billing ledger lives in PostgreSQL, partitioned by month, with serializable "
                           "transactions.",
                           "2026-11-20T09:00:00.000Z");
      // ann's correction, as `msp correction add` stores it.
      const json correction = {
          {"id", kExampleCorrection},
          {"namespace", {{"tenant", kTenant}, {"mission", "m1"}, {"operator", "ann"}}},
          {"kind", "correction"},
          {"layer", "practitioner"},
          {"source", "operator"},
          {"text", "Correction missing_context / api_contract on billing (modified): The export needed the bucket."},
          {"body",
           {{"type", "correction"}, {"class", "missing_context"}, {"category", "api_contract"}, {"component", "billing"},
            {"outcome", "modified"}, {"summary", "The export needed the bucket."}}}};
      line << correction.dump() << "\n";
      // November's incident, retrieval and correction, as `msp event add`,
      // `msp query` and `msp correction add` store them.
      const json event = {
          {"id", kExampleEvent},
          {"namespace", {{"tenant", kTenant}, {"mission", "m1"}}},
          {"kind", "event"},
          {"layer", "workflow"},
          {"source", "mission-event"},
          {"criticality", "high"},
          {"created_at", "2026-11-03T08:00:00.000Z"},
          {"text", "The billing ledger export stalled for an hour."},
          {"body", {{"type", "incident"}, {"component", "billing"}, {"operator", "ann"}}}};
      const json retrieval = {
          {"id", kExampleRetrieval},
          {"namespace", {{"tenant", kTenant}, {"mission", "m1"}, {"session", "s-nov"}}},
          {"kind", "event"},
          {"layer", "workflow"},
          {"source", "retrieval-log"},
          {"created_at", "2026-11-04T09:00:00.000Z"},
          {"text", "retrieval log"},  // (the query writes none; an import needs one)
          {"body",
           {{"type", "retrieval"}, {"query", "which database holds the billing ledger"}, {"scope", "all"},
            {"operator", "ann"}, {"clearance", 9},
            {"served",
             {{{"id", kExampleDecision}, {"layer", "workflow"}, {"score", 0.5}, {"tokens", 40}},
              {{"id", kExampleSuccessor}, {"layer", "workflow"}, {"score", 0.25}, {"tokens", 60}}}},
            {"used", {kExampleDecision}}}}};
      const json linked = {
          {"id", kExampleLinkedCorrection},
          {"namespace", {{"tenant", kTenant}, {"mission", "m1"}, {"operator", "ann"}}},
          {"kind", "correction"},
          {"layer", "practitioner"},
          {"source", "operator"},
          {"created_at", "2026-11-04T10:00:00.000Z"},
          {"text", "Correction missing_context / data_model on billing (modified): The ledger is partitioned."},
          {"body",
           {{"type", "correction"}, {"class", "missing_context"}, {"category", "data_model"}, {"component", "billing"},
            {"outcome", "modified"}, {"summary", "The ledger is partitioned."}, {"retrieval_id", kExampleRetrieval}}}};
      line << event.dump() << "\n" << retrieval.dump() << "\n" << linked.dump() << "\n";
    }
    Outcome imported = Msp({"import", dir_.path() + "/example.jsonl", "--data-dir", data_});
    ASSERT_EQ(imported.code, 0) << imported.err;
  }

  // A decision of mission m1 about the billing component, decided by ann, as
  // a line of `msp import`.
  static std::string DecisionLine(const std::string& id, const std::string& title, const std::string& context,
                                  const std::string& decision, const std::string& decided_at) {
    const json body = {{"type", "decision"},     {"title", title},         {"context", context},
                       {"decision", decision},   {"alternatives", json::array()}, {"consequences", ""},
                       {"principles", json::array()}, {"component", "billing"}, {"status", "accepted"},
                       {"decided_by", "ann"},    {"decided_at", decided_at}};
    const json line = {{"id", id},
                       {"namespace", {{"tenant", kTenant}, {"mission", "m1"}}},
                       {"kind", "decision"},
                       {"layer", "workflow"},
                       {"source", "operator"},
                       {"text", "Decision: " + title + "\nContext: " + context + "\nDecision: " + decision},
                       {"valid_at", decided_at},
                       {"body", body}};
    return line.dump() + "\n";
  }

  // The command line of `request`, by the operation's table.
  std::vector<std::string> CliArgs(const api::OperationInfo& info, const json& request) {
    std::vector<std::string> args;
    std::istringstream verb(info.cli_verb);
    for (std::string w; verb >> w;) args.push_back(w);
    for (const api::FieldInfo& f : info.fields) {
      if (f.cli == api::CliForm::kPositional && request.contains(f.name)) args.push_back(Text(request[f.name]));
    }
    for (const auto& [name, value] : request.items()) {
      const api::FieldInfo* f = info.Find(name);
      if (f != nullptr) {
        if (f->cli != api::CliForm::kPositional) AddFlag(*f, value, &args);
      } else if (value.is_object()) {
        for (const auto& [inner, v] : value.items()) AddFlag(*info.Find(name + "." + inner), v, &args);
      } else {
        args.insert(args.end(), {"--" + name, Text(value)});  // undeclared: an unknown flag
      }
    }
    args.push_back("--json");
    return args;
  }

  static std::string Text(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

  // `text` as a query parameter's value (%XX but for letters, digits, -._~).
  static std::string Encoded(const std::string& text) {
    static const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
      if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
        out += static_cast<char>(c);
      } else {
        out += {'%', kHex[c >> 4], kHex[c & 15]};
      }
    }
    return out;
  }

  static void AddFlag(const api::FieldInfo& f, const json& v, std::vector<std::string>* args) {
    if (f.cli == api::CliForm::kNamespaceFlags) {
      for (const auto& [part, value] : v.items()) args->insert(args->end(), {"--" + part, Text(value)});
    } else if (f.type == api::FieldType::kProvenance) {
      for (const json& p : v) args->insert(args->end(), {f.Flag(), Text(p["type"]) + ":" + Text(p["ref"])});
    } else if (f.type == api::FieldType::kAlternatives) {
      for (const json& a : v) args->insert(args->end(), {f.Flag(), Text(a["option"]) + ": " + Text(a["reason"])});
    } else if (v.is_array()) {
      for (const json& item : v) args->insert(args->end(), {f.Flag(), Text(item)});
    } else if (f.type == api::FieldType::kBool && f.default_value != true) {
      if (v == true) args->push_back(f.Flag());
    } else {
      args->insert(args->end(), {f.Flag(), Text(v)});
    }
  }

  void StartServe() {
    // Without the access log: nothing reads the server's standard error
    // once it listens, and a full pipe would stop the server mid-test.
    serve_ = msp::testing::SpawnWithStderr(
        {MSP_BINARY, "serve", "--data-dir", data_, "--port", "0", "--access-log", "false", "--api-keys",
         kKey + "=" + kTenant + "," + kKey4 + "=" + kTenant + ":4"});
    ASSERT_GT(serve_.pid, 0);
    const int port = msp::testing::WaitForListening(serve_);
    ASSERT_GT(port, 0) << serve_.err;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port);
    ASSERT_NO_FATAL_FAILURE(InitMcp());
  }

  // Opens an MCP session over HTTP with key_.
  void InitMcp() {
    mcp_session_.clear();
    auto init = Post("/mcp", {{"jsonrpc", "2.0"},
                              {"id", 1},
                              {"method", "initialize"},
                              {"params",
                               {{"protocolVersion", "2025-11-25"},
                                {"capabilities", json::object()},
                                {"clientInfo", {{"name", "faces-test"}, {"version", "1"}}}}}});
    ASSERT_TRUE(init);
    mcp_session_ = init->get_header_value("Mcp-Session-Id");
    ASSERT_FALSE(mcp_session_.empty());
    ASSERT_EQ(Post("/mcp", {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}})->status, 202);
  }

  httplib::Result Post(const std::string& path, const json& body) {
    httplib::Headers h = {{"Authorization", "Bearer " + key_}};
    if (!mcp_session_.empty()) h.emplace("Mcp-Session-Id", mcp_session_);
    return client_->Post(path, h, body.dump(), "application/json");
  }

  httplib::Result Get(const std::string& path) { return client_->Get(path, {{"Authorization", "Bearer " + key_}}); }
  httplib::Result Delete(const std::string& path) {
    return client_->Delete(path, {{"Authorization", "Bearer " + key_}});
  }

  // `request` over REST as the operation's route takes it: the fields the
  // path names in the path, and a JSON body (POST, all fields) or the other
  // fields as parameters (GET, DELETE).
  httplib::Result Rest(const api::OperationInfo& info, const json& request) {
    std::string path = info.rest_path;
    if (info.rest_method == "POST") {
      // A field the path names goes there (the body may repeat it), and so
      // does a namespace part (POST /v1/sessions/{session}/end).
      for (const auto& [name, value] : request.items()) {
        FillPath(&path, name, value);
        const api::FieldInfo* f = info.Find(name);
        if (f == nullptr || f->type != api::FieldType::kNamespace || !value.is_object()) continue;
        for (const auto& [part, v] : value.items()) FillPath(&path, part, v);
      }
      return Post(path, request);
    }
    std::string query;
    for (const auto& [name, value] : request.items()) {
      const api::FieldInfo* f = info.Find(name);
      if (FillPath(&path, name, value)) continue;
      if (f != nullptr && f->type == api::FieldType::kNamespace) {
        // A part the path names (/v1/sessions/{session}/steps) goes there.
        for (const auto& [part, v] : value.items()) {
          if (!FillPath(&path, part, v)) query += (query.empty() ? "?" : "&") + part + "=" + Text(v);
        }
      } else if (value.is_object()) {  // a group: its fields are parameters of their names
        for (const auto& [inner, v] : value.items()) AddParam(inner, v, &query);
      } else {
        AddParam(name, value, &query);
      }
    }
    return info.rest_method == "DELETE" ? Delete(path + query) : Get(path + query);
  }

  // Puts `value` where `path` names `name` ("{name}"); false when it names
  // no such thing.
  static bool FillPath(std::string* path, const std::string& name, const json& value) {
    const size_t at = path->find("{" + name + "}");
    if (at == std::string::npos) return false;
    path->replace(at, name.size() + 2, Text(value));
    return true;
  }

  // name=value on `query`; a list as the parameter repeated.
  static void AddParam(const std::string& name, const json& value, std::string* query) {
    if (value.is_array()) {
      for (const json& item : value) AddParam(name, item, query);
      return;
    }
    *query += (query->empty() ? "?" : "&") + name + "=" + Encoded(Text(value));
  }

  json Mcp(const std::string& method, const json& params) {
    auto r = Post("/mcp", {{"jsonrpc", "2.0"}, {"id", ++mcp_id_}, {"method", method}, {"params", params}});
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r ? json::parse(r->body, nullptr, false)["result"] : json();
  }

  testing::TempDir dir_{"msp-faces"};
  std::string data_;      // msp serve's
  std::string cli_data_;  // the command line's: data_ while seeding, then a copy
  msp::testing::ChildProcess serve_;
  std::unique_ptr<httplib::Client> client_;
  std::string key_ = kKey;  // the key of REST and MCP calls
  std::string mcp_session_;
  int mcp_id_ = 1;
};

// `request` with the field at `path` set to `value`.
json With(json request, const std::string& path, const json& value) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) {
    request[path] = value;
  } else {
    request[path.substr(0, dot)][path.substr(dot + 1)] = value;
  }
  return request;
}

// Bad variants of each operation's example, from its table.
std::vector<json> BadRequests(const api::OperationInfo& info) {
  std::vector<json> bad = {With(info.example, "no_such_field", 1)};
  for (const api::FieldInfo& f : info.fields) {
    switch (f.type) {
      case api::FieldType::kInt: bad.push_back(With(info.example, f.Path(), f.max_int + 1)); break;
      case api::FieldType::kNumber: bad.push_back(With(info.example, f.Path(), f.max_number + 1)); break;
      case api::FieldType::kEnum: bad.push_back(With(info.example, f.Path(), "nonsense")); break;
      case api::FieldType::kEnums: bad.push_back(With(info.example, f.Path(), {"nonsense"})); break;
      case api::FieldType::kTime: bad.push_back(With(info.example, f.Path(), "not a time")); break;
      default: break;
    }
  }
  return bad;
}

// An answer with what differs from call to call by design taken out: the
// id of the logged retrieval, the tokens it takes in the digest's heading,
// the event rate of the mission (each retrieval is logged), and the id of a
// record a write stores (each face stores its own).
json Comparable(json answer, const api::OperationInfo& info) {
  if (!info.read_only) answer.erase("id");
  // (A correction's retrieval_id is the one it names, "" for none.)
  if (answer.contains("retrieval_id") && info.name.rfind("correction_", 0) != 0) {
    std::string text = answer.dump();
    const std::string rid = answer["retrieval_id"];
    for (size_t at; (at = text.find(rid)) != std::string::npos;) text.replace(at, rid.size(), "RID");
    text = std::regex_replace(text, std::regex(R"(\d+/(\d+) tokens)"), "N/$1 tokens");
    answer = json::parse(text);
    answer.erase("tokens_used");
  }
  if (answer.contains("digest")) {
    answer["digest"].erase("degraded");
    answer["digest"].erase("tokens_used");
  }
  // A task made or changed by a call (task_add, task_status, task_comment)
  // says when: each face's own time.
  auto timeless = [](json& task) {
    task.erase("created_at");
    task.erase("updated_at");
  };
  if (answer.contains("task_id") && answer.contains("comments")) timeless(answer);
  if (answer.contains("tasks")) {
    for (json& t : answer["tasks"]) timeless(t);
  }
  // An event a call stores says when: each face's own time.
  if (info.name == "event_add") answer.erase("created_at");
  // The facts a session's end distils: each face stores its own.
  if (answer.contains("fact_ids")) answer["fact_ids"] = answer["fact_ids"].size();
  // A decision a call stores or changes (decision_record, decision_status,
  // decision_supersede) says when, and at which change of its store.
  if ((info.name.rfind("decision_", 0) == 0 || info.name.rfind("correction_", 0) == 0) && !info.read_only) {
    auto unstamped = [](json& decision) {
      for (const char* key : {"created_at", "updated_at", "seq"}) decision.erase(key);
    };
    if (answer.contains("old")) {
      unstamped(answer["old"]);
      unstamped(answer["new"]);
    } else {
      unstamped(answer);
    }
  }
  return answer;
}

// task_comment adds to what is there: MCP, asked after REST on the same
// store, answers REST's comments and its own, the same but for its id.
void ExpectOneMoreComment(json mcp, json rest) {
  ASSERT_EQ(mcp["comments"].size(), rest["comments"].size() + 1) << mcp.dump() << "\n" << rest.dump();
  json added = mcp["comments"].back();
  mcp["comments"].erase(mcp["comments"].size() - 1);
  EXPECT_EQ(mcp, rest);
  json rests = rest["comments"].back();
  EXPECT_NE(added["id"], rests["id"]);
  added.erase("id");
  rests.erase("id");
  EXPECT_EQ(added, rests);
}

// task_add names what it makes: the same example a second time (MCP, asked
// after REST on the same store) is refused, as REST refuses it (409).
bool NamesWhatItMakes(const api::OperationInfo& info) { return info.name == "task_add"; }

// decision_supersede is final: the same example a second time (MCP, asked
// after REST on the same store) is refused, as REST refuses it (409).
bool HappensOnce(const api::OperationInfo& info) { return info.name == "decision_supersede"; }

TEST_F(FacesTest, EveryOperationIsTheSameOnEveryFace) {
  ASSERT_NO_FATAL_FAILURE(Seed());
  // The command line works on a copy, so that each face starts from the same
  // store: a query logs its retrieval, which changes the lexical statistics
  // (and so the scores) of the searches after it.
  cli_data_ = dir_.path() + "/cli-data";
  std::filesystem::copy(data_, cli_data_, std::filesystem::copy_options::recursive);
  // The command line first (msp serve then holds its data directory).
  struct CliResults {
    Outcome help;
    Outcome answer;
    std::vector<Outcome> bad;
  };
  std::vector<CliResults> cli;
  for (const api::Operation* op : api::Operations()) {
    const api::OperationInfo& info = op->info();
    CliResults r;
    std::vector<std::string> help = {"help"};
    std::istringstream verb(info.cli_verb);
    for (std::string w; verb >> w;) help.push_back(w);
    r.help = Msp(help);
    std::vector<std::string> args = CliArgs(info, info.example);
    r.answer = MspIn(args);
    for (const json& bad : BadRequests(info)) r.bad.push_back(MspIn(CliArgs(info, bad)));
    cli.push_back(std::move(r));
  }

  StartServe();
  const json tools = Mcp("tools/list", json::object())["tools"];
  for (size_t i = 0; i < api::Operations().size(); ++i) {
    const api::OperationInfo& info = api::Operations()[i]->info();
    SCOPED_TRACE(info.name);

    // The same names and limits: the tool's schema and the verb's flags are the table's.
    json schema;
    for (const json& t : tools) {
      if (t["name"] == info.mcp_tool) schema = t["inputSchema"];
    }
    EXPECT_EQ(schema, api::InputSchema(info));
    ASSERT_EQ(cli[i].help.code, 0) << cli[i].help.err;
    for (const api::FieldInfo& f : info.fields) {
      if (f.cli != api::CliForm::kFlag) continue;
      EXPECT_NE(cli[i].help.out.find(f.Flag()), std::string::npos) << f.Flag();
      EXPECT_NE(cli[i].help.out.find(f.TypeText()), std::string::npos) << f.TypeText();
    }

    // The same answer.
    auto rest = Rest(info, info.example);
    ASSERT_TRUE(rest);
    ASSERT_EQ(rest->status, info.rest_status) << rest->body;
    const json rest_answer = json::parse(rest->body);
    const json mcp = Mcp("tools/call", {{"name", info.mcp_tool}, {"arguments", info.example}});
    ASSERT_EQ(cli[i].answer.code, 0) << cli[i].answer.err;
    const json cli_answer = json::parse(cli[i].answer.out, nullptr, false);
    EXPECT_FALSE(rest_answer.empty());
    if (NamesWhatItMakes(info)) {
      EXPECT_EQ(mcp["isError"], true) << mcp.dump();
      EXPECT_EQ(mcp["content"][0]["text"].get<std::string>().rfind("already_exists: ", 0), 0u) << mcp.dump();
      auto again = Rest(info, info.example);
      ASSERT_TRUE(again);
      EXPECT_EQ(again->status, 409) << again->body;
    } else if (HappensOnce(info)) {
      EXPECT_EQ(mcp["isError"], true) << mcp.dump();
      EXPECT_EQ(mcp["content"][0]["text"].get<std::string>().rfind("failed_precondition: ", 0), 0u) << mcp.dump();
      auto again = Rest(info, info.example);
      ASSERT_TRUE(again);
      EXPECT_EQ(again->status, 409) << again->body;
      EXPECT_EQ(rest_answer["old"]["status"], "superseded") << rest->body;
      EXPECT_EQ(rest_answer["new"]["supersedes"], kExampleDecision) << rest->body;
    } else if (info.destructive) {
      // REST deleted the example record before MCP asked: it is gone there
      // (the command line deleted it in its own copy, answering as REST).
      EXPECT_EQ(mcp["isError"], true) << mcp.dump();
      EXPECT_EQ(mcp["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u) << mcp.dump();
    } else {
      ASSERT_EQ(mcp["isError"], false) << mcp.dump();
      // The same scores too: a retrieval logged by the face before (a record
      // without text) moves no statistic a search reads.
      if (info.name == "episode_add") {
        // The next step of the same session: MCP's step follows REST's.
        json mcp_step = Comparable(mcp["structuredContent"], info);
        json rest_step = Comparable(rest_answer, info);
        EXPECT_EQ(mcp_step["step_number"], rest_step["step_number"].get<int64_t>() + 1);
        mcp_step.erase("step_number");
        rest_step.erase("step_number");
        EXPECT_EQ(mcp_step, rest_step);
      } else if (info.name == "task_comment") {
        ExpectOneMoreComment(Comparable(mcp["structuredContent"], info), Comparable(rest_answer, info));
      } else if (info.name == "session_end") {
        // REST ended the session before MCP asked: nothing is left of it.
        EXPECT_GT(rest_answer["episodes_read"], 0) << rest_answer.dump();
        EXPECT_EQ(mcp["structuredContent"]["episodes_read"], 0) << mcp.dump();
        EXPECT_EQ(mcp["structuredContent"]["fact_ids"].size(), 0u) << mcp.dump();
      } else {
        EXPECT_EQ(Comparable(mcp["structuredContent"], info), Comparable(rest_answer, info));
      }
    }
    EXPECT_EQ(Comparable(cli_answer, info), Comparable(rest_answer, info));

    // The same error for the same bad input.
    const std::vector<json> bad = BadRequests(info);
    for (size_t b = 0; b < bad.size(); ++b) {
      SCOPED_TRACE(bad[b].dump());
      auto refused = Rest(info, bad[b]);
      ASSERT_TRUE(refused);
      EXPECT_EQ(refused->status, 400) << refused->body;
      const std::string message = json::parse(refused->body)["error"]["message"];
      const json tool = Mcp("tools/call", {{"name", info.mcp_tool}, {"arguments", bad[b]}});
      EXPECT_EQ(tool["isError"], true);
      // MCP names the field by its JSON path; REST the same (a route without
      // a body: the parameter of its name); the command line by its flag.
      const std::string said = tool["content"][0]["text"].get<std::string>();
      ASSERT_EQ(said.rfind("invalid_argument: ", 0), 0u) << said;
      const std::string field_message = said.substr(std::string("invalid_argument: ").size());
      EXPECT_EQ(cli[i].bad[b].code, 2) << cli[i].bad[b].err;
      if (b == 0) {
        // An undeclared field: unknown to MCP, an unknown parameter (REST
        // without a body) and an unknown flag on the command line.
        EXPECT_EQ(field_message.rfind("unknown field 'no_such_field'; known fields are ", 0), 0u) << said;
        if (info.rest_method == "POST") {
          EXPECT_EQ(message, field_message);
        } else {
          EXPECT_NE(message.find("unknown parameter 'no_such_field'"), std::string::npos) << message;
        }
        EXPECT_NE(cli[i].bad[b].err.find("unknown flag '--no_such_field'"), std::string::npos) << cli[i].bad[b].err;
      } else {
        EXPECT_EQ(message, api::RestMessage(info, field_message));
        EXPECT_EQ(cli[i].bad[b].err.substr(0, cli[i].bad[b].err.find('\n')),
                  "msp: " + api::CliMessage(info, field_message));
      }
    }
  }
}

// One caller, three faces: the limited one (REST and MCP with a key of
// clearance 4, the command line with `--operator low`, low's clearance
// being 4) and the unlimited one (a key without a clearance, the command
// line without --operator: the data directory's owner) each get the same
// records everywhere; a level-5 record exists only for the second.
TEST_F(FacesTest, OneCallerGetsTheSameRecordsOnEveryFace) {
  const std::string open_id = "0190e5c2-0000-7000-8000-0000000000b1";
  const std::string secret_id = "0190e5c2-0000-7000-8000-0000000000b2";
  ASSERT_EQ(Msp({"init", "--data-dir", data_}).code, 0);
  {
    std::ofstream lines(dir_.path() + "/records.jsonl");
    lines << R"({"id": ")" << open_id << R"(", "namespace": {"tenant": "acme", "operator": "low"}, "kind": "fact", )"
          << R"("text": "The billing ledger is reconciled every night", "access_level": 0})" << "\n"
          << R"({"id": ")" << secret_id
          << R"(", "namespace": {"tenant": "acme", "operator": "low"}, "kind": "fact", )"
          << R"("text": "The billing ledger signing key rotates every week", "access_level": 5})" << "\n";
  }
  Outcome imported = Msp({"import", dir_.path() + "/records.jsonl", "--data-dir", data_});
  ASSERT_EQ(imported.code, 0) << imported.err;
  ASSERT_EQ(MspIn({"operator", "set", "low", "--clearance", "4"}).code, 0);
  Outcome open_decision = MspIn({"decision", "add", "--mission", "m1", "--title", "Keep the billing ledger in PostgreSQL",
                                 "--context", "The ledger needs transactions.", "--decision", "PostgreSQL."});
  ASSERT_EQ(open_decision.code, 0) << open_decision.err;
  Outcome secret_decision =
      MspIn({"decision", "add", "--mission", "m1", "--title", "Sign the billing ledger with the vault key", "--context",
             "Exports leave the building.", "--decision", "The vault key signs them.", "--access-level", "5"});
  ASSERT_EQ(secret_decision.code, 0) << secret_decision.err;

  struct FaceCaller {
    std::string name;
    std::vector<std::string> cli;  // the command line's caller flags
    std::string key;               // REST's and MCP's
    json ns;                       // the namespace of REST and MCP requests
    bool sees_secret = false;
    int clearance = 0;
  };
  const std::vector<FaceCaller> callers = {
      {"limited", {"--operator", "low"}, kKey4, {{"operator", "low"}}, false, 4},
      {"owner", {}, kKey, json::object(), true, kMaxAccessLevel},
  };
  auto cli_in = [&](std::vector<std::string> args, const FaceCaller& c) {
    args.insert(args.end(), c.cli.begin(), c.cli.end());
    return MspIn(std::move(args));
  };
  auto ids_of = [](const json& hits) {
    std::set<std::string> ids;
    for (const json& h : hits) ids.insert(h["memory"]["id"].get<std::string>());
    return ids;
  };
  const json search = {{"query", "billing ledger"}, {"top_k", 20}, {"record_access", false}};
  auto query_of = [](const FaceCaller& c) {
    json ns = c.ns;
    ns["mission"] = "m1";
    return json{{"task_description", "how is the billing ledger kept"}, {"namespace", ns}};
  };

  // The command line first (msp serve then holds the data directory).
  struct CliAnswers {
    Outcome search, history_secret, history_open, get_secret, get_open, delete_secret, exported, query, write_above,
        list;
  };
  std::vector<CliAnswers> cli;
  for (const FaceCaller& c : callers) {
    CliAnswers a;
    // Without access bookkeeping, as REST and MCP below: the records' access
    // counts stay those every face's get answers.
    a.search = cli_in({"search", "billing ledger", "--top-k", "20", "--record-access", "false", "--json"}, c);
    a.history_secret = cli_in({"history", secret_id, "--json"}, c);
    a.history_open = cli_in({"history", open_id, "--json"}, c);
    a.get_secret = cli_in({"get", secret_id, "--json"}, c);
    a.get_open = cli_in({"get", open_id, "--json"}, c);
    // Only the limited caller deletes: the secret is not there for it.
    if (!c.sees_secret) a.delete_secret = cli_in({"delete", secret_id, "--reason", "limited", "--json"}, c);
    a.exported = cli_in({"export"}, c);
    a.list = cli_in({"list", "--kinds", "fact", "--json"}, c);
    a.query = cli_in({"query", "how is the billing ledger kept", "--mission", "m1", "--json"}, c);
    cli.push_back(std::move(a));
  }
  // A write above the limited caller's clearance: refused, nothing stored.
  Outcome above = cli_in({"decision", "add", "--mission", "m1", "--title", "Above", "--context", "C", "--decision",
                          "D", "--access-level", "5"},
                         callers[0]);
  EXPECT_EQ(above.code, 1) << above.err;
  EXPECT_NE(above.err.find("clearance 4"), std::string::npos) << above.err;

  StartServe();
  for (size_t i = 0; i < callers.size(); ++i) {
    const FaceCaller& c = callers[i];
    SCOPED_TRACE(c.name);
    key_ = c.key;
    ASSERT_NO_FATAL_FAILURE(InitMcp());

    // Search: the same hits on every face.
    json request = search;
    request["namespace"] = c.ns;
    auto rest = Post("/v1/search", request);
    ASSERT_TRUE(rest && rest->status == 200) << (rest ? rest->body : "no answer");
    const std::set<std::string> rest_ids = ids_of(json::parse(rest->body)["hits"]);
    const json mcp = Mcp("tools/call", {{"name", "memory_search"}, {"arguments", request}});
    ASSERT_EQ(mcp["isError"], false) << mcp.dump();
    ASSERT_EQ(cli[i].search.code, 0) << cli[i].search.err;
    EXPECT_EQ(ids_of(mcp["structuredContent"]["hits"]), rest_ids);
    EXPECT_EQ(ids_of(json::parse(cli[i].search.out)["hits"]), rest_ids);
    EXPECT_EQ(rest_ids.count(open_id), 1u);
    EXPECT_EQ(rest_ids.count(secret_id), c.sees_secret ? 1u : 0u);

    // History by id: the secret one is missing, alike, unless the caller may see it.
    const std::string ns_param = c.ns.contains("operator") ? "?operator=low" : "";
    auto history = Get("/v1/memories/" + secret_id + "/history" + ns_param);
    ASSERT_TRUE(history);
    const json tool = Mcp("tools/call", {{"name", "fact_history"}, {"arguments", {{"id", secret_id}}}});
    if (c.sees_secret) {
      EXPECT_EQ(history->status, 200) << history->body;
      EXPECT_EQ(tool["isError"], false) << tool.dump();
      EXPECT_EQ(cli[i].history_secret.code, 0) << cli[i].history_secret.err;
    } else {
      EXPECT_EQ(history->status, 404) << history->body;
      EXPECT_EQ(tool["isError"], true) << tool.dump();
      EXPECT_EQ(tool["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u) << tool.dump();
      EXPECT_EQ(cli[i].history_secret.code, 4) << cli[i].history_secret.err;
    }
    // memory_history and memory_get by id: the same.
    const json args_secret = {{"id", secret_id}, {"namespace", c.ns}};
    const json mcp_history = Mcp("tools/call", {{"name", "memory_history"}, {"arguments", args_secret}});
    auto get_secret = Get("/v1/memories/" + secret_id + ns_param);
    ASSERT_TRUE(get_secret);
    const json mcp_get = Mcp("tools/call", {{"name", "memory_get"}, {"arguments", args_secret}});
    if (c.sees_secret) {
      EXPECT_EQ(mcp_history["isError"], false) << mcp_history.dump();
      EXPECT_EQ(mcp_history["structuredContent"], json::parse(history->body));
      EXPECT_EQ(json::parse(cli[i].history_secret.out), json::parse(history->body));
      EXPECT_EQ(get_secret->status, 200) << get_secret->body;
      EXPECT_EQ(mcp_get["isError"], false) << mcp_get.dump();
      EXPECT_EQ(mcp_get["structuredContent"], json::parse(get_secret->body));
      ASSERT_EQ(cli[i].get_secret.code, 0) << cli[i].get_secret.err;
      EXPECT_EQ(json::parse(cli[i].get_secret.out), json::parse(get_secret->body));
    } else {
      EXPECT_EQ(mcp_history["isError"], true) << mcp_history.dump();
      EXPECT_EQ(get_secret->status, 404) << get_secret->body;
      EXPECT_EQ(mcp_get["isError"], true) << mcp_get.dump();
      EXPECT_EQ(mcp_get["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u) << mcp_get.dump();
      EXPECT_EQ(cli[i].get_secret.code, 4) << cli[i].get_secret.err;
      // memory_delete of what the caller may not see: not found on every
      // face, and nothing deleted (the owner gets it below).
      auto deleted = Delete("/v1/memories/" + secret_id + ns_param);
      ASSERT_TRUE(deleted);
      EXPECT_EQ(deleted->status, 404) << deleted->body;
      const json mcp_delete = Mcp("tools/call", {{"name", "memory_delete"}, {"arguments", args_secret}});
      EXPECT_EQ(mcp_delete["isError"], true) << mcp_delete.dump();
      EXPECT_EQ(mcp_delete["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u)
          << mcp_delete.dump();
      EXPECT_EQ(cli[i].delete_secret.code, 4) << cli[i].delete_secret.err;
    }
    auto get_open = Get("/v1/memories/" + open_id + ns_param);
    ASSERT_TRUE(get_open && get_open->status == 200) << (get_open ? get_open->body : "no answer");
    ASSERT_EQ(cli[i].get_open.code, 0) << cli[i].get_open.err;
    EXPECT_EQ(json::parse(cli[i].get_open.out), json::parse(get_open->body));
    const json mcp_open = Mcp("tools/call", {{"name", "memory_get"}, {"arguments", {{"id", open_id}, {"namespace", c.ns}}}});
    EXPECT_EQ(mcp_open["structuredContent"], json::parse(get_open->body)) << mcp_open.dump();
    auto open_history = Get("/v1/memories/" + open_id + "/history" + ns_param);
    ASSERT_TRUE(open_history);
    EXPECT_EQ(open_history->status, 200) << open_history->body;
    EXPECT_EQ(cli[i].history_open.code, 0) << cli[i].history_open.err;

    // memory_list: the same records (REST by the older parameter name).
    auto listed = Get("/v1/memories?kind=fact" + (ns_param.empty() ? "" : "&" + ns_param.substr(1)));
    ASSERT_TRUE(listed && listed->status == 200) << (listed ? listed->body : "no answer");
    const json mcp_list = Mcp("tools/call", {{"name", "memory_list"},
                                             {"arguments", {{"filters", {{"kinds", {"fact"}}}}, {"namespace", c.ns}}}});
    ASSERT_EQ(cli[i].list.code, 0) << cli[i].list.err;
    const json rest_list = json::parse(listed->body);
    EXPECT_EQ(mcp_list["structuredContent"], rest_list) << mcp_list.dump();
    EXPECT_EQ(json::parse(cli[i].list.out), rest_list);
    std::set<std::string> listed_ids;
    for (const json& m : rest_list["memories"]) listed_ids.insert(m["id"].get<std::string>());
    EXPECT_EQ(listed_ids.count(open_id), 1u);
    EXPECT_EQ(listed_ids.count(secret_id), c.sees_secret ? 1u : 0u);

    // Export: the same lines.
    auto exported = Get("/v1/export" + ns_param);
    ASSERT_TRUE(exported && exported->status == 200);
    ASSERT_EQ(cli[i].exported.code, 0) << cli[i].exported.err;
    for (const std::string* text : {&exported->body, &cli[i].exported.out}) {
      EXPECT_NE(text->find(open_id), std::string::npos);
      EXPECT_EQ(text->find(secret_id) != std::string::npos, c.sees_secret);
    }

    // workflow_memory_query: the same clearance, the secret decision only for the owner.
    auto query = Post("/v1/query", query_of(c));
    ASSERT_TRUE(query && query->status == 200) << (query ? query->body : "no answer");
    const json rest_query = json::parse(query->body);
    const json mcp_query = Mcp("tools/call", {{"name", "workflow_memory_query"}, {"arguments", query_of(c)}});
    ASSERT_EQ(mcp_query["isError"], false) << mcp_query.dump();
    ASSERT_EQ(cli[i].query.code, 0) << cli[i].query.err;
    const json cli_query = json::parse(cli[i].query.out);
    for (const json* q : {&rest_query, &mcp_query["structuredContent"], &cli_query}) {
      EXPECT_EQ((*q)["clearance"], c.clearance) << q->dump();
      const std::string markdown = (*q)["markdown"];
      EXPECT_NE(markdown.find("Keep the billing ledger in PostgreSQL"), std::string::npos) << markdown;
      EXPECT_EQ(markdown.find("vault key") != std::string::npos, c.sees_secret) << markdown;
    }
  }

  // The limited caller's write above its clearance, on REST and MCP.
  key_ = kKey4;
  ASSERT_NO_FATAL_FAILURE(InitMcp());
  const json above_decision = {{"namespace", {{"mission", "m1"}, {"operator", "low"}}},
                               {"title", "Above"},
                               {"context", "C"},
                               {"decision", "D"},
                               {"access_level", 5}};
  auto refused = Post("/v1/decisions", above_decision);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  const json tool = Mcp("tools/call", {{"name", "decision_record"},
                                       {"arguments",
                                        {{"namespace", {{"mission", "m1"}}}, {"title", "Above"}, {"context", "C"},
                                         {"decision", "D"}, {"access_level", 5}}}});
  EXPECT_EQ(tool["isError"], true) << tool.dump();
  EXPECT_EQ(tool["content"][0]["text"].get<std::string>().rfind("forbidden: ", 0), 0u) << tool.dump();
  key_ = kKey;
  auto decisions = Get("/v1/decisions?mission=m1");
  ASSERT_TRUE(decisions && decisions->status == 200);
  EXPECT_EQ(json::parse(decisions->body)["decisions"].size(), 2u) << decisions->body;
}

// A decision above the asker's clearance (the namespace's operator, low at
// clearance 4, asking with a key that has none) is not found by
// decision_status and decision_supersede on any face, named as the old one
// or as the successor, and nothing changes; the owner, asking as itself,
// may move it.
TEST_F(FacesTest, ADecisionAboveTheAskerIsNotFoundOnEveryFace) {
  ASSERT_EQ(Msp({"init", "--data-dir", data_}).code, 0);
  ASSERT_EQ(MspIn({"operator", "set", "low", "--clearance", "4"}).code, 0);
  auto add = [&](const std::string& title, const std::string& level) {
    Outcome added = MspIn({"decision", "add", "--mission", "m1", "--title", title, "--context", "The ledger grows.",
                           "--decision", "As titled.", "--access-level", level, "--json"});
    EXPECT_EQ(added.code, 0) << added.err;
    return json::parse(added.out, nullptr, false).value("id", std::string());
  };
  const std::string open = add("Keep the billing ledger in PostgreSQL", "0");
  const std::string secret = add("Sign the billing ledger with the vault key", "5");
  ASSERT_FALSE(open.empty());
  ASSERT_FALSE(secret.empty());
  const json ns = {{"mission", "m1"}, {"operator", "low"}};
  const std::vector<std::pair<std::string, json>> calls = {
      {"decision_status", {{"decision_id", secret}, {"status", "deprecated"}, {"namespace", ns}}},
      {"decision_supersede", {{"decision_id", secret}, {"by", open}, {"namespace", ns}}},
      {"decision_supersede", {{"decision_id", open}, {"by", secret}, {"namespace", ns}}},
      {"decision_show", {{"decision_id", secret}, {"namespace", ns}}},
  };
  for (const auto& [name, request] : calls) {
    SCOPED_TRACE(name + " " + request.dump());
    const api::OperationInfo& info = api::FindOperation(name)->info();
    Outcome cli = MspIn(CliArgs(info, request));
    EXPECT_EQ(cli.code, 4) << cli.out << cli.err;
  }
  StartServe();
  for (const auto& [name, request] : calls) {
    SCOPED_TRACE(name + " " + request.dump());
    const api::OperationInfo& info = api::FindOperation(name)->info();
    auto rest = Rest(info, request);
    ASSERT_TRUE(rest);
    EXPECT_EQ(rest->status, 404) << rest->body;
    const json mcp = Mcp("tools/call", {{"name", info.mcp_tool}, {"arguments", request}});
    EXPECT_EQ(mcp["isError"], true) << mcp.dump();
    EXPECT_EQ(mcp["content"][0]["text"].get<std::string>().rfind("not_found: ", 0), 0u) << mcp.dump();
  }
  // Nothing changed; the owner (the key, no operator) sees both and may move the secret one.
  auto shown = Get("/v1/decisions/" + secret + "?mission=m1");
  ASSERT_TRUE(shown && shown->status == 200) << (shown ? shown->body : "no answer");
  EXPECT_EQ(json::parse(shown->body)["status"], "accepted");
  EXPECT_EQ(json::parse(shown->body)["superseded_by"], "");
  auto listed = Get("/v1/decisions?mission=m1");
  ASSERT_TRUE(listed && listed->status == 200);
  const json decisions = json::parse(listed->body)["decisions"];
  EXPECT_EQ(decisions.size(), 2u);
  for (const json& d : decisions) {
    EXPECT_EQ(d["status"], "accepted") << d.dump();
    EXPECT_EQ(d["supersedes"], "") << d.dump();
  }
  const json mine = Mcp("tools/call", {{"name", "decision_status"},
                                       {"arguments", {{"decision_id", secret}, {"status", "deprecated"},
                                                      {"namespace", {{"mission", "m1"}}}}}});
  ASSERT_EQ(mine["isError"], false) << mine.dump();
  EXPECT_EQ(mine["structuredContent"]["status"], "deprecated");
}

// A write's time to live has one range on every face, 1..36500 days, and an
// explicit 0 (which reads as "expire at once" but would have meant "the
// configured default") is refused everywhere with an error saying to leave
// the field out; a write keyed by request_id is answered once on every face
// (REST takes the body field as the CLI and MCP do, beside its header).
TEST_F(FacesTest, WriteTimeToLiveAndRequestIdAreTheSameOnEveryFace) {
  ASSERT_EQ(Msp({"init", "--data-dir", data_}).code, 0);
  const std::string text = "The staging cluster is rebuilt every Monday morning";
  for (const int ttl : {0, 36501, -1}) {
    SCOPED_TRACE(ttl);
    Outcome cli = MspIn({"write", text, "--tag", "preference", "--ttl-days", std::to_string(ttl)});
    EXPECT_EQ(cli.code, 2) << cli.err;
    if (ttl == 0) {
      EXPECT_NE(cli.err.find("--ttl-days 0 is not a time to live"), std::string::npos) << cli.err;
    } else {
      EXPECT_NE(cli.err.find("--ttl-days must be between 1 and 36500"), std::string::npos) << cli.err;
    }
  }
  Outcome kept = MspIn({"write", text, "--tag", "preference", "--ttl-days", "30", "--request-id", "cli-key-1"});
  ASSERT_EQ(kept.code, 0) << kept.err;
  Outcome repeat = MspIn({"write", text, "--tag", "preference", "--ttl-days", "30", "--request-id", "cli-key-1"});
  ASSERT_EQ(repeat.code, 0) << repeat.err;
  EXPECT_EQ(repeat.out, kept.out);

  ASSERT_NO_FATAL_FAILURE(StartServe());
  auto before = Get("/v1/memories");
  ASSERT_TRUE(before && before->status == 200) << (before ? before->body : "");
  const size_t stored = json::parse(before->body)["memories"].size();
  for (const int ttl : {0, 36501, -1}) {
    SCOPED_TRACE(ttl);
    auto rest = Post("/v1/memories", {{"text", text}, {"tags", {"preference"}}, {"ttl_days", ttl}});
    ASSERT_TRUE(rest);
    EXPECT_EQ(rest->status, 400) << rest->body;
    const std::string message = json::parse(rest->body)["error"]["message"];
    EXPECT_NE(message.find("ttl_days"), std::string::npos) << message;
    if (ttl == 0) {
      EXPECT_NE(message.find("0 is not a time to live"), std::string::npos) << message;
    }
    const json tool = Mcp("tools/call", {{"name", "memory_write"}, {"arguments", {{"text", text}, {"ttl_days", ttl}}}});
    EXPECT_EQ(tool["isError"], true) << tool.dump();
    const std::string said = tool["content"][0]["text"];
    EXPECT_NE(said.find("ttl_days"), std::string::npos) << said;
  }
  auto all = Get("/v1/memories");
  ASSERT_TRUE(all && all->status == 200) << (all ? all->body : "");
  EXPECT_EQ(json::parse(all->body)["memories"].size(), stored) << all->body;

  // request_id in the REST body: the second call answers the first result.
  const json keyed = {{"text", "The release train leaves every second Thursday"},
                      {"tags", {"preference"}},
                      {"ttl_days", 365},
                      {"request_id", "rest-key-1"}};
  auto first = Post("/v1/memories", keyed);
  auto again = Post("/v1/memories", keyed);
  ASSERT_TRUE(first && again);
  ASSERT_EQ(first->status, 201) << first->body;
  EXPECT_EQ(again->status, 201) << again->body;
  EXPECT_EQ(json::parse(again->body)["id"], json::parse(first->body)["id"]);
  auto other = Post("/v1/memories", With(keyed, "text", "Another sentence under the same key of a write"));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 409) << other->body;
  auto bad_key = Post("/v1/memories", With(keyed, "request_id", ""));
  ASSERT_TRUE(bad_key);
  EXPECT_EQ(bad_key->status, 400) << bad_key->body;
  auto batch = Post("/v1/memories", {{"memories", json::array({keyed})}});
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->status, 400) << batch->body;
  auto after = Get("/v1/memories");
  ASSERT_TRUE(after && after->status == 200);
  EXPECT_EQ(json::parse(after->body)["memories"].size(), stored + 1) << after->body;
}

}  // namespace
}  // namespace msp
