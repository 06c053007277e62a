// BertModel: a BERT encoder (BertModel of Hugging Face transformers:
// absolute position embeddings, post-layer-norm, GELU (erf)) on the CPU,
// with the weights of a model directory's model.safetensors used in place
// (safetensors.h) and its shape from config.json; then pooling (mean over
// the tokens or the [CLS] token) and L2 normalisation, as
// sentence-transformers computes a sentence embedding.
//
// A batch is packed, not padded: each text's tokens are rows of the same
// matrices for the linear layers, and attention runs within each text only
// (what a padding mask computes, without the padded rows).
// With `int8`, the linear layers run on int8 copies of their weights
// (quant.h; the mapped fp32 pages are released); attention, layer norms,
// GELU and softmax stay fp32.
// Immutable after Load; Embed is thread-safe.
#ifndef MSP_EMBED_NATIVE_BERT_H_
#define MSP_EMBED_NATIVE_BERT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "embed/native/quant.h"
#include "embed/native/safetensors.h"
#include "msp/status.h"

namespace msp::native {

// config.json's fields the model needs.
struct BertConfig {
  int vocab_size = 0;
  int hidden_size = 0;
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 0;
  int type_vocab_size = 0;
  float layer_norm_eps = 1e-12f;
};

// Parses config.json's text. InvalidArgument naming the field when one is
// missing or out of range, or the model is not a BERT encoder this code runs
// (model_type other than bert, hidden_act other than gelu, relative
// positions).
Result<BertConfig> ParseBertConfig(const std::string& json_text);

enum class Pooling { kMean, kCls };

class BertModel {
 public:
  // config.json and model.safetensors of `dir`. Every tensor is checked
  // against the config (names, shapes, dtypes) here, so Embed cannot fail.
  static Result<std::unique_ptr<BertModel>> Load(const std::string& dir, bool int8 = false);

  const BertConfig& config() const { return config_; }
  bool int8() const { return int8_; }
  // Bytes of the int8 copies (0 without int8).
  size_t int8_bytes() const { return int8_bytes_; }
  const SafeTensorsFile& file() const { return *file_; }

  // out[i * hidden_size ...] = the normalised embedding of sequence i.
  // REQUIRES: each sequence non-empty, at most max_position_embeddings ids,
  // each id < vocab_size.
  void Embed(const std::vector<std::vector<int32_t>>& sequences, Pooling pooling, float* out) const;

 private:
  struct Norm {
    const float* weight;
    const float* bias;
  };
  struct Dense {
    const float* weight;
    const float* bias;
    PackedInt8 packed;  // with int8
  };
  struct Layer {
    Dense query, key, value, attention_out;
    Norm attention_norm;
    Dense intermediate, output;
    Norm output_norm;
  };
  BertModel() = default;

  // c[m, out] = a[m, in] Wᵀ + bias, fp32 or int8.
  void Apply(const Dense& d, const float* a, size_t m, size_t in, size_t out, float* c, std::vector<float>* scratch,
             QuantRows* rows, std::vector<int32_t>* acc) const;

  BertConfig config_;
  bool int8_ = false;
  size_t int8_bytes_ = 0;
  std::unique_ptr<SafeTensorsFile> file_;
  const float* word_ = nullptr;
  const float* position_ = nullptr;
  const float* token_type_ = nullptr;
  Norm embedding_norm_{};
  std::vector<Layer> layers_;
};

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_BERT_H_
