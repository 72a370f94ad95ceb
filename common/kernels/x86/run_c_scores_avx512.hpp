// Private to the core: the AVX-512 body of run.c's one-query attention scores
// with the block kernels' bits (steps/attend_token.cpp), 16 keys in the lanes.
// Inline, so it compiles into that file's avx512 level; here because it is
// written with intrinsics.
#pragma once

#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/avx512_transpose.hpp"

namespace llama::detail {

// scores[j] = float(q . key j) / scale for the 16 keys at k + j * stride, hs a
// multiple of 16: key j's sum runs in double in lane j (of the low or high
// half), one FMA chain over the head from zero in head order, the products
// exact in double: the chain of run.c's block scores (steps/run_c.cpp's
// DoubleScore), so the same bits. Keys are loaded 16 elements a row and
// transposed, then widened a half at a time.
LLAMA_TARGET_AVX512 inline void score16_double_avx512(const float* q, int64_t hs, const float* k,
                                                      int64_t stride, float scale, float* scores) {
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  for (int64_t i0 = 0; i0 < hs; i0 += 16) {
    __m512 r[16];
    for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_ps(k + j * stride + i0);
    ::llama::detail::avx512::transpose16(r);
    for (int i = 0; i < 16; ++i) {
      const __m512d qi = _mm512_set1_pd(static_cast<double>(q[i0 + i]));
      const __m512d e = _mm512_castps_pd(r[i]);
      const __m256 rl = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, e, 0));
      const __m256 rh = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, e, 1));
      lo = _mm512_fmadd_pd(_mm512_maskz_cvtps_pd(simd::kFull8, rl), qi, lo);
      hi = _mm512_fmadd_pd(_mm512_maskz_cvtps_pd(simd::kFull8, rh), qi, hi);
    }
  }
  const __m256 s = _mm256_set1_ps(scale);
  _mm256_storeu_ps(scores, _mm256_div_ps(_mm512_maskz_cvtpd_ps(simd::kFull8, lo), s));
  _mm256_storeu_ps(scores + 8, _mm256_div_ps(_mm512_maskz_cvtpd_ps(simd::kFull8, hi), s));
}

}  // namespace llama::detail

#endif  // LLAMA_HAVE_X86_TARGETS
