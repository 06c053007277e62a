// The mission record verbs end to end through RunCli on a real store:
// decision add (flags and JSON), list, show, supersede, import; principle
// edits that lose a race; operator clearances; corrections that refuse raw
// text by every input path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using json = nlohmann::json;

using testing::Contains;

class DecisionVerbsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    data_ = dir_.path() + "/data";
    ASSERT_EQ(Run({"init"}).code, 0);
  }

  CliRun Run(std::vector<std::string> args, const std::string& input = "") {
    args.push_back("--data-dir");
    args.push_back(data_);
    return RunCliCapture(args, input);
  }

  json RunJson(std::vector<std::string> args, const std::string& input = "") {
    args.push_back("--json");
    CliRun r = Run(args, input);
    EXPECT_EQ(r.code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  }

  testing::TempDir dir_{"decision-verbs"};
  std::string data_;
};

// An import line carrying another tenant's record id gets the same answer as
// one carrying an unknown id (no existence oracle across tenants): both are
// applied, the first under a fresh id; the other tenant's record is untouched.
TEST_F(DecisionVerbsTest, ImportAnswersAnotherTenantsIdAsAnUnknownOne) {
  const std::string theirs = "0190e5c2-0000-7000-8000-0000000000b1";
  const std::string unknown = "0190e5c2-0000-7000-8000-0000000000b2";
  auto line = [](const std::string& id, const std::string& tenant, const std::string& text) {
    return R"({"id": ")" + id + R"(", "namespace": {"tenant": ")" + tenant + R"("}, "kind": "fact", "text": ")" +
           text + "\"}\n";
  };
  ASSERT_EQ(Run({"import", "-"}, line(theirs, "acme", "acme keeps the ledger in the vault")).code, 0);
  const CliRun foreign = Run({"import", "-"}, line(theirs, "evil", "probing for the acme id"));
  const CliRun fresh = Run({"import", "-"}, line(unknown, "evil", "probing for the acme id"));
  EXPECT_EQ(foreign.code, 0) << foreign.err;
  EXPECT_EQ(foreign.code, fresh.code);
  EXPECT_EQ(foreign.out, fresh.out);
  EXPECT_EQ(foreign.err, fresh.err);
  const json kept = RunJson({"get", theirs, "--tenant", "acme"});
  EXPECT_EQ(kept["text"], "acme keeps the ledger in the vault");
  EXPECT_EQ(kept["namespace"]["tenant"], "acme");
  EXPECT_EQ(Run({"get", theirs, "--tenant", "evil"}).code, 4);
  EXPECT_EQ(RunJson({"get", unknown, "--tenant", "evil"})["text"], "probing for the acme id");
  EXPECT_EQ(RunJson({"stats", "--tenant", "evil"})["records"], 2);
}

// --request-id: a repeat prints the first write's id and writes nothing; the
// id with another write fails and writes nothing; tenants keep their own.
TEST_F(DecisionVerbsTest, WriteWithARequestIdIsIdempotent) {
  const std::vector<std::string> write = {"write", "Ann keeps the spare keys under the blue pot", "--tag", "profile",
                                          "--tenant", "acme", "--request-id", "cli-req-1"};
  const json first = RunJson(write);
  const json again = RunJson(write);
  EXPECT_EQ(again["id"], first["id"]);
  EXPECT_EQ(RunJson({"stats", "--tenant", "acme"})["records"], 1);
  std::vector<std::string> other = write;
  other[1] = "Ann keeps the spare keys under the red pot";
  const CliRun conflict = Run(other);
  EXPECT_EQ(conflict.code, 1) << conflict.err;
  EXPECT_NE(conflict.err.find("cli-req-1"), std::string::npos) << conflict.err;
  EXPECT_EQ(RunJson({"stats", "--tenant", "acme"})["records"], 1);
  std::vector<std::string> beta = write;
  beta[5] = "beta";
  EXPECT_NE(RunJson(beta)["id"], first["id"]);
  EXPECT_EQ(Run({"write", "Ann keeps the spare keys", "--request-id", "two words"}).code, 2);
}

