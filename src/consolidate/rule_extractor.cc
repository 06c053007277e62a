// The rule-based fact extractor: the rule table, the word lists it uses, and
// the machinery that cuts a user message into clauses and applies the rules.
// What the rules do is described in rule_extractor.h.
#include "consolidate/rule_extractor.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>

#include "util/text.h"

namespace msp {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------
// The rule table.

enum class Category { kPreference, kProfile, kEnvironment, kGoal, kConstraint, kProblem };

// What the captured rest of the clause ({x}) must be for a rule to fire.
enum class Require {
  kAny,          // anything but a vague word ("it", "that", ...)
  kProblemVerb,  // starts with an action that can fail: kProblemVerbs
  kTrouble,      // mentions an error or a problem: kTroubleWords
  kProduct,      // names a known product (kProducts), e.g. "I'm on Windows"
  kArticle,      // starts with "a"/"an", not "a bit", "a little", ...
  kAge,          // "<number> years old"
  kNotRequest,   // does not start with know/ask/see/...: "I want to know" asks, it states no goal
};

// One rule. A clause fires it when, case-insensitively, it starts with
// `lead` (then a word boundary), the `mid` phrase (if any) follows with
// {y} between them, and the rest {x} meets `require`.
//   lead, mid: "(a|b) c" expands to "a c" and "b c"; the longest match wins.
//   y_in:      "" (any 1-6 words without "is", "are", "was", "were", "to";
//              empty only when the template uses {l}) or the allowed {y}
//              values, "a|b|c".
//   tmpl:      {x} the rest, {y} the words between lead and mid, {m} the mid
//              as typed, {l} the lead in lowercase. First-person words in
//              {x} and {y} become third-person.
//   env:       version mentions in a clause fired by this rule describe the
//              user's environment (false for wishes, dislikes, negations).
struct Rule {
  Category category;
  std::string_view lead;
  std::string_view mid;
  std::string_view y_in;
  Require require;
  std::string_view tmpl;
  double confidence;
  bool env;
};

constexpr std::string_view kFailVerbs =
    "(fails|failed|is failing|keeps failing|crashes|crashed|is crashing|keeps crashing|does not work|doesn't work|"
    "did not work|didn't work|won't work|will not work|stopped working|is broken|won't start|will not start|"
    "won't run|won't build|won't compile|won't install|throws|threw|errors out|hangs|freezes|segfaults)";
constexpr std::string_view kIsAre = "(is|are)";

constexpr std::string_view kProfileKeys =
    "name|full name|nickname|job|job title|title|role|position|occupation|profession|employer|company|team|"
    "age|timezone|time zone|location|city|country|hometown|home town|native language|first language|"
    "mother tongue|pronouns|major|field|specialty|specialization|background";
constexpr std::string_view kEnvironmentKeys =
    "os|operating system|setup|stack|tech stack|editor|ide|shell|terminal|browser|laptop|computer|machine|"
    "workstation|distro|distribution|platform|environment|python version|python|node version|database|"
    "server|cloud|cloud provider|package manager|compiler|gpu|cpu|ram";
constexpr std::string_view kConstraintKeys =
    "budget|deadline|limit|time limit|budget limit|max budget|maximum budget|constraint|main constraint";
constexpr std::string_view kGoalKeys = "goal|main goal|end goal|ultimate goal|aim|objective|plan|dream|mission";

constexpr std::string_view kCannot =
    "(i can't|i cannot|i can not|i cant|i'm unable to|i am unable to|i'm not able to|i am not able to)";

// clang-format off
constexpr Rule kRules[] = {
  // --- preference ---------------------------------------------------------
  {Category::kPreference, "(i prefer|i'd prefer|i would prefer)", "", "", Require::kAny, "User prefers {x}.", 0.85, false},
  {Category::kPreference, "(i'd rather|i would rather)", "", "", Require::kAny, "User would rather {x}.", 0.85, false},
  {Category::kPreference, "(i don't like|i do not like|i dont like)", "", "", Require::kAny, "User does not like {x}.", 0.85, false},
  {Category::kPreference, "(i dislike)", "", "", Require::kAny, "User dislikes {x}.", 0.85, false},
  {Category::kPreference, "(i hate)", "", "", Require::kAny, "User hates {x}.", 0.8, false},
  {Category::kPreference, "(i love)", "", "", Require::kAny, "User loves {x}.", 0.8, false},
  {Category::kPreference, "(i like)", "", "", Require::kAny, "User likes {x}.", 0.8, false},
  {Category::kPreference, "(i enjoy)", "", "", Require::kAny, "User enjoys {x}.", 0.8, false},
  {Category::kPreference, "(i'm|i am) a (big |huge |)fan of", "", "", Require::kAny, "User is a fan of {x}.", 0.8, false},
  {Category::kPreference, "(i avoid)", "", "", Require::kAny, "User avoids {x}.", 0.8, false},
  {Category::kPreference, "my (favorite|favourite)", kIsAre, "", Require::kAny, "User's favorite {y} {m} {x}.", 0.9, false},
  {Category::kPreference, "my preferred", kIsAre, "", Require::kAny, "User's preferred {y} {m} {x}.", 0.9, false},
  {Category::kPreference, "my preference (is|would be)", "", "", Require::kAny, "User's preference: {x}.", 0.9, false},
  // --- "my K fails": before "my K is X", so "my laptop is broken" is a problem
  {Category::kProblem, "my", kFailVerbs, "", Require::kAny, "User's {y} {m} {x}.", 0.8, true},
  // --- "my K is X" --------------------------------------------------------
  {Category::kProfile, "my", "is", kProfileKeys, Require::kAny, "User's {y} is {x}.", 0.9, true},
  {Category::kEnvironment, "my", "is", kEnvironmentKeys, Require::kAny, "User's {y} is {x}.", 0.9, true},
  {Category::kConstraint, "my", "is", kConstraintKeys, Require::kAny, "User's {y} is {x}.", 0.9, false},
  {Category::kGoal, "my", "is", kGoalKeys, Require::kAny, "User's goal: {x}.", 0.9, false},
  // --- I am ... -----------------------------------------------------------
  {Category::kProfile, "(i'm|i am)", "", "", Require::kAge, "User is {x}.", 0.85, true},
  {Category::kConstraint, "(i'm|i am) allergic to", "", "", Require::kAny, "User is allergic to {x}.", 0.9, false},
  {Category::kConstraint, "(i'm|i am) not (allowed|permitted) to", "", "", Require::kAny, "User is not allowed to {x}.", 0.85, false},
  {Category::kGoal, "(i'm trying to|i am trying to|i try to)", "", "", Require::kNotRequest, "User's goal: {x}.", 0.8, true},
  {Category::kGoal, "(i'm planning to|i am planning to|i plan to|i intend to|i hope to|i aim to)", "", "", Require::kAny, "User's goal: {x}.", 0.8, false},
  {Category::kGoal, "(i'm|i am) learning", "", "", Require::kAny, "User is learning {x}.", 0.8, false},
  {Category::kEnvironment, "(i'm|i am) using", "", "", Require::kAny, "User uses {x}.", 0.85, true},
  {Category::kEnvironment, "(i'm|i am) running", "", "", Require::kProduct, "User runs {x}.", 0.8, true},
  {Category::kEnvironment, "(i'm|i am) on", "", "", Require::kProduct, "User uses {x}.", 0.8, true},
  {Category::kProfile, "(i'm|i am) based in", "", "", Require::kAny, "User lives in {x}.", 0.85, true},
  {Category::kProfile, "(i'm|i am) from", "", "", Require::kAny, "User is from {x}.", 0.85, false},
  {Category::kProfile, "(i'm|i am)", "", "", Require::kArticle, "User is {x}.", 0.85, true},
  // --- cannot: a failed action is a problem, anything else a constraint ---
  {Category::kProblem, kCannot, "", "", Require::kProblemVerb, "User cannot {x}.", 0.85, true},
  {Category::kProblem, "(can't|cannot|cant|unable to)", "", "", Require::kProblemVerb, "User cannot {x}.", 0.8, true},
  {Category::kConstraint, kCannot, "", "", Require::kAny, "User cannot {x}.", 0.85, false},
  {Category::kConstraint, "(i must not|i mustn't|i must never|i may not)", "", "", Require::kAny, "User must not {x}.", 0.85, false},
  {Category::kConstraint, "(i don't want to|i do not want to)", "", "", Require::kAny, "User does not want to {x}.", 0.8, false},
  {Category::kConstraint, "(i don't eat|i do not eat)", "", "", Require::kAny, "User does not eat {x}.", 0.85, false},
  // --- environment --------------------------------------------------------
  {Category::kEnvironment, "(i don't use|i do not use)", "", "", Require::kAny, "User does not use {x}.", 0.85, false},
  {Category::kEnvironment, "(i no longer use|i stopped using|i quit using)", "", "", Require::kAny, "User no longer uses {x}.", 0.85, false},
  {Category::kEnvironment, "(i use)", "", "", Require::kAny, "User uses {x}.", 0.85, true},
  {Category::kEnvironment, "(i run)", "", "", Require::kProduct, "User runs {x}.", 0.8, true},
  {Category::kEnvironment, "(i installed|i have installed|i've installed)", "", "", Require::kAny, "User has installed {x}.", 0.8, true},
  {Category::kEnvironment, "(i have|i've got|i've)", "installed", "", Require::kAny, "User has {y} installed {x}.", 0.8, true},
  // --- constraint: having ---------------------------------------------------
  {Category::kConstraint, "(i don't have|i do not have)", "", "", Require::kAny, "User does not have {x}.", 0.75, false},
  {Category::kConstraint, "(i only have|i have only)", "", "", Require::kAny, "User only has {x}.", 0.75, false},
  // --- goal ---------------------------------------------------------------
  {Category::kGoal, "(i want to|i wanna)", "", "", Require::kNotRequest, "User's goal: {x}.", 0.8, false},
  {Category::kGoal, "(i need to|i have to|i've got to|i gotta)", "", "", Require::kNotRequest, "User's goal: {x}.", 0.8, false},
  // --- profile: work, home, languages ---------------------------------------
  {Category::kProfile, "i work at", "", "", Require::kAny, "User works at {x}.", 0.85, true},
  {Category::kProfile, "i work for", "", "", Require::kAny, "User works for {x}.", 0.85, true},
  {Category::kProfile, "i work as", "", "", Require::kAny, "User works as {x}.", 0.85, true},
  {Category::kProfile, "i work in", "", "", Require::kAny, "User works in {x}.", 0.85, true},
  {Category::kProfile, "i work on", "", "", Require::kAny, "User works on {x}.", 0.8, true},
  {Category::kProfile, "i work with", "", "", Require::kAny, "User works with {x}.", 0.8, true},
  {Category::kProfile, "(i live in)", "", "", Require::kAny, "User lives in {x}.", 0.85, true},
  {Category::kProfile, "(i speak)", "", "", Require::kAny, "User speaks {x}.", 0.8, false},
  // --- problem ------------------------------------------------------------
  {Category::kProblem, "(i get|i got|i'm getting|i am getting|i keep getting|getting|i see|i'm seeing|i am seeing|i keep seeing|i receive|i'm receiving)", "", "", Require::kTrouble, "User gets {x}.", 0.8, true},
  {Category::kProblem, "(i'm having|i am having|i have|i keep having|having|i ran into|i'm running into|i am running into)", "", "", Require::kTrouble, "User has {x}.", 0.75, true},
  {Category::kProblem, "the", kFailVerbs, "", Require::kAny, "User reports that the {y} {m} {x}.", 0.7, true},
  {Category::kProblem, "(installing|building|compiling|running|importing|loading|starting|launching|deploying|updating|upgrading|connecting to|logging in to|logging into)", kFailVerbs, "", Require::kAny, "User reports that {l} {y} {m} {x}.", 0.75, true},
  {Category::kProblem, "(pip|pip3|npm|yarn|pnpm|apt|apt-get|brew|conda|cargo|make|cmake|gcc|g++|clang|docker|git|poetry|gradle|maven|mvn)", kFailVerbs, "", Require::kAny, "User reports that {l} {y} {m} {x}.", 0.75, true},
};

// Known products, for version mentions and for "I'm on X" / "I run X".
// `names` are matched case-insensitively unless `exact_case`; `joiner` goes
// between the name and the version in the fact ("C++20", "Python 3.11").
struct Product {
  std::string_view canonical;
  std::string_view names;
  bool exact_case;
  std::string_view joiner;
};

constexpr Product kProducts[] = {
  {"Windows Server", "windows server", false, " "}, {"Windows", "windows", false, " "},
  {"macOS", "macos|mac os x|mac os|os x|osx", false, " "}, {"Mac", "mac|macbook", false, " "},
  {"Linux", "linux", false, " "}, {"Ubuntu", "ubuntu", false, " "}, {"Debian", "debian", false, " "},
  {"Fedora", "fedora", false, " "}, {"CentOS", "centos", false, " "}, {"RHEL", "rhel", false, " "},
  {"Arch Linux", "arch linux", false, " "}, {"Arch", "Arch", true, " "}, {"Linux Mint", "Mint|linux mint", true, " "},
  {"WSL", "wsl", false, " "}, {"Android", "android", false, " "}, {"iOS", "ios", false, " "},
  {"Python", "python", false, " "}, {"Node.js", "node.js|nodejs|node", false, " "},
  {"Java", "java", false, " "}, {"JDK", "jdk|openjdk", false, " "}, {"Go", "Go", true, " "},
  {"Go", "golang", false, " "}, {"Rust", "rust", false, " "}, {"Ruby", "ruby", false, " "},
  {"PHP", "php", false, " "}, {"Perl", "perl", false, " "}, {"C++", "c++", false, ""},
  {"GCC", "gcc", false, " "}, {"Clang", "clang", false, " "}, {"LLVM", "llvm", false, " "},
  {"CUDA", "cuda", false, " "}, {"PostgreSQL", "postgresql|postgres", false, " "}, {"MySQL", "mysql", false, " "},
  {"SQLite", "sqlite", false, " "}, {"MongoDB", "mongodb", false, " "}, {"Redis", "redis", false, " "},
  {"Visual Studio Code", "visual studio code|vs code|vscode", false, " "}, {"Visual Studio", "visual studio", false, " "},
  {".NET", ".net|dotnet", false, " "}, {"Kotlin", "kotlin", false, " "}, {"Swift", "Swift", true, " "},
  {"TypeScript", "typescript", false, " "}, {"Django", "django", false, " "}, {"React", "React", true, " "},
  {"Angular", "angular", false, " "}, {"Vue", "Vue", true, " "}, {"Rails", "rails", false, " "},
  {"Excel", "Excel", true, " "}, {"Qt", "Qt", true, " "}, {"CMake", "cmake", false, " "},
  {"Docker", "docker", false, " "}, {"Kubernetes", "kubernetes|k8s", false, " "}, {"Xcode", "xcode", false, " "},
  {"TensorFlow", "tensorflow", false, " "}, {"PyTorch", "pytorch", false, " "}, {"NumPy", "numpy", false, " "},
  {"pandas", "pandas", false, " "}, {"Chrome", "chrome", false, " "}, {"Firefox", "firefox", false, " "},
  {"Vim", "vim", false, " "}, {"Neovim", "neovim", false, " "}, {"Emacs", "emacs", false, " "},
};
// clang-format on

// ---------------------------------------------------------------------------
// Word lists.

// Actions whose failure is a problem ("I can't install X"), not a constraint.
constexpr std::string_view kProblemVerbs =
    "install|reinstall|uninstall|run|build|compile|import|load|open|connect|start|launch|boot|log|login|access|"
    "download|upload|update|upgrade|deploy|execute|reach|sync|mount|activate|push|pull|clone|debug|fix|"
    "resolve|reproduce|get|find|save|print";
constexpr std::string_view kTroubleWords[] = {
    "error", "exception", "traceback", "segfault", "segmentation fault", "crash", "failure", "warning",
    "stack trace", "permission denied", "not found", "timeout", "timed out", "problem", "issue",
    "trouble", "bug", "difficult"};
// A goal clause that asks rather than aims: "I want to know ...".
constexpr std::string_view kRequestVerbs = "know|ask|see|check|say|mention|tell|clarify|confirm|find out|make sure";
// Objects too vague to be a fact: "I like it".
constexpr std::string_view kVagueObjects =
    "it|this|that|them|these|those|something|anything|everything|nothing|one|so|too|to|a lot|lots|much|"
    "more|less|very much|both|either|neither|yes|no|here|there|you|him|her";

// Openers removed from the start of a clause.
constexpr std::string_view kOpeners[] = {
    "and", "but", "so", "because", "since", "although", "though", "whereas", "yet", "plus", "also",
    "actually", "well", "oh", "ok", "okay", "hi", "hello", "hey", "btw", "by the way", "honestly",
    "anyway", "anyways", "now", "then", "however", "basically", "fyi", "to be honest", "for the record",
    "in fact", "as i said", "as i mentioned", "like i said", "again", "still", "just", "sadly",
    "unfortunately", "currently", "right now", "these days", "at the moment", "at work", "at home",
    "personally", "generally", "usually", "typically", "normally", "first", "please", "of course",
    "i'm pretty sure", "i am pretty sure", "i'm sure", "i am sure", "i know that",
    "obviously", "definitely", "as you know", "also note", "note that", "fwiw"};
// Hedges removed from the start of a clause; they cap its confidence.
constexpr std::string_view kHedges[] = {
    "i think that", "i think", "i guess", "i believe", "i suppose", "i assume", "i feel like",
    "i'm not sure but", "i am not sure but", "not sure but", "maybe", "probably", "perhaps",
    "possibly", "apparently", "i'm guessing", "if i remember correctly", "iirc", "afaik", "i reckon"};
// Adverbs removed right after "I" / "I'm" / "I am" ("I really like").
constexpr std::string_view kAdverbs =
    "really|also|usually|mostly|mainly|primarily|generally|normally|typically|always|still|just|actually|"
    "currently|now|definitely|strongly|personally|totally|absolutely|honestly|already|even|kinda|often";
constexpr std::string_view kHedgeAdverbs = "probably|maybe|perhaps|possibly";
// Clauses that are hypothetical or temporal.
constexpr std::string_view kSubordinators[] = {"if", "unless", "whether", "when", "whenever", "while",
                                               "before", "after", "until", "once", "as soon as",
                                               "even if", "in case"};
// Clauses that ask.
constexpr std::string_view kQuestionOpeners[] = {
    "do you", "does", "did", "can you", "could you", "would you", "will you", "won't you", "should i",
    "should we", "shall", "is there", "are there", "is it", "is this", "is that", "are you", "am i",
    "do i", "can i", "could i", "may i", "might", "how", "what", "why", "where", "which", "who",
    "whom", "whose", "have you", "has anyone", "does anyone", "anyone", "any idea", "any ideas"};
// Words that start a new clause after , ; : or a connective.
constexpr std::string_view kSubjects =
    "i|i'm|i've|i'd|i'll|my|it|it's|the|this|that|we|we're|we've|our|he|she|they|you|there|if|when|"
    "whenever|while|unless|because|since|although|though|once";
constexpr std::string_view kQuestionWords =
    "how|what|why|where|which|who|whom|whose|can|could|do|does|did|is|are|am|should|would|will|shall|may|"
    "any|anyone";
constexpr std::string_view kConnectives = "and|but|so|because|since|although|though|whereas|yet|plus";
// "my <person>" is someone else's: their versions are not the user's.
constexpr std::string_view kPeople =
    "friend|friends|colleague|colleagues|coworker|coworkers|co-worker|boss|manager|wife|husband|partner|"
    "girlfriend|boyfriend|son|daughter|kid|kids|child|children|mom|mother|dad|father|brother|sister|"
    "team|teammate|client|clients|customer|customers|users|students|teacher|roommate|neighbor|neighbour|"
    "parents|family";
// Words right before a product that make a version mention not the user's
// own ("upgrade to Python 3.12", "requires Python 3.10").
constexpr std::string_view kDisownBefore =
    "to|from|than|not|without|install|installing|download|downloading|upgrade|upgrading|update|updating|"
    "switch|switching|migrate|migrating|vs|versus|or|nor|unlike|instead|need|needs|require|requires|"
    "required|support|supports|supported";
// Phrases anywhere in a clause that disown its version mentions.
constexpr std::string_view kDisownPhrases[] = {
    "don't use", "do not use", "don't have", "do not have", "not using", "no longer", "stopped using",
    "never used", "never use", "used to", "instead of", "rather than", "switched from", "upgraded from",
    "moved from", "migrated from", "not on ", "don't run", "do not run", "not running", "uninstalled",
    "removed", "got rid of"};
// Phrases that make "without X" a constraint.
constexpr std::string_view kNeeds[] = {"need to", "needs to", "have to", "has to", "must", "should",
                                       "want to", "wants to", "required to", "trying to", "got to",
                                       "gotta", "supposed to"};
constexpr std::string_view kAbbreviations = "e.g|i.e|etc|vs|mr|mrs|ms|dr|approx|incl|cf|resp";
// Trailing words dropped from a captured object.
constexpr std::string_view kTails[] = {"too", "also", "anyway", "anyways", "though", "btw", "please",
                                       "lol", "haha", "as well", "by the way"};

// ---------------------------------------------------------------------------
// Text helpers. Matching works on an ASCII-lowercased copy of the same
// length, so positions carry over to the original.

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsWordChar(char c) { return IsAlnum(c) || c == '\'' || static_cast<unsigned char>(c) >= 0x80; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::vector<std::string_view> SplitBar(std::string_view list) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t bar = list.find('|', start);
    const size_t end = bar == std::string_view::npos ? list.size() : bar;
    out.push_back(list.substr(start, end - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return out;
}

bool InList(std::string_view word, std::string_view bar_list) {
  for (auto w : SplitBar(bar_list)) {
    if (w == word) return true;
  }
  return false;
}

// "(a|b) c (d|)" -> {"a c d", "a c", "b c d", "b c"} (spaces tidied).
std::vector<std::string> ExpandAlternatives(std::string_view pattern) {
  std::vector<std::string> out = {""};
  size_t i = 0;
  while (i < pattern.size()) {
    const size_t close = pattern[i] == '(' ? pattern.find(')', i) : std::string_view::npos;
    if (close != std::string_view::npos) {
      std::vector<std::string> next;
      for (const auto& prefix : out) {
        for (auto alt : SplitBar(pattern.substr(i + 1, close - i - 1))) next.push_back(prefix + std::string(alt));
      }
      out = std::move(next);
      i = close + 1;
    } else {
      for (auto& prefix : out) prefix += pattern[i];
      ++i;
    }
  }
  for (auto& s : out) {
    std::string tidy;
    for (char c : s) {
      if (c == ' ' && (tidy.empty() || tidy.back() == ' ')) continue;
      tidy += c;
    }
    while (!tidy.empty() && tidy.back() == ' ') tidy.pop_back();
    s = tidy;
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

// True when `lower` has `phrase` at `pos` as whole words.
bool PhraseAt(std::string_view lower, size_t pos, std::string_view phrase) {
  if (phrase.empty() || pos + phrase.size() > lower.size()) return false;
  if (lower.compare(pos, phrase.size(), phrase) != 0) return false;
  if (pos > 0 && IsWordChar(lower[pos - 1]) && IsWordChar(phrase.front())) return false;
  const size_t end = pos + phrase.size();
  return end == lower.size() || !IsWordChar(lower[end]) || !IsWordChar(phrase.back());
}

// The first whole-word occurrence of `phrase` at or after `from`.
size_t FindPhrase(std::string_view lower, std::string_view phrase, size_t from = 0) {
  for (size_t pos = lower.find(phrase, from); pos != std::string_view::npos; pos = lower.find(phrase, pos + 1)) {
    if (PhraseAt(lower, pos, phrase)) return pos;
  }
  return std::string_view::npos;
}

// The word (letters, digits, apostrophes) starting at `pos`.
std::string_view WordAt(std::string_view s, size_t pos) {
  size_t end = pos;
  while (end < s.size() && IsWordChar(s[end])) ++end;
  return s.substr(pos, end - pos);
}

size_t CountWords(std::string_view s) {
  size_t n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool w = !IsAsciiSpace(c);
    if (w && !in_word) ++n;
    in_word = w;
  }
  return n;
}

// ---------------------------------------------------------------------------
// Clauses.

// A clause and its lowercased twin (same length, edited together).
struct Clause {
  std::string text;
  std::string lower;
  bool hedged = false;

  explicit Clause(std::string_view t) : text(t), lower(AsciiLower(t)) {}
  void Erase(size_t pos, size_t n) {
    text.erase(pos, n);
    lower.erase(pos, n);
  }
  void TrimFront() {
    size_t n = 0;
    while (n < text.size() && (IsAsciiSpace(text[n]) || text[n] == ',' || text[n] == '-' || text[n] == '"' ||
                               text[n] == '(' || text[n] == ':')) {
      ++n;
    }
    Erase(0, n);
  }
  void TrimBack() {
    while (!text.empty() && (IsAsciiSpace(text.back()) || text.back() == ',')) {
      text.pop_back();
      lower.pop_back();
    }
  }
  // Removes `phrase` (and the commas and spaces after it) when the clause
  // starts with it as whole words and holds more than it.
  bool StripLeading(std::string_view phrase) {
    if (!PhraseAt(lower, 0, phrase)) return false;
    if (phrase.size() == lower.size()) return false;  // the clause is only this word
    Erase(0, phrase.size());
    TrimFront();
    return true;
  }
};

// Cuts `text` into sentences; `question` marks those ending in '?'.
struct Sentence {
  std::string text;
  bool question = false;
};

bool IsAbbreviationBefore(std::string_view text, size_t dot) {
  size_t start = dot;
  while (start > 0 && !IsAsciiSpace(text[start - 1]) && text[start - 1] != '(') --start;
  return InList(AsciiLower(text.substr(start, dot - start)), kAbbreviations);
}

std::vector<Sentence> SplitSentences(std::string_view text) {
  std::vector<Sentence> out;
  size_t start = 0;
  auto emit = [&](size_t end, bool question) {
    const std::string_view s = TrimAsciiSpace(text.substr(start, end - start));
    if (!s.empty()) out.push_back({std::string(s), question});
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    bool boundary = false;
    if (c == '\n' || c == '!' || c == '?' || c == ';') {
      boundary = true;
    } else if (c == '.') {
      const bool at_end =
          i + 1 == text.size() || IsAsciiSpace(text[i + 1]) || text[i + 1] == '"' || text[i + 1] == ')';
      boundary = at_end && !IsAbbreviationBefore(text, i);
    }
    if (!boundary) {
      ++i;
      continue;
    }
    // A run of terminators ("?!", "...") ends one sentence.
    size_t j = i;
    bool question = false;
    while (j < text.size() && (text[j] == '.' || text[j] == '!' || text[j] == '?' || text[j] == ';' ||
                               text[j] == '\n')) {
      question = question || text[j] == '?';
      ++j;
    }
    emit(i, question);
    start = j;
    i = j;
  }
  emit(text.size(), false);
  return out;
}

// True when the word at `pos` of `lower` starts a new clause. After a comma
// a question word does too ("I use Python 3.11, how do I ...?").
bool StartsClause(std::string_view lower, size_t pos, bool after_punctuation) {
  const std::string_view word = WordAt(lower, pos);
  return InList(word, kSubjects) || (after_punctuation && InList(word, kQuestionWords));
}

std::vector<std::string> SplitClauses(std::string_view sentence) {
  const std::string lower = AsciiLower(sentence);
  std::vector<std::string> out;
  size_t start = 0;
  auto skip_spaces = [&](size_t p) {
    while (p < lower.size() && IsAsciiSpace(lower[p])) ++p;
    return p;
  };
  for (size_t i = 0; i < lower.size(); ++i) {
    size_t next = std::string::npos;  // where the next clause would start
    const char c = lower[i];
    size_t punct_end = std::string::npos;  // after , ; : " - " or an em dash
    if (c == ',' || c == ';' || c == ':') {
      punct_end = i + 1;
    } else if (c == '-' && i > 0 && lower[i - 1] == ' ' && i + 1 < lower.size() && lower[i + 1] == ' ') {
      punct_end = i + 1;
    } else if (lower.compare(i, 3, "\xE2\x80\x94") == 0) {
      punct_end = i + 3;
    }
    if (punct_end != std::string::npos) {
      next = skip_spaces(punct_end);
      // ", and I ..." -> the connective opens the next clause.
      size_t subject = next;
      if (InList(WordAt(lower, next), kConnectives)) subject = skip_spaces(next + WordAt(lower, next).size());
      if (!StartsClause(lower, subject, true)) next = std::string::npos;
    } else if (c == ' ' && InList(WordAt(lower, i + 1), kConnectives)) {
      const size_t subject = skip_spaces(i + 1 + WordAt(lower, i + 1).size());
      if (subject < lower.size() && StartsClause(lower, subject, false)) next = i + 1;
    }
    if (next == std::string::npos || next >= lower.size()) continue;
    out.emplace_back(TrimAsciiSpace(sentence.substr(start, i - start)));
    start = next;
    i = next - 1;
  }
  out.emplace_back(TrimAsciiSpace(sentence.substr(start)));
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) { return s.empty(); }), out.end());
  return out;
}

// Strips openers, hedges and adverbs after "I" (see rule_extractor.h).
void Normalize(Clause* c) {
  c->TrimFront();
  for (bool changed = true; changed;) {
    changed = false;
    for (auto o : kOpeners) changed = c->StripLeading(o) || changed;
    for (auto h : kHedges) {
      if (c->StripLeading(h)) {
        c->hedged = true;
        changed = true;
      }
    }
  }
  for (std::string_view subject : {"i am ", "i'm ", "i "}) {
    if (c->lower.compare(0, subject.size(), subject) != 0) continue;
    for (bool changed = true; changed;) {
      changed = false;
      const std::string_view word = WordAt(c->lower, subject.size());
      if (word.empty() || subject.size() + word.size() >= c->lower.size()) break;
      const bool hedge = InList(word, kHedgeAdverbs);
      if (hedge || InList(word, kAdverbs)) {
        c->Erase(subject.size(), word.size() + 1);
        c->hedged = c->hedged || hedge;
        changed = true;
      }
    }
    break;
  }
  c->TrimBack();
  while (!c->text.empty() && (c->text.back() == '.' || c->text.back() == '!')) {
    c->text.pop_back();
    c->lower.pop_back();
  }
}

bool StartsWithAny(std::string_view lower, const std::string_view* list, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (PhraseAt(lower, 0, list[i])) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Objects: cleaning, the third person, requirements.

// Drops trailing punctuation and filler words ("too", "please").
std::string CleanObject(std::string_view raw) {
  std::string s(TrimAsciiSpace(raw));
  for (bool changed = true; changed;) {
    changed = false;
    while (!s.empty() && (s.back() == '.' || s.back() == ',' || s.back() == '!' || s.back() == ';' ||
                          s.back() == ':' || IsAsciiSpace(s.back()))) {
      s.pop_back();
      changed = true;
    }
    const std::string lower = AsciiLower(s);
    for (auto tail : kTails) {
      if (lower.size() > tail.size() + 1 && lower.compare(lower.size() - tail.size(), tail.size(), tail) == 0 &&
          !IsWordChar(lower[lower.size() - tail.size() - 1])) {
        s.resize(s.size() - tail.size());
        changed = true;
        break;
      }
    }
  }
  return s;
}

// "my script before I leave" -> "their script before they leave".
std::string ThirdPerson(std::string_view s) {
  static const std::unordered_map<std::string, std::string> kMap = {
      {"i", "they"},         {"me", "them"},         {"my", "their"},     {"mine", "theirs"},
      {"myself", "themselves"}, {"i'm", "they're"}, {"i've", "they've"}, {"i'd", "they'd"},
      {"i'll", "they'll"}};
  std::string out;
  bool after_i = false;
  size_t i = 0;
  while (i < s.size()) {
    if (!IsWordChar(s[i])) {
      out += s[i++];
      continue;
    }
    size_t end = i;
    while (end < s.size() && IsWordChar(s[end])) ++end;
    const std::string word(s.substr(i, end - i));
    const std::string lower = AsciiLower(word);
    auto it = kMap.find(lower);
    if (it != kMap.end()) {
      out += it->second;
    } else if (after_i && lower == "am") {
      out += "are";
    } else if (after_i && lower == "was") {
      out += "were";
    } else {
      out += word;
    }
    after_i = lower == "i";
    i = end;
  }
  return out;
}

bool MentionsProduct(std::string_view text) {
  const std::string lower = AsciiLower(text);
  for (const auto& p : kProducts) {
    for (auto name : SplitBar(p.names)) {
      const std::string lname = AsciiLower(name);
      for (size_t pos = FindPhrase(lower, lname); pos != std::string::npos; pos = FindPhrase(lower, lname, pos + 1)) {
        if (!p.exact_case || text.compare(pos, name.size(), name) == 0) return true;
      }
    }
  }
  return false;
}

bool Meets(Require r, std::string_view x) {
  const std::string lower = AsciiLower(x);
  const std::string_view first = WordAt(lower, 0);
  switch (r) {
    case Require::kAny:
      return true;
    case Require::kProblemVerb:
      return InList(first, kProblemVerbs);
    case Require::kTrouble:
      for (auto w : kTroubleWords) {
        if (lower.find(w) != std::string::npos) return true;
      }
      return false;
    case Require::kProduct:
      return MentionsProduct(x);
    case Require::kArticle: {
      if (first != "a" && first != "an") return false;
      const size_t second_at = first.size() + 1;
      if (second_at >= lower.size()) return false;
      return !InList(WordAt(lower, second_at), "bit|little|lot|tad|few|couple|fan|big|huge");
    }
    case Require::kAge: {
      if (first.empty() || !std::all_of(first.begin(), first.end(), IsDigit)) return false;
      const std::string_view rest = TrimAsciiSpace(std::string_view(lower).substr(first.size()));
      return rest == "years old" || rest == "year old" || rest == "yo" || rest == "y/o";
    }
    case Require::kNotRequest:
      for (auto v : SplitBar(kRequestVerbs)) {
        if (PhraseAt(lower, 0, v)) return false;
      }
      return true;
  }
  return false;
}

// A free {y} names a thing; "goal is to fix what" holds a verb and is not one.
bool HasVerb(std::string_view y) {
  const std::string lower = AsciiLower(y);
  for (std::string_view verb : {"is", "are", "was", "were", "to"}) {
    if (FindPhrase(lower, verb) != std::string::npos) return true;
  }
  return false;
}

bool IsVague(std::string_view x) { return x.empty() || InList(AsciiLower(x), kVagueObjects); }

// ---------------------------------------------------------------------------
// Facts.

std::string_view CategoryTag(Category c) {
  switch (c) {
    case Category::kPreference:
      return "preference";
    case Category::kProfile:
      return "profile";
    case Category::kEnvironment:
      return "environment";
    case Category::kGoal:
      return "goal";
    case Category::kConstraint:
      return "constraint";
    case Category::kProblem:
      return "problem";
  }
  return "profile";
}

std::vector<std::string> TagsFor(Category c) {
  std::vector<std::string> tags = {std::string(CategoryTag(c))};
  if (c == Category::kEnvironment || c == Category::kProblem) tags.emplace_back("profile");
  return tags;
}

// Fills the template and tidies spacing: "User's {y} {m} {x}." with an
// empty x gives "User's script fails."
std::string Fill(std::string_view tmpl, const std::string& x, const std::string& y, const std::string& m,
                 const std::string& l) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{' && i + 2 < tmpl.size() && tmpl[i + 2] == '}') {
      const char k = tmpl[i + 1];
      out += k == 'x' ? x : k == 'y' ? y : k == 'm' ? m : l;
      i += 2;
    } else {
      out += tmpl[i];
    }
  }
  std::string tidy;
  for (char c : out) {
    if (c == ' ' && (tidy.empty() || tidy.back() == ' ')) continue;
    if ((c == '.' || c == ',') && !tidy.empty() && tidy.back() == ' ') tidy.pop_back();
    tidy += c;
  }
  return tidy;
}

