// NativeEmbedder (native_embedder.h).
#include "embed/native/native_embedder.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

namespace msp::native {
namespace {

// Tokens a forward pass holds at most (its activations: about
// tokens * (6 * hidden + intermediate) floats, 4 MB at MiniLM's shape).
// bench/native_bench: 256 is as fast as 1,024 (25.6 and 25.5 texts a
// CPU-second) with a peak RSS of 98 MB instead of 112 (91 MB of weights).
constexpr size_t kMaxTokensPerPass = 256;

// The JSON object in dir/name, or null when the file is not there.
Result<nlohmann::json> ReadOptionalJson(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "/" + name);
  if (!in) return nlohmann::json();
  std::ostringstream text;
  text << in.rdbuf();
  try {
    nlohmann::json j = nlohmann::json::parse(text.str());
    if (!j.is_object()) return Status::InvalidArgument(dir + "/" + name + " is not a JSON object");
    return j;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(dir + "/" + name + " is not valid JSON: " + e.what());
  }
}

}  // namespace

Result<std::unique_ptr<NativeEmbedder>> NativeEmbedder::Open(const NativeOptions& options) {
  std::string dir = options.model_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) {
    return Status::InvalidArgument(
        "embedder.provider = \"native\" needs embedder.model: the directory of a BERT-family model "
        "(model.safetensors, config.json, vocab.txt or tokenizer.json); docs/embeddings.md says how to get one");
  }
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("embedder.model '" + dir + "' is not a directory (it should hold "
                                   "model.safetensors, config.json, vocab.txt or tokenizer.json)");
  }
  if (options.threads < 1 || options.threads > 256) {
    return Status::InvalidArgument("embedder.threads " + std::to_string(options.threads) + " is out of range 1..256");
  }
  if (!options.quantize.empty() && options.quantize != "none" && options.quantize != "int8") {
    return Status::InvalidArgument("embedder.quantize '" + options.quantize + "' is not one of none, int8");
  }
  MSP_ASSIGN_OR_RETURN(WordPieceTokenizer tokenizer, WordPieceTokenizer::Load(dir));
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<BertModel> model, BertModel::Load(dir, options.quantize == "int8"));
  if (tokenizer.max_id() >= model->config().vocab_size) {
    return Status::InvalidArgument(dir + ": the tokenizer has id " + std::to_string(tokenizer.max_id()) +
                                   " but config.json's vocab_size is " + std::to_string(model->config().vocab_size));
  }
  std::unique_ptr<NativeEmbedder> e(new NativeEmbedder(std::move(tokenizer), std::move(model)));
  e->threads_ = options.threads;
  e->name_ = dir.substr(dir.find_last_of('/') + 1);
  e->max_tokens_ = static_cast<size_t>(e->model_->config().max_position_embeddings);
  MSP_ASSIGN_OR_RETURN(nlohmann::json sbert, ReadOptionalJson(dir, "sentence_bert_config.json"));
  if (sbert.is_object() && sbert.contains("max_seq_length") && sbert["max_seq_length"].is_number_unsigned()) {
    e->max_tokens_ = std::clamp<size_t>(sbert["max_seq_length"].get<size_t>(), 2, e->max_tokens_);
  }
  std::string pooling = options.pooling;
  if (pooling.empty() || pooling == "auto") {
    MSP_ASSIGN_OR_RETURN(nlohmann::json pool, ReadOptionalJson(dir, "1_Pooling/config.json"));
    const bool cls = pool.is_object() && pool.value("pooling_mode_cls_token", false) &&
                     !pool.value("pooling_mode_mean_tokens", false);
    pooling = cls ? "cls" : "mean";
  }
  if (pooling == "cls") {
    e->pooling_ = Pooling::kCls;
  } else if (pooling != "mean") {
    return Status::InvalidArgument("embedder.pooling '" + pooling + "' is not one of auto, mean, cls");
  }
  return e;
}

std::string NativeEmbedder::id() const {
  return "native:" + name_ + ":" + (pooling_ == Pooling::kCls ? "cls" : "mean") + ":" + std::to_string(dimension()) +
         (model_->int8() ? ":int8" : "");
}

Result<std::vector<std::vector<float>>> NativeEmbedder::Embed(const std::vector<std::string>& texts) {
  std::vector<std::vector<int32_t>> ids(texts.size());
  size_t total = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto encoded = tokenizer_.Encode(texts[i], max_tokens_);
    if (!encoded.ok()) return encoded.status().WithContext("text " + std::to_string(i));
    ids[i] = std::move(*encoded);
    total += ids[i].size();
  }
  // Passes of consecutive texts, at most kMaxTokensPerPass tokens each (and
  // at least one pass a thread when there are enough texts).
  const size_t threads = std::min<size_t>(static_cast<size_t>(threads_), texts.size());
  const size_t budget = std::max<size_t>(1, std::min(kMaxTokensPerPass, (total + threads - 1) / std::max<size_t>(1, threads)));
  std::vector<std::pair<size_t, size_t>> passes;  // [begin, end) of texts
  for (size_t i = 0; i < texts.size();) {
    size_t j = i, tokens = 0;
    while (j < texts.size() && (j == i || tokens + ids[j].size() <= budget)) tokens += ids[j++].size();
    passes.emplace_back(i, j);
    i = j;
  }
  const size_t h = static_cast<size_t>(dimension());
  std::vector<float> flat(texts.size() * h);
  auto run = [&](size_t worker) {
    std::vector<std::vector<int32_t>> batch;
    for (size_t p = worker; p < passes.size(); p += std::max<size_t>(1, threads)) {
      batch.assign(ids.begin() + static_cast<std::ptrdiff_t>(passes[p].first),
                   ids.begin() + static_cast<std::ptrdiff_t>(passes[p].second));
      model_->Embed(batch, pooling_, flat.data() + passes[p].first * h);
    }
  };
  if (threads <= 1 || passes.size() <= 1) {
    run(0);
  } else {
    std::vector<std::thread> pool;
    std::vector<size_t> inline_workers;  // shares whose thread could not start
    for (size_t w = 1; w < threads; ++w) {
      try {
        pool.emplace_back(run, w);
      } catch (const std::system_error&) {
        inline_workers.push_back(w);
      }
    }
    run(0);
    for (size_t w : inline_workers) run(w);
    for (std::thread& t : pool) t.join();
  }
  std::vector<std::vector<float>> out(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) out[i].assign(flat.begin() + static_cast<std::ptrdiff_t>(i * h),
                                                          flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * h));
  return out;
}

}  // namespace msp::native