TEST_F(DecisionVerbsTest, AddShowListWithFlags) {
  json d = RunJson({"decision", "add", "--mission", "mars", "--operator", "ann", "--title", "Route north",
                    "--context", "The south sector is jammed.", "--decision", "Take the northern route.",
                    "--alternative", "South route: the link drops", "--component", "nav", "--provenance",
                    "commit:9f2c1e0", "--criticality", "high"});
  const std::string id = d["id"];
  EXPECT_EQ(d["decided_by"], "ann");
  EXPECT_EQ(d["alternatives"][0]["option"], "South route");
  EXPECT_EQ(d["alternatives"][0]["reason"], "the link drops");
  EXPECT_EQ(d["provenance"][0]["type"], "commit");

  CliRun show = Run({"decision", "show", id, "--mission", "mars"});
  EXPECT_EQ(show.code, 0) << show.err;
  EXPECT_TRUE(Contains(show.out, "title:         Route north"));
  EXPECT_TRUE(Contains(show.out, "- South route: the link drops"));
  EXPECT_TRUE(Contains(show.out, "provenance:    commit 9f2c1e0"));

  CliRun list = Run({"decision", "list", "--mission", "mars", "--component", "nav"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_TRUE(Contains(list.out, id + "  accepted"));
  EXPECT_TRUE(Contains(Run({"decision", "list", "--mission", "mars", "--component", "comms"}).out, "no decisions"));

  // Usage errors.
  CliRun bad = Run({"decision", "add", "--mission", "mars", "--title", "T", "--context", "C", "--decision", "D",
                    "--alternative", "no reason given"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(Contains(bad.err, "--alternative must be 'OPTION: REASON'"));
  CliRun no_mission = Run({"decision", "list"});
  EXPECT_EQ(no_mission.code, 2);
  EXPECT_TRUE(Contains(no_mission.err, "--mission is required"));
  CliRun missing = Run({"decision", "add", "--mission", "mars", "--title", "T", "--decision", "D"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(Contains(missing.err, "context is required"));
  EXPECT_EQ(Run({"decision", "show", "0190e5c2-0000-7000-8000-000000000001", "--mission", "mars"}).code, 4);
}

TEST_F(DecisionVerbsTest, JsonInputCyrillicAndSupersede) {
  const std::string in =
      R"({"title": "Маршрут через північ", "context": "Південь під РЕБ.", "decision": "Північ.",
          "alternatives": [{"option": "Південь", "reason": "зв'язок губиться"}], "component": "навігація"})";
  json a = RunJson({"decision", "add", "-", "--mission", "місія"}, in);
  EXPECT_EQ(a["title"], "Маршрут через північ");
  EXPECT_EQ(a["namespace"]["mission"], "місія");
  json shown = RunJson({"decision", "show", a["id"], "--mission", "місія"});
  EXPECT_EQ(shown["alternatives"][0]["reason"], "зв'язок губиться");
  EXPECT_EQ(shown["component"], "навігація");

  CliRun unknown = Run({"decision", "add", "-", "--mission", "m"}, R"({"title": "T", "mood": "good"})");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(Contains(unknown.err, "unknown field 'mood'"));

  json b = RunJson({"decision", "add", "-", "--mission", "місія"},
                   R"({"title": "Новий маршрут", "context": "Північ закрита.", "decision": "Захід."})");
  json s = RunJson({"decision", "supersede", a["id"], "--by", b["id"], "--mission", "місія"});
  EXPECT_EQ(s["old"]["status"], "superseded");
  EXPECT_EQ(s["old"]["superseded_by"], b["id"]);
  EXPECT_EQ(s["new"]["supersedes"], a["id"]);
  CliRun again = Run({"decision", "supersede", a["id"], "--by", b["id"], "--mission", "місія"});
  EXPECT_EQ(again.code, 1);
  EXPECT_TRUE(Contains(again.err, "already superseded"));
}

// The decision verbs are src/api's decision operations: --json answers what
// REST and MCP answer ({decisions} for a list), the limits are the
// operation's, `decision add -` takes the whole request as JSON, and a
// status or supersede names only a decision the asker may read.
TEST_F(DecisionVerbsTest, DecisionVerbsAreTheDeclaredOperations) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Run({"decision", "add", "--mission", "m", "--title", "Plan " + std::to_string(i), "--context", "C",
                   "--decision", "D", "--decided-at", "2026-11-0" + std::to_string(i + 1) + "T00:00:00Z"})
                  .code,
              0);
  }
  json all = RunJson({"decision", "list", "--mission", "m"});
  ASSERT_TRUE(all.is_object()) << all.dump();
  ASSERT_EQ(all["decisions"].size(), 3u);
  EXPECT_EQ(RunJson({"decision", "list", "--mission", "m", "--limit", "2"})["decisions"].size(), 2u);
  json newest = RunJson({"decision", "list", "--mission", "m", "--newest-first", "--since", "2026-11-02T00:00:00Z"});
  ASSERT_EQ(newest["decisions"].size(), 2u);
  EXPECT_EQ(newest["decisions"][0]["title"], "Plan 2");
  // One range everywhere: 1..1000 (0 no longer means "all").
  for (const char* limit : {"0", "1001"}) {
    CliRun bad = Run({"decision", "list", "--mission", "m", "--limit", limit});
    EXPECT_EQ(bad.code, 2) << limit;
    EXPECT_TRUE(Contains(bad.err, "--limit must be between 1 and 1000")) << bad.err;
  }
  CliRun backwards = Run({"decision", "list", "--mission", "m", "--since", "2026-11-02T00:00:00Z", "--until",
                          "2026-11-01T00:00:00Z"});
  EXPECT_EQ(backwards.code, 2);
  EXPECT_TRUE(Contains(backwards.err, "--until must be later than --since")) << backwards.err;

  // `decision add -`: the request as JSON; the namespace flags still apply, the request's fields are not flags too.
  json piped = RunJson({"decision", "add", "-", "--mission", "m", "--operator", "ann"},
                       R"({"title": "Piped", "context": "C", "decision": "D", "tags": ["stdin"],
                           "namespace": {"operator": "bob"}})");
  EXPECT_EQ(piped["title"], "Piped");
  EXPECT_EQ(piped["decided_by"], "bob");  // the request's operator, over --operator
  EXPECT_EQ(piped["namespace"]["mission"], "m");
  CliRun both = Run({"decision", "add", "-", "--mission", "m", "--title", "Flag"},
                    R"({"title": "T", "context": "C", "decision": "D"})");
  EXPECT_EQ(both.code, 2);
  EXPECT_TRUE(Contains(both.err, "either as flags or as JSON on standard input, not both (--title)")) << both.err;
  CliRun not_dash = Run({"decision", "add", "file.json", "--mission", "m"});
  EXPECT_EQ(not_dash.code, 2);
  EXPECT_TRUE(Contains(not_dash.err, "the only argument is '-'")) << not_dash.err;

  // Status: the enum's names on the command line too; superseded only through supersede.
  const std::string first = all["decisions"][0]["id"];
  CliRun status = Run({"decision", "status", first, "deprecated", "--mission", "m"});
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_TRUE(Contains(status.out, "decision " + first + " is deprecated")) << status.out;
  CliRun superseded = Run({"decision", "status", first, "superseded", "--mission", "m"});
  EXPECT_EQ(superseded.code, 2);
  EXPECT_TRUE(Contains(superseded.err, "STATUS: unknown value 'superseded'")) << superseded.err;

  // A decision above the asker: not found for status and supersede, named either way; nothing changes.
  ASSERT_EQ(Run({"operator", "set", "low", "--clearance", "1", "--mission", "m"}).code, 0);
  json secret = RunJson({"decision", "add", "--mission", "m", "--title", "Secret", "--context", "C", "--decision",
                         "D", "--access-level", "5"});
  const std::string second = all["decisions"][1]["id"];
  EXPECT_EQ(Run({"decision", "status", secret["id"], "rejected", "--mission", "m", "--operator", "low"}).code, 4);
  EXPECT_EQ(Run({"decision", "supersede", secret["id"], "--by", second, "--mission", "m", "--operator", "low"}).code,
            4);
  EXPECT_EQ(Run({"decision", "supersede", second, "--by", secret["id"], "--mission", "m", "--operator", "low"}).code,
            4);
  json unchanged = RunJson({"decision", "show", secret["id"], "--mission", "m"});
  EXPECT_EQ(unchanged["status"], "accepted");
  EXPECT_EQ(unchanged["supersedes"], "");
  EXPECT_EQ(RunJson({"decision", "show", second, "--mission", "m"})["superseded_by"], "");
}

