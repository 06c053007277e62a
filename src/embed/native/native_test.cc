// Tests of the native embedder against the reference scripts/make_bert.py
// computed with torch (tests/data/native_bert/reference.json): token ids
// exactly (uncased from vocab.txt and from tokenizer.json, cased), embeddings
// to 1e-4 (mean and CLS pooling, one text at a time and packed in a batch,
// on one thread and several); and clear errors for broken model directories.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/native/bert.h"
#include "embed/native/gemm.h"
#include "embed/native/native_embedder.h"
#include "embed/native/native_loader.h"
#include "embed/native/safetensors.h"
#include "embed/native/wordpiece.h"
#include "tests/support/test_util.h"

namespace msp::native {
namespace {

using msp::testing::Contains;
using msp::testing::TempDir;
namespace fs = std::filesystem;

const std::string kFixture = std::string(MSP_SOURCE_DIR) + "/tests/data/native_bert";

struct Case {
  std::string text;
  std::vector<int32_t> ids, cased_ids;
  std::vector<float> mean, cls;
};

std::vector<Case> LoadCases() {
  std::ifstream in(kFixture + "/reference.json");
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Case> cases;
  for (const auto& c : j.at("cases")) {
    cases.push_back({c.at("text"), c.at("ids"), c.at("cased_ids"), c.at("mean"), c.at("cls")});
  }
  return cases;
}

size_t MaxPositions() {
  std::ifstream in(kFixture + "/config.json");
  return nlohmann::json::parse(in).at("max_position_embeddings").get<size_t>();
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  EXPECT_LE(worst, 1e-4f) << what;
}

// A copy of the fixture directory, to break.
std::string CopyFixture(const TempDir& dir, const std::string& name = "model") {
  const std::string to = dir.path() + "/" + name;
  fs::copy(kFixture, to, fs::copy_options::recursive);
  return to;
}

TEST(NativeTokenizerTest, IdsMatchReferenceFromVocabTxt) {
  TempDir dir("native-tok");
  const std::string model = CopyFixture(dir);
  fs::remove(model + "/tokenizer.json");
  ASSERT_OK_AND_ASSIGN(WordPieceTokenizer t, WordPieceTokenizer::Load(model));
  EXPECT_TRUE(t.options().lower_case);
  const size_t max = MaxPositions();
  std::vector<Case> cases = LoadCases();
  ASSERT_GE(cases.size(), 10u);
  bool truncated = false;
  for (const Case& c : cases) {
    ASSERT_OK_AND_ASSIGN(std::vector<int32_t> ids, t.Encode(c.text, max));
    EXPECT_EQ(ids, c.ids) << c.text;
    truncated |= c.ids.size() == max;
  }
  EXPECT_TRUE(truncated) << "the reference has a text cut at the maximum length";
}

TEST(NativeTokenizerTest, IdsMatchReferenceFromTokenizerJson) {
  TempDir dir("native-tok");
  const std::string model = CopyFixture(dir);
  fs::remove(model + "/vocab.txt");
  ASSERT_OK_AND_ASSIGN(WordPieceTokenizer t, WordPieceTokenizer::Load(model));
  for (const Case& c : LoadCases()) {
    ASSERT_OK_AND_ASSIGN(std::vector<int32_t> ids, t.Encode(c.text, MaxPositions()));
    EXPECT_EQ(ids, c.ids) << c.text;
  }
}

TEST(NativeTokenizerTest, CasedIdsMatchReference) {
  TempDir dir("native-tok");
  const std::string model = CopyFixture(dir);
  fs::remove(model + "/tokenizer.json");
  std::ofstream(model + "/tokenizer_config.json") << R"({"do_lower_case": false})";
  ASSERT_OK_AND_ASSIGN(WordPieceTokenizer t, WordPieceTokenizer::Load(model));
  EXPECT_FALSE(t.options().lower_case);
  EXPECT_FALSE(t.options().strip_accents);
  for (const Case& c : LoadCases()) {
    ASSERT_OK_AND_ASSIGN(std::vector<int32_t> ids, t.Encode(c.text, MaxPositions()));
    EXPECT_EQ(ids, c.cased_ids) << c.text;
  }
}

TEST(NativeTokenizerTest, BasicTokenizeSplitsPunctuationAndCjkAndStripsAccents) {
  ASSERT_OK_AND_ASSIGN(WordPieceTokenizer t, WordPieceTokenizer::Load(kFixture));
  EXPECT_EQ(t.BasicTokenize("Héllo,  WORLD!中文"),
            (std::vector<std::string>{"hello", ",", "world", "!", "中", "文"}));
  EXPECT_EQ(t.BasicTokenize(" \t\n"), std::vector<std::string>{});
  EXPECT_FALSE(t.Encode(std::string("bad \xff utf8"), 16).ok());
  // The cut keeps [SEP] last.
  ASSERT_OK_AND_ASSIGN(std::vector<int32_t> ids, t.Encode("hello world hello world", 4));
  ASSERT_EQ(ids.size(), 4u);
  ASSERT_OK_AND_ASSIGN(std::vector<int32_t> all, t.Encode("hello world hello world", 64));
  EXPECT_EQ(ids.back(), all.back());
  EXPECT_EQ(ids[1], all[1]);
}

class NativeEmbedderTest : public ::testing::TestWithParam<int> {};

TEST_P(NativeEmbedderTest, MeanEmbeddingsMatchTorchInOneBatch) {
  NativeOptions options;
  options.model_dir = kFixture;
  options.threads = GetParam();
  ASSERT_OK_AND_ASSIGN(auto e, NativeEmbedder::Open(options));
  EXPECT_EQ(e->pooling(), Pooling::kMean);  // from 1_Pooling/config.json
  EXPECT_EQ(e->dimension(), 32);
  EXPECT_EQ(e->id(), "native:native_bert:mean:32");
  std::vector<Case> cases = LoadCases();
  std::vector<std::string> texts;
  for (const Case& c : cases) texts.push_back(c.text);
  ASSERT_OK_AND_ASSIGN(auto vectors, e->Embed(texts));
  ASSERT_EQ(vectors.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) ExpectNear(vectors[i], cases[i].mean, cases[i].text);
  // One at a time gives the same.
  for (size_t i = 0; i < cases.size(); i += 4) {
    ASSERT_OK_AND_ASSIGN(auto one, e->Embed({cases[i].text}));
    ExpectNear(one[0], cases[i].mean, cases[i].text);
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, NativeEmbedderTest, ::testing::Values(1, 3));

TEST(NativeEmbedderClsTest, ClsPoolingMatchesTorch) {
  NativeOptions options;
  options.model_dir = kFixture;
  options.pooling = "cls";
  ASSERT_OK_AND_ASSIGN(auto e, NativeEmbedder::Open(options));
  std::vector<Case> cases = LoadCases();
  std::vector<std::string> texts;
  for (const Case& c : cases) texts.push_back(c.text);
  ASSERT_OK_AND_ASSIGN(auto vectors, e->Embed(texts));
  for (size_t i = 0; i < cases.size(); ++i) ExpectNear(vectors[i], cases[i].cls, cases[i].text);
  EXPECT_EQ(e->id(), "native:native_bert:cls:32");
}

TEST(NativeEmbedderClsTest, PoolingFromSentenceTransformersConfig) {
  TempDir dir("native-pool");
  const std::string model = CopyFixture(dir, "bge-like");
  std::ofstream(model + "/1_Pooling/config.json") << R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false})";
  std::ofstream(model + "/sentence_bert_config.json") << R"({"max_seq_length": 8})";
  NativeOptions options;
  options.model_dir = model;
  ASSERT_OK_AND_ASSIGN(auto e, NativeEmbedder::Open(options));
  EXPECT_EQ(e->pooling(), Pooling::kCls);
  EXPECT_EQ(e->max_tokens(), 8u);
}

// The module, as the embedder factory opens it.
TEST(NativeEmbedderClsTest, ModuleOpensTheSameEmbedder) {
  ASSERT_OK_AND_ASSIGN(auto e, OpenNativeEmbedder(kFixture, 2, ""));
  std::vector<Case> cases = LoadCases();
  ASSERT_OK_AND_ASSIGN(auto v, e->Embed({cases[1].text}));
  ExpectNear(v[0], cases[1].mean, cases[1].text);
  EXPECT_FALSE(NativeEmbedderBackend().empty());
}

// ------------------------------------------------------------ broken models

// The fixture's model.safetensors split into header (JSON) and data.
struct SafeTensorsParts {
  nlohmann::json header;
  std::string data;
};

SafeTensorsParts ReadParts(const std::string& path) {
  const std::string bytes = msp::testing::ReadWholeFile(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

void WriteParts(const std::string& path, const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << data;
}

Status OpenError(const std::string& dir) {
  NativeOptions options;
  options.model_dir = dir;
  auto e = NativeEmbedder::Open(options);
  return e.ok() ? Status::Ok() : e.status();
}

TEST(NativeBrokenModelTest, TruncatedFileIsAnError) {
  TempDir dir("native-broken");
  const std::string model = CopyFixture(dir);
  const std::string path = model + "/model.safetensors";
  fs::resize_file(path, fs::file_size(path) - 100);
  Status s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "truncated")) << s.ToString();
  fs::resize_file(path, 5);
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "fewer than the 8")) << s.ToString();
}

