// int8 quantisation and the u8 x s8 -> int32 product (quant.h).
#include "embed/native/quant.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define MSP_QUANT_X86 1
#endif

namespace msp::native {
namespace {

constexpr size_t kPanel = 16;  // columns a panel (one zmm of int32)
constexpr size_t kBlock = 64;  // columns a block (4 panels; n is padded to it)

size_t RoundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }

// round(v * inv) to nearest (ties to even), clamped to -127..127. Adding
// and taking away 1.5 * 2^23 rounds |x| < 2^22 in plain arithmetic, which
// vectorises (std::nearbyint is a libm call on baseline x86-64, and took as
// long as the int8 product itself).
inline int8_t QuantizeValue(float v, float inv) {
  constexpr float kMagic = 12582912.0f;
  const float x = std::clamp(v * inv, -127.0f, 127.0f);
  return static_cast<int8_t>(static_cast<int32_t>((x + kMagic) - kMagic));
}

#ifdef MSP_QUANT_X86
// The same, 16 values at a time (max and the conversion's round to nearest
// even are exact, so the bytes are the portable loop's, which does not
// vectorise (std::max's ordering) and took as long as the product). The
// zero-masked forms: GCC 12's plain ones read an uninitialised register
// (-Werror=uninitialized in Release).
__attribute__((target("avx512f,avx512bw"))) void QuantizeRowAvx512(const float* row, size_t k, uint8_t* dst,
                                                                     float* scale) {
  constexpr __mmask16 kAll = 0xFFFF;
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  size_t q = 0;
  __m512 m = _mm512_setzero_ps();
  for (; q + 16 <= k; q += 16) {
    const __m512 a = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(_mm512_loadu_ps(row + q)), abs_mask));
    m = _mm512_maskz_max_ps(kAll, m, a);
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, m);
  float max = 0;
  for (float v : lanes) max = std::max(max, v);
  for (; q < k; ++q) max = std::max(max, std::fabs(row[q]));
  const float inv = max > 0 ? 127.0f / max : 0.0f;
  *scale = max / 127.0f;
  const __m512 vinv = _mm512_set1_ps(inv), lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const __m512i offset = _mm512_set1_epi32(128);
  for (q = 0; q + 16 <= k; q += 16) {
    const __m512 x = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, _mm512_mul_ps(_mm512_loadu_ps(row + q), vinv), lo), hi);
    const __m512i i = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAll, x), offset);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + q), _mm512_maskz_cvtepi32_epi8(kAll, i));
  }
  for (; q < k; ++q) dst[q] = static_cast<uint8_t>(QuantizeValue(row[q], inv) + 128);
}
#endif

void QuantizeRow(const float* row, size_t k, uint8_t* dst, float* scale) {
#ifdef MSP_QUANT_X86
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  if (avx512) return QuantizeRowAvx512(row, k, dst, scale);
#endif
  QuantizeRowPortable(row, k, dst, scale);
}

// Writes c[i][col0 ..) of one panel's 16 sums less the offsets; the
// columns at and past n are not written.
inline void StorePanel(const int32_t* sums, const PackedInt8& w, size_t col0, int32_t* c_row) {
  const size_t cols = std::min(kPanel, w.n - col0);
  for (size_t j = 0; j < cols; ++j) c_row[col0 + j] = sums[j] - w.offset[col0 + j];
}

void ProductScalar(const QuantRows& a, const PackedInt8& w, int32_t* c, size_t ldc) {
  const size_t groups = w.k_pad / 4;
  for (size_t i = 0; i < a.m; ++i) {
    const uint8_t* row = a.data.data() + i * a.k_pad;
    for (size_t col0 = 0; col0 < w.n; col0 += kPanel) {
      const int8_t* panel = w.data.data() + (col0 / kPanel) * w.k_pad * kPanel;
      int32_t sums[kPanel] = {};
      for (size_t g = 0; g < groups; ++g) {
        const int8_t* b = panel + g * 64;
        const uint8_t* av = row + g * 4;
        for (size_t j = 0; j < kPanel; ++j) {
          sums[j] += av[0] * b[j * 4] + av[1] * b[j * 4 + 1] + av[2] * b[j * 4 + 2] + av[3] * b[j * 4 + 3];
        }
      }
      StorePanel(sums, w, col0, c + i * ldc);
    }
  }
}

#ifdef MSP_QUANT_X86

