// Unit tests of the REST request readers: every field lands where it should,
// and every kind of bad input is an InvalidArgument naming the field.
#include "rest/request_json.h"

#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp {
namespace {

using nlohmann::json;

TEST(RequestJsonTest, WriteRequestReadsEveryField) {
  const json j = json::parse(R"({
    "namespace": {"tenant": "ignored", "user": "ann", "agent": "a1", "session": "s1", "mission": "m", "operator": "op"},
    "kind": "decision", "layer": "workflow", "text": "Use SQLite for the store",
    "body": {"b": 1, "a": [true]}, "tags": ["goal", "db"], "source": "tool", "sensitivity": "medium",
    "criticality": "high", "confidence": 0.5, "ttl_days": 30, "valid_at": "2026-01-02",
    "provenance": [{"type": "commit", "ref": "abc", "detail": "x"}]})");
  ASSERT_OK_AND_ASSIGN(WriteRequest w, WriteRequestFromJson(j, "acme"));
  EXPECT_EQ(w.ns.tenant, "acme");  // never from the body
  EXPECT_EQ(w.ns.user, "ann");
  EXPECT_EQ(w.ns.operator_id, "op");
  EXPECT_EQ(w.kind, Kind::kDecision);
  ASSERT_TRUE(w.layer.has_value());
  EXPECT_EQ(*w.layer, Layer::kWorkflow);
  EXPECT_EQ(w.body_json, R"({"a":[true],"b":1})");
  EXPECT_EQ(w.tags, (std::vector<std::string>{"goal", "db"}));
  EXPECT_EQ(w.source, "tool");
  EXPECT_EQ(w.sensitivity, Sensitivity::kMedium);
  EXPECT_EQ(w.criticality, Criticality::kHigh);
  EXPECT_DOUBLE_EQ(w.confidence, 0.5);
  EXPECT_EQ(w.ttl_days, 30);
  EXPECT_GT(w.valid_at, 0);
  ASSERT_EQ(w.provenance.size(), 1u);
  EXPECT_EQ(w.provenance[0].ref, "abc");
}

TEST(RequestJsonTest, WriteRequestErrorsNameTheField) {
  struct Case {
    const char* body;
    const char* names;
  };
  const Case cases[] = {
      {R"({"text": "x", "colour": 1})", "unknown field 'colour'"},
      {R"({})", "'text' is required"},
      {R"({"text": 5})", "field 'text' must be a string, got integer"},
      {R"({"text": "x", "kind": "thought"})", "field 'kind': unknown value 'thought'"},
      {R"({"text": "x", "tags": "goal"})", "field 'tags' must be an array of strings"},
      {R"({"text": "x", "tags": [1]})", "field 'tags[0]'"},
      {R"({"text": "x", "confidence": 2})", "field 'confidence' must be between 0 and 1"},
      {R"({"text": "x", "ttl_days": -1})", "field 'ttl_days'"},
      {R"({"text": "x", "ttl_days": 1.5})", "field 'ttl_days' must be an integer"},
      {R"({"text": "x", "ttl_days": 0})", "field 'ttl_days' 0 is not a time to live: give 1..36500 days"},
      {R"({"text": "x", "ttl_days": 36501})", "field 'ttl_days' must be between 1 and 36500"},
      {R"({"text": "x", "request_id": ""})", "field 'request_id'"},
      {R"({"text": "x", "request_id": 7})", "field 'request_id' must be a string"},
      {R"({"text": "x", "body": [1]})", "field 'body' must be an object"},
      {R"({"text": "x", "valid_at": "yesterday"})", "field 'valid_at'"},
      {R"({"text": "x", "namespace": {"team": "x"}})", "unknown field 'namespace.team'"},
      {R"({"text": "x", "namespace": "ann"})", "'namespace' must be a JSON object"},
      {R"({"text": "x", "provenance": [{"type": "commit"}]})", "provenance[0]"},
  };
  for (const Case& c : cases) {
    auto w = WriteRequestFromJson(json::parse(c.body), "t");
    ASSERT_FALSE(w.ok()) << c.body;
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().message().find(c.names), std::string::npos) << c.body << " -> " << w.status().message();
  }
  auto keyed = WriteRequestFromJson(json::parse(R"({"text": "x", "ttl_days": 36500, "request_id": "k-1"})"), "t");
  ASSERT_TRUE(keyed.ok()) << keyed.status().message();
  EXPECT_EQ(keyed->ttl_days, 36500);
  EXPECT_EQ(keyed->request_id, "k-1");
  auto batch_item = WriteRequestFromJson(json::parse(R"({"text": 1})"), "t", "memories[3].");
  ASSERT_FALSE(batch_item.ok());
  EXPECT_NE(batch_item.status().message().find("memories[3].text"), std::string::npos);
}

