// run.c's argmax with AVX-512 (steps/argmax_kernels.hpp).
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/steps/argmax_kernels.hpp"
#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
namespace llama {

// The same answer in two passes of 16 lanes, without the scalar loop's
// dependence on the last winner (greedy decoding runs it over the whole
// vocabulary every token, which weighs on a small model's decode): the largest
// value (each lane keeps its first greater value, ordered compares, so NaNs
// never win), then the first index holding it.
LLAMA_TARGET_AVX512 int32_t argmax_avx512(const float* x, size_t n) {
  if (n < 32 || std::isnan(x[0])) return argmax_portable(x, n);
  __m512 m = _mm512_set1_ps(x[0]);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ), v);
  }
  alignas(64) float lanes[16];  // (GCC 12 warns inside _mm512_reduce_max_ps)
  _mm512_store_ps(lanes, m);
  float best = lanes[0];  // no NaN in m
  for (float v : lanes) best = std::max(best, v);
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  const __m512 b = _mm512_set1_ps(best);
  for (i = 0; i + 16 <= n; i += 16) {
    const __mmask16 eq = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), b, _CMP_EQ_OQ);
    if (eq != 0) return static_cast<int32_t>(i) + __builtin_ctz(eq);
  }
  for (; i < n; ++i) {
    if (x[i] == best) return static_cast<int32_t>(i);
  }
  return 0;  // not reached: best is one of the values
}

}  // namespace llama
#endif