TEST(NativeBrokenModelTest, LyingHeaderIsAnError) {
  TempDir dir("native-broken");
  const std::string model = CopyFixture(dir);
  const std::string path = model + "/model.safetensors";
  SafeTensorsParts parts = ReadParts(kFixture + "/model.safetensors");
  // Offsets past the end of the data.
  nlohmann::json h = parts.header;
  auto& entry = h["encoder.layer.1.output.dense.weight"];
  entry["data_offsets"] = {parts.data.size() - 4, parts.data.size() + 4096};
  WriteParts(path, h.dump(), parts.data);
  Status s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "encoder.layer.1.output.dense.weight")) << s.ToString();
  // Offsets that hold fewer bytes than the shape needs.
  h = parts.header;
  auto offsets = h["embeddings.word_embeddings.weight"]["data_offsets"];
  h["embeddings.word_embeddings.weight"]["data_offsets"] = {offsets[0], offsets[0].get<uint64_t>() + 16};
  WriteParts(path, h.dump(), parts.data);
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "needs")) << s.ToString();
  // A header length past the end of the file.
  std::string bytes = msp::testing::ReadWholeFile(kFixture + "/model.safetensors");
  const uint64_t huge = bytes.size() * 2;
  std::memcpy(bytes.data(), &huge, 8);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  // A header that is not JSON.
  WriteParts(path, "{\"a\": [1, 2", parts.data);
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "not JSON")) << s.ToString();
}

