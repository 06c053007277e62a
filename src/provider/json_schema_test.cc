// ValidateJsonSchema: each keyword of the subset accepts and rejects.
#include "provider/json_schema.h"

#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp {
namespace {

using json = nlohmann::json;

const json kFacts = json::parse(R"({
  "type": "object",
  "properties": {
    "facts": {
      "type": "array",
      "maxItems": 3,
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string", "minLength": 1},
          "confidence": {"type": "number", "minimum": 0, "maximum": 1},
          "tags": {"type": "array", "items": {"type": "string", "enum": ["preference", "goal"]}},
          "step": {"type": "integer"},
          "note": {"type": ["string", "null"]}
        },
        "required": ["text", "confidence"],
        "additionalProperties": false
      }
    }
  },
  "required": ["facts"]
})");

std::string Error(const json& value) {
  Status s = ValidateJsonSchema(kFacts, value);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  return s.message();
}

TEST(JsonSchemaTest, AcceptsAValidValue) {
  ASSERT_OK(ValidateJsonSchema(kFacts, json::parse(R"({"facts": [
    {"text": "User likes tea.", "confidence": 0.9, "tags": ["preference"], "step": 3, "note": null},
    {"text": "x", "confidence": 1, "step": 2.0, "note": "n"}]})")));
  ASSERT_OK(ValidateJsonSchema(kFacts, json::parse(R"({"facts": [], "extra": 1})")));
}

TEST(JsonSchemaTest, NamesThePathOfTheFirstProblem) {
  EXPECT_EQ(Error(json::array()), "$: expected object, got []");
  EXPECT_EQ(Error(json::object()), "$: missing required property 'facts'");
  EXPECT_EQ(Error(json::parse(R"({"facts": {}})")), "$.facts: expected array, got {}");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1.5}]})")),
            "$.facts[0].confidence: 1.5 is above the maximum 1");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": -0.1}]})")),
            "$.facts[0].confidence: -0.1 is below the minimum 0");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": "high"}]})")),
            "$.facts[0].confidence: expected number, got \"high\"");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "tags": ["mood"]}]})")),
            "$.facts[0].tags[0]: \"mood\" is not one of [\"preference\",\"goal\"]");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "why": "x"}]})")),
            "$.facts[0]: unexpected property 'why'");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "", "confidence": 1}]})")),
            "$.facts[0].text: string is shorter than 1 characters");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "step": 2.5}]})")),
            "$.facts[0].step: expected integer, got 2.5");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "note": 3}]})")),
            "$.facts[0].note: expected string or null, got 3");
  json four = json::parse(R"({"facts": [{"text":"a","confidence":1},{"text":"a","confidence":1},
                                         {"text":"a","confidence":1},{"text":"a","confidence":1}]})");
  EXPECT_EQ(Error(four), "$.facts: array has more than 3 items");
}

TEST(JsonSchemaTest, ReportsABadSchema) {
  Status s = ValidateJsonSchema(json::parse(R"({"type": 3})"), json(1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("schema at $"), std::string::npos) << s.message();
  EXPECT_FALSE(ValidateJsonSchema(json::parse(R"({"required": "x"})"), json::object()).ok());
  EXPECT_FALSE(ValidateJsonSchema(json(false), json(1)).ok());
  EXPECT_TRUE(ValidateJsonSchema(json(true), json(1)).ok());
}

}  // namespace
}  // namespace msp
