// The fact extractor of consolidation (seed 000, section 2.2): reads a run of
// episodes and proposes durable facts about the user and their task.
//
// The engine stores the candidates through its fact path (deduplication by
// embedding, the write policy's stable tags). Extractors only propose; they
// never touch a store. "rules" is built in (rule_extractor.h); "llm" asks a
// chat model (llm_extractor.h).
#ifndef MSP_CONSOLIDATE_EXTRACTOR_H_
#define MSP_CONSOLIDATE_EXTRACTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// What a candidate does to the stored facts. Extractors that compare their
// candidates with the stored facts (the LLM extractor) decide; the rule
// extractor always adds (the engine still merges a near-duplicate).
enum class FactAction { kAdd, kMerge, kSupersede };

// A proposed fact.
struct FactCandidate {
  std::string text;         // one third-person sentence: "User uses Python 3.11."
  double confidence = 0.0;  // 0..1
  // Tags from {preference, profile, environment, goal, constraint, problem};
  // always at least one of the write policy's stable tags
  // (preference, constraint, profile, goal).
  std::vector<std::string> tags;
  std::vector<std::string> source_episodes;  // ids of the episodes it came from
  FactAction action = FactAction::kAdd;
  // kMerge: the stored fact it restates; kSupersede: the stored fact it
  // contradicts and replaces (that one gets invalid_at and is linked to it).
  std::string target_id;
  TimeMs valid_at = 0;  // when it started to hold in the world (0: unknown)

  bool operator==(const FactCandidate&) const = default;
};

// Read access to the stored facts of the namespace being consolidated.
class FactLookup {
 public:
  virtual ~FactLookup() = default;
  // Up to `k` active facts most similar to `text`, best first.
  virtual Result<std::vector<Memory>> SimilarFacts(const std::string& text, int k) = 0;
};

// Thread-safety: implementations say so; the rule extractor is stateless.
class Extractor {
 public:
  virtual ~Extractor() = default;
  // The facts stated in `episodes` (any order; records that are not
  // episodes are ignored). Identical candidates from one call are merged,
  // their source episodes joined. An empty result is not an error.
  virtual Result<std::vector<FactCandidate>> Extract(const std::vector<Memory>& episodes) = 0;
  // As Extract, with the stored facts at hand so candidates can be compared
  // with them (FactCandidate::action). Default: Extract(episodes).
  virtual Result<std::vector<FactCandidate>> ExtractWithFacts(const std::vector<Memory>& episodes,
                                                              FactLookup& facts) {
    (void)facts;
    return Extract(episodes);
  }
  // The name it is configured by ("rules").
  virtual std::string name() const = 0;
};

// The extractor named by options.extractor: "rules". Anything else is
// InvalidArgument naming the known extractors.
Result<std::unique_ptr<Extractor>> MakeExtractor(const ConsolidationOptions& options);

}  // namespace msp

#endif  // MSP_CONSOLIDATE_EXTRACTOR_H_
