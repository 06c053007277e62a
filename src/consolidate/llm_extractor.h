// The model-backed fact extractor ("llm"): a chat model reads the episodes
// and proposes durable facts, then decides for each how it relates to the
// facts already stored (seed 000, section 2.2).
//
// Two requests per run of episodes (a long run is cut into chunks of at most
// `max_chunk_chars`):
//  1. Extract: the transcript ("[step 3 | 2026-11-30 | user_message] ...")
//     goes to the model with the schema {facts: [{text, confidence 0..1,
//     tags, steps, valid_from}]}. Facts are one third-person sentence each;
//     the steps map back to the source episodes; valid_from (a date, or "")
//     becomes FactCandidate::valid_at, else the time of the latest source
//     episode. Every fact gets one of the write policy's stable tags
//     ("profile" when the model gave none).
//  2. Decide (only when some candidate has similar stored facts, found by
//     FactLookup::SimilarFacts): each candidate is shown with up to
//     `similar_facts` stored facts under short handles (S1, S2...), and the
//     model answers {decisions: [{candidate, action: add|merge|supersede,
//     target}]}. A target must be a handle listed under that candidate; a
//     reply breaking that is sent back once like a schema error. A candidate
//     without a decision is added (the engine still merges a near-duplicate
//     above facts.dedup_cosine).
// Episodes of sensitivity "high" are never sent to the model. Any failure of
// the model (unreachable, invalid reply twice) fails the whole Extract: no
// partial result, nothing dropped silently; the engine keeps the episodes
// unconsolidated for the next run.
//
// Thread-safe (the chat client is; the extractor keeps no state).
#ifndef MSP_CONSOLIDATE_LLM_EXTRACTOR_H_
#define MSP_CONSOLIDATE_LLM_EXTRACTOR_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "consolidate/extractor.h"
#include "msp/options.h"
#include "provider/chat_client.h"

namespace msp {

struct LlmExtractorOptions {
  int similar_facts = 5;          // stored facts shown per candidate
  size_t max_chunk_chars = 24000; // transcript characters per extraction request
  size_t max_episode_chars = 4000;  // longer episodes are cut (with a marker)
};

class LlmExtractor final : public Extractor {
 public:
  explicit LlmExtractor(std::unique_ptr<ChatClient> chat, LlmExtractorOptions options = {});

  // Extraction only: every candidate is an add.
  Result<std::vector<FactCandidate>> Extract(const std::vector<Memory>& episodes) override;
  Result<std::vector<FactCandidate>> ExtractWithFacts(const std::vector<Memory>& episodes,
                                                      FactLookup& facts) override;
  std::string name() const override { return "llm"; }

  // The schemas of the two requests (for tests and docs).
  static const nlohmann::json& ExtractSchema();
  static const nlohmann::json& DecideSchema();

 private:
  Result<std::vector<FactCandidate>> ExtractChunk(const std::vector<const Memory*>& chunk) const;
  Status Decide(std::vector<FactCandidate>* candidates, FactLookup& facts) const;

  std::unique_ptr<ChatClient> chat_;
  LlmExtractorOptions options_;
};

// The chat client options for `llm`: the API key is llm.api_key, else
// `openai_env_key` (Options::openai_api_key) but only when the base
// URL's host is api.openai.com, so the key never goes to another server.
Result<ChatOptions> ChatOptionsFor(const LlmOptions& llm, std::string_view openai_env_key);

// The extractor options.consolidation.extractor names: "rules" (built in) or
// "llm" (needs llm.model). InvalidArgument otherwise, naming the known ones.
// `openai_env_key` as in ChatOptionsFor.
Result<std::unique_ptr<Extractor>> MakeConfiguredExtractor(const Options& options,
                                                           std::string_view openai_env_key);

}  // namespace msp

#endif  // MSP_CONSOLIDATE_LLM_EXTRACTOR_H_