TEST_F(DecisionVerbsTest, PrincipleEditConflictAndCitation) {
  ASSERT_EQ(Run({"principle", "add", "P-1", "--statement", "A human confirms.", "--mission", "m"}).code, 0);
  CliRun cites_unknown = Run({"decision", "add", "--mission", "m", "--title", "T", "--context", "C", "--decision",
                              "D", "--principle", "P-2"});
  EXPECT_EQ(cites_unknown.code, 2);
  EXPECT_TRUE(Contains(cites_unknown.err, "'P-2' is not in the registry"));
  EXPECT_EQ(Run({"decision", "add", "--mission", "m", "--title", "T", "--context", "C", "--decision", "D",
                 "--principle", "P-1"})
                .code,
            0);

  json v2 = RunJson({"principle", "edit", "P-1", "--base-version", "1", "--statement", "Two humans confirm.",
                     "--mission", "m", "--operator", "bob"});
  EXPECT_EQ(v2["version"], 2);
  EXPECT_EQ(v2["author"], "bob");
  CliRun stale = Run({"principle", "edit", "P-1", "--base-version", "1", "--statement", "Nobody confirms.",
                      "--mission", "m"});
  EXPECT_EQ(stale.code, 1);
  EXPECT_TRUE(Contains(stale.err, "the current version is 2")) << stale.err;
  // --all: the newest version with every version in `versions` (it printed a
  // bare array), as REST's ?all and MCP's principle_show.
  json all = RunJson({"principle", "show", "P-1", "--all", "--mission", "m"});
  EXPECT_EQ(all["version"], 2);
  ASSERT_EQ(all["versions"].size(), 2u);
  EXPECT_EQ(all["versions"][0]["statement"], "A human confirms.");
  EXPECT_EQ(all["versions"][1]["statement"], "Two humans confirm.");
  EXPECT_EQ(Run({"principle", "show", "P-1", "--all", "--version", "1", "--mission", "m"}).code, 2);
  EXPECT_EQ(RunJson({"principle", "show", "P-1", "--version", "1", "--mission", "m"})["current"], false);
  CliRun listed = Run({"principle", "list", "--mission", "m"});
  EXPECT_TRUE(Contains(listed.out, "P-1 v2  Two humans confirm."));
  // list --json answers {principles} (it printed a bare array), as REST and MCP.
  json list = RunJson({"principle", "list", "--mission", "m"});
  ASSERT_EQ(list["principles"].size(), 1u);
  EXPECT_EQ(list["principles"][0]["version"], 2);
  EXPECT_EQ(Run({"principle", "edit", "P-1", "--mission", "m", "--statement", "x"}).code, 2);  // no base
  // principle edit is principle_put with a base version: 0 would add version 1.
  EXPECT_EQ(Run({"principle", "edit", "P-1", "--base-version", "0", "--mission", "m", "--statement", "x"}).code, 2);
  // principle add takes no --base-version: help leaves it out and the
  // parser refuses it as a flag the verb does not know.
  CliRun based = Run({"principle", "add", "P-2", "--base-version", "1", "--mission", "m", "--statement", "x"});
  EXPECT_EQ(based.code, 2);
  EXPECT_TRUE(Contains(based.err, "--base-version")) << based.err;
  EXPECT_FALSE(Contains(RunCliCapture({"help", "principle", "add"}).out, "--base-version"));
  EXPECT_TRUE(Contains(RunCliCapture({"help", "principle", "edit"}).out, "--base-version"));
  EXPECT_TRUE(Contains(RunCliCapture({"help", "principle", "add"}).out, "--statement"));
  CliRun taken = Run({"principle", "add", "P-1", "--statement", "Again.", "--mission", "m"});
  EXPECT_EQ(taken.code, 1);
  EXPECT_TRUE(Contains(taken.err, "already exists")) << taken.err;
  // An edit of a version above the editor's clearance: not found, nothing stored.
  ASSERT_EQ(Run({"principle", "add", "S-1", "--statement", "Classified.", "--access-level", "5", "--mission", "m"})
                .code,
            0);
  EXPECT_EQ(Run({"principle", "edit", "S-1", "--base-version", "1", "--statement", "Open.", "--mission", "m",
                 "--operator", "bob"})
                .code,
            4);
  EXPECT_EQ(RunJson({"principle", "show", "S-1", "--mission", "m"})["version"], 1);
}

