// OpenAiEmbedder: vectors from any server speaking the OpenAI embeddings
// protocol, POST {base_url}/embeddings — Ollama, llama.cpp server, vLLM,
// Hugging Face TEI, OpenAI.
//
// A request is {"model": M, "input": [texts]}; the reply's data[i] carries
// "index" and "embedding". Texts go out embedder.batch_size at a time, one
// request after another; replies are put back in input order by "index" and
// L2-normalised (servers differ on whether they normalise). Empty or
// whitespace-only texts are not sent (servers reject them): they get the
// all-zero vector, as the Embedder contract says.
//
// The dimension is configured, not discovered: it is part of the embedder's
// identity, which the store checks at open without a network call. A reply
// whose vectors have another size fails with FailedPrecondition naming both
// sizes and the setting to change; a reply with the wrong number of vectors,
// a repeated or missing index, or values that are not finite numbers is
// Unavailable naming what was wrong. Retries, backoff and timeouts are the
// HTTP client's (net/http_client.h): 408, 429, 5xx, malformed JSON and
// transport errors are retried up to embedder.max_retries times.
#ifndef MSP_PROVIDER_OPENAI_EMBEDDER_H_
#define MSP_PROVIDER_OPENAI_EMBEDDER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "embed/embedder.h"
#include "msp/options.h"
#include "msp/status.h"
#include "net/http_client.h"

namespace msp {

// Thread-safe (immutable after Create; each request opens its own connection).
class OpenAiEmbedder final : public Embedder {
 public:
  // Uses options.base_url, model, api_key (sent as is: OpenEmbedder in
  // embedder_factory.h applies the openai_api_key fallback), dimension,
  // batch_size, timeout_ms and max_retries. InvalidArgument naming the
  // setting when the model is empty, the base URL is malformed, or a number
  // is out of range. `sleep` replaces the wait between retries (tests).
  static Result<std::unique_ptr<OpenAiEmbedder>> Create(
      const EmbedderOptions& options, std::function<void(std::chrono::milliseconds)> sleep = nullptr);

  int dimension() const override { return dimension_; }
  // "openai:<model>:<dimension>", e.g. "openai:nomic-embed-text:768".
  std::string id() const override;
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;

 private:
  OpenAiEmbedder(std::unique_ptr<net::HttpClient> client, std::string model, int dimension, int batch_size);

  // One request for `texts` (none empty); the vector of texts[i] goes to
  // (*out)[slots[i]].
  Status EmbedBatch(const std::vector<std::string>& texts, const std::vector<size_t>& slots,
                    std::vector<std::vector<float>>* out) const;

  std::unique_ptr<net::HttpClient> client_;
  std::string model_;
  int dimension_;
  int batch_size_;
};

}  // namespace msp

#endif  // MSP_PROVIDER_OPENAI_EMBEDDER_H_
