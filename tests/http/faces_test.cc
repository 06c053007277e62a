// One test for the three faces of every operation of src/api's table: the
// command line (msp as a process), REST and MCP (msp serve, real sockets)
// take the same field names with the same limits (the MCP input schema and
// the CLI help come from the table), answer the same request with the same
// answer, and refuse the same bad input with the same error (the command
// line naming a field by its flag). The bad inputs come from the table: each
// number one past its range, each enum a value it does not have, each time
// one that is not ISO 8601, and a field nobody declared. (faces_caller_test.cc:
// one caller gets the same records from every face; the fixture is
// faces_fixture.h.)
#include "tests/http/faces_fixture.h"

namespace msp {
namespace {

using namespace faces;  // NOLINT: the fixture and its helpers
using nlohmann::json;

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
  // A handoff digest says when it was built.
  if (info.name == "handoff_digest") {
    answer["digest"].erase("built_at");
    const std::regex built(R"(built \d{4}-\d\d-\d\d \d\d:\d\dZ)");
    answer["markdown"] = std::regex_replace(answer["markdown"].get<std::string>(), built, "built T");
    answer["digest"]["markdown"] = std::regex_replace(answer["digest"]["markdown"].get<std::string>(), built, "built T");
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
  if ((info.name.rfind("decision_", 0) == 0 || info.name.rfind("correction_", 0) == 0 ||
       info.name.rfind("principle_", 0) == 0 || info.name.rfind("operator_", 0) == 0) &&
      !info.read_only) {
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

// decision_supersede and fact_supersede are final, and principle_put's
// example edits version 1:
// the same example a second time (MCP, asked after REST on the same store)
// is refused with this code, as REST refuses it (409); "" for the others.
std::string SecondTimeRefused(const api::OperationInfo& info) {
  if (info.name == "decision_supersede" || info.name == "fact_supersede") return "failed_precondition";
  if (info.name == "principle_put") return "conflict";
  return "";
}

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
    // (An operation withheld from a model is no tool, and calling it by
    // its name is an unknown tool.)
    const bool tool = !info.mcp_tool.empty();
    json schema;
    for (const json& t : tools) {
      if (t["name"] == (tool ? info.mcp_tool : info.name)) schema = t["inputSchema"];
    }
    EXPECT_EQ(schema, tool ? api::InputSchema(info) : json());
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
    const json mcp = tool ? Mcp("tools/call", {{"name", info.mcp_tool}, {"arguments", info.example}}) : json();
    ASSERT_EQ(cli[i].answer.code, 0) << cli[i].answer.err;
    const json cli_answer = json::parse(cli[i].answer.out, nullptr, false);
    EXPECT_FALSE(rest_answer.empty());
    if (!tool) {
      const json reply = McpReply("tools/call", {{"name", info.name}, {"arguments", info.example}});
      EXPECT_EQ(reply["error"]["message"], "Invalid params: unknown tool '" + info.name + "'; tools/list names them")
          << reply.dump();
    } else if (NamesWhatItMakes(info)) {
      EXPECT_EQ(mcp["isError"], true) << mcp.dump();
      EXPECT_EQ(mcp["content"][0]["text"].get<std::string>().rfind("already_exists: ", 0), 0u) << mcp.dump();
      auto again = Rest(info, info.example);
      ASSERT_TRUE(again);
      EXPECT_EQ(again->status, 409) << again->body;
    } else if (!SecondTimeRefused(info).empty()) {
      EXPECT_EQ(mcp["isError"], true) << mcp.dump();
      EXPECT_EQ(mcp["content"][0]["text"].get<std::string>().rfind(SecondTimeRefused(info) + ": ", 0), 0u)
          << mcp.dump();
      auto again = Rest(info, info.example);
      ASSERT_TRUE(again);
      EXPECT_EQ(again->status, 409) << again->body;
      if (info.name == "decision_supersede") {
        EXPECT_EQ(rest_answer["old"]["status"], "superseded") << rest->body;
        EXPECT_EQ(rest_answer["new"]["supersedes"], kExampleDecision) << rest->body;
      } else if (info.name == "fact_supersede") {
        EXPECT_EQ(rest_answer["superseded"], kExampleFact) << rest->body;
        EXPECT_NE(rest_answer["id"], kExampleFact) << rest->body;
      } else {
        EXPECT_EQ(rest_answer["version"], 2) << rest->body;
      }
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
      } else if (info.name == "fact_add") {
        // The same fact a second time merges into the one REST added.
        EXPECT_EQ(rest_answer["merged"], false) << rest->body;
        EXPECT_EQ(mcp["structuredContent"]["merged"], true) << mcp.dump();
        EXPECT_EQ(mcp["structuredContent"]["id"], rest_answer["id"]) << mcp.dump();
      } else if (info.name == "session_end" || info.name == "consolidate") {
        // REST ended (consolidated) the session before MCP asked: nothing is left of it.
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
      // MCP names the field by its JSON path (an operation that is no tool:
      // the operation itself); REST the same (a route without a body: the
      // parameter of its name); the command line by its flag.
      std::string said;
      if (tool) {
        const json called = Mcp("tools/call", {{"name", info.mcp_tool}, {"arguments", bad[b]}});
        EXPECT_EQ(called["isError"], true);
        said = called["content"][0]["text"].get<std::string>();
      } else {
        api::CallContext context;
        context.ns.tenant = kTenant;
        said = "invalid_argument: " + api::Operations()[i]->Check(context, bad[b]).message();
      }
      ASSERT_EQ(said.rfind("invalid_argument: ", 0), 0u) << said;
      const std::string field_message = said.substr(std::string("invalid_argument: ").size());
      EXPECT_EQ(cli[i].bad[b].code, 2) << cli[i].bad[b].err;
      if (b == 0) {
        // An undeclared field: unknown to MCP, an unknown parameter (REST
        // without a body) and an unknown flag on the command line.
        EXPECT_EQ(field_message.rfind("unknown field 'no_such_field'; known fields are ", 0), 0u) << said;
        if (info.HasBody()) {
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

}  // namespace
}  // namespace msp
