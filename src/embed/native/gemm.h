// The compute of the native embedder: the linear layers' matrix product and
// the element-wise functions (GELU, exp), written to vectorise.
//
// Linear is C = A Wᵀ + bias with W in nn.Linear's layout ([out, in], as the
// safetensors file holds it, used in place). Two implementations, chosen
// when msp is configured (MSP_NATIVE_BLAS): OpenBLAS's sgemm, or msp's own
// blocked kernel (W packed into column panels per call, a 6x32 register
// tile, AVX-512 / AVX2 / portable clones picked by the CPU at load).
// bench/native_bench.sh measures them against each other and against torch.
#ifndef MSP_EMBED_NATIVE_GEMM_H_
#define MSP_EMBED_NATIVE_GEMM_H_

#include <cstddef>
#include <vector>

namespace msp::native {

// c[m, n] = sum_k a[m, k] * w[n, k] + bias[n] (bias may be null). Row-major,
// contiguous. `scratch` is reused between calls of one thread.
void Linear(const float* a, size_t m, size_t k, const float* w, size_t n, const float* bias, float* c,
            std::vector<float>* scratch);

// Which implementation Linear is: "openblas" or "blocked".
const char* LinearBackend();

// x = 0.5 x (1 + erf(x / sqrt 2)) (GELU, erf form), n values in place.
// Absolute error below 1e-6 of torch's.
void GeluInPlace(float* x, size_t n);

// x = exp(x - max) for n values, returning their sum (softmax's numerator).
float ExpShiftSum(float* x, size_t n, float max);

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_GEMM_H_