// R rows x one block of 64 columns with vpdpbusd: each k-group of 4 bytes
// of a row is broadcast and multiplied with the 16 x 4 bytes of a panel.
template <int R>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void VnniTile(const uint8_t* a, size_t lda,
                                                                       const int8_t* block, size_t panel_stride,
                                                                       size_t panels, size_t groups, __m512i* out) {
  __m512i acc[R][4];
  for (int r = 0; r < R; ++r) {
    for (int p = 0; p < 4; ++p) acc[r][p] = _mm512_setzero_si512();
  }
  for (size_t g = 0; g < groups; ++g) {
    __m512i b[4];
    for (size_t p = 0; p < 4; ++p) {
      b[p] = p < panels ? _mm512_loadu_si512(block + p * panel_stride + g * 64) : _mm512_setzero_si512();
    }
    for (int r = 0; r < R; ++r) {
      int32_t four;
      std::memcpy(&four, a + static_cast<size_t>(r) * lda + g * 4, 4);
      const __m512i av = _mm512_set1_epi32(four);
      for (int p = 0; p < 4; ++p) acc[r][p] = _mm512_dpbusd_epi32(acc[r][p], av, b[p]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int p = 0; p < 4; ++p) out[r * 4 + p] = acc[r][p];
  }
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void ProductVnni(const QuantRows& a, const PackedInt8& w,
                                                                         int32_t* c, size_t ldc) {
  const size_t groups = w.k_pad / 4;
  const size_t panel_stride = w.k_pad * kPanel;
  alignas(64) __m512i out[6 * 4];
  for (size_t col0 = 0; col0 < w.n; col0 += kBlock) {
    const int8_t* block = w.data.data() + (col0 / kPanel) * panel_stride;
    const size_t panels = std::min<size_t>(4, (w.n - col0 + kPanel - 1) / kPanel);
    for (size_t i = 0; i < a.m;) {
      const size_t rows = std::min<size_t>(6, a.m - i);
      const uint8_t* arow = a.data.data() + i * a.k_pad;
      switch (rows) {
        case 6: VnniTile<6>(arow, a.k_pad, block, panel_stride, panels, groups, out); break;
        case 5: VnniTile<5>(arow, a.k_pad, block, panel_stride, panels, groups, out); break;
        case 4: VnniTile<4>(arow, a.k_pad, block, panel_stride, panels, groups, out); break;
        case 3: VnniTile<3>(arow, a.k_pad, block, panel_stride, panels, groups, out); break;
        case 2: VnniTile<2>(arow, a.k_pad, block, panel_stride, panels, groups, out); break;
        default: VnniTile<1>(arow, a.k_pad, block, panel_stride, panels, groups, out); break;
      }
      for (size_t r = 0; r < rows; ++r) {
        int32_t* crow = c + (i + r) * ldc;
        for (size_t p = 0; p < panels; ++p) {
          const size_t col = col0 + p * kPanel;
          const size_t cols = std::min(kPanel, w.n - col);
          const __mmask16 mask = cols == kPanel ? 0xFFFF : static_cast<__mmask16>((1u << cols) - 1);
          const __m512i off = _mm512_maskz_loadu_epi32(mask, w.offset.data() + col);
          _mm512_mask_storeu_epi32(crow + col, mask, _mm512_sub_epi32(out[r * 4 + p], off));
        }
      }
      i += rows;
    }
  }
}

// AVX2 has no u8 x s8 sum into int32 without int16 saturation
// (vpmaddubsw), so bytes are widened to int16 and multiplied with vpmaddwd,
// exact: lanes hold (column, k pair) sums, added pairwise at the end.
__attribute__((target("avx2"))) void ProductAvx2(const QuantRows& a, const PackedInt8& w, int32_t* c, size_t ldc) {
  const size_t groups = w.k_pad / 4;
  const size_t panel_stride = w.k_pad * kPanel;
  for (size_t col0 = 0; col0 < w.n; col0 += kPanel) {
    const int8_t* panel = w.data.data() + (col0 / kPanel) * panel_stride;
    for (size_t i = 0; i < a.m; i += 3) {
      const size_t rows = std::min<size_t>(3, a.m - i);
      __m256i acc[3][4];
      for (auto& r : acc) {
        for (auto& v : r) v = _mm256_setzero_si256();
      }
      for (size_t g = 0; g < groups; ++g) {
        __m256i av[3];
        for (size_t r = 0; r < 3; ++r) {
          const size_t row = i + std::min(r, rows - 1);
          int32_t four;
          std::memcpy(&four, a.data.data() + row * a.k_pad + g * 4, 4);
          av[r] = _mm256_cvtepu8_epi16(_mm_set1_epi32(four));
        }
        for (size_t q = 0; q < 4; ++q) {  // 4 columns x 4 bytes a quarter
          const __m256i b = _mm256_cvtepi8_epi16(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(panel + g * 64 + q * 16)));
          for (size_t r = 0; r < 3; ++r) acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(av[r], b));
        }
      }
      for (size_t r = 0; r < rows; ++r) {
        alignas(32) int32_t lanes[4][8];
        for (size_t q = 0; q < 4; ++q) _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[q]), acc[r][q]);
        int32_t sums[kPanel];
        for (size_t j = 0; j < kPanel; ++j) sums[j] = lanes[j / 4][(j % 4) * 2] + lanes[j / 4][(j % 4) * 2 + 1];
        StorePanel(sums, w, col0, c + (i + r) * ldc);
      }
    }
  }
}

#endif  // MSP_QUANT_X86

}  // namespace

