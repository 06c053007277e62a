// NativeEmbedder: embedder.provider = "native", a BERT-family sentence
// encoder run in-process (all-MiniLM-L6-v2, bge-small-en-v1.5, e5-small-v2,
// gte-small and models of their shape): WordPiece tokens (wordpiece.h), the
// encoder (bert.h), pooling and L2 normalisation.
//
// The model directory holds model.safetensors, config.json, and vocab.txt or
// tokenizer.json (with tokenizer_config.json), as the Hugging Face repository
// of such a model has them. Optional, from sentence-transformers' files:
// 1_Pooling/config.json (pooling_mode_cls_token selects CLS pooling, else
// mean) and sentence_bert_config.json (max_seq_length: texts are cut to it,
// else to max_position_embeddings).
//
// It lives in the module libmsp_native_embed.so (native_module.cc), which a
// process loads only when it opens this embedder; OpenNativeEmbedder
// (native_loader.h) loads it.
#ifndef MSP_EMBED_NATIVE_NATIVE_EMBEDDER_H_
#define MSP_EMBED_NATIVE_NATIVE_EMBEDDER_H_

#include <memory>
#include <string>
#include <vector>

#include "embed/embedder.h"
#include "embed/native/bert.h"
#include "embed/native/wordpiece.h"

namespace msp::native {

struct NativeOptions {
  std::string model_dir;
  int threads = 1;          // texts of one Embed call are split over this many threads
  std::string pooling;      // "auto" or "", "mean", "cls" (auto: the model's 1_Pooling/config.json, else mean)
  std::string quantize;     // "none" or "", "int8" (bert.h)
};

class NativeEmbedder final : public Embedder {
 public:
  // InvalidArgument naming the directory and what is wrong with it.
  static Result<std::unique_ptr<NativeEmbedder>> Open(const NativeOptions& options);

  int dimension() const override { return model_->config().hidden_size; }
  // "native:<directory name>:<mean|cls>:<dimension>", and ":int8" when
  // quantised (its vectors differ a little from fp32's).
  std::string id() const override;
  // Empty and whitespace-only texts embed as [CLS] [SEP] does (as the model
  // itself would). InvalidArgument for a text that is not UTF-8.
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override;

  const WordPieceTokenizer& tokenizer() const { return tokenizer_; }
  const BertModel& model() const { return *model_; }
  size_t max_tokens() const { return max_tokens_; }
  Pooling pooling() const { return pooling_; }

 private:
  NativeEmbedder(WordPieceTokenizer tokenizer, std::unique_ptr<BertModel> model)
      : tokenizer_(std::move(tokenizer)), model_(std::move(model)) {}

  WordPieceTokenizer tokenizer_;
  std::unique_ptr<BertModel> model_;
  std::string name_;
  Pooling pooling_ = Pooling::kMean;
  size_t max_tokens_ = 0;
  int threads_ = 1;
};

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_NATIVE_EMBEDDER_H_
