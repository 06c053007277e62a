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

constexpr size_t kMr = 6;    // rows of A a tile
constexpr size_t kNr = 32;   // columns of C a tile (a packed panel of W)
constexpr size_t kMc = 48;   // rows of A a block (stays in L2 across panels)
using V16 = float __attribute__((vector_size(64)));

// c[0..rows)[0..cols) (row stride ldc) = a[rows x k] (row stride lda) times
// the packed panel b[k][kNr] plus bias_panel[kNr].
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void Tile(const float* a, size_t lda, size_t rows, size_t k, const float* b, const float* bias_panel, float* c,
          size_t ldc, size_t cols) {
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
        const float s = a0[i * lda + p];
        acc[i][0] += s * b0;
        acc[i][1] += s * b1;
      }
    }
  } else {
    for (size_t p = 0; p < k; ++p) {
      std::memcpy(&b0, b + p * kNr, sizeof(V16));
      std::memcpy(&b1, b + p * kNr + 16, sizeof(V16));
      for (size_t i = 0; i < rows; ++i) {
        const float s = a[i * lda + p];
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

}  // namespace

const char* LinearBackend() {
#ifdef MSP_NATIVE_OPENBLAS
  return "openblas";
#else
  return "blocked";
#endif
}

void ProductBlocked(const float* a, size_t lda, const float* b, size_t ldb, bool b_transposed, const float* bias,
                    float* c, size_t ldc, size_t m, size_t n, size_t k, std::vector<float>* scratch) {
  if (m == 0 || n == 0) return;
  // Pack b into panels of kNr output columns: panel j holds column
  // j*kNr + col of the product's right side at [p][col] (zero past n), then
  // the bias per panel.
  const size_t panels = (n + kNr - 1) / kNr;
  scratch->resize(panels * kNr * (k + 1));
  float* packed = scratch->data();
  for (size_t j = 0; j < panels; ++j) {
    float* panel = packed + j * kNr * (k + 1);
    const size_t cols = std::min(kNr, n - j * kNr);
    if (b_transposed) {
      for (size_t col = 0; col < kNr; ++col) {
        if (col >= cols) {
          for (size_t p = 0; p < k; ++p) panel[p * kNr + col] = 0.0f;
          continue;
        }
        const float* row = b + (j * kNr + col) * ldb;
        for (size_t p = 0; p < k; ++p) panel[p * kNr + col] = row[p];
      }
    } else {
      for (size_t p = 0; p < k; ++p) {
        const float* row = b + p * ldb + j * kNr;
        std::memcpy(panel + p * kNr, row, cols * sizeof(float));
        std::fill(panel + p * kNr + cols, panel + (p + 1) * kNr, 0.0f);
      }
    }
    for (size_t col = 0; col < kNr; ++col) {
      panel[k * kNr + col] = bias != nullptr && col < cols ? bias[j * kNr + col] : 0.0f;
    }
  }
  for (size_t ic = 0; ic < m; ic += kMc) {
    const size_t mc = std::min(kMc, m - ic);
    for (size_t j = 0; j < panels; ++j) {
      const float* panel = packed + j * kNr * (k + 1);
      const size_t cols = std::min(kNr, n - j * kNr);
      for (size_t i = 0; i < mc; i += kMr) {
        Tile(a + (ic + i) * lda, lda, std::min(kMr, mc - i), k, panel, panel + k * kNr, c + (ic + i) * ldc + j * kNr,
             ldc, cols);
      }
    }
  }
}

namespace {

// The product behind Linear and MatMul; bias may be null.
void Product(const float* a, size_t lda, const float* b, size_t ldb, bool b_transposed, const float* bias, float* c,
             size_t ldc, size_t m, size_t n, size_t k, std::vector<float>* scratch) {
#ifdef MSP_NATIVE_OPENBLAS
  if (m == 0 || n == 0) return;
  (void)scratch;
  // The embedder runs one pass a thread itself (embedder.threads): OpenBLAS
  // must not start its own threads as well.
  static const bool single_threaded = (openblas_set_num_threads(1), true);
  (void)single_threaded;
  float beta = 0.0f;
  if (bias != nullptr) {
    for (size_t i = 0; i < m; ++i) std::memcpy(c + i * ldc, bias, n * sizeof(float));
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb),
              beta, c, static_cast<int>(ldc));
#else
  ProductBlocked(a, lda, b, ldb, b_transposed, bias, c, ldc, m, n, k, scratch);
#endif
}

}  // namespace

void Linear(const float* a, size_t m, size_t k, const float* w, size_t n, const float* bias, float* c,
            std::vector<float>* scratch) {
  Product(a, k, w, k, true, bias, c, n, m, n, k, scratch);
}

void MatMul(const float* a, size_t lda, const float* b, size_t ldb, bool b_transposed, float* c, size_t ldc,
            size_t m, size_t n, size_t k, std::vector<float>* scratch) {
  Product(a, lda, b, ldb, b_transposed, nullptr, c, ldc, m, n, k, scratch);
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
