// Tests for the embedder factory, Dot() and the hashing embedder.
#include "embed/hashing/hashing_embedder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "embed/embedder.h"

namespace msp {
namespace {

std::unique_ptr<Embedder> Make(int dim) {
  EmbedderOptions o;
  o.dimension = dim;
  auto e = MakeEmbedder(o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(e).value();
}

std::vector<float> EmbedOne(Embedder& e, const std::string& text) {
  auto r = e.Embed({text});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 1u);
  return (*r)[0];
}

double Norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

float Cos(const std::vector<float>& a, const std::vector<float>& b) {
  return Dot(a.data(), b.data(), a.size());
}

TEST(EmbedderFactoryTest, MakesHashingEmbedder) {
  auto e = Make(384);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->dimension(), 384);
  EXPECT_EQ(e->id(), "hashing-v1-384");
}

// MakeEmbedder makes the built-in embedders; openai needs the network
// (OpenEmbedder). (An unknown provider cannot be named: config_test.)
TEST(EmbedderFactoryTest, RefusesOpenAiNamingTheBuiltInOnes) {
  EmbedderOptions o;
  o.provider = EmbedderProvider::kOpenai;
  auto e = MakeEmbedder(o);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("OpenEmbedder"), std::string::npos);
  EXPECT_NE(e.status().message().find("hashing"), std::string::npos);
}

TEST(EmbedderFactoryTest, RejectsDimensionsOutOfRange) {
  for (int dim : {-1, 0, 7, 4097, 100000}) {
    EmbedderOptions o;
    o.dimension = dim;
    auto e = MakeEmbedder(o);
    ASSERT_FALSE(e.ok()) << dim;
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << dim;
  }
  for (int dim : {8, 4096}) {
    EmbedderOptions o;
    o.dimension = dim;
    EXPECT_TRUE(MakeEmbedder(o).ok()) << dim;
  }
}

TEST(DotTest, MatchesNaiveSumForAllLengths) {
  for (size_t n = 0; n < 40; ++n) {
    std::vector<float> a(n), b(n);
    double expect = 0;
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i % 7) - 3.0f;
      b[i] = 0.5f * static_cast<float>(i % 5) + 0.25f;
      expect += static_cast<double>(a[i]) * b[i];
    }
    EXPECT_NEAR(Dot(a.data(), b.data(), n), expect, 1e-4) << n;
  }
}

TEST(HashingEmbedderTest, HonoursDimension) {
  for (int dim : {8, 64, 384, 1000, 4096}) {
    auto e = Make(dim);
    auto v = EmbedOne(*e, "the quick brown fox jumps over the lazy dog");
    EXPECT_EQ(v.size(), static_cast<size_t>(dim));
    EXPECT_NEAR(Norm(v), 1.0, 1e-5) << dim;
  }
}

TEST(HashingEmbedderTest, VectorsHaveUnitNorm) {
  auto e = Make(384);
  for (const char* t : {"a", "hello", "The user prefers dark mode in every editor.",
                        "x1 y2 z3 1234567890", "naïve café résumé", "日本語のテキスト",
                        "supercalifragilisticexpialidocious-and-then-some"}) {
    EXPECT_NEAR(Norm(EmbedOne(*e, t)), 1.0, 1e-5) << t;
  }
}

TEST(HashingEmbedderTest, IsDeterministic) {
  auto a = Make(384);
  auto b = Make(384);
  const std::string text = "Deploys go through the staging cluster before production.";
  EXPECT_EQ(EmbedOne(*a, text), EmbedOne(*b, text));
  EXPECT_EQ(EmbedOne(*a, text), EmbedOne(*a, text));
  // A batch gives the same vectors as one text at a time.
  auto batch = a->Embed({text, "other text", text});
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ((*batch)[0], (*batch)[2]);
  EXPECT_EQ((*batch)[0], EmbedOne(*a, text));
  EXPECT_NE((*batch)[0], (*batch)[1]);
}

