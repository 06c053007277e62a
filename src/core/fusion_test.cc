// Tests for reciprocal-rank fusion.
#include "core/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace msp {
namespace {

TEST(FusionTest, FirstEverywhereScoresOneAndAgreementWins) {
  RankedSignal a{"bm25", 1.0, {{"x", 9.0}, {"y", 5.0}, {"z", 1.0}}};
  RankedSignal b{"cosine", 1.0, {{"x", 0.9}, {"z", 0.8}}};
  const std::vector<RankedSignal> signals{a, b};
  auto fused = FuseReciprocalRank(signals, 60);
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(fused[0].id, "x");
  EXPECT_DOUBLE_EQ(fused[0].score, 1.0);
  EXPECT_EQ(fused[1].id, "z");  // found by both beats y found by one
  EXPECT_EQ(fused[2].id, "y");
  EXPECT_EQ(fused[2].contributions[1].rank, 0);
  EXPECT_EQ(fused[2].contributions[0].rank, 2);
  EXPECT_DOUBLE_EQ(fused[2].contributions[0].raw, 5.0);
  double sum = 0;
  for (const auto& c : fused[1].contributions) sum += c.contribution;
  EXPECT_DOUBLE_EQ(sum, fused[1].score);
}

TEST(FusionTest, OneSignalOnlyIsHalfAndWeightsMatter) {
  RankedSignal a{"bm25", 1.0, {{"x", 1.0}}};
  RankedSignal b{"cosine", 1.0, {}};
  const std::vector<RankedSignal> signals{a, b};
  auto fused = FuseReciprocalRank(signals, 60);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_DOUBLE_EQ(fused[0].score, 0.5);
  RankedSignal heavy{"cosine", 3.0, {{"y", 0.5}}};
  const std::vector<RankedSignal> weighted{a, heavy};
  fused = FuseReciprocalRank(weighted, 60);
  EXPECT_EQ(fused[0].id, "y");
  EXPECT_DOUBLE_EQ(fused[0].score, 0.75);
}

// Without contributions the ranking and scores are the same, and a signal
// that lists an id twice counts only its best rank.
TEST(FusionTest, ContributionsAreOptionalAndRepeatsCountOnce) {
  RankedSignal a{"bm25", 1.0, {{"x", 9.0}, {"y", 5.0}, {"x", 1.0}}};
  RankedSignal b{"cosine", 0.5, {{"y", 0.9}, {"z", 0.8}}};
  const std::vector<RankedSignal> signals{a, b};
  auto full = FuseReciprocalRank(signals, 10);
  auto lean = FuseReciprocalRank(signals, 10, /*with_contributions=*/false);
  ASSERT_EQ(full.size(), 3u);
  ASSERT_EQ(lean.size(), 3u);
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(full[i].id, lean[i].id);
    EXPECT_DOUBLE_EQ(full[i].score, lean[i].score);
    EXPECT_EQ(full[i].contributions.size(), 2u);
    EXPECT_TRUE(lean[i].contributions.empty());
  }
  const double max = 1.0 / 11 + 0.5 / 11;
  EXPECT_EQ(full[0].id, "y");  // 1/12 + 0.5/11 beats 1/11
  EXPECT_DOUBLE_EQ(full[0].score, (1.0 / 12 + 0.5 / 11) / max);
  EXPECT_EQ(full[1].id, "x");
  EXPECT_DOUBLE_EQ(full[1].score, (1.0 / 11) / max);  // not 1/11 + 1/13
  EXPECT_EQ(full[1].contributions[0].rank, 1);
}

