// The embedder factory by name: every embedder msp knows, for the engine's
// Open. "hashing" and "static" are built in (embed/), "native" is a local
// BERT-family model run in-process (embed/native/, loaded as a module);
// "openai" is any OpenAI-compatible embeddings server (openai_embedder.h).
// It lives here, not in embed/, so that embed/ stays free of the network.
#ifndef MSP_PROVIDER_EMBEDDER_FACTORY_H_
#define MSP_PROVIDER_EMBEDDER_FACTORY_H_

#include <memory>
#include <string>

#include "embed/embedder.h"
#include "msp/options.h"
#include "msp/status.h"

namespace msp {

// The embedder options.provider names. For "openai" with an empty api_key
// and a base_url on https://api.openai.com, the key is `openai_api_key`
// (Options::openai_api_key; never sent to other servers).
Result<std::unique_ptr<Embedder>> OpenEmbedder(const EmbedderOptions& options, const std::string& openai_api_key = "");

// The API key OpenEmbedder uses: options.api_key, else `openai_env_key`
// when options.base_url is on https://api.openai.com, else "".
std::string EffectiveApiKey(const EmbedderOptions& options, const std::string& openai_env_key);

}  // namespace msp

#endif  // MSP_PROVIDER_EMBEDDER_FACTORY_H_
