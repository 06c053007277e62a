// The mission retrieval verbs against a real store in a temp directory:
// query (Markdown and JSON, budget, usage errors), event add / list,
// mark-used (variadic), report corrections with --export, report
// redundancy, report load, handoff.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "tests/support/test_util.h"
#include "util/text.h"

namespace msp {
namespace {

using nlohmann::json;

using testing::Contains;

class QueryVerbsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }

  CliRun Cli(std::vector<std::string> args, const std::string& input = "") {
    args.push_back("--data-dir");
    args.push_back(dir_.path() + "/data");
    args.push_back("--synchronous");
    args.push_back("normal");
    return RunCliCapture(args, input);
  }

  testing::TempDir dir_{"query-verbs"};
};

TEST_F(QueryVerbsTest, QueryEventsReportsAndHandoff) {
  ASSERT_EQ(Cli({"init"}).code, 0);
  const CliRun e1 = Cli({"event", "add", "Jamming detected on channel 4", "--mission", "m1", "--type", "incident",
                         "--component", "comms", "--criticality", "high"});
  ASSERT_EQ(e1.code, 0) << e1.err;
  const std::string jam(TrimAsciiSpace(e1.out));
  const CliRun e2 = Cli({"event", "add", "Relay may be spoofed by the jammer", "--mission", "m1", "--type", "threat",
                         "--component", "comms", "--cause", jam});
  ASSERT_EQ(e2.code, 0) << e2.err;
  EXPECT_EQ(Cli({"event", "add", "x", "--mission", "m1", "--type", "gossip", "--component", "comms"}).code, 2);
  EXPECT_EQ(Cli({"event", "add", "x", "--mission", "m1", "--component", "comms"}).code, 2);  // no --type
  EXPECT_EQ(Cli({"event", "add", "x", "--type", "alert", "--component", "comms"}).code, 2);  // no --mission

  // event add --json answers the whole event, as REST and MCP (it printed
  // id, type, component, criticality, cause, resolves and created_at only).
  const CliRun e3 = Cli({"event", "add", "-", "--mission", "m2", "--type", "alert", "--component", "comms",
                         "--operator", "ann", "--tag", "radio", "--json"},
                        "Channel 4 is back");
  ASSERT_EQ(e3.code, 0) << e3.err;
  const json added = json::parse(e3.out);
  EXPECT_EQ(added["text"], "Channel 4 is back");
  EXPECT_EQ(added["operator"], "ann");
  EXPECT_EQ(added["access_level"], 0);
  // An unknown type names the flag and its values.
  const CliRun gossip = Cli({"event", "add", "x", "--mission", "m1", "--type", "gossip", "--component", "comms"});
  EXPECT_TRUE(Contains(gossip.err, "--type: unknown value 'gossip'")) << gossip.err;

  // event list --json answers {events} as REST and MCP (it printed a bare array).
  const CliRun list = Cli({"event", "list", "--mission", "m1", "--json"});
  ASSERT_EQ(list.code, 0) << list.err;
  const json events = json::parse(list.out)["events"];
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["id"] == jam ? events[1]["cause"] : events[0]["cause"], jam);
  EXPECT_EQ(json::parse(Cli({"event", "list", "--mission", "m1", "--until", "2000-01-01T00:00:00Z", "--json"}).out)
                ["events"]
                    .size(),
            0u);
  const CliRun backwards = Cli({"event", "list", "--mission", "m1", "--since", "2026-02-01T00:00:00Z", "--until",
                                "2026-01-01T00:00:00Z"});
  EXPECT_EQ(backwards.code, 2);
  EXPECT_TRUE(Contains(backwards.err, "--until must be later than --since")) << backwards.err;

  const CliRun md = Cli({"query", "jamming relay channel", "--mission", "m1", "--operator", "ann", "--session", "s1"});
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_TRUE(Contains(md.out, "# Mission memory: jamming relay channel"));
  EXPECT_TRUE(Contains(md.out, "## Workflow"));
  EXPECT_TRUE(Contains(md.out, "Jamming detected on channel 4"));
  EXPECT_TRUE(Contains(md.out, "tokens (counter "));

  const CliRun js = Cli({"query", "jamming relay channel", "--mission", "m1", "--operator", "ann", "--session", "s1",
                         "--json", "--token-budget", "5000"});
  ASSERT_EQ(js.code, 0) << js.err;
  const json digest = json::parse(js.out);
  const std::string rid = digest["retrieval_id"];
  EXPECT_EQ(digest["token_budget"], 5000);
  EXPECT_LE(digest["tokens_used"].get<int>(), 5000);
  std::vector<std::string> served;
  for (const json& s : digest["digest"]["sections"]) {
    for (const json& e : s["entries"]) served.push_back(e["id"]);
  }
  ASSERT_EQ(served.size(), 2u);

  EXPECT_EQ(Cli({"query", "x", "--mission", "m1", "--scope", "everything"}).code, 2);
  EXPECT_EQ(Cli({"query", "x", "--mission", "m1", "--token-budget", "-1"}).code, 2);
  EXPECT_EQ(Cli({"query", "x"}).code, 2);  // no --mission
  const CliRun zero = Cli({"query", "jamming", "--mission", "m1", "--token-budget", "0"});
  EXPECT_EQ(zero.code, 0);
  EXPECT_EQ(zero.out, "");
  EXPECT_TRUE(Contains(zero.err, "holds nothing"));

  // mark-used takes any number of entry ids.
  const CliRun mark = Cli({"mark-used", rid, served[0], served[1], "--mission", "m1"});
  ASSERT_EQ(mark.code, 0) << mark.err;
  EXPECT_TRUE(Contains(mark.out, "2 of 2 served entries marked used"));
  EXPECT_EQ(Cli({"mark-used", rid, "--mission", "m1"}).code, 2);
  EXPECT_EQ(Cli({"mark-used", rid, "nope", "--mission", "m1"}).code, 2);

  const CliRun red = Cli({"report", "redundancy", "--mission", "m1", "--json"});
  ASSERT_EQ(red.code, 0) << red.err;
  const json r = json::parse(red.out);
  ASSERT_EQ(r["sessions"].size(), 2u);  // "" (the budget-0 query) and s1
  EXPECT_EQ(r["sessions"][1]["session"], "s1");
  EXPECT_EQ(r["sessions"][1]["used_entries"], 2);
  EXPECT_EQ(r["sessions"][1]["served_entries"], 4);
  EXPECT_DOUBLE_EQ(r["sessions"][1]["unused_share_count"].get<double>(), 0.5);
  // The answer of every face: no "target" (the command line added 0.2), the clearance it was made at.
  EXPECT_FALSE(r.contains("target"));
  EXPECT_EQ(r["clearance"], 9);

  ASSERT_EQ(Cli({"correction", "add", "--mission", "m1", "--operator", "ann", "--class", "missing_context",
                 "--category", "routing", "--component", "comms", "--outcome", "modified", "--summary",
                 "The digest left out the relay position.", "--retrieval-id", rid})
                .code,
            0);
  const std::string pairs = dir_.path() + "/pairs.jsonl";
  const CliRun corr = Cli({"report", "corrections", "--mission", "m1", "--export", pairs});
  ASSERT_EQ(corr.code, 0) << corr.err;
  EXPECT_TRUE(Contains(corr.out, "wrote 1 pairs"));
  EXPECT_TRUE(Contains(corr.out, "comms"));
  std::ifstream in(pairs);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const json pair = json::parse(line);
  EXPECT_EQ(pair["retrieval_id"], rid);
  EXPECT_EQ(pair["served"].size(), 2u);
  EXPECT_EQ(pair["corrected_to"]["class"], "missing_context");
  EXPECT_FALSE(std::getline(in, line));
  // The pairs also as an operation of their own (report_correction_pairs):
  // {pairs} with --json, the same JSON lines without.
  const CliRun pairs_json = Cli({"report", "correction-pairs", "--mission", "m1", "--json"});
  ASSERT_EQ(pairs_json.code, 0) << pairs_json.err;
  ASSERT_EQ(json::parse(pairs_json.out)["pairs"].size(), 1u);
  EXPECT_EQ(json::parse(pairs_json.out)["pairs"][0], pair);
  const CliRun pairs_lines = Cli({"report", "correction-pairs", "--mission", "m1"});
  ASSERT_EQ(pairs_lines.code, 0) << pairs_lines.err;
  EXPECT_EQ(json::parse(pairs_lines.out), pair);
  // A reader at clearance 0 gets the report of what it may read.
  const CliRun low = Cli({"report", "corrections", "--mission", "m1", "--clearance", "0", "--json"});
  ASSERT_EQ(low.code, 0) << low.err;
  EXPECT_EQ(json::parse(low.out)["clearance"], 0);

  const CliRun load = Cli({"report", "load", "--mission", "m1", "--json"});
  ASSERT_EQ(load.code, 0) << load.err;
  EXPECT_EQ(json::parse(load.out)["degraded"], false);

  const CliRun h = Cli({"handoff", "--mission", "m1", "--from", "ann", "--to", "bob"});
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_TRUE(Contains(h.out, "# Handoff: mission m1, ann → bob"));
  EXPECT_TRUE(Contains(h.out, "Relay may be spoofed by the jammer"));
  EXPECT_TRUE(Contains(h.out, "caused by: incident " + jam));
  EXPECT_TRUE(Contains(h.out, "missing_context 1"));
  EXPECT_EQ(Cli({"handoff", "--mission", "m1", "--from", "ann"}).code, 2);
  // --json answers handoff_digest's answer, as REST and MCP do (it printed
  // the bare digest); --budget is token_budget, 0..100000000 on every face.
  const CliRun hj = Cli({"handoff", "--mission", "m1", "--from", "ann", "--to", "bob", "--budget", "3000", "--json"});
  ASSERT_EQ(hj.code, 0) << hj.err;
  const json handoff = json::parse(hj.out);
  EXPECT_EQ(handoff["token_budget"], 3000);
  EXPECT_LE(handoff["tokens_used"].get<int64_t>(), 3000);
  EXPECT_EQ(handoff["markdown"], handoff["digest"]["markdown"]);
  EXPECT_EQ(handoff["clearance"], handoff["digest"]["clearance"]);
  EXPECT_EQ(handoff["degraded"], false);
  const CliRun over = Cli({"handoff", "--mission", "m1", "--from", "ann", "--to", "bob", "--budget", "100000001"});
  EXPECT_EQ(over.code, 2);
  EXPECT_TRUE(Contains(over.err, "--budget")) << over.err;
  // mark-used --json: {retrieval_id, used, served}.
  const CliRun marked = Cli({"mark-used", rid, served[0], "--mission", "m1", "--json"});
  ASSERT_EQ(marked.code, 0) << marked.err;
  EXPECT_EQ(json::parse(marked.out)["retrieval_id"], rid);
  EXPECT_EQ(json::parse(marked.out)["used"].size(), 2u);
}

}  // namespace
}  // namespace msp
