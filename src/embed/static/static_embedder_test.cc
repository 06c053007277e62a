// Tests for the word-vector table (its C++ writer, the Node converter
// data/embeddings/convert.mjs, the checks on load) and the static embedder.
#include "embed/static/static_embedder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "embed/embedder.h"
#include "embed/static/word_vectors.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using testing::TempDir;

// A tiny table: 4 dimensions, "the" most frequent; dog, puppy and cat share
// an animal direction, car and truck a vehicle one.
const std::vector<std::string> kWords = {"the", "dog", "car", "puppy", "cat", "truck", "not", "do", "café"};
const std::vector<std::vector<float>> kVectors = {
    {0.5f, 0.5f, 0.5f, 0.5f},  {1.0f, 0.1f, 0.0f, 0.0f},  {0.0f, 0.0f, 1.0f, 0.1f},
    {0.9f, 0.2f, 0.0f, 0.0f},  {0.8f, -0.3f, 0.0f, 0.1f}, {0.0f, 0.1f, 0.9f, 0.2f},
    {0.0f, 0.0f, 0.0f, -1.0f}, {0.0f, 1.0f, 0.0f, 0.0f},  {0.0f, 0.5f, 0.0f, 0.5f}};

std::string WriteTable(const TempDir& dir) {
  const std::string path = dir.path() + "/tiny.msv";
  EXPECT_TRUE(WriteWordVectors(path, "tiny-4d", kWords, kVectors).ok());
  return path;
}

std::vector<float> Row(const WordVectors& t, const std::string& word) {
  std::vector<float> v(static_cast<size_t>(t.dimension()), 0.0f);
  const int64_t i = t.Find(word);
  EXPECT_GE(i, 0) << word;
  if (i >= 0) t.AddScaled(static_cast<size_t>(i), 1.0f, v.data());
  return v;
}

// The cosine of two vectors of any length.
float Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  const float na = std::sqrt(Dot(a.data(), a.data(), a.size()));
  const float nb = std::sqrt(Dot(b.data(), b.data(), b.size()));
  return Dot(a.data(), b.data(), a.size()) / (na * nb);
}

TEST(WordVectorsTest, WrittenTableLoadsWithEveryWordAndItsVector) {
  TempDir dir("wvec");
  ASSERT_OK_AND_ASSIGN(auto t, WordVectors::Load(WriteTable(dir)));
  EXPECT_EQ(t->dimension(), 4);
  EXPECT_EQ(t->size(), kWords.size());
  EXPECT_EQ(t->name(), "tiny-4d");
  for (size_t i = 0; i < kWords.size(); ++i) {
    EXPECT_EQ(t->Find(kWords[i]), static_cast<int64_t>(i)) << kWords[i];
    EXPECT_EQ(t->Word(i), kWords[i]);
    const std::vector<float> v = Row(*t, kWords[i]);
    for (size_t d = 0; d < 4; ++d) EXPECT_NEAR(v[d], kVectors[i][d], 0.01) << kWords[i] << " " << d;
  }
  EXPECT_EQ(t->Find("horse"), -1);
  EXPECT_EQ(t->Find(""), -1);
  EXPECT_EQ(t->Find("Dog"), -1);  // the table is lowercase; the embedder lowercases
}

