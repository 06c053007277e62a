// int8 quantisation and the u8 x s8 -> int32 product (quant.h).
#include "embed/native/quant.h"

#include <algorithm>
#include <cmath>
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

int8_t QuantizeValue(float v, float inv) {
  const float r = std::nearbyint(v * inv);
  return static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
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

PackedInt8 QuantizeWeights(const float* w, size_t n, size_t k) {
  PackedInt8 p;
  p.n = n;
  p.k = k;
  p.n_pad = RoundUp(n, kBlock);
  p.k_pad = RoundUp(k, 4);
  p.data.assign(p.n_pad * p.k_pad, 0);
  p.scale.resize(n);
  p.offset.resize(n);
  for (size_t j = 0; j < n; ++j) {
    const float* row = w + j * k;
    float max = 0;
    for (size_t q = 0; q < k; ++q) max = std::max(max, std::fabs(row[q]));
    const float inv = max > 0 ? 127.0f / max : 0.0f;
    p.scale[j] = max / 127.0f;
    int32_t sum = 0;
    int8_t* panel = p.data.data() + (j / kPanel) * p.k_pad * kPanel + (j % kPanel) * 4;
    for (size_t q = 0; q < k; ++q) {
      const int8_t v = QuantizeValue(row[q], inv);
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
  for (size_t i = 0; i < m; ++i) {
    const float* row = a + i * k;
    float max = 0;
    for (size_t q = 0; q < k; ++q) max = std::max(max, std::fabs(row[q]));
    const float inv = max > 0 ? 127.0f / max : 0.0f;
    out->scale[i] = max / 127.0f;
    uint8_t* dst = out->data.data() + i * out->k_pad;
    for (size_t q = 0; q < k; ++q) dst[q] = static_cast<uint8_t>(QuantizeValue(row[q], inv) + 128);
  }
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