// Collects candidates; identical texts (case and spacing aside) merge.
class FactSink {
 public:
  void Add(std::string text, double confidence, bool hedged, std::vector<std::string> tags,
           const std::string& episode_id) {
    if (hedged) confidence = std::min(confidence, 0.6);
    std::string key = AsciiLower(text);
    auto it = index_.find(key);
    if (it == index_.end()) {
      index_.emplace(std::move(key), facts_.size());
      FactCandidate f;
      f.text = std::move(text);
      f.confidence = confidence;
      f.tags = std::move(tags);
      if (!episode_id.empty()) f.source_episodes.push_back(episode_id);
      facts_.push_back(std::move(f));
      return;
    }
    FactCandidate& f = facts_[it->second];
    f.confidence = std::max(f.confidence, confidence);
    for (auto& t : tags) {
      if (std::find(f.tags.begin(), f.tags.end(), t) == f.tags.end()) f.tags.push_back(std::move(t));
    }
    if (!episode_id.empty() &&
        std::find(f.source_episodes.begin(), f.source_episodes.end(), episode_id) == f.source_episodes.end()) {
      f.source_episodes.push_back(episode_id);
    }
  }
  std::vector<FactCandidate> Take() { return std::move(facts_); }

 private:
  std::vector<FactCandidate> facts_;
  std::unordered_map<std::string, size_t> index_;
};