TEST(RequestJsonTest, EpisodeNeedsSessionAndOneOfTextOrContent) {
  ASSERT_OK_AND_ASSIGN(EpisodeStep e, EpisodeStepFromJson(json::parse(R"({"namespace": {"session": "s1"},
      "type": "tool_call", "content": {"cmd": "ls"}, "tool_name": "sh", "duration_ms": 5})"), "t"));
  EXPECT_EQ(e.ns.session, "s1");
  EXPECT_EQ(e.type, EpisodeType::kToolCall);
  EXPECT_EQ(e.content_json, R"({"cmd":"ls"})");
  EXPECT_EQ(e.duration_ms, 5);
  EXPECT_FALSE(EpisodeStepFromJson(json::parse(R"({"text": "hi there"})"), "t").ok());
  EXPECT_FALSE(EpisodeStepFromJson(json::parse(R"({"namespace": {"session": "s"}})"), "t").ok());
  EXPECT_FALSE(
      EpisodeStepFromJson(json::parse(R"({"namespace": {"session": "s"}, "text": "a", "content": {}})"), "t").ok());
}

TEST(RequestJsonTest, QueryParameters) {
  QueryParams q = {{"user", "ann"}, {"kind", "fact,episode"}, {"kind", "decision"}, {"limit", "5"},
                   {"newest_first", "true"}};
  ASSERT_OK_AND_ASSIGN(ListRequest l, ListRequestFromQuery(q, "acme"));
  EXPECT_EQ(l.scope.tenant, "acme");
  EXPECT_EQ(l.scope.user, "ann");
  EXPECT_EQ(l.filter.kinds, (std::vector<Kind>{Kind::kFact, Kind::kEpisode, Kind::kDecision}));
  EXPECT_EQ(l.limit, 5);
  EXPECT_TRUE(l.newest_first);
  EXPECT_FALSE(ListRequestFromQuery({{"limit", "0"}}, "t").ok());
  EXPECT_FALSE(ListRequestFromQuery({{"limit", "ten"}}, "t").ok());
  EXPECT_FALSE(ListRequestFromQuery({{"kind", "thought"}}, "t").ok());
  EXPECT_FALSE(ListRequestFromQuery({{"newest_first", "maybe"}}, "t").ok());
  Status unknown = CheckQueryNames({{"colour", "x"}}, WithNamespaceParams({"limit"}));
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("'colour'"), std::string::npos);
  EXPECT_TRUE(CheckQueryNames({{"tenant", "x"}, {"user", "u"}}, WithNamespaceParams({})).ok());
}

TEST(RequestJsonTest, ParseQueryDecodes) {
  const QueryParams q = ParseQuery("/v1/memories?user=ann%20lee&tag=a%2Cb&tag=c+d&flag&=x&bad=%zz#frag");
  EXPECT_EQ(StringParam(q, "user"), "ann lee");
  EXPECT_EQ(q.count("tag"), 2u);
  EXPECT_EQ(q.find("tag")->second, "a,b");
  EXPECT_EQ(std::next(q.find("tag"))->second, "c d");
  EXPECT_EQ(q.count("flag"), 1u);
  EXPECT_EQ(StringParam(q, "bad"), "%zz");
  EXPECT_EQ(StringParam(q, ""), "x");
  EXPECT_TRUE(ParseQuery("/v1/memories").empty());
  EXPECT_TRUE(ParseQuery("/v1/memories?").empty());
}

}  // namespace
}  // namespace msp
