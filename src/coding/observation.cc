// Tool observations: redaction, summaries, files, the spool.
#include "coding/observation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/utf8.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::string_view kRedacted = "[REDACTED]";

std::string ObsDump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsWordChar(char c) { return IsAlnum(c) || c == '_'; }
bool IsTokenChar(char c) { return IsAlnum(c) || c == '_' || c == '-'; }
// Characters of a credential value: base64, URL-safe base64, hex, dotted (JWT).
bool IsValueChar(char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '+' || c == '/' || c == '.' || c == '=' || c == '~'; }

bool StartsWithNoCase(std::string_view s, size_t at, std::string_view word) {
  if (at + word.size() > s.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[at + i])) != std::tolower(static_cast<unsigned char>(word[i]))) {
      return false;
    }
  }
  return true;
}

// Shannon entropy in bits per character.
double Entropy(std::string_view s) {
  if (s.empty()) return 0;
  int counts[256] = {};
  for (char c : s) ++counts[static_cast<unsigned char>(c)];
  double h = 0;
  for (int n : counts) {
    if (n == 0) continue;
    const double p = static_cast<double>(n) / static_cast<double>(s.size());
    h -= p * std::log2(p);
  }
  return h;
}

// A value that looks generated: long, high entropy, letters and digits mixed.
bool LooksSecret(std::string_view v) {
  if (v.size() < 16) return false;
  bool digit = false, alpha = false;
  for (char c : v) {
    digit = digit || std::isdigit(static_cast<unsigned char>(c));
    alpha = alpha || std::isalpha(static_cast<unsigned char>(c));
  }
  return digit && alpha && Entropy(v) >= 3.5;
}

// A match: replace [begin, end) of the text.
struct Span {
  size_t begin, end;
};

// The length of the run of `pred` characters starting at `at`.
template <typename Pred>
size_t Run(std::string_view s, size_t at, Pred pred) {
  size_t n = 0;
  while (at + n < s.size() && pred(s[at + n])) ++n;
  return n;
}