// A rule with its alternatives expanded, built once.
struct CompiledRule {
  const Rule* rule;
  std::vector<std::string> leads;
  std::vector<std::string> mids;
  std::vector<std::string> y_in;
};

const std::vector<CompiledRule>& CompiledRules() {
  static const std::vector<CompiledRule> kCompiled = [] {
    std::vector<CompiledRule> out;
    for (const Rule& r : kRules) {
      CompiledRule c{&r, ExpandAlternatives(r.lead), {}, {}};
      if (!r.mid.empty()) c.mids = ExpandAlternatives(r.mid);
      for (auto y : SplitBar(r.y_in)) {
        if (!y.empty()) c.y_in.emplace_back(y);
      }
      out.push_back(std::move(c));
    }
    return out;
  }();
  return kCompiled;
}

struct Match {
  const Rule* rule = nullptr;
  std::string text;
};

// The first rule the clause fires, if any.
Match MatchRules(const Clause& c) {
  for (const CompiledRule& cr : CompiledRules()) {
    const Rule& r = *cr.rule;
    for (const std::string& lead : cr.leads) {
      if (!PhraseAt(c.lower, 0, lead)) continue;
      std::string y;
      std::string m;
      std::string_view rest = std::string_view(c.text).substr(lead.size());
      if (!cr.mids.empty()) {
        // The earliest mid phrase after the lead (longest at that place).
        size_t best = std::string::npos;
        size_t best_len = 0;
        for (const auto& mid : cr.mids) {
          const size_t pos = FindPhrase(c.lower, mid, lead.size());
          if (pos < best || (pos == best && pos != std::string::npos && mid.size() > best_len)) {
            best = pos;
            best_len = mid.size();
          }
        }
        if (best == std::string::npos) break;
        y = std::string(TrimAsciiSpace(std::string_view(c.text).substr(lead.size(), best - lead.size())));
        m = c.text.substr(best, best_len);
        rest = std::string_view(c.text).substr(best + best_len);
        if (!cr.y_in.empty()) {
          if (std::find(cr.y_in.begin(), cr.y_in.end(), AsciiLower(y)) == cr.y_in.end()) break;
        } else if (CountWords(y) > 6 || (y.empty() && r.tmpl.find("{l}") == std::string_view::npos) ||
                   HasVerb(y)) {
          break;
        }
      }
      std::string x = CleanObject(rest);
      if (r.category == Category::kGoal && AsciiLower(x).rfind("to ", 0) == 0) x.erase(0, 3);
      if (cr.mids.empty() && IsVague(x)) break;
      if (x.size() > 200 || CountWords(x) > 30) break;
      if (!Meets(r.require, x)) break;
      return {&r, Fill(r.tmpl, ThirdPerson(x), ThirdPerson(y), m, lead)};
    }
  }
  return {};
}

