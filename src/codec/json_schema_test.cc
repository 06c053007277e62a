// ValidateJsonSchema: each keyword of the subset accepts and rejects.
#include "codec/json_schema.h"

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
  EXPECT_EQ(Error(json::array()), "$: expected object, got array");
  EXPECT_EQ(Error(json::object()), "$.facts is required");
  EXPECT_EQ(Error(json::parse(R"({"facts": {}})")), "$.facts: expected array, got object");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1.5}]})")),
            "$.facts[0].confidence: 1.5 is above the maximum 1");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": -0.1}]})")),
            "$.facts[0].confidence: -0.1 is below the minimum 0");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": "high"}]})")),
            "$.facts[0].confidence: expected number, got string \"high\"");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "tags": ["mood"]}]})")),
            "$.facts[0].tags[0]: \"mood\" is not allowed; allowed: preference, goal");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "why": "x"}]})")),
            "$.facts[0].why is not a known field; known: confidence, note, step, tags, text");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "", "confidence": 1}]})")),
            "$.facts[0].text: must have at least 1 characters");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "step": 2.5}]})")),
            "$.facts[0].step: expected integer, got number 2.5");
  EXPECT_EQ(Error(json::parse(R"({"facts": [{"text": "a", "confidence": 1, "note": 3}]})")),
            "$.facts[0].note: expected string or null, got integer 3");
  json four = json::parse(R"({"facts": [{"text":"a","confidence":1},{"text":"a","confidence":1},
                                         {"text":"a","confidence":1},{"text":"a","confidence":1}]})");
  EXPECT_EQ(Error(four), "$.facts: must have at most 3 items");
}

// The MCP server checks tool arguments from the root "arguments".
const json kArguments = json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 5},
    "n": {"type": "integer", "minimum": 1, "maximum": 10},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "inner": {"type": "object", "properties": {"v": {"type": "boolean"}}, "required": ["v"]},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}}
  },
  "required": ["name"],
  "additionalProperties": false
})");

std::string ArgumentError(const json& value) {
  Status s = ValidateJsonSchema(kArguments, value, "arguments");
  EXPECT_FALSE(s.ok()) << value.dump();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  return s.message();
}

TEST(JsonSchemaTest, ChecksToolArgumentsFromTheirRoot) {
  ASSERT_OK(ValidateJsonSchema(kArguments, json::parse(R"({"name": "ñandú", "n": 3.0, "labels": {"a": "b"}})"),
                               "arguments"));
  EXPECT_EQ(ArgumentError(json::parse("[]")), "arguments: expected object, got array");
  EXPECT_EQ(ArgumentError(json::parse("{}")), "arguments.name is required");
  EXPECT_EQ(ArgumentError(json::parse(R"({"name": "abcdef"})")), "arguments.name: must have at most 5 characters");
  EXPECT_EQ(ArgumentError(json::parse(R"({"name": "a", "n": 11})")), "arguments.n: 11 is above the maximum 10");
  EXPECT_EQ(ArgumentError(json::parse(R"({"name": "a", "tags": []})")), "arguments.tags: must have at least 1 items");
  EXPECT_EQ(ArgumentError(json::parse(R"({"name": "a", "tags": ["x", 1]})")),
            "arguments.tags[1]: expected string, got integer 1");
  EXPECT_EQ(ArgumentError(json::parse(R"({"name": "a", "inner": {}})")), "arguments.inner.v is required");
  EXPECT_EQ(ArgumentError(json::parse(R"({"name": "a", "labels": {"a": 2}})")),
            "arguments.labels.a: expected string, got integer 2");
  EXPECT_EQ(ArgumentError(json::parse(R"({"name": "a", "nmae": 1})")),
            "arguments.nmae is not a known field; known: inner, labels, n, name, tags");
}

TEST(JsonSchemaTest, ReportsABadSchema) {
  Status s = ValidateJsonSchema(json::parse(R"({"type": 3})"), json(1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("schema at $"), std::string::npos) << s.message();
  EXPECT_FALSE(ValidateJsonSchema(json::parse(R"({"required": "x"})"), json::object()).ok());
  EXPECT_FALSE(ValidateJsonSchema(json::parse(R"({"maxLength": -1})"), json("a")).ok());
  EXPECT_FALSE(ValidateJsonSchema(json::array(), json::object()).ok());
  EXPECT_FALSE(ValidateJsonSchema(json(false), json(1)).ok());
  EXPECT_TRUE(ValidateJsonSchema(json(true), json(1)).ok());
}

}  // namespace
}  // namespace msp
