// Behaviour rules: the condition language and its evaluation.
//
// A rule says "when <condition>, call tool <name> with <arguments>". The
// condition is checked against the current request and the last
// observation (the last tool call's name, its result text, whether it
// failed):
//
//   condition := or
//   or        := and { "or" and }
//   and       := unary { "and" unary }
//   unary     := "not" unary | "(" condition ")" | test
//   test      := "always"
//              | "last.error"                      the last tool call failed
//              | subject "contains" STRING         substring, case-insensitive (ASCII)
//              | subject "is" STRING               the whole text, case-insensitive (ASCII)
//              | subject "matches" REGEX           ECMAScript regex, case-insensitive,
//                                                  anywhere in the first 8 KB
//   subject   := "request" | "last.tool" | "last.text"
//   STRING    := "..." with \" and \\ escapes
//   REGEX     := /.../ (\/ for a slash) or a STRING
//
// Keywords are lowercase. Without a last observation (at the start of a
// turn) every test on last.* is false. Examples:
//   request contains "remember"
//   request matches /\bdeploy(ed|ing)?\b/ and not last.tool is "deploy_status"
//   last.error and last.tool is "fetch"
//
// Arguments are a JSON object whose string values may hold {{request}},
// {{last.tool}} and {{last.text}}: they are replaced when the rule fires.
#ifndef MSP_PROCEDURAL_RULES_H_
#define MSP_PROCEDURAL_RULES_H_

#include <memory>
#include <string>
#include <string_view>

#include "msp/status.h"

namespace msp {

// What a condition is checked against.
struct RuleContext {
  std::string request;
  bool has_last = false;   // there is a last observation
  std::string last_tool;
  std::string last_text;
  bool last_error = false;
};

class RuleCondition {
 public:
  // InvalidArgument naming the position and what was expected.
  static Result<RuleCondition> Parse(std::string_view text);
  bool Evaluate(const RuleContext& context) const;
  const std::string& text() const { return text_; }

  struct Node;  // the parsed expression (rules.cc)

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

// Replaces {{request}}, {{last.tool}} and {{last.text}} in every string of
// the JSON object `arguments_json`; returns the object as JSON text.
// InvalidArgument when it is not a JSON object.
Result<std::string> ExpandRuleArguments(const std::string& arguments_json, const RuleContext& context);

}  // namespace msp

#endif  // MSP_PROCEDURAL_RULES_H_