// Every verb, not only the mission's, serves a caller the same records: the
// command line's caller is --operator at their registry clearance, else the
// data directory's owner (no limit).
TEST_F(DecisionVerbsTest, SearchGetAndExportServeTheCallersClearance) {
  const std::string open_id = "0190e5c2-0000-7000-8000-0000000000a1";
  const std::string secret_id = "0190e5c2-0000-7000-8000-0000000000a2";
  const std::string lines =
      R"({"id": ")" + open_id + R"(", "namespace": {"mission": "m", "operator": "low"}, "kind": "fact", )"
      R"("text": "the billing ledger is reconciled every night", "access_level": 0})" "\n"
      R"({"id": ")" + secret_id + R"(", "namespace": {"mission": "m", "operator": "low"}, "kind": "fact", )"
      R"("text": "the billing ledger signing key rotates every week", "access_level": 5})" "\n";
  ASSERT_EQ(Run({"import", "-"}, lines).code, 0);
  ASSERT_EQ(Run({"operator", "set", "low", "--clearance", "1", "--mission", "m"}).code, 0);
  auto hit_ids = [&](const std::vector<std::string>& who) {
    std::vector<std::string> args = {"search", "billing ledger", "--mission", "m"};
    args.insert(args.end(), who.begin(), who.end());
    std::set<std::string> ids;
    const json answer = RunJson(args);
    for (const json& h : answer["hits"]) ids.insert(h["memory"]["id"].get<std::string>());
    return ids;
  };
  const std::vector<std::string> low = {"--operator", "low"};
  EXPECT_EQ(hit_ids(low), std::set<std::string>({open_id}));
  EXPECT_EQ(Run({"get", secret_id, "--mission", "m", "--operator", "low"}).code, 4);
  EXPECT_EQ(Run({"get", open_id, "--mission", "m", "--operator", "low"}).code, 0);
  CliRun exported = Run({"export", "--mission", "m", "--operator", "low"});
  ASSERT_EQ(exported.code, 0) << exported.err;
  EXPECT_TRUE(Contains(exported.out, open_id));
  EXPECT_FALSE(Contains(exported.out, secret_id));
  // The owner sees both; so does low once cleared for level 5.
  const std::set<std::string> owner = hit_ids({});  // low's registry entry matches too
  EXPECT_EQ(owner.count(open_id) + owner.count(secret_id), 2u);
  EXPECT_EQ(Run({"get", secret_id, "--mission", "m"}).code, 0);
  EXPECT_TRUE(Contains(Run({"export", "--mission", "m"}).out, secret_id));
  ASSERT_EQ(Run({"operator", "set", "low", "--clearance", "5", "--mission", "m"}).code, 0);
  EXPECT_EQ(hit_ids(low), std::set<std::string>({open_id, secret_id}));
  EXPECT_EQ(Run({"get", secret_id, "--mission", "m", "--operator", "low"}).code, 0);
  EXPECT_TRUE(Contains(Run({"export", "--mission", "m", "--operator", "low"}).out, secret_id));
}

