// The write policy (seed 004, DESIGN.md section 5) and the input checks every
// write passes before it may change anything.
//
// Two tiers:
//  - ValidateText/ValidateCommon: malformed input (empty or oversize text,
//    invalid UTF-8, bad confidence or body): InvalidArgument naming the field.
//  - CheckWorthStoring: the policy proper, for general writes (Write()):
//    length, trivial phrases, sensitivity, trusted source, stable tag, TTL.
//    A refusal is kRefused and names the rule ("policy rule <name>: ...").
//    Episodes and facts from consolidation pass only the structural rules
//    (CheckStructural): sensitivity high is never stored, whatever the path.
// Eviction: SelectEvictions picks the least valuable records past the
// per-user limit (rule documented at the declaration).
#ifndef MSP_CORE_WRITE_POLICY_H_
#define MSP_CORE_WRITE_POLICY_H_

#include <string>
#include <string_view>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// The field must be non-empty after trimming, valid UTF-8, within max bytes.
// `setting` names the limit in the error (an episode's is policy.max_record_bytes).
Status ValidateText(std::string_view field, std::string_view text, size_t max_bytes,
                    std::string_view setting = "policy.max_text_bytes");
// Namespace parts, tags, source and provenance are valid UTF-8 without
// control characters; tenant non-empty; confidence in [0, 1]; body_json is
// empty or a JSON object.
Status ValidateCommon(const Namespace& ns, const std::vector<std::string>& tags,
                      std::string_view source, double confidence, std::string_view body_json,
                      const std::vector<ProvenanceRef>& provenance);

// Rules for every stored record: sensitivity high is refused when
// refuse_high_sensitivity is on.
Status CheckStructural(Sensitivity sensitivity, const WritePolicyOptions& policy);

// The full seed-004 policy for a general write.
Status CheckWorthStoring(const WriteRequest& request, const WritePolicyOptions& policy);

// Given the active records of one user (kind fact) and how many to add,
// returns the ids to evict so that at most `limit` remain, least valuable
// first. Value order: lower criticality first; then lower
//   confidence * (1 + ln(1 + access_count)) / (1 + idle_days / 30)
// where idle_days counts from last_accessed (or created_at when never read);
// ties evict the older record. Records in `keep` are never chosen.
std::vector<std::string> SelectEvictions(const std::vector<Memory>& records, size_t adding,
                                         size_t limit, TimeMs now,
                                         const std::vector<std::string>& keep);

}  // namespace msp

#endif  // MSP_CORE_WRITE_POLICY_H_
