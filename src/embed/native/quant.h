// int8 linear layers of the native embedder (embedder.quantize = "int8").
//
// A weight matrix W [n, k] (nn.Linear's layout) is quantised once, at model
// load, per output channel: scale[j] = max|W[j]| / 127, q = round(W / scale)
// in -127..127, packed for the kernel. An activation matrix is quantised per
// row at each use: scale = max|row| / 127, q in -127..127, stored as the
// unsigned byte q + 128 (the VNNI instruction multiplies unsigned by signed
// bytes). The product sums u8 x s8 into int32 and subtracts 128 * sum_k W_q
// (precomputed per column), which leaves the exact sum of q_a * q_w; then
// c = sum * scale_row * scale_col + bias, in fp32.
//
// Integer sums are exact, so every kernel (AVX-512 VNNI, AVX2, portable)
// gives the same int32 bits; the kernel is chosen at load by the CPU
// (__builtin_cpu_supports).
#ifndef MSP_EMBED_NATIVE_QUANT_H_
#define MSP_EMBED_NATIVE_QUANT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace msp::native {

// W quantised and packed: panels of 16 columns, each k-group of 4 stored as
// 16 x 4 bytes (what one vpdpbusd reads), n padded to 64 and k to 4 with 0.
struct PackedInt8 {
  size_t n = 0, k = 0, n_pad = 0, k_pad = 0;
  std::vector<int8_t> data;     // n_pad * k_pad
  std::vector<float> scale;     // n: W[j] ~ scale[j] * q[j]
  std::vector<int32_t> offset;  // n: 128 * sum_k q[j][k]

  // The quantised weight of column j (output channel) at k index p.
  int8_t At(size_t j, size_t p) const { return data[(j / 16) * k_pad * 16 + (p / 4) * 64 + (j % 16) * 4 + p % 4]; }
  size_t bytes() const { return data.size() + scale.size() * 4 + offset.size() * 4; }
};

PackedInt8 QuantizeWeights(const float* w, size_t n, size_t k);

// Activations quantised per row: m rows of k_pad bytes (q + 128; the padding
// is 128, i.e. 0), and each row's scale.
struct QuantRows {
  size_t m = 0, k = 0, k_pad = 0;
  std::vector<uint8_t> data;
  std::vector<float> scale;
};

// a [m, k] row-major into `out` (its buffers reused). Vectorised where the
// CPU has AVX-512, with the same bytes as QuantizeRowPortable.
void QuantizeRows(const float* a, size_t m, size_t k, QuantRows* out);

// One row by the portable loop: dst[q] = round(row[q] * 127 / max|row|)
// + 128 (to nearest, ties to even), *scale = max|row| / 127.
void QuantizeRowPortable(const float* row, size_t k, uint8_t* dst, float* scale);

enum class Int8Kernel { kScalar, kAvx2, kAvx512Vnni };

// The best kernel this CPU runs (or the one $MSP_NATIVE_INT8_KERNEL names:
// scalar, avx2, avx512-vnni, for benchmarks), and whether it runs `kernel`.
Int8Kernel BestInt8Kernel();
bool Int8KernelSupported(Int8Kernel kernel);
const char* Int8KernelName(Int8Kernel kernel);

// c[m, n] (row stride ldc) = sum_k (a[i][k] - 128) * W_q[j][k], exact.
// REQUIRES: a.k == w.k, Int8KernelSupported(kernel).
void Int8Product(const QuantRows& a, const PackedInt8& w, int32_t* c, size_t ldc, Int8Kernel kernel);

// c[m, n] = a W^T + bias (bias may be null) through the int8 product:
// quantises a (into *rows), multiplies with the best kernel, dequantises.
// `acc` is scratch, reused between calls of one thread.
void Int8Linear(const float* a, size_t m, const PackedInt8& w, const float* bias, float* c, QuantRows* rows,
                std::vector<int32_t>* acc);

// The same with a already quantised (Q, K and V share their input).
void Int8LinearQuantized(const QuantRows& rows, const PackedInt8& w, const float* bias, float* c,
                         std::vector<int32_t>* acc);

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_QUANT_H_