TEST_F(DecisionVerbsTest, ClearanceFiltersEveryRead) {
  ASSERT_EQ(Run({"operator", "set", "low", "--clearance", "1", "--mission", "m"}).code, 0);
  ASSERT_EQ(Run({"operator", "set", "high", "--clearance", "7"}).code, 0);  // tenant-wide
  json secret = RunJson({"decision", "add", "--mission", "m", "--title", "Secret plan", "--context", "C",
                         "--decision", "D", "--access-level", "5"});
  json open = RunJson({"decision", "add", "--mission", "m", "--title", "Open plan", "--context", "C",
                       "--decision", "D"});
  json low = RunJson({"decision", "list", "--mission", "m", "--operator", "low"})["decisions"];
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0]["id"], open["id"]);
  json high = RunJson({"decision", "list", "--mission", "m", "--operator", "high"})["decisions"];
  EXPECT_EQ(high.size(), 2u);
  // No operator: the data directory's owner, as `msp search` and `get`.
  json owner = RunJson({"decision", "list", "--mission", "m"})["decisions"];
  EXPECT_EQ(owner.size(), 2u);
  // An unknown operator: clearance 0.
  json nobody = RunJson({"decision", "list", "--mission", "m", "--operator", "nobody"})["decisions"];
  EXPECT_EQ(nobody.size(), 1u);
  json searched =
      RunJson({"decision", "list", "--mission", "m", "--operator", "low", "--query", "secret plan"})["decisions"];
  for (const json& d : searched) EXPECT_NE(d["id"], secret["id"]);
  EXPECT_EQ(Run({"decision", "show", secret["id"], "--mission", "m", "--operator", "low"}).code, 4);
  EXPECT_EQ(Run({"decision", "show", secret["id"], "--mission", "m", "--operator", "high"}).code, 0);
  EXPECT_EQ(Run({"decision", "show", secret["id"], "--mission", "m", "--clearance", "5"}).code, 0);
  EXPECT_EQ(Run({"decision", "show", secret["id"], "--mission", "m", "--clearance", "4"}).code, 4);
  EXPECT_EQ(Run({"decision", "show", secret["id"], "--mission", "m"}).code, 0);

  // `low` may not write what it could not read back; nothing is stored.
  CliRun above = Run({"decision", "add", "--mission", "m", "--operator", "low", "--title", "Above", "--context", "C",
                      "--decision", "D", "--access-level", "5"});
  EXPECT_EQ(above.code, 1);
  EXPECT_TRUE(Contains(above.err, "clearance 1")) << above.err;
  EXPECT_EQ(RunJson({"decision", "list", "--mission", "m"})["decisions"].size(), 2u);
  CliRun ops = Run({"operator", "list", "--mission", "m"});
  EXPECT_TRUE(Contains(ops.out, "high  clearance 7  tenant-wide"));
  EXPECT_TRUE(Contains(ops.out, "low  clearance 1  mission m"));
  EXPECT_EQ(Run({"operator", "set", "x", "--clearance", "10"}).code, 2);
  // list --json answers {operators} (it printed a bare array), as REST and MCP;
  // show is new on the command line.
  json listed = RunJson({"operator", "list", "--mission", "m"});
  ASSERT_EQ(listed["operators"].size(), 2u);
  json shown = RunJson({"operator", "show", "low", "--mission", "m"});
  EXPECT_EQ(shown["clearance"], 1);
  EXPECT_EQ(shown["scope"], "mission");
  EXPECT_EQ(RunJson({"operator", "show", "high", "--mission", "m"})["scope"], "tenant");
  EXPECT_EQ(Run({"operator", "show", "nobody", "--mission", "m"}).code, 4);
  // A caller limited to a clearance (--operator: low's, 1) may not set one,
  // as a REST key or MCP session with a clearance may not; nothing changes.
  CliRun raised = Run({"operator", "set", "low", "--clearance", "9", "--mission", "m", "--operator", "low"});
  EXPECT_EQ(raised.code, 1);
  EXPECT_TRUE(Contains(raised.err, "limited to clearance 1")) << raised.err;
  EXPECT_EQ(RunJson({"operator", "show", "low", "--mission", "m"})["clearance"], 1);
}

