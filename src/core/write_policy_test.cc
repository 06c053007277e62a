// Tests for the write policy, input validation and the eviction rule.
#include "core/write_policy.h"

#include <gtest/gtest.h>

#include "util/time.h"

namespace msp {
namespace {

WriteRequest Good() {
  WriteRequest r;
  r.text = "User prefers vegetarian meals on weekdays";
  r.tags = {"preference"};
  r.source = "user";
  r.ttl_days = 30;
  return r;
}

void ExpectRefused(const WriteRequest& r, const std::string& rule) {
  Status s = CheckWorthStoring(r, WritePolicyOptions{});
  EXPECT_EQ(s.code(), StatusCode::kRefused) << rule;
  EXPECT_NE(s.message().find("policy rule " + rule), std::string::npos) << s.message();
}

TEST(WritePolicyTest, AcceptsAStableTrustedMemory) {
  EXPECT_TRUE(CheckWorthStoring(Good(), WritePolicyOptions{}).ok());
}

TEST(WritePolicyTest, EachRuleRefusesWithItsName) {
  WriteRequest r = Good();
  r.text = "too short";
  ExpectRefused(r, "min_chars");

  // Characters, not bytes: 19 Cyrillic letters are 38 bytes and still too few.
  r.text = "абвгґдеєжзиіїйклмно";
  ExpectRefused(r, "min_chars");
  r.text = "абвгґдеєжзиіїйклмнопр";
  EXPECT_TRUE(CheckWorthStoring(r, WritePolicyOptions{}).ok());

  WritePolicyOptions no_min;
  no_min.min_chars = 0;
  r.text = "Thanks!";
  EXPECT_NE(CheckWorthStoring(r, no_min).message().find("trivial"), std::string::npos);
  // The list is per language (issue 19: "дякую" was stored), any case.
  for (const char* ack : {"дякую", "Дякую!", "СПАСИБО", "Danke!", "Merci…", "Dziękuję", "Gracias"}) {
    r.text = ack;
    EXPECT_NE(CheckWorthStoring(r, no_min).message().find("trivial"), std::string::npos) << ack;
  }
  // Not a whole-text acknowledgement: stored.
  r.text = "дякую за звіт про РЕБ у секторі 4";
  EXPECT_TRUE(CheckWorthStoring(r, no_min).ok());

  r = Good();
  r.sensitivity = Sensitivity::kHigh;
  ExpectRefused(r, "sensitivity");

  r = Good();
  r.source = "web";
  ExpectRefused(r, "trusted_source");

  r = Good();
  r.tags = {"misc"};
  ExpectRefused(r, "stable_tag");

  r = Good();
  r.ttl_days = 400;
  ExpectRefused(r, "ttl_range");
}

TEST(WritePolicyTest, RulesAreConfiguration) {
  WritePolicyOptions p;
  p.require_stable_tag = false;
  p.trusted_sources = {"web"};
  WriteRequest r = Good();
  r.tags = {};
  r.source = "web";
  EXPECT_TRUE(CheckWorthStoring(r, p).ok());
  p.refuse_high_sensitivity = false;
  r.sensitivity = Sensitivity::kHigh;
  EXPECT_TRUE(CheckWorthStoring(r, p).ok());
}

TEST(ValidateTest, NamesTheField) {
  EXPECT_EQ(ValidateText("text", "   ", 100).message(), "text is empty");
  EXPECT_NE(ValidateText("text", std::string(101, 'a'), 100).message().find("limit is 100"),
            std::string::npos);
  EXPECT_NE(ValidateText("text", "bad \xff byte", 100).message().find("UTF-8"), std::string::npos);
  Namespace ns;
  EXPECT_TRUE(ValidateCommon(ns, {"a"}, "user", 0.5, "{}", {}).ok());
  EXPECT_NE(ValidateCommon(ns, {}, "user", 1.5, "", {}).message().find("confidence"), std::string::npos);
  EXPECT_NE(ValidateCommon(ns, {}, "user", 1, "[1]", {}).message().find("body"), std::string::npos);
  EXPECT_NE(ValidateCommon(ns, {}, "user", 1, "{", {}).message().find("body"), std::string::npos);
  ns.tenant = "";
  EXPECT_NE(ValidateCommon(ns, {}, "user", 1, "", {}).message().find("tenant"), std::string::npos);
  ns.tenant = "a\nb";
  EXPECT_FALSE(ValidateCommon(ns, {}, "user", 1, "", {}).ok());
}

Memory Rec(const std::string& id, double confidence, int64_t access, TimeMs created,
           Criticality c = Criticality::kNormal) {
  Memory m;
  m.id = id;
  m.confidence = confidence;
  m.access_count = access;
  m.created_at = created;
  m.criticality = c;
  return m;
}

TEST(EvictionTest, EvictsLeastValuableFirstAndNeverKeptOnes) {
  const TimeMs now = 100 * kMsPerDay;
  std::vector<Memory> recs = {Rec("a", 0.9, 5, now), Rec("b", 0.2, 0, now), Rec("c", 0.9, 0, 0),
                              Rec("d", 0.1, 0, now, Criticality::kCritical)};
  EXPECT_TRUE(SelectEvictions(recs, 1, 10, now, {}).empty());
  auto one = SelectEvictions(recs, 1, 4, now, {});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0], "b");  // lowest value among normal criticality
  auto two = SelectEvictions(recs, 2, 4, now, {"b"});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], "c");  // old and never read
  EXPECT_EQ(two[1], "a");
  EXPECT_TRUE(SelectEvictions(recs, 5, 0, now, {}).empty());  // 0: no limit
}

}  // namespace
}  // namespace msp
