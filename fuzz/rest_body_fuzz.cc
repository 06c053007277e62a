// Fuzz target: REST request bodies and query strings (rest/request_json.h):
// the body parsed as the server parses it, then read as a write (src/api's
// memory_write, as POST /v1/memories reads it), a fact and an episode step
// (src/api's fact_add and episode_add, as POST /v1/facts and /v1/episodes read
// them); the input also as a request target's query string.
#include "api/operations.h"
#include "codec/memory_json.h"
#include "fuzz/fuzz_util.h"
#include "rest/request_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = msp::fuzz::Text(data, size);
  auto body = msp::ParseJsonObject(text, "request body");
  if (body.ok()) {
    msp::api::CallContext context;
    context.ns.tenant = "t";
    (void)msp::api::DecodeWrite(context, *body, "");
    static const std::unique_ptr<msp::api::Operation> fact = msp::api::FactAddOperation();
    (void)fact->Check(context, *body);
    static const std::unique_ptr<msp::api::Operation> episode = msp::api::EpisodeAddOperation();
    (void)episode->Check(context, *body);
    (void)msp::NamespaceFromBody(*body, "t");
  }
  const msp::QueryParams query = msp::ParseQuery("/v1/memories?" + std::string(text));
  (void)msp::ListRequestFromQuery(query, "t");
  (void)msp::NamespaceFromQuery(query, "t");
  (void)msp::CheckQueryNames(query, msp::WithNamespaceParams({"limit"}));
  return 0;
}
