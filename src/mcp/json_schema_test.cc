// Tests of the JSON Schema subset checker.
#include "mcp/json_schema.h"

#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp::mcp {
namespace {

using nlohmann::json;

const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 5},
    "n": {"type": "integer", "minimum": 1, "maximum": 10},
    "x": {"type": "number"},
    "kind": {"type": "string", "enum": ["a", "b"]},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "when": {"type": ["string", "null"]},
    "inner": {"type": "object", "properties": {"v": {"type": "boolean"}}, "required": ["v"]}
  },
  "required": ["name"],
  "additionalProperties": false
})");

std::string Error(const json& v) {
  Status s = ValidateJson(kSchema, v, "arguments");
  EXPECT_FALSE(s.ok()) << v.dump();
  EXPECT_TRUE(s.IsInvalidArgument());
  return s.message();
}

TEST(JsonSchema, AcceptsValidValues) {
  ASSERT_OK(ValidateJson(kSchema, json::parse(R"({"name": "abc"})"), "arguments"));
  ASSERT_OK(ValidateJson(kSchema,
                         json::parse(R"({"name": "ñandú", "n": 10, "x": 1.5, "kind": "b", "tags": ["t"],
                                         "when": null, "inner": {"v": true}})"),
                         "arguments"));
  ASSERT_OK(ValidateJson(kSchema, json::parse(R"({"name": "a", "n": 3.0, "when": "now"})"), "arguments"));
}

TEST(JsonSchema, NamesTheOffendingPlace) {
  EXPECT_EQ(Error(json::parse("[]")), "arguments: expected object, got array");
  EXPECT_EQ(Error(json::parse("{}")), "arguments.name is required");
  EXPECT_EQ(Error(json::parse(R"({"name": 3})")), "arguments.name: expected string, got integer");
  EXPECT_EQ(Error(json::parse(R"({"name": ""})")), "arguments.name: must have at least 1 characters");
  EXPECT_EQ(Error(json::parse(R"({"name": "abcdef"})")), "arguments.name: must have at most 5 characters");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "n": 2.5})")), "arguments.n: expected integer, got number");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "n": 0})")), "arguments.n: 0 is below the minimum 1");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "n": 11})")), "arguments.n: 11 is above the maximum 10");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "kind": "c"})")), "arguments.kind: \"c\" is not allowed; allowed: a, b");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "tags": ["x", 1]})")), "arguments.tags[1]: expected string, got integer");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "tags": ["x", "y", "z"]})")), "arguments.tags: must have at most 2 items");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "when": 1})")), "arguments.when: expected string or null, got integer");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "inner": {}})")), "arguments.inner.v is required");
  EXPECT_EQ(Error(json::parse(R"({"name": "a", "nmae": 1})")),
            "arguments.nmae is not a known field; known: inner, kind, n, name, tags, when, x");
}

TEST(JsonSchema, OpenObjectsAcceptExtraFields) {
  const json open = {{"type", "object"}, {"properties", {{"a", {{"type", "string"}}}}}};
  ASSERT_OK(ValidateJson(open, json::parse(R"({"a": "x", "b": 2})"), "v"));
  EXPECT_FALSE(ValidateJson(json::array(), json::object(), "v").ok());
}

}  // namespace
}  // namespace msp::mcp
