// Kernels: the decode product through the register-blocked dot_block (the
// batched one is the core's gemm_f32_rows); element-wise loops written for the compiler to
// vectorize (-fopenmp-simd). Each is compiled for every SimdLevel and picked
// at run time (simd_level()); the decode product gives the same bits on every
// level (dot_block.hpp).
#include "kernels.hpp"

#include "dot_block.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::graph {
namespace {

inline float finish(float v, const float* residual, int64_t i) {
  return residual ? residual[i] + v : v;
}

// Eight rows per pass over x (eight independent sums in flight), sums in
// double lanes (see dot_block.hpp); `NS` names dot_block's version.
#define LLAMA_MATVEC_BODY(NS)                                                   \
  float acc[8];                                                                 \
  int64_t i = r0;                                                               \
  for (; i + 8 <= r1; i += 8) {                                                 \
    detail::NS::dot_block<8, 1>(w + i * cols, cols, x, cols, cols, acc);        \
    for (int64_t k = 0; k < 8; ++k) y[i + k] = finish(acc[k], residual, i + k); \
  }                                                                             \
  for (; i < r1; ++i) {                                                         \
    detail::NS::dot_block<1, 1>(w + i * cols, cols, x, cols, cols, acc);        \
    y[i] = finish(acc[0], residual, i);                                         \
  }

#if LLAMA_HAVE_X86_TARGETS
LLAMA_TARGET_AVX512 void matvec_avx512(float* y, const float* w, const float* x, int64_t cols,
                                       int64_t r0, int64_t r1,
                                       const float* residual){LLAMA_MATVEC_BODY(avx512)}
#endif
LLAMA_TARGET_AVX2 void matvec_avx2(float* y, const float* w, const float* x, int64_t cols,
                                   int64_t r0, int64_t r1, const float* residual) {
  LLAMA_MATVEC_BODY(generic)
}
void matvec_portable(float* y, const float* w, const float* x, int64_t cols, int64_t r0, int64_t r1,
                     const float* residual) {
  LLAMA_MATVEC_BODY(generic)
}
#undef LLAMA_MATVEC_BODY

template <bool Fma>
LLAMA_ALWAYS_INLINE void add_body(float* out, const float* a, const float* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

LLAMA_SIMD_VARIANTS(void, add, add_body, (float* out, const float* a, const float* b, int64_t n),
                    (out, a, b, n))

}  // namespace

void matvec_rows(float* y, const float* w, const float* x, int64_t cols, int64_t r0, int64_t r1,
                 const float* residual) {
  matvec_rows(simd_level(), y, w, x, cols, r0, r1, residual);
}

void matvec_rows(SimdLevel level, float* y, const float* w, const float* x, int64_t cols,
                 int64_t r0, int64_t r1, const float* residual) {
  switch (runnable_level(level)) {
    case SimdLevel::avx512:
#if LLAMA_HAVE_X86_TARGETS
      return matvec_avx512(y, w, x, cols, r0, r1, residual);
#else
      [[fallthrough]];
#endif
    case SimdLevel::avx2:
      return matvec_avx2(y, w, x, cols, r0, r1, residual);
    case SimdLevel::portable:
      break;
  }
  matvec_portable(y, w, x, cols, r0, r1, residual);
}

void rmsnorm_row(float* out, const float* x, const float* w, int64_t n, float eps) {
  const auto len = static_cast<size_t>(n);
  llama::rmsnorm({out, len}, {x, len}, {w, len}, eps);
}

void add_row(float* out, const float* a, const float* b, int64_t n) {
  LLAMA_SIMD_DISPATCH(simd_level(), add, (out, a, b, n));
}

void swiglu_row(float* out, const float* gate, const float* up, int64_t n) {
  const auto len = static_cast<size_t>(n);
  swiglu({out, len}, {gate, len}, {up, len});  // the core's, run.c's bits
}

}  // namespace llama::graph
