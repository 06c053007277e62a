// The fixture of the faces tests (faces_test.cc, faces_caller_test.cc): a
// data directory seeded with the records the operations' examples name, the
// command line run as a process on it (or on a copy), `msp serve` on it with
// REST and MCP over real sockets, and the helpers that call each face.
#ifndef MSP_TESTS_HTTP_FACES_FIXTURE_H_
#define MSP_TESTS_HTTP_FACES_FIXTURE_H_

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

namespace msp::faces {

using nlohmann::json;

const std::string kKey = "faces-test-key-0123456789";
// A key of the same tenant limited to clearance 4: the command line's
// `--operator low` once low's clearance is 4.
const std::string kKey4 = "faces-test-key-clearance-4";
const std::string kTenant = "acme";
// The record the examples of memory_get, memory_history and memory_delete
// name (src/api/record.cc): Seed imports it.
const std::string kExampleRecord = "0190e5c2-0000-7000-8000-0000000000e1";
// The fact fact_supersede's example replaces (src/api/facts.cc): Seed
// imports it.
const std::string kExampleFact = "0190e5c2-0000-7000-8000-0000000000f1";
// The decisions the decision operations' examples name (src/api/decisions.cc):
// Seed imports them, the one about the billing ledger and its successor.
const std::string kExampleDecision = "0190e5c2-0000-7000-8000-0000000000d1";
const std::string kExampleSuccessor = "0190e5c2-0000-7000-8000-0000000000d2";
// The correction correction_show's example names (src/api/corrections.cc):
// Seed imports it, ann's about the billing component.
const std::string kExampleCorrection = "0190e5c2-0000-7000-8000-0000000000c1";
// The retrieval workflow_mark_used's example names (src/api/mark_used.cc):
// Seed imports it, a query of ann's that served the example decision.
const std::string kExampleRetrieval = "0190e5c2-0000-7000-8000-0000000000a1";
// The mission's November (the period of the report operations' examples,
// src/api/reports.cc, and of event_list's): Seed imports an incident, a
// retrieval that served the two decisions, and ann's correction of it.
const std::string kNovemberEvent = "0190e5c2-0000-7000-8000-0000000000a5";
const std::string kNovemberRetrieval = "0190e5c2-0000-7000-8000-0000000000a6";
const std::string kNovemberCorrection = "0190e5c2-0000-7000-8000-0000000000c2";

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
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
    // The session consolidate's example distils.
    for (const char* text : {"Which region hosts the billing ledger?", "The billing ledger runs in eu-west-1"}) {
      Outcome e = MspIn({"episode", "add", "--session", "s3", "--text", text});
      ASSERT_EQ(e.code, 0) << e.err;
    }
    // The principle the examples of principle_show and principle_put name.
    Outcome p = MspIn({"principle", "add", "P-1", "--mission", "m1", "--statement",
                       "A human confirms every change to the billing ledger."});
    ASSERT_EQ(p.code, 0) << p.err;
    // The operator the examples of operator_list, operator_show and operator_set name.
    Outcome o = MspIn({"operator", "set", "bob", "--clearance", "3", "--name", "Bob", "--mission", "m1"});
    ASSERT_EQ(o.code, 0) << o.err;
    // The task the examples of task_show, task_comment and task_status name.
    Outcome t = MspIn({"task", "add", "T-1", "--mission", "m1", "--title", "Keep the billing ledger current",
                       "--component", "billing"});
    ASSERT_EQ(t.code, 0) << t.err;
    {
      std::ofstream line(dir_.path() + "/example.jsonl");
      line << R"({"id": ")" << kExampleRecord << R"(", "namespace": {"tenant": "acme"}, "kind": "fact", )"
           << R"("text": "The billing ledger is archived every Sunday night", "tags": ["preference"]})" << "\n";
      // The fact fact_supersede's example replaces.
      line << R"({"id": ")" << kExampleFact << R"(", "namespace": {"tenant": "acme"}, "kind": "fact", )"
           << R"("text": "The billing ledger is archived every Friday night", "tags": ["preference"]})" << "\n";
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
      const json november_event = {
          {"id", kNovemberEvent},
          {"namespace", {{"tenant", kTenant}, {"mission", "m1"}}},
          {"kind", "event"},
          {"layer", "workflow"},
          {"source", "mission-event"},
          {"criticality", "high"},
          {"created_at", "2026-11-03T08:00:00.000Z"},
          {"text", "The billing ledger export stalled for an hour."},
          {"body", {{"type", "incident"}, {"component", "billing"}, {"operator", "ann"}}}};
      const json november_retrieval = {
          {"id", kNovemberRetrieval},
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
      const json november_correction = {
          {"id", kNovemberCorrection},
          {"namespace", {{"tenant", kTenant}, {"mission", "m1"}, {"operator", "ann"}}},
          {"kind", "correction"},
          {"layer", "practitioner"},
          {"source", "operator"},
          {"created_at", "2026-11-04T10:00:00.000Z"},
          {"text", "Correction missing_context / data_model on billing (modified): The ledger is partitioned."},
          {"body",
           {{"type", "correction"}, {"class", "missing_context"}, {"category", "data_model"}, {"component", "billing"},
            {"outcome", "modified"}, {"summary", "The ledger is partitioned."}, {"retrieval_id", kNovemberRetrieval}}}};
      line << november_event.dump() << "\n" << november_retrieval.dump() << "\n" << november_correction.dump() << "\n";
      // The retrieval log of a workflow_memory_query of ann's that served the
      // example decision, as the query logs it (mission/retrieval_log.h), but
      // for its text: `msp import` takes no record without one.
      const json retrieval = {
          {"id", kExampleRetrieval},
          {"namespace", {{"tenant", kTenant}, {"mission", "m1"}}},
          {"kind", "event"},
          {"layer", "workflow"},
          {"source", "retrieval-log"},
          {"text", "retrieval log"},
          {"body",
           {{"type", "retrieval"}, {"query", "which database holds the billing ledger"}, {"scope", "all"},
            {"operator", "ann"}, {"clearance", kMaxAccessLevel},
            {"served", {{{"id", kExampleDecision}, {"layer", "workflow"}, {"score", 0.9}, {"tokens", 40}}}},
            {"used", json::array()}}}};
      line << retrieval.dump() << "\n";
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
      if (f.cli != api::CliForm::kPositional || !request.contains(f.name)) continue;
      if (f.type == api::FieldType::kFiles) {
        // Files: a directory holding them (decision import DIR).
        const std::string files = dir_.path() + "/files-" + std::to_string(++file_dirs_);
        std::filesystem::create_directories(files);
        for (const json& file : request[f.name]) std::ofstream(files + "/" + Text(file["name"])) << Text(file["text"]);
        args.push_back(files);
      } else if (request[f.name].is_array()) {
        for (const json& item : request[f.name]) args.push_back(Text(item));  // ENTRY_ID...
      } else {
        args.push_back(Text(request[f.name]));
      }
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

  // Without the access log: nothing reads the server's stderr once it
  // listens, and a line a request would fill the pipe (64 KiB, some 260
  // requests: the table's walk makes more) and block the server.
  void StartServe() {
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

  httplib::Result Put(const std::string& path, const json& body) {
    return client_->Put(path, {{"Authorization", "Bearer " + key_}}, body.dump(), "application/json");
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
    if (info.HasBody()) {
      // A field the path names goes there (the body may repeat it), and so
      // does a namespace part (POST /v1/sessions/{session}/end).
      for (const auto& [name, value] : request.items()) {
        FillPath(&path, name, value);
        const api::FieldInfo* f = info.Find(name);
        if (f == nullptr || f->type != api::FieldType::kNamespace || !value.is_object()) continue;
        for (const auto& [part, v] : value.items()) FillPath(&path, part, v);
      }
      return info.rest_method == "PUT" ? Put(path, request) : Post(path, request);
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

  json Mcp(const std::string& method, const json& params) { return McpReply(method, params)["result"]; }
  // The whole JSON-RPC reply: {result} or {error}.
  json McpReply(const std::string& method, const json& params) {
    auto r = Post("/mcp", {{"jsonrpc", "2.0"}, {"id", ++mcp_id_}, {"method", method}, {"params", params}});
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r ? json::parse(r->body, nullptr, false) : json();
  }

  testing::TempDir dir_{"msp-faces"};
  std::string data_;      // msp serve's
  std::string cli_data_;  // the command line's: data_ while seeding, then a copy
  msp::testing::ChildProcess serve_;
  std::unique_ptr<httplib::Client> client_;
  std::string key_ = kKey;  // the key of REST and MCP calls
  std::string mcp_session_;
  int mcp_id_ = 1;
  int file_dirs_ = 0;  // the directories CliArgs wrote files to
};

// `request` with the field at `path` set to `value`.
inline json With(json request, const std::string& path, const json& value) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) {
    request[path] = value;
  } else {
    request[path.substr(0, dot)][path.substr(dot + 1)] = value;
  }
  return request;
}

}  // namespace msp::faces

#endif  // MSP_TESTS_HTTP_FACES_FIXTURE_H_
