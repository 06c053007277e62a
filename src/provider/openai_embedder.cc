// OpenAiEmbedder: POST {base_url}/embeddings in batches, replies checked,
// ordered by index and L2-normalised (see openai_embedder.h).
#include "provider/openai_embedder.h"

#include <cmath>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace msp {
namespace {

using json = nlohmann::json;

constexpr int kMinDimension = 1;
constexpr int kMaxDimension = 65536;
constexpr char kPath[] = "/embeddings";

bool IsBlank(std::string_view s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<OpenAiEmbedder>> OpenAiEmbedder::Create(const EmbedderOptions& options,
                                                               std::function<void(std::chrono::milliseconds)> sleep) {
  if (options.model.empty()) {
    return Status::InvalidArgument(
        "embedder.model is required for embedder.provider 'openai' (e.g. nomic-embed-text for Ollama, "
        "text-embedding-3-small for OpenAI)");
  }
  if (options.dimension < kMinDimension || options.dimension > kMaxDimension) {
    return Status::InvalidArgument("embedder.dimension " + std::to_string(options.dimension) +
                                   " is out of range; use the size of the model's vectors (1.." +
                                   std::to_string(kMaxDimension) + ")");
  }
  if (options.batch_size < 1) {
    return Status::InvalidArgument("embedder.batch_size must be >= 1, got " + std::to_string(options.batch_size));
  }
  if (options.timeout_ms < 1) {
    return Status::InvalidArgument("embedder.timeout_ms must be >= 1, got " + std::to_string(options.timeout_ms));
  }
  if (options.max_retries < 0) {
    return Status::InvalidArgument("embedder.max_retries must be >= 0, got " + std::to_string(options.max_retries));
  }
  net::HttpClientOptions http;
  http.base_url = options.base_url;
  http.api_key = options.api_key;
  http.connect_timeout_ms = options.timeout_ms;
  http.read_timeout_ms = options.timeout_ms;
  http.max_retries = options.max_retries;
  http.sleep = std::move(sleep);
  auto client = net::HttpClient::Create(std::move(http));
  if (!client.ok()) return client.status().WithContext("embedder.base_url");
  return std::unique_ptr<OpenAiEmbedder>(
      new OpenAiEmbedder(std::move(client).value(), options.model, options.dimension, options.batch_size));
}

OpenAiEmbedder::OpenAiEmbedder(std::unique_ptr<net::HttpClient> client, std::string model, int dimension,
                               int batch_size)
    : client_(std::move(client)), model_(std::move(model)), dimension_(dimension), batch_size_(batch_size) {}

std::string OpenAiEmbedder::id() const { return "openai:" + model_ + ":" + std::to_string(dimension_); }

Result<std::vector<std::vector<float>>> OpenAiEmbedder::Embed(const std::vector<std::string>& texts) {
  std::vector<std::vector<float>> out(texts.size(), std::vector<float>(static_cast<size_t>(dimension_), 0.0f));
  std::vector<std::string> batch;
  std::vector<size_t> slots;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (IsBlank(texts[i])) continue;  // stays all-zero
    batch.push_back(texts[i]);
    slots.push_back(i);
    if (batch.size() == static_cast<size_t>(batch_size_)) {
      MSP_RETURN_IF_ERROR(EmbedBatch(batch, slots, &out));
      batch.clear();
      slots.clear();
    }
  }
  if (!batch.empty()) MSP_RETURN_IF_ERROR(EmbedBatch(batch, slots, &out));
  return out;
}

Status OpenAiEmbedder::EmbedBatch(const std::vector<std::string>& texts, const std::vector<size_t>& slots,
                                  std::vector<std::vector<float>>* out) const {
  const std::string url = client_->base_url().Join(kPath);
  const std::string who = "embedder " + id() + ": " + url;
  const json request{{"model", model_}, {"input", texts}};
  MSP_ASSIGN_OR_RETURN(json reply, client_->PostJson(kPath, request));
  auto bad = [&](const std::string& why) {
    return Status::Unavailable(who + " sent an unusable reply: " + why);
  };
  if (!reply.is_object() || !reply.contains("data") || !reply["data"].is_array()) {
    return bad("no \"data\" array");
  }
  const json& data = reply["data"];
  if (data.size() != texts.size()) {
    return bad(std::to_string(data.size()) + " embeddings for " + std::to_string(texts.size()) + " inputs");
  }
  std::vector<bool> seen(texts.size(), false);
  for (size_t k = 0; k < data.size(); ++k) {
    const json& item = data[k];
    if (!item.is_object()) return bad("data[" + std::to_string(k) + "] is not an object");
    // "index" is the input's position; a server that leaves it out answers
    // in input order.
    size_t index = k;
    if (item.contains("index")) {
      const json& ix = item["index"];
      if (!ix.is_number_integer() || ix.get<int64_t>() < 0 ||
          ix.get<int64_t>() >= static_cast<int64_t>(texts.size())) {
        return bad("data[" + std::to_string(k) + "].index is " + ix.dump() + ", not an input position 0.." +
                   std::to_string(texts.size() - 1));
      }
      index = static_cast<size_t>(ix.get<int64_t>());
    }
    if (seen[index]) return bad("index " + std::to_string(index) + " appears twice");
    seen[index] = true;
    if (!item.contains("embedding") || !item["embedding"].is_array()) {
      return bad("data[" + std::to_string(k) + "].embedding is not an array of numbers");
    }
    const json& vec = item["embedding"];
    if (vec.size() != static_cast<size_t>(dimension_)) {
      return Status::FailedPrecondition(who + " returned vectors of " + std::to_string(vec.size()) +
                                        " dimensions, but embedder.dimension is " + std::to_string(dimension_) +
                                        "; set embedder.dimension = " + std::to_string(vec.size()) +
                                        " (a new store, or `msp reembed` for an existing one)");
    }
    std::vector<double> values(vec.size());
    double norm2 = 0;
    for (size_t d = 0; d < vec.size(); ++d) {
      if (!vec[d].is_number()) {
        return bad("data[" + std::to_string(k) + "].embedding[" + std::to_string(d) + "] is not a number");
      }
      values[d] = vec[d].get<double>();
      norm2 += values[d] * values[d];
    }
    if (!std::isfinite(norm2)) return bad("data[" + std::to_string(k) + "].embedding has values too large");
    const double inv = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
    std::vector<float>& dst = (*out)[slots[index]];
    for (size_t d = 0; d < values.size(); ++d) dst[d] = static_cast<float>(values[d] * inv);
  }
  return Status::Ok();
}

}  // namespace msp