// The secret that starts at `i`, if any (the part to replace).
bool MatchAt(std::string_view s, size_t i, Span* out) {
  const bool boundary = i == 0 || !IsWordChar(s[i - 1]);
  const char c = s[i];
  // PEM private key blocks.
  if (c == '-' && s.compare(i, 11, "-----BEGIN ") == 0) {
    const size_t eol = s.find("-----", i + 11);
    if (eol != std::string_view::npos && eol - i < 100) {
      const std::string_view label = s.substr(i + 11, eol - i - 11);
      if (label.ends_with("PRIVATE KEY")) {
        const size_t end_marker = s.find("-----END ", eol + 5);
        size_t end = s.size();
        if (end_marker != std::string_view::npos) {
          const size_t close = s.find("-----", end_marker + 9);
          end = close == std::string_view::npos ? s.size() : close + 5;
        }
        *out = {i, end};
        return true;
      }
    }
  }
  if (!boundary) return false;
  // sk-... (OpenAI, Anthropic: sk-ant-..., sk-proj-...).
  if (c == 's' && s.compare(i, 3, "sk-") == 0) {
    const size_t n = Run(s, i + 3, IsTokenChar);
    if (n >= 20) {
      *out = {i, i + 3 + n};
      return true;
    }
  }
  // GitHub tokens.
  if (c == 'g') {
    for (std::string_view p : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}) {
      if (s.compare(i, p.size(), p) != 0) continue;
      const size_t n = Run(s, i + p.size(), IsWordChar);
      if (n >= 20) {
        *out = {i, i + p.size() + n};
        return true;
      }
    }
  }
  // AWS access key ids.
  if ((c == 'A' && (s.compare(i, 4, "AKIA") == 0 || s.compare(i, 4, "ASIA") == 0))) {
    const size_t n = Run(s, i + 4, [](char x) { return std::isupper(static_cast<unsigned char>(x)) || std::isdigit(static_cast<unsigned char>(x)); });
    if (n == 16 && (i + 20 == s.size() || !IsAlnum(s[i + 20]))) {
      *out = {i, i + 20};
      return true;
    }
  }
  // Bearer credentials ("Authorization: Bearer X", "bearer X").
  if ((c == 'B' || c == 'b') && StartsWithNoCase(s, i, "bearer ")) {
    size_t at = i + 7;
    at += Run(s, at, [](char x) { return x == ' '; });
    const size_t n = Run(s, at, IsValueChar);
    if (n >= 8) {
      *out = {at, at + n};
      return true;
    }
  }
  // password=VALUE, "password": "VALUE" (passwd, pwd).
  if (c == 'p' || c == 'P') {
    for (std::string_view word : {"password", "passwd", "pwd"}) {
      if (!StartsWithNoCase(s, i, word)) continue;
      size_t at = i + word.size();
      if (at < s.size() && IsWordChar(s[at])) break;  // password_hash, passwords
      const bool quoted_key = at < s.size() && (s[at] == '"' || s[at] == '\'');
      if (quoted_key) ++at;
      if (at >= s.size()) break;
      if (s[at] == '=' && !(at + 1 < s.size() && s[at + 1] == '=')) {
        ++at;
      } else if (s[at] == ':' && quoted_key) {
        ++at;
        at += Run(s, at, [](char x) { return x == ' '; });
      } else {
        break;
      }
      if (at < s.size() && (s[at] == '"' || s[at] == '\'')) {
        const char q = s[at];
        const size_t close = s.find(q, at + 1);
        if (close != std::string_view::npos && close > at + 1) {
          *out = {at + 1, close};
          return true;
        }
        break;
      }
      const size_t n = Run(s, at, [](char x) {
        return !std::isspace(static_cast<unsigned char>(x)) && x != '&' && x != '"' && x != '\'' && x != ';' &&
               x != ',' && x != ')';
      });
      if (n >= 1) {
        *out = {at, at + n};
        return true;
      }
      break;
    }
  }
  // NAME_KEY=VALUE, NAME_TOKEN: VALUE, SECRET=VALUE (a long high-entropy value).
  if (IsWordChar(c)) {
    const size_t n = Run(s, i, IsWordChar);
    const std::string_view name = s.substr(i, n);
    auto ends_with = [&](std::string_view suffix) {
      return name.size() >= suffix.size() && StartsWithNoCase(name, name.size() - suffix.size(), suffix);
    };
    // PGPASSWORD=VALUE, DB_PASSWD=VALUE: any value.
    if ((ends_with("password") || ends_with("passwd")) && i + n + 1 < s.size() && s[i + n] == '=' &&
        s[i + n + 1] != '=') {
      size_t at = i + n + 1;
      const bool quoted = s[at] == '"' || s[at] == '\'';
      if (quoted) ++at;
      const size_t v = Run(s, at, [](char x) {
        return !std::isspace(static_cast<unsigned char>(x)) && x != '&' && x != '"' && x != '\'' && x != ';';
      });
      if (v >= 1) {
        *out = {at, at + v};
        return true;
      }
    }
    if (ends_with("key") || ends_with("token") || ends_with("secret")) {
      size_t at = i + n;
      if (at < s.size() && (s[at] == '"' || s[at] == '\'')) ++at;
      at += Run(s, at, [](char x) { return x == ' '; });
      if (at < s.size() && (s[at] == '=' || s[at] == ':') && !(at + 1 < s.size() && s[at + 1] == '=')) {
        ++at;
        at += Run(s, at, [](char x) { return x == ' ' || x == '"' || x == '\''; });
        const size_t v = Run(s, at, IsValueChar);
        if (LooksSecret(s.substr(at, v))) {
          *out = {at, at + v};
          return true;
        }
      }
    }
  }
  return false;
}


std::string FirstLineOf(std::string_view s) {
  const size_t nl = s.find('\n');
  std::string line(s.substr(0, nl));
  if (nl != std::string_view::npos) line += " …";
  return line;
}

