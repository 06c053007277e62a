// BertModel (bert.h).
#include "embed/native/bert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "embed/native/gemm.h"
#include "embed/native/quant.h"

namespace msp::native {
namespace {

// y = LayerNorm(x) over rows of `h` values, in place.
void LayerNormRows(float* x, size_t rows, size_t h, const float* weight, const float* bias, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    float* v = x + r * h;
    double sum = 0;
    for (size_t i = 0; i < h; ++i) sum += v[i];
    const double mean = sum / static_cast<double>(h);
    double var = 0;
    for (size_t i = 0; i < h; ++i) var += (v[i] - mean) * (v[i] - mean);
    var /= static_cast<double>(h);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (size_t i = 0; i < h; ++i) v[i] = (v[i] - m) * inv * weight[i] + bias[i];
  }
}

}  // namespace

Result<BertConfig> ParseBertConfig(const std::string& json_text) {
  BertConfig c;
  try {
    const nlohmann::json j = nlohmann::json::parse(json_text);
    if (!j.is_object()) return Status::InvalidArgument("config.json is not a JSON object");
    const std::string type = j.value("model_type", std::string("bert"));
    if (type != "bert") {
      return Status::InvalidArgument("config.json: model_type '" + type +
                                     "' is not supported; the native embedder runs BERT models (model_type bert)");
    }
    const std::string act = j.value("hidden_act", std::string("gelu"));
    if (act != "gelu") {
      return Status::InvalidArgument("config.json: hidden_act '" + act + "' is not supported (gelu only)");
    }
    const std::string pos = j.value("position_embedding_type", std::string("absolute"));
    if (pos != "absolute") {
      return Status::InvalidArgument("config.json: position_embedding_type '" + pos +
                                     "' is not supported (absolute only)");
    }
    struct Field {
      const char* name;
      int* value;
      int min, max;
      bool required;
    };
    c.type_vocab_size = 2;
    const Field fields[] = {
        {"vocab_size", &c.vocab_size, 5, 1 << 22, true},
        {"hidden_size", &c.hidden_size, 1, 8192, true},
        {"num_hidden_layers", &c.num_hidden_layers, 1, 256, true},
        {"num_attention_heads", &c.num_attention_heads, 1, 256, true},
        {"intermediate_size", &c.intermediate_size, 1, 65536, true},
        {"max_position_embeddings", &c.max_position_embeddings, 2, 65536, true},
        {"type_vocab_size", &c.type_vocab_size, 1, 1024, false},
    };
    for (const Field& f : fields) {
      auto it = j.find(f.name);
      if (it == j.end()) {
        if (f.required) return Status::InvalidArgument(std::string("config.json has no ") + f.name);
        continue;
      }
      if (!it->is_number_integer() || it->get<int64_t>() < f.min || it->get<int64_t>() > f.max) {
        return Status::InvalidArgument(std::string("config.json: ") + f.name + " is not an integer in " +
                                       std::to_string(f.min) + ".." + std::to_string(f.max));
      }
      *f.value = it->get<int>();
    }
    if (auto it = j.find("layer_norm_eps"); it != j.end()) {
      if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > 1) {
        return Status::InvalidArgument("config.json: layer_norm_eps is not a number in (0, 1]");
      }
      c.layer_norm_eps = it->get<float>();
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("config.json is not valid JSON: ") + e.what());
  }
  if (c.hidden_size % c.num_attention_heads != 0) {
    return Status::InvalidArgument("config.json: hidden_size " + std::to_string(c.hidden_size) +
                                   " is not a multiple of num_attention_heads " +
                                   std::to_string(c.num_attention_heads));
  }
  return c;
}