TEST_F(DecisionVerbsTest, CorrectionsRefuseRawTextByEveryPath) {
  const std::string raw = "Please rewrite auth.cc. Here is my prompt:\n```\ncode\n```";
  // JSON with a raw-text field.
  CliRun j1 = Run({"correction", "add", "-", "--mission", "m", "--operator", "ann"},
                  R"({"class": "missing_context", "category": "api", "component": "auth", "outcome": "modified",
                      "summary": "Missed the rotation decision.", "prompt": "the whole prompt"})");
  EXPECT_EQ(j1.code, 2);  // bad input on every face (it was refused, 3)
  EXPECT_TRUE(Contains(j1.err, "prompt")) << j1.err;
  // JSON with raw text in the summary.
  json with_raw_summary = {{"class", "missing_context"}, {"category", "api"}, {"component", "auth"},
                           {"outcome", "modified"},       {"summary", raw}};
  EXPECT_EQ(Run({"correction", "add", "-", "--mission", "m", "--operator", "ann"}, with_raw_summary.dump()).code, 2);
  // Flags.
  CliRun f1 = Run({"correction", "add", "--mission", "m", "--operator", "ann", "--class", "missing_context",
                   "--category", "api", "--component", "auth", "--outcome", "modified", "--summary", raw});
  EXPECT_EQ(f1.code, 2);
  CliRun f2 = Run({"correction", "add", "--mission", "m", "--operator", "ann", "--class", "missing context here",
                   "--category", "api", "--component", "auth", "--outcome", "modified", "--summary", "Fine."});
  EXPECT_EQ(f2.code, 2);
  EXPECT_EQ(Run({"correction", "add", "--mission", "m", "--class", "c", "--category", "api", "--component", "auth",
                 "--outcome", "modified", "--summary", "Fine."})
                .code,
            2);  // no operator
  CliRun none = Run({"correction", "list", "--mission", "m"});
  EXPECT_TRUE(Contains(none.out, "no corrections"));

  json ok = RunJson({"correction", "add", "--mission", "m", "--operator", "ann", "--class", "missing_context",
                     "--category", "маршрут", "--component", "nav", "--outcome", "accepted", "--summary",
                     "Дайджест пропустив звіт про РЕБ.", "--retrieval-id", "0190e5c2-0000-7000-8000-000000000042"});
  EXPECT_EQ(ok["operator"], "ann");
  EXPECT_EQ(ok["category"], "маршрут");
  // list --json answers {corrections} (it printed a bare array), as REST and MCP.
  json answer = RunJson({"correction", "list", "--mission", "m", "--of", "ann"});
  ASSERT_TRUE(answer.is_object()) << answer.dump();
  const json list = answer["corrections"];
  ASSERT_EQ(list.size(), 1u);
  // show: the one correction, on the command line too.
  json shown = RunJson({"correction", "show", list[0]["id"], "--mission", "m"});
  EXPECT_EQ(shown["id"], list[0]["id"]);
  // limit 1..1000 on every face (the command line took 0..100000, 0 meaning all).
  EXPECT_EQ(Run({"correction", "list", "--mission", "m", "--limit", "0"}).code, 2);
  EXPECT_EQ(Run({"correction", "list", "--mission", "m", "--limit", "1001"}).code, 2);
  EXPECT_EQ(list[0]["summary"], "Дайджест пропустив звіт про РЕБ.");
  // The stored record's body holds exactly the abstraction.
  json raw_record = RunJson({"get", list[0]["id"], "--mission", "m"});
  std::set<std::string> keys;
  for (auto it = raw_record["body"].begin(); it != raw_record["body"].end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"type", "class", "category", "component", "outcome", "summary",
                                         "retrieval_id"}));
}