TEST(NativeBrokenModelTest, WrongDtypeOrShapeIsAnError) {
  TempDir dir("native-broken");
  const std::string model = CopyFixture(dir);
  const std::string path = model + "/model.safetensors";
  SafeTensorsParts parts = ReadParts(kFixture + "/model.safetensors");
  nlohmann::json h = parts.header;
  h["encoder.layer.0.attention.self.query.weight"]["dtype"] = "I32";
  WriteParts(path, h.dump(), parts.data);
  Status s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "I32")) << s.ToString();
  h = parts.header;
  h["encoder.layer.0.attention.self.query.weight"]["dtype"] = "Q4";
  WriteParts(path, h.dump(), parts.data);
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "unknown dtype")) << s.ToString();
  // A shape that holds the same bytes but is not what config.json says.
  h = parts.header;
  h["encoder.layer.0.intermediate.dense.weight"]["shape"] = {32, 64};
  WriteParts(path, h.dump(), parts.data);
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "config.json makes it")) << s.ToString();
  // A missing tensor.
  h = parts.header;
  h.erase("encoder.layer.1.output.LayerNorm.bias");
  WriteParts(path, h.dump(), parts.data);
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "encoder.layer.1.output.LayerNorm.bias")) << s.ToString();
}

TEST(NativeBrokenModelTest, F16WeightsAreConverted) {
  TempDir dir("native-f16");
  const std::string model = CopyFixture(dir);
  SafeTensorsParts parts = ReadParts(kFixture + "/model.safetensors");
  // Every tensor as F16 (round to nearest even of the F32 bits).
  nlohmann::json h = {{"__metadata__", {{"format", "pt"}}}};
  std::string data;
  for (const auto& [name, entry] : parts.header.items()) {
    if (name == "__metadata__") continue;
    const uint64_t begin = entry["data_offsets"][0], end = entry["data_offsets"][1];
    const uint64_t at = data.size();
    for (uint64_t o = begin; o < end; o += 4) {
      float f;
      std::memcpy(&f, parts.data.data() + o, 4);
      const _Float16 half = static_cast<_Float16>(f);
      char b[2];
      std::memcpy(b, &half, 2);
      data.append(b, 2);
    }
    h[name] = {{"dtype", "F16"}, {"shape", entry["shape"]}, {"data_offsets", {at, data.size()}}};
  }
  WriteParts(model + "/model.safetensors", h.dump(), data);
  NativeOptions options;
  options.model_dir = model;
  ASSERT_OK_AND_ASSIGN(auto e, NativeEmbedder::Open(options));
  EXPECT_GT(e->model().file().converted_bytes(), 0u);
  std::vector<Case> cases = LoadCases();
  ASSERT_OK_AND_ASSIGN(auto v, e->Embed({cases[1].text}));
  // Half precision weights: close to the F32 reference, not equal.
  float dot = 0;
  for (size_t i = 0; i < v[0].size(); ++i) dot += v[0][i] * cases[1].mean[i];
  EXPECT_GT(dot, 0.99f);
}

