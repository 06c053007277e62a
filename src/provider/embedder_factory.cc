// OpenEmbedder: the embedder by provider name.
#include "provider/embedder_factory.h"

#include <cctype>
#include <cstdlib>

#include "net/http_client.h"
#include "provider/openai_embedder.h"

namespace msp {

std::string EffectiveApiKey(const EmbedderOptions& options, const std::string& openai_env_key) {
  if (!options.api_key.empty()) return options.api_key;
  auto base = net::ParseBaseUrl(options.base_url);
  if (!base.ok() || base->scheme != "https") return "";
  std::string host = base->host;
  for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (host == "api.openai.com") return openai_env_key;
  return "";
}

Result<std::unique_ptr<Embedder>> OpenEmbedder(const EmbedderOptions& options, const std::string& openai_api_key) {
  if (options.provider != EmbedderProvider::kOpenai) return MakeEmbedder(options);
  EmbedderOptions o = options;
  o.api_key = EffectiveApiKey(options, openai_api_key);
  MSP_ASSIGN_OR_RETURN(auto e, OpenAiEmbedder::Create(o));
  return std::unique_ptr<Embedder>(std::move(e));
}

}  // namespace msp