TEST(WordVectorsTest, DamagedOrForeignFilesAreRefusedWithThePath) {
  TempDir dir("wvec-bad");
  const std::string good = WriteTable(dir);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto write = [&](const std::string& name, const std::string& content) {
    const std::string p = dir.path() + "/" + name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  };
  struct Case {
    std::string name;
    std::string content;
  };
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  std::string truncated = bytes.substr(0, bytes.size() - 3);
  std::string bad_slot = bytes;
  // The table starts after the header, the scales and the offsets; make
  // every slot name a word past the end.
  const size_t count = kWords.size();
  const size_t table_at = 64 + 4 * count + 4 * (count + 1);
  for (size_t i = 0; i < 4; ++i) bad_slot[table_at + i] = '\x7f';
  for (const Case& c : {Case{"short", "MSPW"}, Case{"magic", bad_magic}, Case{"truncated", truncated},
                        Case{"slot", bad_slot}}) {
    const std::string p = write(c.name + ".msv", c.content);
    auto r = WordVectors::Load(p);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status().ToString();
  }
  auto missing = WordVectors::Load(dir.path() + "/none.msv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
}

TEST(WordVectorsTest, WriterRefusesBadInput) {
  TempDir dir("wvec-write");
  const std::string p = dir.path() + "/x.msv";
  EXPECT_FALSE(WriteWordVectors(p, "x", {"a", "a"}, {{1, 0}, {0, 1}}).ok());
  EXPECT_FALSE(WriteWordVectors(p, "x", {"a", ""}, {{1, 0}, {0, 1}}).ok());
  EXPECT_FALSE(WriteWordVectors(p, "x", {"a", "b"}, {{1, 0}, {0, 1, 2}}).ok());
  EXPECT_FALSE(WriteWordVectors(p, "x", {"a"}, {{1, 0}, {0, 1}}).ok());
  EXPECT_FALSE(WriteWordVectors(p, std::string(40, 'n'), {"a"}, {{1, 0}}).ok());
  EXPECT_FALSE(WordVectors::Load(p).ok());  // nothing was written
}

// The Node converter that scripts/deps.sh runs on GloVe writes the layout
// the C++ reader maps: convert a small file in the wink format.
TEST(WordVectorsTest, NodeConverterWritesTheLayoutTheReaderMaps) {
  TempDir dir("wvec-node");
  const std::string in = dir.path() + "/wink.json";
  const std::string out = dir.path() + "/converted.msv";
  {
    std::ofstream f(in);
    // "i'm" and "new-york" are not words of the embedder: the converter skips them.
    f << R"({"precision":8,"l2NormIndex":3,"wordIndex":4,"size":5,"dimensions":3,)"
      << R"("words":["the","i'm","dog","new-york","puppy"],"vectors":{)"
      << R"("the":[0.1,0.2,0.3,0.37,0],"i'm":[1,1,1,1.7,1],"dog":[-1.5,0.25,0,1.52,2],)"
      << R"("new-york":[0,0,1,1,3],"puppy":[-1.25,0.5,0.125,1.35,4]}})";
  }
  const std::string cmd = "node '" + std::string(MSP_SOURCE_DIR) + "/data/embeddings/convert.mjs' '" + in + "' '" +
                          out + "' 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << " (needs node: scripts/deps.sh)";
  ASSERT_OK_AND_ASSIGN(auto t, WordVectors::Load(out));
  EXPECT_EQ(t->dimension(), 3);
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ(t->Find("the"), 0);
  EXPECT_EQ(t->Find("dog"), 1);
  EXPECT_EQ(t->Find("puppy"), 2);
  EXPECT_EQ(t->Find("i'm"), -1);
  const std::vector<float> dog = Row(*t, "dog");
  EXPECT_NEAR(dog[0], -1.5, 0.015);
  EXPECT_NEAR(dog[1], 0.25, 0.015);
  EXPECT_NEAR(dog[2], 0.0, 0.015);
}

TEST(StaticEmbedderTest, RelatedWordsAreCloseUnrelatedFar) {
  TempDir dir("static");
  ASSERT_OK_AND_ASSIGN(auto t, WordVectors::Load(WriteTable(dir)));
  // In a 9-word table Zipf's law makes every word frequent: a larger
  // smoothing constant keeps the weights near 1.
  StaticEmbedder e(t, /*smoothing=*/1.0f);
  EXPECT_EQ(e.dimension(), 4);
  EXPECT_EQ(e.id(), "static-v1-tiny-4d");
  ASSERT_OK_AND_ASSIGN(auto v, e.Embed({"Dog!", "a PUPPY", "one truck", "", "zebra quagga"}));
  ASSERT_EQ(v.size(), 5u);
  EXPECT_GT(Cosine(v[0], v[1]), 0.9f);
  EXPECT_LT(Cosine(v[0], v[2]), 0.3f);
  for (size_t i = 0; i < 3; ++i) {
    double norm = 0;
    for (float x : v[i]) norm += static_cast<double>(x) * x;
    EXPECT_NEAR(norm, 1.0, 1e-5);
  }
  for (float x : v[3]) EXPECT_EQ(x, 0.0f);  // no words
  for (float x : v[4]) EXPECT_EQ(x, 0.0f);  // no known word
}

TEST(StaticEmbedderTest, FrequentWordsWeighLessThanRareOnes) {
  TempDir dir("static-sif");
  ASSERT_OK_AND_ASSIGN(auto t, WordVectors::Load(WriteTable(dir)));
  StaticEmbedder e(t, /*smoothing=*/0.01f);
  ASSERT_OK_AND_ASSIGN(auto v, e.Embed({"the car", "car"}));
  // "the" (rank 0) adds little: "the car" stays near "car".
  EXPECT_GT(Cosine(v[0], v[1]), 0.9f);
}

TEST(StaticEmbedderTest, CliticsAreDroppedAndNegationReadsAsNot) {
  TempDir dir("static-clitic");
  ASSERT_OK_AND_ASSIGN(auto t, WordVectors::Load(WriteTable(dir)));
  StaticEmbedder e(t);
  ASSERT_OK_AND_ASSIGN(auto v, e.Embed({"dog's", "dog\xe2\x80\x99s", "dog", "don't", "do not", "caf\xc3\xa9"}));
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_FLOAT_EQ(v[0][d], v[2][d]);
    EXPECT_FLOAT_EQ(v[1][d], v[2][d]);
    EXPECT_FLOAT_EQ(v[3][d], v[4][d]);
  }
  EXPECT_GT(Cosine(v[5], Row(*t, "café")), 0.99f);  // UTF-8 words are looked up whole
}

TEST(StaticEmbedderTest, FactoryFindsTheTableOrSaysHowToInstallIt) {
  TempDir dir("static-factory");
  EmbedderOptions o;
  o.provider = EmbedderProvider::kStatic;
  o.vectors_path = WriteTable(dir);
  ASSERT_OK_AND_ASSIGN(auto e, MakeEmbedder(o));
  EXPECT_EQ(e->id(), "static-v1-tiny-4d");
  EXPECT_EQ(e->dimension(), 4);
  o.vectors_path = dir.path() + "/missing.msv";
  auto missing = MakeEmbedder(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.msv"), std::string::npos);
  o.provider = EmbedderProvider::kOpenai;
  auto unknown = MakeEmbedder(o);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("static"), std::string::npos);
  auto found = FindWordVectors("");
  if (!found.ok()) {
    EXPECT_NE(found.status().message().find("scripts/deps.sh --word-vectors"), std::string::npos);
  }
}

}  // namespace
}  // namespace msp
