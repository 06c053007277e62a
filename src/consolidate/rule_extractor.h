// The rule-based fact extractor: what a user says about themselves, turned
// into short third-person facts without a model.
//
// What it reads. Only episodes whose body type is "user_message" (the user's
// own words, in Memory::text, else body.content.text). Agent responses, tool
// calls, tool results and observations never yield facts: a model's or a
// tool's words are not statements about the user, and tool output cannot be
// tied to the user's environment precisely enough. Episodes of sensitivity
// "high" are skipped, as are records that are not episodes or whose body is
// not a JSON object.
//
// How it reads.
//  1. Curly quotes become straight ones; the text is cut into sentences at
//     . ! ? ; and newlines (not inside "3.11", "e.g.", "i.e.", "etc.").
//  2. A sentence ending in "?" is a question: its last clause is skipped.
//     Clauses that open like a question ("do you", "can you", "how", "what",
//     "should I", ...) are skipped too.
//  3. A sentence is cut into clauses at , ; : and at "and", "but", "so",
//     "because", "since", "although", "though", "whereas", "yet" when what
//     follows starts with a subject ("I", "I'm", "my", "it", "the", "we", ...):
//     "I can't install numpy on Windows 11, my script fails with Python 3.11"
//     is two clauses.
//  4. Each clause loses its openers ("Also,", "Actually", "btw", "Hi,",
//     "currently", ...), hedges ("I think", "I guess", "maybe", "probably",
//     ... which mark it hedged) and adverbs after "I" ("I really like" ->
//     "I like"). Clauses opening with "if", "unless", "whether", "when",
//     "while", "before", "after", "until", "once" are hypothetical or
//     temporal and are skipped, as are clauses about someone else ("my
//     colleague uses ...", "my boss's laptop ...").
//  5. The clause is matched, case-insensitively, against the rule table in
//     rule_table.h; the first rule that fires makes a fact from its
//     template. First-person words in the captured text are turned to the
//     third person ("my script" -> "their script").
//  6. Two scanners run over every clause as well:
//     - version mentions: a known product followed by a version ("Python
//       3.11", "Windows 11", "Ubuntu 22.04", "C++20", "node 20") gives
//       "User uses Python 3.11." (environment, 0.7) when the clause is the
//       user's own (its subject is I / my ..., or a rule that allows it fired)
//       and the mention is not disowned ("upgrade to", "from", "instead of",
//       "don't use", "no longer", ...);
//     - "without X" in a clause that states a need ("need to", "have to",
//       "must", "should", "want to", ...) gives "User's constraint: without X."
//       (constraint, 0.75).
//
// The rules, by category (templates in rule_table.h; confidence in
// brackets, hedged clauses capped at 0.6):
//   preference   I prefer / I'd prefer X -> "User prefers X." [0.85]
//                I like / love / enjoy / dislike / hate X, I don't like X,
//                I'm a big fan of X, I'd rather X, my favorite K is X,
//                my preference is X, I avoid X [0.8-0.9]
//   profile      my name / job / role / employer / time zone / city /
//                native language ... is X [0.9]; I am a(n) X, I'm N years old,
//                I work at / for / as / in / on X, I live in X, I'm based in X,
//                I'm from X, I speak X [0.85]
//   environment  my OS / editor / IDE / shell / laptop / setup ... is X [0.9];
//                I use X, I'm using X [0.85]; I'm on X, I run X (X must name a
//                known product) [0.8]; I installed X, I have X installed [0.8];
//                I don't use X, I no longer use X [0.85]
//   goal         my goal / aim / objective is (to) X [0.9]; I want to X,
//                I need to X, I'm trying to X, I plan to X, I hope to X,
//                I'm learning X [0.8] -> "User's goal: X." (not for requests:
//                "I want to know / ask / see ...")
//   constraint   I can't / cannot / am unable to X [0.85], I must not X,
//                I'm not allowed to X, I'm allergic to X [0.9], I don't want
//                to X, I don't have X, I only have X, I don't eat X,
//                my budget / deadline is X [0.9], without X (scanner)
//   problem      I can't install / run / build / import ... X -> "User cannot
//                install X." [0.85]; my K fails / crashes / doesn't work / is
//                broken ... [0.8]; the K fails ... [0.7]; installing / running
//                ... K fails, pip / npm / docker ... K fails [0.75]; I get /
//                I'm getting / I keep getting an error ... [0.8]; I'm having
//                trouble / an issue ... [0.75]
// Tags: the category's own tag; environment and problem facts also carry
// "profile", so every fact has one of the write policy's stable tags.
// Nothing else becomes a fact: no rule reads passwords, keys, e-mail
// addresses or phone numbers ("my password is ..." matches no rule).
//
// Within one Extract() call identical facts (case and spacing aside) are
// merged: highest confidence, tags and source episodes joined in order.
#ifndef MSP_CONSOLIDATE_RULE_EXTRACTOR_H_
#define MSP_CONSOLIDATE_RULE_EXTRACTOR_H_

#include <string>
#include <string_view>
#include <vector>

#include "consolidate/extractor.h"

namespace msp {

// Stateless and thread-safe.
class RuleExtractor final : public Extractor {
 public:
  Result<std::vector<FactCandidate>> Extract(const std::vector<Memory>& episodes) override;
  std::string name() const override { return "rules"; }

  // The facts in one user message (source_episodes left empty), merged as
  // Extract() merges them. For tests and tools.
  std::vector<FactCandidate> ExtractFromText(std::string_view user_text) const;
};

}  // namespace msp

#endif  // MSP_CONSOLIDATE_RULE_EXTRACTOR_H_
