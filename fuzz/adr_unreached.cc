// For adr_fuzz only: mission/records.cc (linked for the UTF-8 helpers the
// ADR parser uses) also holds the JSON output of decisions, which calls the
// mission renderer (render.cc, and through it the working-memory packer).
// The parser never reaches it; rather than compile that half of msp, the one
// function it needs is defined here to stop the target loudly if reached.
#include <cstdio>
#include <cstdlib>

#include "mission/render.h"

namespace msp {

nlohmann::json ProvenanceJson(const std::vector<ProvenanceRef>&) {
  std::fputs("adr_fuzz: ProvenanceJson reached from the ADR parser; link mission/render.cc\n", stderr);
  std::abort();
}

}  // namespace msp
