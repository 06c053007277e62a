// What the command line prints for an operation's answer, where `msp serve`
// prints the same for a command on the resident path (docs/cli.md, "The
// resident path"): the command asks for the printed text (the call's
// "print") and writes it as it comes, without parsing the answer — ten
// search hits are 7.5 KB of JSON, and parsing them was a fifth of a
// resident search's instructions in the command.
//
// The forms: "json" (--json, any operation: the answer as one JSON line)
// and "search" (msp search's lines: score, kind, id, text; passages,
// explanations, sessions; only for the operation "search").
#ifndef MSP_CLI_ANSWER_TEXT_H_
#define MSP_CLI_ANSWER_TEXT_H_

#include <ostream>
#include <string_view>

#include <nlohmann/json.hpp>

namespace msp {

// Writes `answer`, an answer of `operation`, to `out` in `form`. False,
// nothing written, when the form is none of the above or not one for that
// operation.
bool PrintAnswer(std::string_view operation, std::string_view form, const nlohmann::json& answer,
                 std::ostream& out);

}  // namespace msp

#endif  // MSP_CLI_ANSWER_TEXT_H_