// "My colleague uses ...", "my boss's laptop ...": about someone else.
bool IsAboutSomeoneElse(std::string_view lower) {
  if (lower.compare(0, 3, "my ") != 0) return false;
  const std::string_view who = WordAt(lower, 3);
  for (auto person : SplitBar(kPeople)) {
    if (who == person || (who.size() > person.size() && who.compare(0, person.size(), person) == 0 &&
                          who[person.size()] == '\'')) {
      return true;
    }
  }
  return false;
}

// The clause's subject is the user (I, we, my <thing>).
bool IsUsersOwn(std::string_view lower) {
  for (std::string_view s : {"i ", "i'm ", "i've ", "i'd ", "i am ", "we ", "we're ", "our ", "my "}) {
    if (lower.compare(0, s.size(), s) == 0) return !IsAboutSomeoneElse(lower);
  }
  return false;
}

// "Python 3.11", "Windows 11", "C++20" in a clause that is the user's own.
void ScanVersions(const Clause& c, bool hedged, const std::string& episode_id, FactSink* sink) {
  for (auto phrase : kDisownPhrases) {
    if (c.lower.find(phrase) != std::string::npos) return;
  }
  std::vector<std::pair<size_t, size_t>> taken;  // spans already read (longer names first)
  for (const Product& p : kProducts) {
    for (auto name : SplitBar(p.names)) {
      const std::string lname = AsciiLower(name);
      for (size_t pos = FindPhrase(c.lower, lname); pos != std::string::npos;
           pos = FindPhrase(c.lower, lname, pos + 1)) {
        if (p.exact_case && c.text.compare(pos, name.size(), name) != 0) continue;
        const size_t name_end = pos + name.size();
        bool overlaps = false;
        for (const auto& [b, e] : taken) overlaps = overlaps || (pos < e && name_end > b);
        if (overlaps) continue;
        // The version: an optional space (none after "C++"), digits and dots.
        size_t v = name_end;
        if (v < c.text.size() && c.text[v] == ' ') ++v;
        if (v < c.text.size() && (c.text[v] == 'v' || c.text[v] == 'V') && v + 1 < c.text.size() &&
            IsDigit(c.text[v + 1])) {
          ++v;
        }
        size_t end = v;
        while (end < c.text.size() &&
               (IsDigit(c.text[end]) || (c.text[end] == '.' && end + 1 < c.text.size() && IsDigit(c.text[end + 1]) &&
                                         end > v))) {
          ++end;
        }
        if (end == v || (end < c.text.size() && IsAlnum(c.text[end]))) continue;
        // The word before the name must not disown it.
        size_t before_end = pos;
        while (before_end > 0 && IsAsciiSpace(c.lower[before_end - 1])) --before_end;
        size_t before_start = before_end;
        while (before_start > 0 && IsWordChar(c.lower[before_start - 1])) --before_start;
        if (InList(std::string_view(c.lower).substr(before_start, before_end - before_start), kDisownBefore)) continue;
        taken.emplace_back(pos, end);
        const std::string fact =
            "User uses " + std::string(p.canonical) + std::string(p.joiner) + c.text.substr(v, end - v) + ".";
        sink->Add(fact, 0.7, hedged, TagsFor(Category::kEnvironment), episode_id);
      }
    }
  }
}