Result<std::unique_ptr<BertModel>> BertModel::Load(const std::string& dir, bool int8) {
  std::unique_ptr<BertModel> m(new BertModel());
  m->int8_ = int8;
  {
    const std::string path = dir + "/config.json";
    std::ifstream in(path);
    if (!in) return Status::InvalidArgument("the model directory " + dir + " has no config.json");
    std::ostringstream text;
    text << in.rdbuf();
    auto config = ParseBertConfig(text.str());
    if (!config.ok()) return config.status().WithContext(dir);
    m->config_ = *config;
  }
  const std::string weights = dir + "/model.safetensors";
  auto file = SafeTensorsFile::Open(weights);
  if (!file.ok()) {
    if (file.status().IsNotFound()) {
      return Status::InvalidArgument("the model directory " + dir +
                                     " has no model.safetensors (the weights; pytorch_model.bin is not read)");
    }
    return file.status();
  }
  m->file_ = std::move(*file);
  SafeTensorsFile& f = *m->file_;
  // Sentence-transformers files name tensors from "embeddings."; files of a
  // model with a head prefix them "bert.".
  const std::string prefix = f.Has("embeddings.word_embeddings.weight") ? "" : "bert.";
  const BertConfig& c = m->config_;
  const int64_t h = c.hidden_size, in = c.intermediate_size;
  auto get = [&](const std::string& name, std::vector<int64_t> shape, const float** out) -> Status {
    auto t = f.Float32(prefix + name, shape);
    if (!t.ok()) return t.status();
    *out = *t;
    return Status::Ok();
  };
  auto norm = [&](const std::string& name, Norm* out) -> Status {
    MSP_RETURN_IF_ERROR(get(name + ".weight", {h}, &out->weight));
    return get(name + ".bias", {h}, &out->bias);
  };
  auto dense = [&](const std::string& name, int64_t rows, int64_t cols, Dense* out) -> Status {
    MSP_RETURN_IF_ERROR(get(name + ".weight", {rows, cols}, &out->weight));
    return get(name + ".bias", {rows}, &out->bias);
  };
  MSP_RETURN_IF_ERROR(get("embeddings.word_embeddings.weight", {c.vocab_size, h}, &m->word_));
  MSP_RETURN_IF_ERROR(get("embeddings.position_embeddings.weight", {c.max_position_embeddings, h}, &m->position_));
  MSP_RETURN_IF_ERROR(get("embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}, &m->token_type_));
  MSP_RETURN_IF_ERROR(norm("embeddings.LayerNorm", &m->embedding_norm_));
  m->layers_.resize(static_cast<size_t>(c.num_hidden_layers));
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    Layer& l = m->layers_[static_cast<size_t>(i)];
    MSP_RETURN_IF_ERROR(dense(p + "attention.self.query", h, h, &l.query));
    MSP_RETURN_IF_ERROR(dense(p + "attention.self.key", h, h, &l.key));
    MSP_RETURN_IF_ERROR(dense(p + "attention.self.value", h, h, &l.value));
    MSP_RETURN_IF_ERROR(dense(p + "attention.output.dense", h, h, &l.attention_out));
    MSP_RETURN_IF_ERROR(norm(p + "attention.output.LayerNorm", &l.attention_norm));
    MSP_RETURN_IF_ERROR(dense(p + "intermediate.dense", in, h, &l.intermediate));
    MSP_RETURN_IF_ERROR(dense(p + "output.dense", h, in, &l.output));
    MSP_RETURN_IF_ERROR(norm(p + "output.LayerNorm", &l.output_norm));
    if (int8) {
      for (Dense* d : {&l.query, &l.key, &l.value, &l.attention_out, &l.intermediate, &l.output}) {
        const bool wide = d == &l.intermediate;
        const size_t rows = static_cast<size_t>(wide ? in : h), cols = static_cast<size_t>(d == &l.output ? in : h);
        d->packed = QuantizeWeights(d->weight, rows, cols);
        m->int8_bytes_ += d->packed.bytes();
        f.Release(d->weight, rows * cols * sizeof(float));
        d->weight = nullptr;
      }
    }
  }
  return m;
}

void BertModel::Apply(const Dense& d, const float* a, size_t m, size_t in, size_t out, float* c,
                      std::vector<float>* scratch, QuantRows* rows, std::vector<int32_t>* acc) const {
  if (int8_) {
    Int8Linear(a, m, d.packed, d.bias, c, rows, acc);
  } else {
    Linear(a, m, in, d.weight, out, d.bias, c, scratch);
  }
}

void BertModel::Embed(const std::vector<std::vector<int32_t>>& sequences, Pooling pooling, float* out) const {
  const size_t h = static_cast<size_t>(config_.hidden_size);
  const size_t inter = static_cast<size_t>(config_.intermediate_size);
  const size_t heads = static_cast<size_t>(config_.num_attention_heads);
  const size_t hd = h / heads;
  const float eps = config_.layer_norm_eps;
  std::vector<size_t> start(sequences.size() + 1, 0);
  for (size_t s = 0; s < sequences.size(); ++s) start[s + 1] = start[s] + sequences[s].size();
  const size_t t = start.back();
  std::vector<float> x(t * h), q(t * h), k(t * h), v(t * h), ctx(t * h), tmp(t * h), ffn(t * inter);
  std::vector<float> scores, scratch;
  QuantRows rows;
  std::vector<int32_t> acc;
  // Embeddings: word + position + token type 0, then LayerNorm.
  for (size_t s = 0; s < sequences.size(); ++s) {
    for (size_t p = 0; p < sequences[s].size(); ++p) {
      float* row = x.data() + (start[s] + p) * h;
      const float* w = word_ + static_cast<size_t>(sequences[s][p]) * h;
      const float* pos = position_ + p * h;
      for (size_t i = 0; i < h; ++i) row[i] = w[i] + pos[i] + token_type_[i];
    }
  }
  LayerNormRows(x.data(), t, h, embedding_norm_.weight, embedding_norm_.bias, eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (const Layer& l : layers_) {
    if (int8_) {  // Q, K and V share their quantised input
      QuantizeRows(x.data(), t, h, &rows);
      Int8LinearQuantized(rows, l.query.packed, l.query.bias, q.data(), &acc);
      Int8LinearQuantized(rows, l.key.packed, l.key.bias, k.data(), &acc);
      Int8LinearQuantized(rows, l.value.packed, l.value.bias, v.data(), &acc);
    } else {
      Linear(x.data(), t, h, l.query.weight, h, l.query.bias, q.data(), &scratch);
      Linear(x.data(), t, h, l.key.weight, h, l.key.bias, k.data(), &scratch);
      Linear(x.data(), t, h, l.value.weight, h, l.value.bias, v.data(), &scratch);
    }
    // Per text and head: scores = Q Kᵀ / sqrt(d), softmax by row, ctx = P V.
    for (size_t s = 0; s < sequences.size(); ++s) {
      const size_t n = sequences[s].size();
      scores.resize(n * n);
      for (size_t head = 0; head < heads; ++head) {
        const size_t at = start[s] * h + head * hd;
        MatMul(q.data() + at, h, k.data() + at, h, true, scores.data(), n, n, n, hd, &scratch);
        for (size_t i = 0; i < n; ++i) {
          float* row = scores.data() + i * n;
          float max = -INFINITY;
          for (size_t j = 0; j < n; ++j) {
            row[j] *= scale;
            max = std::max(max, row[j]);
          }
          const float inv = 1.0f / ExpShiftSum(row, n, max);
          for (size_t j = 0; j < n; ++j) row[j] *= inv;
        }
        MatMul(scores.data(), n, v.data() + at, h, false, ctx.data() + at, h, n, hd, n, &scratch);
      }
    }
    Apply(l.attention_out, ctx.data(), t, h, h, tmp.data(), &scratch, &rows, &acc);
    for (size_t i = 0; i < t * h; ++i) x[i] += tmp[i];
    LayerNormRows(x.data(), t, h, l.attention_norm.weight, l.attention_norm.bias, eps);
    Apply(l.intermediate, x.data(), t, h, inter, ffn.data(), &scratch, &rows, &acc);
    GeluInPlace(ffn.data(), t * inter);
    Apply(l.output, ffn.data(), t, inter, h, tmp.data(), &scratch, &rows, &acc);
    for (size_t i = 0; i < t * h; ++i) x[i] += tmp[i];
    LayerNormRows(x.data(), t, h, l.output_norm.weight, l.output_norm.bias, eps);
  }
  for (size_t s = 0; s < sequences.size(); ++s) {
    float* o = out + s * h;
    const size_t n = sequences[s].size();
    if (n == 0) {
      std::fill(o, o + h, 0.0f);
    } else if (pooling == Pooling::kCls) {
      std::memcpy(o, x.data() + start[s] * h, h * sizeof(float));
    } else {
      std::vector<double> sum(h, 0.0);
      for (size_t p = 0; p < n; ++p) {
        const float* row = x.data() + (start[s] + p) * h;
        for (size_t i = 0; i < h; ++i) sum[i] += row[i];
      }
      for (size_t i = 0; i < h; ++i) o[i] = static_cast<float>(sum[i] / static_cast<double>(n));
    }
    double norm = 0;
    for (size_t i = 0; i < h; ++i) norm += static_cast<double>(o[i]) * o[i];
    const float inv = norm > 0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.0f;
    for (size_t i = 0; i < h; ++i) o[i] *= inv;
  }
}

}  // namespace msp::native