// Score fusion keeps the gaps between scores that rank fusion drops: a
// record far ahead in one signal stays ahead of one slightly better in a
// light signal.
TEST(FusionTest, ScoreFusionIsTheWeightedMeanOfClampedScores) {
  RankedSignal lexical{"bm25", 1.0, {{"x", 1.0}, {"y", 0.2}}};
  RankedSignal vector{"cosine", 0.25, {{"y", 0.9}, {"x", 0.1}, {"z", -0.3}, {"w", 2.0}}};
  const std::vector<RankedSignal> signals{lexical, vector};
  auto fused = FuseScores(signals);
  ASSERT_EQ(fused.size(), 4u);
  EXPECT_EQ(fused[0].id, "x");
  EXPECT_DOUBLE_EQ(fused[0].score, (1.0 + 0.25 * 0.1) / 1.25);
  EXPECT_EQ(fused[1].id, "y");
  EXPECT_DOUBLE_EQ(fused[1].score, (0.2 + 0.25 * 0.9) / 1.25);
  EXPECT_EQ(fused[2].id, "w");  // clamped to 1
  EXPECT_DOUBLE_EQ(fused[2].score, 0.25 / 1.25);
  EXPECT_EQ(fused[3].id, "z");  // clamped to 0
  EXPECT_DOUBLE_EQ(fused[3].score, 0.0);
  double sum = 0;
  for (const auto& c : fused[1].contributions) sum += c.contribution;
  EXPECT_DOUBLE_EQ(sum, fused[1].score);
  EXPECT_EQ(fused[1].contributions[1].rank, 1);
  EXPECT_DOUBLE_EQ(fused[1].contributions[1].raw, 0.9);
  // With a heavier vector signal that ranks y first (by a small margin),
  // rank fusion puts y first; score fusion keeps x, far ahead lexically.
  RankedSignal heavy_vector{"cosine", 1.5, {{"y", 0.5}, {"x", 0.1}}};
  const std::vector<RankedSignal> heavy{lexical, heavy_vector};
  EXPECT_EQ(FuseScores(heavy)[0].id, "x");              // (1 + 0.15) vs (0.2 + 0.75), over 2.5
  EXPECT_EQ(FuseReciprocalRank(heavy, 60)[0].id, "y");  // 1/62 + 1.5/61 vs 1/61 + 1.5/62
}

// FuseAlignedScores gives what FuseScores gives for the same signals, bit
// for bit and in the same order: ties (first-signal order), clamping, hits
// the other signals missed (NaN), scores out of order in the other signals.
TEST(FusionTest, AlignedScoresMatchScoreFusion) {
  std::vector<IndexHit> candidates;
  for (int i = 0; i < 40; ++i) {
    // Repeating scores make ties; some fall outside [0, 1].
    candidates.push_back(IndexHit{"r" + std::to_string(i), (i % 7) / 5.0 - 0.2});
  }
  const RankedSignal first{"bm25", 1.0, candidates};
  AlignedScores cosine{0.3, {}};
  AlignedScores third{0.7, {}};
  RankedSignal cosine_signal{"cosine", cosine.weight, {}};
  RankedSignal third_signal{"third", third.weight, {}};
  for (int i = 0; i < 40; ++i) {
    const double c = i % 4 == 0 ? std::nan("") : ((i * 13) % 11) / 8.0 - 0.1;
    const double t = i % 3 == 0 ? std::nan("") : ((i * 7) % 5) / 4.0;
    cosine.scores.push_back(c);
    third.scores.push_back(t);
    if (!std::isnan(c)) cosine_signal.hits.push_back(IndexHit{candidates[i].id, c});
    if (!std::isnan(t)) third_signal.hits.push_back(IndexHit{candidates[i].id, t});
  }
  // The other signals list their hits best first, as signals do.
  auto best_first = [](std::vector<IndexHit>& hits) {
    std::stable_sort(hits.begin(), hits.end(), [](const IndexHit& a, const IndexHit& b) { return a.score > b.score; });
  };
  best_first(cosine_signal.hits);
  best_first(third_signal.hits);
  const std::vector<RankedSignal> signals{first, cosine_signal, third_signal};
  const auto want = FuseScores(signals, /*with_contributions=*/false);
  const auto got = FuseAlignedScores(first, {cosine, third});
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.size(), 40u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id) << i;
    EXPECT_EQ(got[i].score, want[i].score) << i;  // exactly: same additions in the same order
    EXPECT_TRUE(got[i].contributions.empty());
  }
  // The ids view the first signal's hits.
  bool views_first = false;
  for (const IndexHit& h : first.hits) views_first |= h.id.data() == got[0].id.data();
  EXPECT_TRUE(views_first);
  const RankedSignal none{"bm25", 1.0, {}};
  EXPECT_TRUE(FuseAlignedScores(none, {AlignedScores{0.5, {}}}).empty());
}

}  // namespace
}  // namespace msp