// Pins the feature hashing: if this changes, vectors stored by earlier builds
// no longer match, and id() must change (hashing-v2).
TEST(HashingEmbedderTest, FeatureHashingIsStable) {
  auto e = Make(64);
  auto v = EmbedOne(*e, "Hello world");
  std::vector<int> signs;
  for (float x : v) signs.push_back(x > 0 ? 1 : (x < 0 ? -1 : 0));
  const std::vector<int> expect = {
      0, 0, 1, 0, 0, 1, -1, 0, 0, 1, 0, 0, 1, 0, 1, 0,
      1, 0, 0, 0, 0, -1, -1, -1, 1, 1, 0, 0, 0, 1, 0, 0,
      -1, 0, 0, -1, 0, 0, 1, 0, -1, 0, 0, 0, 1, -1, 0, -1,
      -1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
  EXPECT_EQ(signs, expect);
}

TEST(HashingEmbedderTest, IgnoresAsciiCase) {
  auto e = Make(384);
  EXPECT_EQ(EmbedOne(*e, "Hello WORLD"), EmbedOne(*e, "hello world"));
}

TEST(HashingEmbedderTest, EmptyOrFeaturelessTextGivesZeros) {
  auto e = Make(128);
  for (const char* t : {"", "   ", "!?.,;:-- ()[]{}"}) {
    auto v = EmbedOne(*e, t);
    ASSERT_EQ(v.size(), 128u);
    EXPECT_EQ(Norm(v), 0.0) << "'" << t << "'";
  }
  auto none = e->Embed({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(HashingEmbedderTest, SimilarTextsScoreHigherThanUnrelated) {
  auto e = Make(384);
  auto q = EmbedOne(*e, "the user prefers dark mode in the code editor");
  auto near = EmbedOne(*e, "user preference: dark editor mode");
  auto far = EmbedOne(*e, "quarterly revenue grew by ten percent in europe");
  EXPECT_GT(Cos(q, near), Cos(q, far) + 0.2f);
  EXPECT_NEAR(Cos(q, q), 1.0f, 1e-5);
}

TEST(HashingEmbedderTest, SharedWordFragmentsMakeInflectionsClose) {
  auto e = Make(384);
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"deployment", "deployments"}, {"configuration", "configured"}, {"running", "runner"},
      {"database", "databases"},     {"preference", "preferences"},   {"walking", "walked"},
      {"kubernetes", "kubernetes's"}, {"migration", "migrating"}};
  // Mean cosine of the inflection pairs against the mean over mismatched
  // pairs (the first word of one pair with the second word of the next).
  double same = 0, other = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& next = pairs[(i + 1) % pairs.size()];
    same += Cos(EmbedOne(*e, pairs[i].first), EmbedOne(*e, pairs[i].second));
    other += Cos(EmbedOne(*e, pairs[i].first), EmbedOne(*e, next.second));
  }
  same /= pairs.size();
  other /= pairs.size();
  EXPECT_GT(same, 0.25);
  EXPECT_GT(same, other + 0.2);
  EXPECT_GT(Cos(EmbedOne(*e, "deployment failed"), EmbedOne(*e, "deployments failing")), 0.2f);
}

TEST(HashingEmbedderTest, WordOrderMattersThroughPairs) {
  auto e = Make(384);
  auto ab = EmbedOne(*e, "alpha beta gamma");
  auto ba = EmbedOne(*e, "gamma beta alpha");
  EXPECT_LT(Cos(ab, ba), 0.999f);  // same words, different pairs
  EXPECT_GT(Cos(ab, ba), 0.5f);    // but mostly the same features
}

TEST(HashingEmbedderTest, NonAsciiWordsAreFeatures) {
  auto e = Make(384);
  auto a = EmbedOne(*e, "東京 タワー");
  auto b = EmbedOne(*e, "東京");
  auto c = EmbedOne(*e, "大阪");
  EXPECT_NEAR(Norm(a), 1.0, 1e-5);
  EXPECT_GT(Cos(a, b), Cos(a, c));
  EXPECT_GT(Cos(EmbedOne(*e, "café crème"), EmbedOne(*e, "café")), 0.3f);
}

TEST(HashingEmbedderTest, SafeAndConsistentAcrossThreads) {
  auto e = Make(256);
  std::vector<std::string> texts;
  for (int i = 0; i < 50; ++i) {
    texts.push_back("record number " + std::to_string(i) + " about topic " + std::to_string(i % 7));
  }
  auto expect = e->Embed(texts);
  ASSERT_TRUE(expect.ok());
  std::vector<std::vector<std::vector<float>>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        auto r = e->Embed(texts);
        if (r.ok()) got[t] = *r;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(got[t], *expect) << t;
}

}  // namespace
}  // namespace msp
