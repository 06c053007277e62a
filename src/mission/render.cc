// Text helpers for the digests (see render.h).
#include "mission/render.h"

#include <cstdio>

#include "mission/digest_builder.h"
#include "util/fence.h"
#include "util/utf8.h"

namespace msp {

std::string OneLineText(std::string_view text, size_t max_chars) {
  const std::string flat = FenceLine(text);
  if (Utf8Chars(flat) <= max_chars) return flat;
  return std::string(Utf8PrefixChars(flat, max_chars == 0 ? 0 : max_chars - 1)) + "…";
}

std::string FormatScore(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

std::string ProvenanceText(const std::vector<ProvenanceRef>& refs, const std::string& source) {
  if (refs.empty()) return source.empty() ? "none recorded" : "none recorded (source: " + OneLineText(source, 60) + ")";
  std::string out;
  for (const ProvenanceRef& r : refs) {
    if (!out.empty()) out += "; ";
    out += r.type + " " + OneLineText(r.ref, 120);
    if (!r.detail.empty()) out += " (" + OneLineText(r.detail, 60) + ")";
  }
  return out;
}

nlohmann::json ProvenanceJson(const std::vector<ProvenanceRef>& refs) {
  nlohmann::json out = nlohmann::json::array();
  for (const ProvenanceRef& r : refs) out.push_back({{"type", r.type}, {"ref", r.ref}, {"detail", r.detail}});
  return out;
}

std::string LayerTitle(Layer l) {
  switch (l) {
    case Layer::kDomain: return "Domain";
    case Layer::kWorkflow: return "Workflow";
    case Layer::kPractitioner: return "Practitioner";
    case Layer::kEpisodic: return "Episodic";
    case Layer::kSemantic: return "Semantic";
    case Layer::kProcedural: return "Procedural";
  }
  return "Other";
}

}  // namespace msp
