// Private to the core: lane helpers the x86 kernels share, so that each is
// written once: the all-lanes masks, the mask of a row's last lanes, the
// pairwise horizontal sum that decode's bf16/f16 bits depend on, and bf16
// widening. Inline into the kernels that use them and compiled with those
// kernels' targets (the vector ones are marked with the least they need,
// AVX-512 F or AVX2, so any kernel targeting more can inline them); the
// callers check the CPU.
#pragma once

#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

#include "llama/kernels/x86/avx512_transpose.hpp"

#define LLAMA_AVX2_INLINE __attribute__((target("avx2"))) __attribute__((always_inline)) inline

namespace llama::detail::simd {

// Every lane of 16 (32-bit) or 8 (64-bit): the mask of the maskz forms where
// no lane is masked (GCC 12 warns that the plain forms' undefined
// pass-through "may be used uninitialized"). Defined with the transpose, whose
// public header cannot include this one.
using avx512::kFull16;
using avx512::kFull8;

// The first `left` of 16 lanes, all 16 when left >= 16. Int is the caller's
// count type (signed or unsigned), so the comparison is the caller's. Plain
// inline with internal linkage: with external linkage (or always_inline) GCC
// compiles the f16 cache attention's avx512 body to other instructions.
template <class Int>
static inline __mmask16 tail_mask(Int left) {
  return static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1);
}

// The 16 lanes' sum, pairwise in this order: t[i] += t[i + 8], then + 4, + 2,
// + 1 (written out: GCC 12 warns on the reduce intrinsics). bf16/f16 decode's
// bits at every level are this order's (half_products_avx2.cpp repeats it on
// two ymm halves). f16_cache_attention.cpp's reduce_tree adds in the same
// order with in-register shuffles, other instructions, so it stays its own.
LLAMA_AVX512F_INLINE float hsum(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  for (int w = 8; w > 0; w /= 2) {
    for (int i = 0; i < w; ++i) t[i] += t[i + w];
  }
  return t[0];
}

// 16 bf16 to f32 exactly, a 16-bit shift of each value widened to 32 bits;
// lanes outside m are 0.
LLAMA_AVX512F_INLINE __m512 bf16_widen16(__mmask16 m, __m256i h) {
  return _mm512_castsi512_ps(
      _mm512_maskz_slli_epi32(kFull16, _mm512_maskz_cvtepu16_epi32(m, h), 16));
}

// 8 bf16 to f32 exactly, the same way in a ymm.
LLAMA_AVX2_INLINE __m256 bf16_widen8(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

}  // namespace llama::detail::simd

#undef LLAMA_AVX2_INLINE

#endif  // LLAMA_HAVE_X86_TARGETS
