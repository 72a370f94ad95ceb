// Private to the core: the AVX-512 body of runq.c's decode attention scores
// (runq_c_attention.cpp), 16 keys in the lanes of one register. Inline, so it
// compiles into that file's avx512 level with the rest of the attention; here
// because it is written with intrinsics.
#pragma once

#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

#include <cstdint>

#include "llama/kernels/x86/avx512_transpose.hpp"

namespace llama::q8::detail {

// Keys per step of score16_avx512: one per lane.
constexpr int64_t kWideKeys = 16;

// scores[j] = (q . key j) / root for the 16 keys at k + j * stride, hs a
// multiple of 16: key j's FMA chain over the head in order runs in lane j
// (16 of its elements loaded per row and transposed), so each score is the
// one-key chain's (runq_c_attention.cpp's score_key). A transpose, not a
// gather lane by lane: the gather dominated decode attention at depth.
LLAMA_TARGET_AVX512 inline void score16_avx512(const float* q, int64_t hs, const float* k,
                                               int64_t stride, float root, float* scores) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i0 = 0; i0 < hs; i0 += 16) {
    __m512 r[16];
    for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_ps(k + j * stride + i0);
    ::llama::detail::avx512::transpose16(r);
    for (int i = 0; i < 16; ++i) acc = _mm512_fmadd_ps(_mm512_set1_ps(q[i0 + i]), r[i], acc);
  }
  _mm512_storeu_ps(scores, _mm512_div_ps(acc, _mm512_set1_ps(root)));
}

}  // namespace llama::q8::detail

#endif  // LLAMA_HAVE_X86_TARGETS