// "... need to deploy without Docker" -> "User's constraint: without Docker."
void ScanWithout(const Clause& c, bool hedged, const std::string& episode_id, FactSink* sink) {
  const size_t at = FindPhrase(c.lower, "without");
  if (at == std::string::npos) return;
  bool needs = false;
  for (auto n : kNeeds) {
    const size_t pos = FindPhrase(c.lower, n);
    needs = needs || (pos != std::string::npos && pos < at);
  }
  if (!needs) return;
  const std::string x = CleanObject(std::string_view(c.text).substr(at + 7));
  const std::string lower = AsciiLower(x);
  if (IsVague(x) || lower.rfind("a doubt", 0) == 0 || lower.rfind("any doubt", 0) == 0) return;
  sink->Add("User's constraint: without " + ThirdPerson(x) + ".", 0.75, hedged, TagsFor(Category::kConstraint),
            episode_id);
}

std::string NormalizeQuotes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    // U+2018 / U+2019 -> ', U+201C / U+201D -> "
    if (i + 2 < text.size() && static_cast<unsigned char>(text[i]) == 0xE2 &&
        static_cast<unsigned char>(text[i + 1]) == 0x80) {
      const auto third = static_cast<unsigned char>(text[i + 2]);
      if (third == 0x98 || third == 0x99) {
        out += '\'';
        i += 2;
        continue;
      }
      if (third == 0x9C || third == 0x9D) {
        out += '"';
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

void ExtractInto(std::string_view user_text, const std::string& episode_id, FactSink* sink) {
  const std::string text = NormalizeQuotes(user_text);
  for (const Sentence& sentence : SplitSentences(text)) {
    const std::vector<std::string> clauses = SplitClauses(sentence.text);
    for (size_t i = 0; i < clauses.size(); ++i) {
      if (sentence.question && i + 1 == clauses.size()) continue;  // the asking part
      Clause c(clauses[i]);
      Normalize(&c);
      if (c.text.empty()) continue;
      if (StartsWithAny(c.lower, kQuestionOpeners, std::size(kQuestionOpeners))) continue;
      if (StartsWithAny(c.lower, kSubordinators, std::size(kSubordinators))) continue;
      if (IsAboutSomeoneElse(c.lower)) continue;
      const Match m = MatchRules(c);
      if (m.rule != nullptr) {
        sink->Add(m.text, m.rule->confidence, c.hedged, TagsFor(m.rule->category), episode_id);
      }
      if (m.rule != nullptr ? m.rule->env : IsUsersOwn(c.lower)) ScanVersions(c, c.hedged, episode_id, sink);
      ScanWithout(c, c.hedged, episode_id, sink);
    }
  }
}

}  // namespace

std::vector<FactCandidate> RuleExtractor::ExtractFromText(std::string_view user_text) const {
  FactSink sink;
  ExtractInto(user_text, "", &sink);
  return sink.Take();
}

Result<std::vector<FactCandidate>> RuleExtractor::Extract(const std::vector<Memory>& episodes) {
  FactSink sink;
  for (const Memory& m : episodes) {
    if (m.kind != Kind::kEpisode || m.sensitivity == Sensitivity::kHigh) continue;
    const json body = json::parse(m.body_json, nullptr, false);
    if (body.is_discarded() || !body.is_object()) continue;
    const auto type = body.find("type");
    if (type == body.end() || !type->is_string() || type->get<std::string>() != "user_message") continue;
    std::string text = m.text;
    if (text.empty()) {
      const auto content = body.find("content");
      if (content != body.end() && content->is_object()) {
        const auto t = content->find("text");
        if (t != content->end() && t->is_string()) text = t->get<std::string>();
      }
    }
    ExtractInto(text, m.id, &sink);
  }
  return sink.Take();
}

Result<std::unique_ptr<Extractor>> MakeExtractor(const ConsolidationOptions& options) {
  if (options.extractor == "rules") return std::unique_ptr<Extractor>(std::make_unique<RuleExtractor>());
  return Status::InvalidArgument("unknown extractor '" + options.extractor + "'; known extractors: rules");
}

}  // namespace msp
