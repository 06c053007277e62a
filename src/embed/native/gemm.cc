// Linear, GeluInPlace, ExpShiftSum (gemm.h).
#include "embed/native/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef MSP_NATIVE_OPENBLAS
#include <cblas.h>
#endif

namespace msp::native {
namespace {

// exp(x) for x <= ~88, relative error ~1e-7: x = n ln2 + r, |r| <= ln2/2,
// exp(r) by its degree-6 Taylor polynomial, 2^n by the exponent bits.
// Plain arithmetic, so loops of it vectorise.
inline float FastExp(float x) {
  x = std::max(x, -87.0f);
  const float n = std::nearbyint(x * 1.44269504088896341f);
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return p * scale;
}

// erf(x), Abramowitz and Stegun 7.1.26 (absolute error <= 1.5e-7).
inline float FastErf(float x) {
  const float ax = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * ax);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float y = 1.0f - p * t * FastExp(-ax * ax);
  return std::copysign(y, x);
}

#ifndef MSP_NATIVE_OPENBLAS
constexpr size_t kMr = 6;    // rows of A a tile
constexpr size_t kNr = 32;   // columns of C a tile (a packed panel of W)
constexpr size_t kMc = 48;   // rows of A a block (stays in L2 across panels)
using V16 = float __attribute__((vector_size(64)));

// c[0..rows)[0..kNr) (row stride ldc) = a[rows x k] (row stride k) times
// the packed panel b[k][kNr] plus bias_panel[kNr].
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void Tile(const float* a, size_t rows, size_t k, const float* b, const float* bias_panel, float* c, size_t ldc,
          size_t cols) {
  V16 acc[kMr][2];
  V16 b0, b1;
  std::memcpy(&b0, bias_panel, sizeof(V16));
  std::memcpy(&b1, bias_panel + 16, sizeof(V16));
  for (size_t i = 0; i < kMr; ++i) {
    acc[i][0] = b0;
    acc[i][1] = b1;
  }
  if (rows == kMr) {
    const float* a0 = a;
    for (size_t p = 0; p < k; ++p) {
      std::memcpy(&b0, b + p * kNr, sizeof(V16));
      std::memcpy(&b1, b + p * kNr + 16, sizeof(V16));
      for (size_t i = 0; i < kMr; ++i) {
        const float s = a0[i * k + p];
        acc[i][0] += s * b0;
        acc[i][1] += s * b1;
      }
    }
  } else {
    for (size_t p = 0; p < k; ++p) {
      std::memcpy(&b0, b + p * kNr, sizeof(V16));
      std::memcpy(&b1, b + p * kNr + 16, sizeof(V16));
      for (size_t i = 0; i < rows; ++i) {
        const float s = a[i * k + p];
        acc[i][0] += s * b0;
        acc[i][1] += s * b1;
      }
    }
  }
  for (size_t i = 0; i < rows; ++i) {
    float out[kNr];
    std::memcpy(out, &acc[i][0], sizeof(V16));
    std::memcpy(out + 16, &acc[i][1], sizeof(V16));
    std::memcpy(c + i * ldc, out, cols * sizeof(float));
  }
}
#endif

}  // namespace

const char* LinearBackend() {
#ifdef MSP_NATIVE_OPENBLAS
  return "openblas";
#else
  return "blocked";
#endif
}

void Linear(const float* a, size_t m, size_t k, const float* w, size_t n, const float* bias, float* c,
            std::vector<float>* scratch) {
  if (m == 0 || n == 0) return;
#ifdef MSP_NATIVE_OPENBLAS
  (void)scratch;
  float beta = 0.0f;
  if (bias != nullptr) {
    for (size_t i = 0; i < m; ++i) std::memcpy(c + i * n, bias, n * sizeof(float));
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
              1.0f, a, static_cast<int>(k), w, static_cast<int>(k), beta, c, static_cast<int>(n));
#else
  // Pack W into panels of kNr output columns: panel j holds w[j*kNr + c][p]
  // at [p][c] (zero past n), then the bias per panel.
  const size_t panels = (n + kNr - 1) / kNr;
  scratch->resize(panels * kNr * (k + 1));
  float* packed = scratch->data();
  for (size_t j = 0; j < panels; ++j) {
    float* panel = packed + j * kNr * (k + 1);
    const size_t cols = std::min(kNr, n - j * kNr);
    for (size_t col = 0; col < kNr; ++col) {
      float* bias_slot = panel + k * kNr + col;
      if (col >= cols) {
        for (size_t p = 0; p < k; ++p) panel[p * kNr + col] = 0.0f;
        *bias_slot = 0.0f;
        continue;
      }
      const float* row = w + (j * kNr + col) * k;
      for (size_t p = 0; p < k; ++p) panel[p * kNr + col] = row[p];
      *bias_slot = bias != nullptr ? bias[j * kNr + col] : 0.0f;
    }
  }
  for (size_t ic = 0; ic < m; ic += kMc) {
    const size_t mc = std::min(kMc, m - ic);
    for (size_t j = 0; j < panels; ++j) {
      const float* panel = packed + j * kNr * (k + 1);
      const size_t cols = std::min(kNr, n - j * kNr);
      for (size_t i = 0; i < mc; i += kMr) {
        Tile(a + (ic + i) * k, std::min(kMr, mc - i), k, panel, panel + k * kNr, c + (ic + i) * n + j * kNr, n, cols);
      }
    }
  }
#endif
}

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void GeluInPlace(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + FastErf(x[i] * 0.70710678118654752f));
}

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
float ExpShiftSum(float* x, size_t n, float max) {
  float sum = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    x[i] = FastExp(x[i] - max);
    sum += x[i];
  }
  return sum;
}

}  // namespace msp::native