std::string StringField(const Json& j, std::string_view key) {
  if (!j.is_object()) return "";
  auto it = j.find(std::string(key));
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool NameEndsWith(std::string_view name, std::string_view suffix) {
  return name.size() >= suffix.size() && StartsWithNoCase(name, name.size() - suffix.size(), suffix);
}

// Redacts every string inside `j`; a string under a key named like a
// credential (…key, …token, …secret: when it looks generated; password,
// passwd: always) is replaced whole.
void RedactJson(Json& j, size_t* redactions) {
  if (j.is_string()) {
    size_t n = 0;
    std::string red = RedactSecrets(j.get_ref<const std::string&>(), &n);
    if (n > 0) {
      *redactions += n;
      j = std::move(red);
    }
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (it->is_string() && !it->get_ref<const std::string&>().empty()) {
        const std::string& v = it->get_ref<const std::string&>();
        const bool password = NameEndsWith(k, "password") || NameEndsWith(k, "passwd");
        const bool credential = NameEndsWith(k, "key") || NameEndsWith(k, "token") || NameEndsWith(k, "secret");
        if (password || (credential && LooksSecret(v) && v.find(' ') == std::string::npos)) {
          *it = std::string(kRedacted);
          ++*redactions;
          continue;
        }
      }
      RedactJson(*it, redactions);
    }
  } else if (j.is_array()) {
    for (Json& v : j) RedactJson(v, redactions);
  }
}

// `json_text` redacted and capped: strings inside a JSON value are cut to a
// share of `max_chars`; what still does not fit becomes capped text.
std::string CapJson(const std::string& json_text, size_t max_chars, size_t* redactions) {
  if (json_text.empty()) return "";
  Json j = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    size_t n = 0;
    std::string red = RedactSecrets(json_text, &n);
    *redactions += n;
    return ObsDump(Json(CapUtf8Chars(red, max_chars)));
  }
  RedactJson(j, redactions);
  std::string red = ObsDump(j);
  if (Utf8Chars(red) <= max_chars) return red;
  if (j.is_string()) return ObsDump(Json(CapUtf8Chars(j.get<std::string>(), max_chars)));
  if (j.is_object()) {
    const size_t share = std::max<size_t>(100, max_chars / std::max<size_t>(1, j.size()));
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it->is_string()) *it = CapUtf8Chars(it->get<std::string>(), share);
    }
    const std::string dumped = ObsDump(j);
    if (Utf8Chars(dumped) <= max_chars + 200) return dumped;
  }
  return ObsDump(Json(CapUtf8Chars(red, max_chars)));
}

// The exit code "Exit code N" in an error message; -1 when none.
int ExitCodeIn(std::string_view text) {
  const size_t at = text.find("xit code ");
  if (at == std::string_view::npos) return -1;
  size_t i = at + 9;
  int code = 0, digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && digits < 4) {
    code = code * 10 + (text[i] - '0');
    ++i;
    ++digits;
  }
  return digits == 0 ? -1 : code;
}

}  // namespace

