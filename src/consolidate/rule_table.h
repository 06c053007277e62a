// The rule extractor's data: the rule table (what a clause must start with
// and the fact it gives), the known products for version mentions, and the
// word lists the clause splitter and the matcher read. Only data here; the
// clause splitter is rule_clauses.h, the matcher rule_extractor.cc, and what
// the rules do is described in rule_extractor.h.
#ifndef MSP_CONSOLIDATE_RULE_TABLE_H_
#define MSP_CONSOLIDATE_RULE_TABLE_H_

#include <string_view>

namespace msp::rules {

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

inline constexpr std::string_view kFailVerbs =
    "(fails|failed|is failing|keeps failing|crashes|crashed|is crashing|keeps crashing|does not work|doesn't work|"
    "did not work|didn't work|won't work|will not work|stopped working|is broken|won't start|will not start|"
    "won't run|won't build|won't compile|won't install|throws|threw|errors out|hangs|freezes|segfaults)";
inline constexpr std::string_view kIsAre = "(is|are)";

inline constexpr std::string_view kProfileKeys =
    "name|full name|nickname|job|job title|title|role|position|occupation|profession|employer|company|team|"
    "age|timezone|time zone|location|city|country|hometown|home town|native language|first language|"
    "mother tongue|pronouns|major|field|specialty|specialization|background";
inline constexpr std::string_view kEnvironmentKeys =
    "os|operating system|setup|stack|tech stack|editor|ide|shell|terminal|browser|laptop|computer|machine|"
    "workstation|distro|distribution|platform|environment|python version|python|node version|database|"
    "server|cloud|cloud provider|package manager|compiler|gpu|cpu|ram";
inline constexpr std::string_view kConstraintKeys =
    "budget|deadline|limit|time limit|budget limit|max budget|maximum budget|constraint|main constraint";
inline constexpr std::string_view kGoalKeys = "goal|main goal|end goal|ultimate goal|aim|objective|plan|dream|mission";

inline constexpr std::string_view kCannot =
    "(i can't|i cannot|i can not|i cant|i'm unable to|i am unable to|i'm not able to|i am not able to)";

// clang-format off
inline constexpr Rule kRules[] = {
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

inline constexpr Product kProducts[] = {
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
inline constexpr std::string_view kProblemVerbs =
    "install|reinstall|uninstall|run|build|compile|import|load|open|connect|start|launch|boot|log|login|access|"
    "download|upload|update|upgrade|deploy|execute|reach|sync|mount|activate|push|pull|clone|debug|fix|"
    "resolve|reproduce|get|find|save|print";
inline constexpr std::string_view kTroubleWords[] = {
    "error", "exception", "traceback", "segfault", "segmentation fault", "crash", "failure", "warning",
    "stack trace", "permission denied", "not found", "timeout", "timed out", "problem", "issue",
    "trouble", "bug", "difficult"};
// A goal clause that asks rather than aims: "I want to know ...".
inline constexpr std::string_view kRequestVerbs = "know|ask|see|check|say|mention|tell|clarify|confirm|find out|make sure";
// Objects too vague to be a fact: "I like it".
inline constexpr std::string_view kVagueObjects =
    "it|this|that|them|these|those|something|anything|everything|nothing|one|so|too|to|a lot|lots|much|"
    "more|less|very much|both|either|neither|yes|no|here|there|you|him|her";

// Openers removed from the start of a clause.
inline constexpr std::string_view kOpeners[] = {
    "and", "but", "so", "because", "since", "although", "though", "whereas", "yet", "plus", "also",
    "actually", "well", "oh", "ok", "okay", "hi", "hello", "hey", "btw", "by the way", "honestly",
    "anyway", "anyways", "now", "then", "however", "basically", "fyi", "to be honest", "for the record",
    "in fact", "as i said", "as i mentioned", "like i said", "again", "still", "just", "sadly",
    "unfortunately", "currently", "right now", "these days", "at the moment", "at work", "at home",
    "personally", "generally", "usually", "typically", "normally", "first", "please", "of course",
    "i'm pretty sure", "i am pretty sure", "i'm sure", "i am sure", "i know that",
    "obviously", "definitely", "as you know", "also note", "note that", "fwiw"};
// Hedges removed from the start of a clause; they cap its confidence.
inline constexpr std::string_view kHedges[] = {
    "i think that", "i think", "i guess", "i believe", "i suppose", "i assume", "i feel like",
    "i'm not sure but", "i am not sure but", "not sure but", "maybe", "probably", "perhaps",
    "possibly", "apparently", "i'm guessing", "if i remember correctly", "iirc", "afaik", "i reckon"};
// Adverbs removed right after "I" / "I'm" / "I am" ("I really like").
inline constexpr std::string_view kAdverbs =
    "really|also|usually|mostly|mainly|primarily|generally|normally|typically|always|still|just|actually|"
    "currently|now|definitely|strongly|personally|totally|absolutely|honestly|already|even|kinda|often";
inline constexpr std::string_view kHedgeAdverbs = "probably|maybe|perhaps|possibly";
// Clauses that are hypothetical or temporal.
inline constexpr std::string_view kSubordinators[] = {"if", "unless", "whether", "when", "whenever", "while",
                                               "before", "after", "until", "once", "as soon as",
                                               "even if", "in case"};
// Clauses that ask.
inline constexpr std::string_view kQuestionOpeners[] = {
    "do you", "does", "did", "can you", "could you", "would you", "will you", "won't you", "should i",
    "should we", "shall", "is there", "are there", "is it", "is this", "is that", "are you", "am i",
    "do i", "can i", "could i", "may i", "might", "how", "what", "why", "where", "which", "who",
    "whom", "whose", "have you", "has anyone", "does anyone", "anyone", "any idea", "any ideas"};
// Words that start a new clause after , ; : or a connective.
inline constexpr std::string_view kSubjects =
    "i|i'm|i've|i'd|i'll|my|it|it's|the|this|that|we|we're|we've|our|he|she|they|you|there|if|when|"
    "whenever|while|unless|because|since|although|though|once";
inline constexpr std::string_view kQuestionWords =
    "how|what|why|where|which|who|whom|whose|can|could|do|does|did|is|are|am|should|would|will|shall|may|"
    "any|anyone";
inline constexpr std::string_view kConnectives = "and|but|so|because|since|although|though|whereas|yet|plus";
// "my <person>" is someone else's: their versions are not the user's.
inline constexpr std::string_view kPeople =
    "friend|friends|colleague|colleagues|coworker|coworkers|co-worker|boss|manager|wife|husband|partner|"
    "girlfriend|boyfriend|son|daughter|kid|kids|child|children|mom|mother|dad|father|brother|sister|"
    "team|teammate|client|clients|customer|customers|users|students|teacher|roommate|neighbor|neighbour|"
    "parents|family";
// Words right before a product that make a version mention not the user's
// own ("upgrade to Python 3.12", "requires Python 3.10").
inline constexpr std::string_view kDisownBefore =
    "to|from|than|not|without|install|installing|download|downloading|upgrade|upgrading|update|updating|"
    "switch|switching|migrate|migrating|vs|versus|or|nor|unlike|instead|need|needs|require|requires|"
    "required|support|supports|supported";
// Phrases anywhere in a clause that disown its version mentions.
inline constexpr std::string_view kDisownPhrases[] = {
    "don't use", "do not use", "don't have", "do not have", "not using", "no longer", "stopped using",
    "never used", "never use", "used to", "instead of", "rather than", "switched from", "upgraded from",
    "moved from", "migrated from", "not on ", "don't run", "do not run", "not running", "uninstalled",
    "removed", "got rid of"};
// Phrases that make "without X" a constraint.
inline constexpr std::string_view kNeeds[] = {"need to", "needs to", "have to", "has to", "must", "should",
                                       "want to", "wants to", "required to", "trying to", "got to",
                                       "gotta", "supposed to"};
inline constexpr std::string_view kAbbreviations = "e.g|i.e|etc|vs|mr|mrs|ms|dr|approx|incl|cf|resp";
// Trailing words dropped from a captured object.
inline constexpr std::string_view kTails[] = {"too", "also", "anyway", "anyways", "though", "btw", "please",
                                       "lol", "haha", "as well", "by the way"};

}  // namespace msp::rules

#endif  // MSP_CONSOLIDATE_RULE_TABLE_H_
