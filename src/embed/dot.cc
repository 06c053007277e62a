// The dot-product kernels (dot.h) and Dot()/DotRows() (embedder.h).
//
// Compiled with -ffp-contract=off (src/embed/CMakeLists.txt): the vector
// kernels must not fuse a multiply and an add, or their results would differ
// from the portable kernel's in the last bits.
//
// Each vector kernel scores four rows at once: one 16-lane sum per row is a
// single chain of dependent adds, so interleaving four rows keeps the adder
// busy while each chain waits on the previous add.
#include "embed/dot.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "embed/embedder.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MSP_DOT_X86 1
// g++ 12 warns inside its own avx512fintrin.h (the deliberately undefined
// source operand of _mm512_cvtph_ps and the reductions): a false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace msp {
namespace {

constexpr size_t kLanes = 16;

// Folds the sixteen lane sums `l` and adds the tail a[from..n) * b[from..n).
inline float Fold(const float* l, const float* a, const float* b, size_t from, size_t n) {
  float sum = 0.0f;
  for (size_t j = 0; j < 4; ++j) sum += (l[j] + l[4 + j]) + (l[8 + j] + l[12 + j]);
  for (size_t i = from; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Four groups of four independent lanes: g++ -O2 turns each group into one
// SSE register (SLP vectorisation) without reassociating float additions.
float DotPortable(const float* a, const float* b, size_t n) {
  float s0[4] = {}, s1[4] = {}, s2[4] = {}, s3[4] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t j = 0; j < 4; ++j) s0[j] += a[i + j] * b[i + j];
    for (size_t j = 0; j < 4; ++j) s1[j] += a[i + 4 + j] * b[i + 4 + j];
    for (size_t j = 0; j < 4; ++j) s2[j] += a[i + 8 + j] * b[i + 8 + j];
    for (size_t j = 0; j < 4; ++j) s3[j] += a[i + 12 + j] * b[i + 12 + j];
  }
  const float l[kLanes] = {s0[0], s0[1], s0[2], s0[3], s1[0], s1[1], s1[2], s1[3],
                           s2[0], s2[1], s2[2], s2[3], s3[0], s3[1], s3[2], s3[3]};
  return Fold(l, a, b, i, n);
}

void RowsPortable(const float* q, const float* const* rows, size_t count, size_t n, float* out) {
  for (size_t r = 0; r < count; ++r) out[r] = DotPortable(q, rows[r], n);
}

#ifdef MSP_DOT_X86

__attribute__((target("avx512f"))) void RowsAvx512(const float* q, const float* const* rows,
                                                   size_t count, size_t n, float* out) {
  const size_t full = n - n % kLanes;
  alignas(64) float l[kLanes];
  size_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const float *r0 = rows[r], *r1 = rows[r + 1], *r2 = rows[r + 2], *r3 = rows[r + 3];
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(),
           s3 = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += kLanes) {
      const __m512 vq = _mm512_loadu_ps(q + i);
      s0 = _mm512_add_ps(s0, _mm512_mul_ps(vq, _mm512_loadu_ps(r0 + i)));
      s1 = _mm512_add_ps(s1, _mm512_mul_ps(vq, _mm512_loadu_ps(r1 + i)));
      s2 = _mm512_add_ps(s2, _mm512_mul_ps(vq, _mm512_loadu_ps(r2 + i)));
      s3 = _mm512_add_ps(s3, _mm512_mul_ps(vq, _mm512_loadu_ps(r3 + i)));
    }
    _mm512_store_ps(l, s0);
    out[r] = Fold(l, q, r0, full, n);
    _mm512_store_ps(l, s1);
    out[r + 1] = Fold(l, q, r1, full, n);
    _mm512_store_ps(l, s2);
    out[r + 2] = Fold(l, q, r2, full, n);
    _mm512_store_ps(l, s3);
    out[r + 3] = Fold(l, q, r3, full, n);
  }
  for (; r < count; ++r) {
    __m512 s = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += kLanes) {
      s = _mm512_add_ps(s, _mm512_mul_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(rows[r] + i)));
    }
    _mm512_store_ps(l, s);
    out[r] = Fold(l, q, rows[r], full, n);
  }
}

// Lanes 0..7 in one 256-bit register, 8..15 in another.
__attribute__((target("avx"))) void RowsAvx(const float* q, const float* const* rows, size_t count,
                                            size_t n, float* out) {
  const size_t full = n - n % kLanes;
  alignas(32) float l[kLanes];
  size_t r = 0;
  for (; r + 2 <= count; r += 2) {
    const float *r0 = rows[r], *r1 = rows[r + 1];
    __m256 lo0 = _mm256_setzero_ps(), hi0 = _mm256_setzero_ps();
    __m256 lo1 = _mm256_setzero_ps(), hi1 = _mm256_setzero_ps();
    for (size_t i = 0; i < full; i += kLanes) {
      const __m256 ql = _mm256_loadu_ps(q + i), qh = _mm256_loadu_ps(q + i + 8);
      lo0 = _mm256_add_ps(lo0, _mm256_mul_ps(ql, _mm256_loadu_ps(r0 + i)));
      hi0 = _mm256_add_ps(hi0, _mm256_mul_ps(qh, _mm256_loadu_ps(r0 + i + 8)));
      lo1 = _mm256_add_ps(lo1, _mm256_mul_ps(ql, _mm256_loadu_ps(r1 + i)));
      hi1 = _mm256_add_ps(hi1, _mm256_mul_ps(qh, _mm256_loadu_ps(r1 + i + 8)));
    }
    _mm256_store_ps(l, lo0);
    _mm256_store_ps(l + 8, hi0);
    out[r] = Fold(l, q, r0, full, n);
    _mm256_store_ps(l, lo1);
    _mm256_store_ps(l + 8, hi1);
    out[r + 1] = Fold(l, q, r1, full, n);
  }
  for (; r < count; ++r) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    for (size_t i = 0; i < full; i += kLanes) {
      lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(rows[r] + i)));
      hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_loadu_ps(q + i + 8), _mm256_loadu_ps(rows[r] + i + 8)));
    }
    _mm256_store_ps(l, lo);
    _mm256_store_ps(l + 8, hi);
    out[r] = Fold(l, q, rows[r], full, n);
  }
}