TEST_F(DecisionVerbsTest, ImportAndReimport) {
  const std::string adr = dir_.path() + "/adr";
  std::filesystem::create_directories(adr);
  std::ofstream(adr + "/0001-use-adrs.md") << "# 1. Use ADRs\n\n## Status\n\nAccepted\n\n## Context\n\nWe forget.\n\n"
                                              "## Decision\n\nWrite ADRs.\n";
  std::ofstream(adr + "/0002-use-msp.md") << "# 2. Use msp\n\n## Status\n\nProposed\n\n## Context\n\nAgents forget.\n\n"
                                             "## Decision\n\nUse msp.\n\n## Consequences\n\nNone yet.\n";
  CliRun first = Run({"decision", "import", adr, "--mission", "m", "--component", "process"});
  EXPECT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(Contains(first.out, "added 2, updated 0, unchanged 0"));
  EXPECT_TRUE(Contains(first.err, "msp: warning: "));
  EXPECT_TRUE(Contains(first.err, "0001-use-adrs.md: no Consequences section"));
  json second = RunJson({"decision", "import", adr, "--mission", "m"});
  EXPECT_EQ(second["added"], 0);
  // --component differs from the first import: both decisions are updated.
  EXPECT_EQ(second["updated"], 2);
  json third = RunJson({"decision", "import", adr, "--mission", "m"});
  EXPECT_EQ(third["unchanged"], 2);
  json list = RunJson({"decision", "list", "--mission", "m"})["decisions"];
  EXPECT_EQ(list.size(), 2u);
  // decision_import_adr's answer on every face: with dry_run; --folder names
  // the records as REST and MCP name them (default: DIR's absolute path).
  EXPECT_EQ(third["dry_run"], false);
  EXPECT_EQ(third["entries"][0]["file"], std::filesystem::canonical(adr).string() + "/0001-use-adrs.md");
  json named = RunJson({"decision", "import", adr, "--mission", "m2", "--folder", "docs/adr", "--dry-run"});
  EXPECT_EQ(named["entries"][0]["file"], "docs/adr/0001-use-adrs.md");
  EXPECT_EQ(named["added"], 2);
  EXPECT_EQ(named["dry_run"], true);
  EXPECT_EQ(RunJson({"decision", "list", "--mission", "m2"})["decisions"].size(), 0u);
  // A folder without ADRs is not an import (files: 1..1000 on every face).
  std::filesystem::create_directories(dir_.path() + "/empty");
  CliRun empty = Run({"decision", "import", dir_.path() + "/empty", "--mission", "m"});
  EXPECT_EQ(empty.code, 4) << empty.err;
  EXPECT_TRUE(Contains(empty.err, "no ADR files")) << empty.err;
  // An operator below clearance 9 may not import, as a key with a clearance
  // may not over REST and MCP (it could update decisions it cannot read).
  CliRun limited = Run({"decision", "import", adr, "--mission", "m", "--operator", "nobody"});
  EXPECT_EQ(limited.code, 1) << limited.err;
  EXPECT_TRUE(Contains(limited.err, "limited to clearance 0")) << limited.err;

  // An unknown status is a warning; a file that cannot be read as text
  // fails alone: the rest is imported and the exit code is 1 (partial).
  std::ofstream(adr + "/0003-odd.md") << "# 3. Odd\n\n## Status\n\nMaybe\n\n## Context\n\nC\n\n## Decision\n\nD\n";
  std::ofstream(adr + "/0004-bad.md") << "# 4. Bad\n\n## Context\n\n\xFF\n\n## Decision\n\nD\n";
  CliRun partial = Run({"decision", "import", adr, "--mission", "m"});
  EXPECT_EQ(partial.code, 1) << partial.err;
  EXPECT_TRUE(Contains(partial.err, "msp: failed: ")) << partial.err;
  EXPECT_TRUE(Contains(partial.err, "0004-bad.md: invalid UTF-8")) << partial.err;
  EXPECT_TRUE(Contains(partial.err, "0003-odd.md: unknown status 'Maybe'")) << partial.err;
  EXPECT_TRUE(Contains(partial.out, "added 1, updated 0, unchanged 2, failed 1")) << partial.out;
  CliRun again = Run({"decision", "import", adr, "--mission", "m", "--json"});
  EXPECT_EQ(again.code, 1);
  json partial_json = json::parse(again.out, nullptr, false);
  EXPECT_EQ(partial_json["failed"], 1);
  EXPECT_EQ(partial_json["unchanged"], 3);
  EXPECT_EQ(RunJson({"decision", "list", "--mission", "m"})["decisions"].size(), 3u);
  EXPECT_EQ(Run({"decision", "import", dir_.path() + "/none", "--mission", "m"}).code, 4);
}