std::string RedactSecrets(std::string_view text, size_t* count) {
  std::string out;
  size_t n = 0, copied = 0;
  for (size_t i = 0; i < text.size();) {
    Span span{};
    if (MatchAt(text, i, &span) && span.end > span.begin) {
      if (out.empty()) out.reserve(text.size());
      out.append(text.substr(copied, span.begin - copied));
      out.append(kRedacted);
      copied = span.end;
      i = span.end;
      ++n;
      continue;
    }
    ++i;
  }
  if (count != nullptr) *count = n;
  if (n == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

std::string RelativeToRoot(const std::string& path, const std::string& cwd, const std::string& root) {
  if (path.empty()) return "";
  fs::path p(path);
  if (p.is_relative() && !cwd.empty()) p = fs::path(cwd) / p;
  p = p.lexically_normal();
  const std::string base = root.empty() ? cwd : root;
  if (!base.empty() && p.is_absolute()) {
    const fs::path rel = p.lexically_relative(fs::path(base).lexically_normal());
    if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  }
  return p.generic_string();
}

Result<Observation> ObservationFromHook(const HookInput& in, TimeMs now, size_t max_chars) {
  if (in.tool_name.empty()) return Status::InvalidArgument("the PostToolUse payload names no tool (tool_name)");
  if (in.session_id.empty()) return Status::InvalidArgument("the PostToolUse payload has no session_id");
  Observation o;
  o.at = now;
  o.session_id = in.session_id;
  o.cwd = in.cwd;
  o.hook_event = in.hook_event_name.empty() ? "PostToolUse" : in.hook_event_name;
  o.tool = in.tool_name;
  o.tool_use_id = in.tool_use_id;
  const WorkTree wt = FindWorkTree(in.cwd);
  o.repository = wt.top_level;
  o.branch = wt.branch;
  const Json input = in.tool_input.empty() ? Json() : Json::parse(in.tool_input, nullptr, false);
  const Json response = in.tool_response.empty() ? Json() : Json::parse(in.tool_response, nullptr, false);
  auto file = [&](const std::string& p) {
    if (!p.empty() && o.files.size() < kObservationMaxFiles) o.files.push_back(RelativeToRoot(p, in.cwd, wt.top_level));
  };
  const std::string& t = o.tool;
  std::string summary;
  if (t == "Bash") {
    o.command = StringField(input, "command");
    summary = FirstLineOf(o.command);
  } else if (t == "Edit" || t == "Write" || t == "Read" || t == "MultiEdit" || t == "NotebookEdit" ||
             t == "NotebookRead") {
    file(StringField(input, "file_path"));
    file(StringField(input, "notebook_path"));
    o.changed_files = t != "Read" && t != "NotebookRead";
    summary = o.files.empty() ? "" : o.files[0];
  } else if (t == "Grep" || t == "Glob") {
    summary = StringField(input, "pattern");
    const std::string where = StringField(input, "path");
    if (!where.empty()) summary += " in " + RelativeToRoot(where, in.cwd, wt.top_level);
  } else if (t == "WebFetch") {
    summary = StringField(input, "url");
  } else if (t == "WebSearch") {
    summary = StringField(input, "query");
  } else if (t == "Task" || t == "Agent") {
    summary = StringField(input, "description");
  } else if (t == "TodoWrite" && input.is_object() && input.contains("todos") && input["todos"].is_array()) {
    summary = std::to_string(input["todos"].size()) + " todos";
  }
  if (summary.empty() && input.is_object()) {
    // Any tool (MCP tools included): its first string argument.
    for (auto it = input.begin(); it != input.end(); ++it) {
      if (it->is_string() && !it->get<std::string>().empty()) {
        summary = it.key() + ": " + FirstLineOf(it->get<std::string>());
        break;
      }
    }
  }
  size_t n = 0;
  o.summary = CapUtf8Chars(RedactSecrets(summary, &n), kObservationSummaryChars);
  o.redactions += n;
  if (!o.command.empty()) {
    o.command = CapUtf8Chars(RedactSecrets(o.command, &n), kObservationCommandChars);
    o.redactions += n;
  }
  // Status.
  if (response.is_object()) {
    for (const char* key : {"exit_code", "exitCode", "returncode", "return_code"}) {
      if (response.contains(key) && response[key].is_number_integer()) o.exit_code = response[key].get<int>();
    }
    if (response.contains("interrupted") && response["interrupted"].is_boolean()) {
      o.interrupted = response["interrupted"].get<bool>();
    }
  }
  if (o.hook_event == "PostToolUseFailure") {
    o.failed = true;
    o.error = CapUtf8Chars(RedactSecrets(in.error, &n), kObservationCommandChars);
    o.redactions += n;
    if (o.exit_code < 0 && t == "Bash") o.exit_code = ExitCodeIn(in.error);
  } else if (t == "Bash" && o.exit_code < 0 && !o.interrupted) {
    // Claude Code reports a Bash command that exits non-zero as a failure
    // (PostToolUseFailure); a PostToolUse for Bash is a command that exited 0.
    o.exit_code = 0;
  }
  if (o.exit_code > 0 || o.interrupted) o.failed = true;
  o.input = CapJson(in.tool_input, max_chars, &o.redactions);
  o.response = CapJson(in.tool_response, max_chars, &o.redactions);
  return o;
}

std::string ObservationLine(const Observation& o) {
  std::string line = o.tool + (o.summary.empty() ? "" : ": " + o.summary);
  if (o.exit_code >= 0) line += " (exit " + std::to_string(o.exit_code) + ")";
  if (o.interrupted) line += " (interrupted)";
  if (o.failed && !o.error.empty()) line += " (failed: " + CapUtf8Chars(FirstLineOf(o.error), 120) + ")";
  if (!o.files.empty() && !(o.files.size() == 1 && o.files[0] == o.summary)) {
    line += " · files:";
    for (size_t i = 0; i < o.files.size() && i < 5; ++i) line += (i ? ", " : " ") + o.files[i];
    if (o.files.size() > 5) line += " (+" + std::to_string(o.files.size() - 5) + " more)";
  }
  return line;
}

std::string ObservationJson(const Observation& o) {
  Json j = {{"at", o.at},           {"session_id", o.session_id}, {"cwd", o.cwd},
            {"repository", o.repository}, {"branch", o.branch}, {"hook_event", o.hook_event},
            {"tool", o.tool},       {"tool_use_id", o.tool_use_id}, {"summary", o.summary},
            {"files", o.files},     {"changed_files", o.changed_files}, {"command", o.command},
            {"exit_code", o.exit_code}, {"interrupted", o.interrupted}, {"failed", o.failed},
            {"error", o.error},     {"redactions", o.redactions}};
  // Input and response as JSON when they parse (they were capped as JSON).
  for (auto [key, text] : {std::pair<const char*, const std::string*>{"input", &o.input}, {"response", &o.response}}) {
    Json v = text->empty() ? Json() : Json::parse(*text, nullptr, false);
    j[key] = v.is_discarded() ? Json(*text) : v;
  }
  return ObsDump(j);
}

Result<Observation> ParseObservationJson(std::string_view json) {
  Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("an observation is not a JSON object");
  Observation o;
  try {
    o.at = j.value("at", int64_t{0});
    o.session_id = j.value("session_id", "");
    o.cwd = j.value("cwd", "");
    o.repository = j.value("repository", "");
    o.branch = j.value("branch", "");
    o.hook_event = j.value("hook_event", "");
    o.tool = j.value("tool", "");
    o.tool_use_id = j.value("tool_use_id", "");
    o.summary = j.value("summary", "");
    if (j.contains("files") && j["files"].is_array()) {
      for (const Json& f : j["files"]) {
        if (f.is_string()) o.files.push_back(f.get<std::string>());
      }
    }
    o.changed_files = j.value("changed_files", false);
    o.command = j.value("command", "");
    o.exit_code = j.value("exit_code", -1);
    o.interrupted = j.value("interrupted", false);
    o.failed = j.value("failed", false);
    o.error = j.value("error", "");
    o.redactions = j.value("redactions", size_t{0});
    if (j.contains("input") && !j["input"].is_null()) o.input = ObsDump(j["input"]);
    if (j.contains("response") && !j["response"].is_null()) o.response = ObsDump(j["response"]);
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("an observation has a field of the wrong type: ") + e.what());
  }
  if (o.tool.empty() || o.session_id.empty()) return Status::InvalidArgument("an observation needs tool and session_id");
  return o;
}

std::string ObservationSpoolDir(const std::string& repository) { return SpoolDir(repository) + "/observations"; }

Result<std::string> SpoolObservation(const Observation& o, const ObservationScope& scope,
                                     const std::string& repository) {
  if (repository.empty()) return Status::InvalidArgument("the prompt repository path is empty (capture.repository)");
  const std::string body = "{\"scope\":" +
                           ObsDump(Json{{"tenant", scope.tenant}, {"user", scope.user}, {"mission", scope.mission}}) +
                           ",\"observation\":" + ObservationJson(o) + "}\n";
  return WriteSpoolFile(ObservationSpoolDir(repository), o.at, RandomBits(), body);
}

}  // namespace msp