__attribute__((target("avx512f"))) inline __m512 LoadHalves(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Float16 rows: converted to float in registers, fused multiply-add (an
// approximation anyway; HalfDotErrorBound covers it).
__attribute__((target("avx512f,fma"))) void HalfRowsAvx512(const float* q, const uint16_t* const* rows,
                                                           size_t count, size_t n, float* out) {
  const size_t full = n - n % kLanes;
  auto tail = [&](const uint16_t* row, float sum) {
    for (size_t i = full; i < n; ++i) sum += q[i] * HalfToFloat(row[i]);
    return sum;
  };
  size_t r = 0;
  for (; r + 4 <= count; r += 4) {
    const uint16_t *r0 = rows[r], *r1 = rows[r + 1], *r2 = rows[r + 2], *r3 = rows[r + 3];
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(),
           s3 = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += kLanes) {
      const __m512 vq = _mm512_loadu_ps(q + i);
      s0 = _mm512_fmadd_ps(vq, LoadHalves(r0 + i), s0);
      s1 = _mm512_fmadd_ps(vq, LoadHalves(r1 + i), s1);
      s2 = _mm512_fmadd_ps(vq, LoadHalves(r2 + i), s2);
      s3 = _mm512_fmadd_ps(vq, LoadHalves(r3 + i), s3);
    }
    out[r] = tail(r0, _mm512_reduce_add_ps(s0));
    out[r + 1] = tail(r1, _mm512_reduce_add_ps(s1));
    out[r + 2] = tail(r2, _mm512_reduce_add_ps(s2));
    out[r + 3] = tail(r3, _mm512_reduce_add_ps(s3));
  }
  for (; r < count; ++r) {
    __m512 s = _mm512_setzero_ps();
    for (size_t i = 0; i < full; i += kLanes) s = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), LoadHalves(rows[r] + i), s);
    out[r] = tail(rows[r], _mm512_reduce_add_ps(s));
  }
}

__attribute__((target("avx,f16c"))) void HalfRowsAvx(const float* q, const uint16_t* const* rows,
                                                     size_t count, size_t n, float* out) {
  const size_t full = n - n % 8;
  alignas(32) float l[8];
  for (size_t r = 0; r < count; ++r) {
    const uint16_t* row = rows[r];
    __m256 s = _mm256_setzero_ps();
    for (size_t i = 0; i < full; i += 8) {
      const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i)));
      s = _mm256_add_ps(s, _mm256_mul_ps(_mm256_loadu_ps(q + i), x));
    }
    _mm256_store_ps(l, s);
    float sum = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    for (size_t i = full; i < n; ++i) sum += q[i] * HalfToFloat(row[i]);
    out[r] = sum;
  }
}

#endif  // MSP_DOT_X86

}  // namespace

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: infinity
  if (ax < 0x38800000u) {  // below 2^-14: a subnormal float16, in units of 2^-24
    float a;
    std::memcpy(&a, &ax, sizeof a);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f)));
  }
  // Normal: drop 13 mantissa bits rounding to nearest even, rebias 127 -> 15.
  const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u) - (112u << 23);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  float out;
  if (exp == 0) {
    out = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -out : out;
  }
  const uint32_t bits = sign | (exp == 31 ? (0xffu << 23) | (mant << 13) : ((exp + 112u) << 23) | (mant << 13));
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

double HalfDotErrorBound(double q_norm, double x_norm, size_t n) {
  const double rel = std::ldexp(1.0, -11) + (static_cast<double>(n) / 16.0 + 32.0) * std::ldexp(1.0, -23);
  const double abs = std::ldexp(1.0, -25) * std::sqrt(static_cast<double>(n));
  return 1.0625 * q_norm * (x_norm * rel + abs);
}

HalfDotRowsFn ActiveHalfDotKernel() {
#ifdef MSP_DOT_X86
  static const HalfDotRowsFn kernel = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &HalfRowsAvx512;
    if (__builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c")) return &HalfRowsAvx;
    return static_cast<HalfDotRowsFn>(nullptr);
  }();
  return kernel;
#else
  return nullptr;
#endif
}

std::vector<DotKernel> SupportedDotKernels() {
  std::vector<DotKernel> out;
#ifdef MSP_DOT_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) out.push_back({"avx512f", &RowsAvx512});
  if (__builtin_cpu_supports("avx")) out.push_back({"avx", &RowsAvx});
#endif
  out.push_back({"portable", &RowsPortable});
  return out;
}

const DotKernel& ActiveDotKernel() {
  static const DotKernel kernel = SupportedDotKernels().front();
  return kernel;
}

float Dot(const float* a, const float* b, size_t n) {
  float out;
  ActiveDotKernel().rows(a, &b, 1, n, &out);
  return out;
}

void DotRows(const float* q, const float* const* rows, size_t count, size_t n, float* out) {
  ActiveDotKernel().rows(q, rows, count, n, out);
}

}  // namespace msp