TEST(NativeBrokenModelTest, MissingFilesAndBadConfigAreErrors) {
  Status s = OpenError("");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "embedder.model")) << s.ToString();
  s = OpenError("/nonexistent/msp-model");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "not a directory")) << s.ToString();
  TempDir dir("native-broken");
  std::string model = CopyFixture(dir, "no-weights");
  fs::remove(model + "/model.safetensors");
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "model.safetensors")) << s.ToString();
  model = CopyFixture(dir, "no-vocab");
  fs::remove(model + "/vocab.txt");
  fs::remove(model + "/tokenizer.json");
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "vocab.txt")) << s.ToString();
  model = CopyFixture(dir, "bad-config");
  std::ofstream(model + "/config.json") << R"({"model_type": "bert", "hidden_size": 30, "num_attention_heads": 4})";
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "config.json")) << s.ToString();
  std::ofstream(model + "/config.json") << "not json";
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "config.json")) << s.ToString();
  std::ofstream(model + "/config.json") << R"({"model_type": "roberta"})";
  s = OpenError(model);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "roberta")) << s.ToString();
}

TEST(NativeBrokenModelTest, ConfigHiddenSizeMustDivideHeads) {
  auto c = ParseBertConfig(R"({"vocab_size": 10, "hidden_size": 30, "num_hidden_layers": 1,
      "num_attention_heads": 4, "intermediate_size": 8, "max_position_embeddings": 8})");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(Contains(c.status().message(), "multiple")) << c.status().ToString();
}

}  // namespace
}  // namespace msp::native

namespace msp::native {
namespace {

// The blocked kernel (used when OpenBLAS is absent) and Linear against a
// plain triple loop, on sizes that are not multiples of its tiles.
TEST(NativeGemmTest, BlockedKernelAndLinearMatchPlainProduct) {
  uint32_t seed = 22;
  auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f;
  };
  std::vector<float> scratch;
  for (const auto& [m, n, k] : {std::tuple<size_t, size_t, size_t>{7, 45, 19}, {1, 1, 1}, {50, 33, 64}, {13, 96, 3}}) {
    for (bool transposed : {true, false}) {
      const size_t lda = k + 3, ldb = (transposed ? k : n) + 5, ldc = n + 2;
      std::vector<float> a(m * lda), b((transposed ? n : k) * ldb), bias(n), c(m * ldc, 7.0f);
      for (float& x : a) x = next();
      for (float& x : b) x = next();
      for (float& x : bias) x = next();
      ProductBlocked(a.data(), lda, b.data(), ldb, transposed, bias.data(), c.data(), ldc, m, n, k, &scratch);
      std::vector<float> d(m * ldc, 7.0f);
      MatMul(a.data(), lda, b.data(), ldb, transposed, d.data(), ldc, m, n, k, &scratch);
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double want = 0;
          for (size_t p = 0; p < k; ++p) want += a[i * lda + p] * (transposed ? b[j * ldb + p] : b[p * ldb + j]);
          ASSERT_NEAR(c[i * ldc + j], want + bias[j], 1e-4) << m << "x" << n << "x" << k << " at " << i << "," << j;
          ASSERT_NEAR(d[i * ldc + j], want, 1e-4) << m << "x" << n << "x" << k << " at " << i << "," << j;
        }
        for (size_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], 7.0f) << "wrote past the row";
      }
      if (transposed) {
        std::vector<float> wc(m * n), wa(m * k), wb(n * k);
        for (size_t i = 0; i < m; ++i) std::copy_n(a.begin() + static_cast<std::ptrdiff_t>(i * lda), k, wa.begin() + static_cast<std::ptrdiff_t>(i * k));
        for (size_t j = 0; j < n; ++j) std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(j * ldb), k, wb.begin() + static_cast<std::ptrdiff_t>(j * k));
        Linear(wa.data(), m, k, wb.data(), n, bias.data(), wc.data(), &scratch);
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < n; ++j) ASSERT_NEAR(wc[i * n + j], c[i * ldc + j], 1e-4);
        }
      }
    }
  }
}

}  // namespace
}  // namespace msp::native

namespace msp {
namespace {

// embedder.provider = "native" through the factory (options.h's settings).
TEST(NativeFactoryTest, MakeEmbedderOpensTheModelDirectory) {
  EmbedderOptions o;
  o.provider = "native";
  o.model = msp::native::kFixture;
  o.threads = 0;  // one per core
  o.pooling = "cls";
  ASSERT_OK_AND_ASSIGN(auto e, MakeEmbedder(o));
  EXPECT_EQ(e->id(), "native:native_bert:cls:32");
  o.model = "";
  auto missing = MakeEmbedder(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(msp::testing::Contains(missing.status().message(), "embedder.model")) << missing.status().ToString();
  o.model = msp::native::kFixture;
  o.pooling = "max";
  auto bad = MakeEmbedder(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(msp::testing::Contains(bad.status().message(), "pooling")) << bad.status().ToString();
}

}  // namespace
}  // namespace msp
