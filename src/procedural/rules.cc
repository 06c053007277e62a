// The rule condition language: a small lexer, a recursive-descent parser
// and the evaluator (grammar in rules.h).
#include "procedural/rules.h"

#include <regex>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/text.h"

namespace msp {

namespace {

// The first bytes of a subject a regex looks at (std::regex recurses per
// character and would exhaust the stack on very long texts).
constexpr size_t kRegexWindow = 8192;

}  // namespace

// The enums are members (not in the anonymous namespace) so that Node has
// no field of internal-linkage type even when this file is part of a unity
// batch (-Wsubobject-linkage).
struct RuleCondition::Node {
  enum class Subject { kRequest, kLastTool, kLastText };
  enum class Op { kAlways, kLastError, kContains, kIs, kMatches, kNot, kAnd, kOr };

  Op op = Op::kAlways;
  Subject subject = Subject::kRequest;
  std::string value;  // lowercased for contains / is
  std::regex regex;
  std::shared_ptr<const Node> left;
  std::shared_ptr<const Node> right;
};

namespace {

using NodePtr = std::shared_ptr<const RuleCondition::Node>;
using Subject = RuleCondition::Node::Subject;
using Op = RuleCondition::Node::Op;

struct Token {
  enum Kind { kWord, kString, kRegex, kOpen, kClose, kEnd } kind = kEnd;
  std::string text;
  size_t pos = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<NodePtr> Parse() {
    MSP_RETURN_IF_ERROR(Lex());
    MSP_ASSIGN_OR_RETURN(NodePtr root, ParseOr());
    if (Peek().kind != Token::kEnd) return Error(Peek(), "expected 'and', 'or' or the end");
    return root;
  }

 private:
  Status Error(const Token& t, const std::string& what) const {
    const std::string shown = t.kind == Token::kEnd ? "the end" : "'" + t.text + "'";
    return Status::InvalidArgument("rule condition: " + what + " at position " + std::to_string(t.pos + 1) +
                                   " (found " + shown + ") in: " + std::string(text_));
  }

  Status Lex() {
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++i;
        continue;
      }
      Token t;
      t.pos = i;
      if (c == '(' || c == ')') {
        t.kind = c == '(' ? Token::kOpen : Token::kClose;
        t.text = std::string(1, c);
        ++i;
      } else if (c == '"' || c == '/') {
        t.kind = c == '"' ? Token::kString : Token::kRegex;
        ++i;
        bool closed = false;
        while (i < text_.size()) {
          const char d = text_[i];
          if (d == '\\' && i + 1 < text_.size()) {
            const char e = text_[i + 1];
            // In a string \" and \\ are escapes; in a regex only \/ is ours,
            // other escapes stay for the regex engine.
            if (e == c || (c == '"' && e == '\\')) {
              t.text += e;
            } else {
              t.text += d;
              t.text += e;
            }
            i += 2;
            continue;
          }
          ++i;
          if (d == c) {
            closed = true;
            break;
          }
          t.text += d;
        }
        if (!closed) {
          return Status::InvalidArgument("rule condition: unterminated " +
                                         std::string(c == '"' ? "string" : "regex") + " starting at position " +
                                         std::to_string(t.pos + 1) + " in: " + std::string(text_));
        }
      } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        t.kind = Token::kWord;
        while (i < text_.size()) {
          const char d = text_[i];
          if (!((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9') || d == '_' ||
                d == '.')) {
            break;
          }
          t.text += d;
          ++i;
        }
      } else {
        t.kind = Token::kWord;
        t.text = std::string(1, c);
        return Error(t, "unexpected character");
      }
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.pos = text_.size();
    tokens_.push_back(end);
    return Status::Ok();
  }

  const Token& Peek() const { return tokens_[at_]; }
  const Token& Next() { return tokens_[at_ < tokens_.size() - 1 ? at_++ : at_]; }
  bool PeekWord(std::string_view w) const { return Peek().kind == Token::kWord && Peek().text == w; }

  Result<NodePtr> ParseOr() {
    MSP_ASSIGN_OR_RETURN(NodePtr left, ParseAnd());
    while (PeekWord("or")) {
      Next();
      MSP_ASSIGN_OR_RETURN(NodePtr right, ParseAnd());
      left = Combine(Op::kOr, std::move(left), std::move(right));
    }
    return left;
  }

  Result<NodePtr> ParseAnd() {
    MSP_ASSIGN_OR_RETURN(NodePtr left, ParseUnary());
    while (PeekWord("and")) {
      Next();
      MSP_ASSIGN_OR_RETURN(NodePtr right, ParseUnary());
      left = Combine(Op::kAnd, std::move(left), std::move(right));
    }
    return left;
  }

  static NodePtr Combine(Op op, NodePtr left, NodePtr right) {
    auto n = std::make_shared<RuleCondition::Node>();
    n->op = op;
    n->left = std::move(left);
    n->right = std::move(right);
    return n;
  }

