// A line diff of two texts (longest common subsequence of lines).
#ifndef MSP_PROCEDURAL_LINE_DIFF_H_
#define MSP_PROCEDURAL_LINE_DIFF_H_

#include <string>
#include <string_view>

namespace msp {

// Every line of `a` and `b` in diff order, each prefixed with "  " (in
// both), "- " (only in a) or "+ " (only in b) and ended by "\n". Deletions
// come before insertions where both are possible. Texts of more than 4,000
// lines each are shown as all of `a` removed, then all of `b` added.
std::string LineDiff(std::string_view a, std::string_view b);

}  // namespace msp

#endif  // MSP_PROCEDURAL_LINE_DIFF_H_
