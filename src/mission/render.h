// Small text helpers the query and handoff digests share.
#ifndef MSP_MISSION_RENDER_H_
#define MSP_MISSION_RENDER_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/types.h"

namespace msp {

// `text` on one line (util/fence.h's FenceLine: every line break, Unicode
// ones included, as a space, invisible characters removed), cut at
// `max_chars` code points with "…".
std::string OneLineText(std::string_view text, size_t max_chars);
// "0.82".
std::string FormatScore(double x);
// "commit abc123; document spec.pdf (p. 4)", or without references
// "none recorded (source: <source>)" ("none recorded" when source is empty).
std::string ProvenanceText(const std::vector<ProvenanceRef>& refs, const std::string& source = "");
// [{type, ref, detail}].
nlohmann::json ProvenanceJson(const std::vector<ProvenanceRef>& refs);
// The section heading of a layer: "Domain", "Workflow", "Practitioner", ...
std::string LayerTitle(Layer l);

}  // namespace msp

#endif  // MSP_MISSION_RENDER_H_
