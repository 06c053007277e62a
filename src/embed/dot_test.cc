// Tests for the dot-product kernels: every kernel this CPU runs gives the
// portable kernel's bits, for every length and row count; the portable one
// is close to a double-precision sum.
#include "embed/dot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "embed/embedder.h"

namespace msp {
namespace {

std::vector<float> Random(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TEST(DotKernelTest, PortableIsLastAndActiveIsFirst) {
  const auto kernels = SupportedDotKernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.back().name, "portable");
  EXPECT_EQ(ActiveDotKernel().name, kernels.front().name);
}

TEST(DotKernelTest, EveryKernelGivesThePortableBits) {
  const auto kernels = SupportedDotKernels();
  const DotKernel& portable = kernels.back();
  std::mt19937 rng(42);
  for (size_t n : {0, 1, 5, 15, 16, 17, 31, 32, 33, 47, 64, 100, 383, 384, 385, 1000}) {
    const std::vector<float> q = Random(rng, n);
    for (size_t count = 1; count <= 9; ++count) {
      std::vector<std::vector<float>> rows;
      std::vector<const float*> ptrs;
      for (size_t r = 0; r < count; ++r) rows.push_back(Random(rng, n));
      for (const auto& r : rows) ptrs.push_back(r.data());
      std::vector<float> want(count), got(count);
      portable.rows(q.data(), ptrs.data(), count, n, want.data());
      for (const DotKernel& k : kernels) {
        std::fill(got.begin(), got.end(), -7.0f);
        k.rows(q.data(), ptrs.data(), count, n, got.data());
        for (size_t r = 0; r < count; ++r) {
          EXPECT_EQ(Bits(got[r]), Bits(want[r])) << k.name << " n=" << n << " count=" << count << " row=" << r;
        }
      }
      // Dot and DotRows are the active kernel.
      std::vector<float> rows_out(count);
      DotRows(q.data(), ptrs.data(), count, n, rows_out.data());
      for (size_t r = 0; r < count; ++r) {
        EXPECT_EQ(Bits(rows_out[r]), Bits(want[r])) << n;
        EXPECT_EQ(Bits(Dot(q.data(), ptrs[r], n)), Bits(want[r])) << n;
      }
    }
  }
}

TEST(DotKernelTest, PortableIsCloseToADoubleSum) {
  std::mt19937 rng(7);
  const DotKernel portable = SupportedDotKernels().back();
  for (size_t n : {3, 16, 384, 4096}) {
    const auto a = Random(rng, n), b = Random(rng, n);
    double want = 0;
    for (size_t i = 0; i < n; ++i) want += static_cast<double>(a[i]) * b[i];
    const float* row = b.data();
    float got;
    portable.rows(a.data(), &row, 1, n, &got);
    EXPECT_NEAR(got, want, 1e-4 * std::sqrt(static_cast<double>(n))) << n;
  }
}

TEST(HalfTest, EveryFiniteHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    if ((h & 0x7c00u) == 0x7c00u) continue;  // infinities and NaNs
    EXPECT_EQ(FloatToHalf(HalfToFloat(static_cast<uint16_t>(h))), h) << h;
  }
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00u);
  EXPECT_EQ(FloatToHalf(-1e6f), 0xfc00u);
  EXPECT_EQ(HalfToFloat(0x3c00u), 1.0f);
}

TEST(HalfTest, RoundsToTheNearestHalf) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(-30, 15);
  for (int i = 0; i < 100000; ++i) {
    const float f = std::ldexp(mant(rng), exp(rng)) * (i % 2 ? -1.0f : 1.0f);
    const uint16_t h = FloatToHalf(f);
    const float err = std::fabs(HalfToFloat(h) - f);
    // Neither neighbour is closer.
    for (int d : {-1, 1}) {
      const uint16_t other = static_cast<uint16_t>(h + d);
      if ((other & 0x7c00u) == 0x7c00u || (other & 0x8000u) != (h & 0x8000u)) continue;
      EXPECT_LE(err, std::fabs(HalfToFloat(other) - f)) << f;
    }
  }
}

// The float16 score stays within HalfDotErrorBound of Dot, for vectors of
// many norms, near-subnormal elements, and the tail lengths.
TEST(HalfTest, HalfDotStaysWithinItsBound) {
  std::mt19937 rng(11);
  const HalfDotRowsFn kernel = ActiveHalfDotKernel();
  for (size_t n : {16, 17, 40, 384, 1000}) {
    for (float scale : {1e-6f, 1e-3f, 1.0f, 100.0f}) {
      for (int trial = 0; trial < 50; ++trial) {
        std::vector<float> q = Random(rng, n), x = Random(rng, n);
        for (float& v : x) v *= scale;
        std::vector<uint16_t> h(n);
        double qn = 0, xn = 0;
        for (size_t i = 0; i < n; ++i) {
          h[i] = FloatToHalf(x[i]);
          qn += static_cast<double>(q[i]) * q[i];
          xn += static_cast<double>(x[i]) * x[i];
        }
        float approx = 0.0f;
        if (kernel) {
          const uint16_t* row = h.data();
          kernel(q.data(), &row, 1, n, &approx);
        } else {
          for (size_t i = 0; i < n; ++i) approx += q[i] * HalfToFloat(h[i]);
        }
        const float exact = Dot(q.data(), x.data(), n);
        EXPECT_LE(std::fabs(static_cast<double>(approx) - exact),
                  HalfDotErrorBound(std::sqrt(qn), std::sqrt(xn), n))
            << n << " " << scale;
      }
    }
  }
}

}  // namespace
}  // namespace msp
