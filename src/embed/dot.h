// The dot-product kernels behind Dot() and DotRows() (embedder.h), chosen
// once at run time for the CPU (AVX-512, AVX, or portable code that g++
// vectorises with the x86-64 baseline, SSE2).
//
// Every kernel computes the same float operations in the same order, so
// all give bit-identical results on every CPU: sixteen lanes, lane j sums
// a[i]*b[i] for i = j mod 16 over the full blocks of sixteen (a multiply
// rounded to float, then an add: never a fused multiply-add; dot.cc is
// compiled with -ffp-contract=off), the lanes are folded as
//   sum += (l[j] + l[4+j]) + (l[8+j] + l[12+j])   for j = 0..3,
// and the tail (n mod 16 elements) is added one by one.
#ifndef MSP_EMBED_DOT_H_
#define MSP_EMBED_DOT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace msp {

using DotRowsFn = void (*)(const float* q, const float* const* rows, size_t count, size_t n,
                           float* out);

struct DotKernel {
  std::string name;  // "avx512f", "avx", "portable"
  DotRowsFn rows;
};

// The kernels this CPU can run, fastest first; the last is "portable".
std::vector<DotKernel> SupportedDotKernels();

// The kernel Dot() and DotRows() use (the first of SupportedDotKernels()).
const DotKernel& ActiveDotKernel();

// ---- float16 rows, for a fast first pass --------------------------------
//
// HalfDotRows scores float16 copies of rows (IEEE binary16 bits), an
// approximation of DotRows on the float rows with a known worst case:
//   |HalfDot(q, half(x)) - Dot(q, x)| <= HalfDotErrorBound(|q|, |x|, n)
// for any x whose elements are at most kHalfMax in magnitude (|.| = L2 norm).
// (half(x) rounds each element to nearest: error <= 2^-11 |x_i| + 2^-25; the
// float sums of both kernels add at most (n/16 + 32) * 2^-23 relative to
// sum |q_i x_i| <= |q||x|; the bound adds a margin on top.)
using HalfDotRowsFn = void (*)(const float* q, const uint16_t* const* rows, size_t count, size_t n,
                               float* out);

constexpr float kHalfMax = 65000.0f;

// The float16 kernel for this CPU (AVX-512 or AVX with F16C), or nullptr.
HalfDotRowsFn ActiveHalfDotKernel();

// Round to nearest even; values beyond the float16 range become infinity.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);

double HalfDotErrorBound(double q_norm, double x_norm, size_t n);

}  // namespace msp

#endif  // MSP_EMBED_DOT_H_
