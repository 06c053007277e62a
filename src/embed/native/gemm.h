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

// The general product: c[m, n] (row stride ldc) = a[m, k] (row stride lda)
// times b, where b is [n, k] (row stride ldb) used transposed when
// `b_transposed`, else [k, n]. Attention's two products per head.
void MatMul(const float* a, size_t lda, const float* b, size_t ldb, bool b_transposed, float* c, size_t ldc,
            size_t m, size_t n, size_t k, std::vector<float>* scratch);

// msp's own blocked kernel whichever Linear uses (for the tests, and the
// fallback without OpenBLAS): c = a times b (as MatMul) plus bias[n] per
// row (bias may be null).
void ProductBlocked(const float* a, size_t lda, const float* b, size_t ldb, bool b_transposed, const float* bias,
                    float* c, size_t ldc, size_t m, size_t n, size_t k, std::vector<float>* scratch);

// Which implementation Linear is: "openblas" or "blocked".
const char* LinearBackend();

// x = 0.5 x (1 + erf(x / sqrt 2)) (GELU, erf form), n values in place.
// Absolute error below 1e-6 of torch's.
void GeluInPlace(float* x, size_t n);

// x = exp(x - max) for n values, returning their sum (softmax's numerator).
float ExpShiftSum(float* x, size_t n, float max);

}  // namespace msp::native

#endif  // MSP_EMBED_NATIVE_GEMM_H_