  Result<NodePtr> ParseUnary() {
    if (++depth_ > 64) return Error(Peek(), "nesting deeper than 64");
    struct Leave {
      int* d;
      ~Leave() { --*d; }
    } leave{&depth_};
    if (PeekWord("not")) {
      Next();
      MSP_ASSIGN_OR_RETURN(NodePtr inner, ParseUnary());
      auto n = std::make_shared<RuleCondition::Node>();
      n->op = Op::kNot;
      n->left = std::move(inner);
      return NodePtr(n);
    }
    if (Peek().kind == Token::kOpen) {
      Next();
      MSP_ASSIGN_OR_RETURN(NodePtr inner, ParseOr());
      if (Peek().kind != Token::kClose) return Error(Peek(), "expected ')'");
      Next();
      return inner;
    }
    return ParseTest();
  }

  Result<NodePtr> ParseTest() {
    const Token& t = Next();
    auto n = std::make_shared<RuleCondition::Node>();
    if (t.kind == Token::kWord && t.text == "always") {
      n->op = Op::kAlways;
      return NodePtr(n);
    }
    if (t.kind == Token::kWord && t.text == "last.error") {
      n->op = Op::kLastError;
      return NodePtr(n);
    }
    if (t.kind != Token::kWord || (t.text != "request" && t.text != "last.tool" && t.text != "last.text")) {
      return Error(t, "expected a test: always, last.error, or request / last.tool / last.text followed by "
                      "contains, is or matches");
    }
    n->subject = t.text == "request" ? Subject::kRequest : t.text == "last.tool" ? Subject::kLastTool
                                                                                 : Subject::kLastText;
    const Token& op = Next();
    if (op.kind != Token::kWord || (op.text != "contains" && op.text != "is" && op.text != "matches")) {
      return Error(op, "expected contains, is or matches after " + t.text);
    }
    const Token& arg = Next();
    if (op.text == "matches") {
      if (arg.kind != Token::kRegex && arg.kind != Token::kString) {
        return Error(arg, "expected a /regex/ or a \"string\" after matches");
      }
      n->op = Op::kMatches;
      n->value = arg.text;
      try {
        n->regex = std::regex(arg.text, std::regex::ECMAScript | std::regex::icase);
      } catch (const std::regex_error& e) {
        return Error(arg, std::string("invalid regex (") + e.what() + ")");
      }
      return NodePtr(n);
    }
    if (arg.kind != Token::kString) return Error(arg, "expected a \"string\" after " + op.text);
    n->op = op.text == "contains" ? Op::kContains : Op::kIs;
    n->value = AsciiLower(arg.text);
    return NodePtr(n);
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t at_ = 0;
  int depth_ = 0;
};

const std::string* SubjectText(Subject s, const RuleContext& c) {
  switch (s) {
    case Subject::kRequest: return &c.request;
    case Subject::kLastTool: return c.has_last ? &c.last_tool : nullptr;
    case Subject::kLastText: return c.has_last ? &c.last_text : nullptr;
  }
  return nullptr;
}

bool Eval(const RuleCondition::Node& n, const RuleContext& c) {
  switch (n.op) {
    case Op::kAlways: return true;
    case Op::kLastError: return c.has_last && c.last_error;
    case Op::kNot: return !Eval(*n.left, c);
    case Op::kAnd: return Eval(*n.left, c) && Eval(*n.right, c);
    case Op::kOr: return Eval(*n.left, c) || Eval(*n.right, c);
    case Op::kContains:
    case Op::kIs:
    case Op::kMatches: {
      const std::string* text = SubjectText(n.subject, c);
      if (text == nullptr) return false;
      if (n.op == Op::kMatches) {
        const std::string window = text->substr(0, kRegexWindow);
        return std::regex_search(window, n.regex);
      }
      const std::string lower = AsciiLower(*text);
      return n.op == Op::kIs ? lower == n.value : lower.find(n.value) != std::string::npos;
    }
  }
  return false;
}

void ExpandStrings(nlohmann::json* j, const RuleContext& c) {
  if (j->is_string()) {
    std::string s = j->get<std::string>();
    // One pass per placeholder; replaced text is never expanded again.
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
      if (s.compare(i, 2, "{{") == 0) {
        const size_t close = s.find("}}", i + 2);
        if (close != std::string::npos) {
          const std::string key = s.substr(i + 2, close - i - 2);
          const std::string* value = key == "request"     ? &c.request
                                     : key == "last.tool" ? &c.last_tool
                                     : key == "last.text" ? &c.last_text
                                                          : nullptr;
          if (value != nullptr) {
            out += *value;
            i = close + 2;
            continue;
          }
        }
      }
      out += s[i++];
    }
    *j = out;
    return;
  }
  if (j->is_object() || j->is_array()) {
    for (auto& v : *j) ExpandStrings(&v, c);
  }
}

}  // namespace

Result<RuleCondition> RuleCondition::Parse(std::string_view text) {
  Parser parser(text);
  MSP_ASSIGN_OR_RETURN(NodePtr root, parser.Parse());
  RuleCondition c;
  c.text_ = std::string(text);
  c.root_ = std::move(root);
  return c;
}

bool RuleCondition::Evaluate(const RuleContext& context) const { return root_ && Eval(*root_, context); }

Result<std::string> ExpandRuleArguments(const std::string& arguments_json, const RuleContext& context) {
  nlohmann::json j = nlohmann::json::parse(arguments_json.empty() ? "{}" : arguments_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("rule arguments must be a JSON object, got: " + arguments_json.substr(0, 200));
  }
  ExpandStrings(&j, context);
  return j.dump();
}

}  // namespace msp