void QuantizeRowPortable(const float* row, size_t k, uint8_t* dst, float* scale) {
  float max = 0;
  for (size_t q = 0; q < k; ++q) max = std::max(max, std::fabs(row[q]));
  const float inv = max > 0 ? 127.0f / max : 0.0f;
  *scale = max / 127.0f;
  for (size_t q = 0; q < k; ++q) dst[q] = static_cast<uint8_t>(QuantizeValue(row[q], inv) + 128);
}

PackedInt8 QuantizeWeights(const float* w, size_t n, size_t k) {
  PackedInt8 p;
  p.n = n;
  p.k = k;
  p.n_pad = RoundUp(n, kBlock);
  p.k_pad = RoundUp(k, 4);
  p.data.assign(p.n_pad * p.k_pad, 0);
  p.scale.resize(n);
  p.offset.resize(n);
  std::vector<uint8_t> row(k);
  for (size_t j = 0; j < n; ++j) {
    QuantizeRow(w + j * k, k, row.data(), &p.scale[j]);
    int32_t sum = 0;
    int8_t* panel = p.data.data() + (j / kPanel) * p.k_pad * kPanel + (j % kPanel) * 4;
    for (size_t q = 0; q < k; ++q) {
      const int8_t v = static_cast<int8_t>(static_cast<int32_t>(row[q]) - 128);
      panel[(q / 4) * 64 + q % 4] = v;
      sum += v;
    }
    p.offset[j] = 128 * sum;
  }
  return p;
}

void QuantizeRows(const float* a, size_t m, size_t k, QuantRows* out) {
  out->m = m;
  out->k = k;
  out->k_pad = RoundUp(k, 4);
  out->data.assign(m * out->k_pad, 128);
  out->scale.resize(m);
  for (size_t i = 0; i < m; ++i) QuantizeRow(a + i * k, k, out->data.data() + i * out->k_pad, &out->scale[i]);
}

bool Int8KernelSupported(Int8Kernel kernel) {
  switch (kernel) {
    case Int8Kernel::kScalar:
      return true;
#ifdef MSP_QUANT_X86
    case Int8Kernel::kAvx2:
      return __builtin_cpu_supports("avx2");
    case Int8Kernel::kAvx512Vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
#endif
    default:
      return false;
  }
}

Int8Kernel BestInt8Kernel() {
  static const Int8Kernel best = [] {
    // For benchmarks: MSP_NATIVE_INT8_KERNEL names a slower kernel to use
    // (one this CPU runs; otherwise ignored).
    if (const char* forced = std::getenv("MSP_NATIVE_INT8_KERNEL")) {
      for (Int8Kernel k : {Int8Kernel::kScalar, Int8Kernel::kAvx2, Int8Kernel::kAvx512Vnni}) {
        if (std::strcmp(forced, Int8KernelName(k)) == 0 && Int8KernelSupported(k)) return k;
      }
    }
    if (Int8KernelSupported(Int8Kernel::kAvx512Vnni)) return Int8Kernel::kAvx512Vnni;
    if (Int8KernelSupported(Int8Kernel::kAvx2)) return Int8Kernel::kAvx2;
    return Int8Kernel::kScalar;
  }();
  return best;
}

const char* Int8KernelName(Int8Kernel kernel) {
  switch (kernel) {
    case Int8Kernel::kAvx512Vnni:
      return "avx512-vnni";
    case Int8Kernel::kAvx2:
      return "avx2";
    default:
      return "scalar";
  }
}

void Int8Product(const QuantRows& a, const PackedInt8& w, int32_t* c, size_t ldc, Int8Kernel kernel) {
  switch (kernel) {
#ifdef MSP_QUANT_X86
    case Int8Kernel::kAvx512Vnni:
      ProductVnni(a, w, c, ldc);
      return;
    case Int8Kernel::kAvx2:
      ProductAvx2(a, w, c, ldc);
      return;
#endif
    default:
      ProductScalar(a, w, c, ldc);
  }
}

void Int8LinearQuantized(const QuantRows& rows, const PackedInt8& w, const float* bias, float* c,
                         std::vector<int32_t>* acc) {
  const size_t m = rows.m, n = w.n;
  acc->resize(m * n);
  Int8Product(rows, w, acc->data(), n, BestInt8Kernel());
  const int32_t* s = acc->data();
  for (size_t i = 0; i < m; ++i) {
    const float sa = rows.scale[i];
    float* out = c + i * n;
    const int32_t* si = s + i * n;
    if (bias != nullptr) {
      for (size_t j = 0; j < n; ++j) out[j] = static_cast<float>(si[j]) * (sa * w.scale[j]) + bias[j];
    } else {
      for (size_t j = 0; j < n; ++j) out[j] = static_cast<float>(si[j]) * (sa * w.scale[j]);
    }
  }
}

void Int8Linear(const float* a, size_t m, const PackedInt8& w, const float* bias, float* c, QuantRows* rows,
                std::vector<int32_t>* acc) {
  QuantizeRows(a, m, w.k, rows);
  Int8LinearQuantized(*rows, w, bias, c, acc);
}

}  // namespace msp::native