// docs/mission.md's walkthrough on a public ADR collection (MADR's own
// decision records, tests/data/adr/madr, CC0): import, supersede, a query
// under three budgets, a handoff. This checks what the walkthrough shows.
TEST_F(DecisionVerbsTest, WalkthroughOnMadrsOwnDecisions) {
  const std::string adr = dir_.path() + "/madr";
  std::filesystem::copy(MSP_ADR_FIXTURES "/madr", adr);
  CliRun imported = Run({"decision", "import", adr, "--mission", "madr", "--json"});
  ASSERT_EQ(imported.code, 0) << imported.err;
  const json report = json::parse(imported.out);
  EXPECT_EQ(report["added"], 19);
  EXPECT_EQ(report["failed"], 0);
  std::map<std::string, std::string> id_of;  // "0008" -> id
  std::map<std::string, std::string> title_of;
  for (const json& e : report["entries"]) {
    const std::string name = std::filesystem::path(e["file"].get<std::string>()).filename().string();
    id_of[name.substr(0, 4)] = e["id"];
    title_of[name.substr(0, 4)] = e["title"];
  }
  EXPECT_EQ(title_of["0008"], "Add Status Field");
  EXPECT_EQ(title_of["0013"], "Use YAML front matter for metadata");
  // MADR's sections beyond the mapped ones are kept, and searchable.
  json d13 = RunJson({"decision", "show", id_of["0013"], "--mission", "madr"});
  bool pros_and_cons = false;
  for (const json& sec : d13["sections"]) pros_and_cons |= sec["heading"] == "Pros and Cons of the Options";
  EXPECT_TRUE(pros_and_cons) << d13.dump();
  EXPECT_EQ(d13["status"], "proposed");  // MADR's own records name no status

  // 0013 (metadata in front matter) replaces 0008 (a status field in the text).
  ASSERT_EQ(Run({"decision", "supersede", id_of["0008"], "--by", id_of["0013"], "--mission", "madr"}).code, 0);
  ASSERT_EQ(Run({"event", "add", "Should MADR publish a JSON schema for its front matter?", "--mission", "madr",
                 "--type", "question", "--component", "template"})
                .code,
            0);

  const std::string task = "where should an ADR keep its status and date?";
  std::vector<json> digests;
  for (const char* budget : {"150", "400", "2000"}) {
    CliRun q = Run({"query", task, "--mission", "madr", "--token-budget", budget, "--json"});
    ASSERT_EQ(q.code, 0) << q.err;
    json d = json::parse(q.out);
    EXPECT_LE(d["tokens_used"].get<int>(), std::stoi(budget));
    double lowest_served = 2.0, highest_left = -1.0;
    for (const json& sec : d["digest"]["sections"]) {
      for (const json& e : sec["entries"]) {
        lowest_served = std::min(lowest_served, e["score"].get<double>());
        EXPECT_NE(e["id"], id_of["0008"]);  // superseded: never served
      }
    }
    for (const json& e : d["digest"]["left_out"]) highest_left = std::max(highest_left, e["score"].get<double>());
    EXPECT_GE(lowest_served, highest_left) << "budget " << budget;
    digests.push_back(d);
  }
  auto first_id = [](const json& d) -> std::string {
    for (const json& sec : d["digest"]["sections"]) {
      if (!sec["entries"].empty()) return sec["entries"][0]["id"];
    }
    return "";
  };
  // The same top entry at 400 and 2000 tokens: the budget cuts from the bottom.
  EXPECT_EQ(first_id(digests[1]), id_of["0013"]) << digests[1]["markdown"];
  EXPECT_EQ(first_id(digests[2]), id_of["0013"]) << digests[2]["markdown"];

  CliRun handoff =
      Run({"handoff", "--mission", "madr", "--from", "ann", "--to", "bob", "--budget", "1500", "--json"});
  ASSERT_EQ(handoff.code, 0) << handoff.err;
  // --json answers handoff_digest's answer: {markdown, ..., digest}.
  const json h = json::parse(handoff.out);
  ASSERT_EQ(h["digest"]["open_questions"].size(), 1u);
  EXPECT_LE(h["tokens_used"].get<int>(), 1500);
  std::set<std::string> in_timeline;
  for (const json& n : h["digest"]["timeline"]) {
    if (n["kind"] == "decision") in_timeline.insert(n["decision"]["id"]);
  }
  EXPECT_EQ(in_timeline.count(id_of["0008"]), 0u);
  const std::string md = h["markdown"];
  EXPECT_LT(md.find("## Open questions"), md.find("## Since"));
  // With room for everything: 0013 is there, carrying 0008 inside it.
  CliRun roomy = Run({"handoff", "--mission", "madr", "--from", "ann", "--to", "bob", "--budget", "40000"});
  ASSERT_EQ(roomy.code, 0) << roomy.err;
  EXPECT_TRUE(Contains(roomy.out, "**Use YAML front matter for metadata**\n  > Replaces (superseded): Add Status Field"))
      << roomy.out;
  EXPECT_FALSE(Contains(roomy.out, "**Add Status Field**")) << roomy.out;
}

}  // namespace
}  // namespace msp
