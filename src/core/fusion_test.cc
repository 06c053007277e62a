// Tests for reciprocal-rank fusion.
#include "core/fusion.h"

#include <gtest/gtest.h>

namespace msp {
namespace {

TEST(FusionTest, FirstEverywhereScoresOneAndAgreementWins) {
  RankedSignal a{"bm25", 1.0, {{"x", 9.0}, {"y", 5.0}, {"z", 1.0}}};
  RankedSignal b{"cosine", 1.0, {{"x", 0.9}, {"z", 0.8}}};
  auto fused = FuseReciprocalRank({a, b}, 60);
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
  auto fused = FuseReciprocalRank({a, b}, 60);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_DOUBLE_EQ(fused[0].score, 0.5);
  RankedSignal heavy{"cosine", 3.0, {{"y", 0.5}}};
  fused = FuseReciprocalRank({a, heavy}, 60);
  EXPECT_EQ(fused[0].id, "y");
  EXPECT_DOUBLE_EQ(fused[0].score, 0.75);
}

}  // namespace
}  // namespace msp
