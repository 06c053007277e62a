// Unit tests of the REST request readers: every field lands where it should,
// and every kind of bad input is an InvalidArgument naming the field.
#include "rest/request_json.h"

#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp {
namespace {

using nlohmann::json;

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
