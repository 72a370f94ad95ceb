// Register-blocked dot products summed in double lanes, for decode's
// matrix-vector products (the graph backend's matvec_rows): R rows of W
// against T rows of X at once. Each (row, token) sum is kept in 8 double lanes
// (lane l holds columns j = l mod 8, fused multiply-adds in column order, a
// zero-padded tail) and reduced in one fixed tree, so every blocking gives the
// same bits for the same (row, token).
//
// The AVX-512 version, in llama::detail::dot_block_f64::avx512: intrinsics,
// header-only and inline like the kernels it is compiled into, so it lives in
// this public x86 folder (a backend cannot include the core's private
// headers). Call it after simd_level() allows the avx512 level. Its body,
// LLAMA_DOT_BLOCK_F64_BODY, is written once over a lane type and its four
// operations (zero_lanes, load_lanes, fma_lanes, reduce_lanes, looked up where
// the macro is expanded), so a portable version with the same arithmetic (the
// graph backend's, backends/graph/dot_block.hpp) expands the same body over
// plain arrays. A float product is exact in double, so an FMA and a
// multiply-then-add give the same double, and both versions the same bits.
#pragma once

#include <cstdint>

#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail::dot_block_f64 {

inline constexpr int64_t kLanes = 8;

}  // namespace llama::detail::dot_block_f64

// out[r * T + t] = W[r, :] . X[t, :] for r < R, t < T, rounded to f32 once:
// the body of a `template <int R, int T> void dot_block(const float* w,
// int64_t ldw, const float* x, int64_t ldx, int64_t cols, float* out)`, with
// Lanes, its operations and kLanes in scope.
#define LLAMA_DOT_BLOCK_F64_BODY                                                                \
  Lanes acc[R][T];                                                                              \
  _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {                                         \
    _Pragma("GCC unroll 8") for (int t = 0; t < T; ++t) acc[r][t] = zero_lanes();               \
  }                                                                                             \
  int64_t j = 0;                                                                                \
  for (; j + kLanes <= cols; j += kLanes) {                                                     \
    Lanes xv[T];                                                                                \
    _Pragma("GCC unroll 8") for (int t = 0; t < T; ++t) xv[t] = load_lanes(x + t * ldx + j);    \
    _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {                                       \
      const Lanes wv = load_lanes(w + r * ldw + j);                                             \
      _Pragma("GCC unroll 8") for (int t = 0; t < T; ++t) acc[r][t] =                           \
          fma_lanes(wv, xv[t], acc[r][t]);                                                      \
    }                                                                                           \
  }                                                                                             \
  if (j < cols) {                                                                               \
    const int64_t n = cols - j;                                                                 \
    Lanes xv[T];                                                                                \
    _Pragma("GCC unroll 8") for (int t = 0; t < T; ++t) xv[t] = load_lanes(x + t * ldx + j, n); \
    _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {                                       \
      const Lanes wv = load_lanes(w + r * ldw + j, n);                                          \
      _Pragma("GCC unroll 8") for (int t = 0; t < T; ++t) acc[r][t] =                           \
          fma_lanes(wv, xv[t], acc[r][t]);                                                      \
    }                                                                                           \
  }                                                                                             \
  _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {                                         \
    _Pragma("GCC unroll 8") for (int t = 0; t < T; ++t) out[r * T + t] =                        \
        static_cast<float>(reduce_lanes(acc[r][t]));                                            \
  }

// Empty elsewhere but for the body: this header is installed, and a non-x86
// user of the installed tree must still be able to include everything under llama/.
#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

namespace llama::detail::dot_block_f64::avx512 {

using Lanes = __m512d;
LLAMA_TARGET_AVX512 inline Lanes zero_lanes() { return _mm512_setzero_pd(); }
// The maskz forms: GCC 12 warns about the undefined pass-through of the plain ones.
LLAMA_TARGET_AVX512 inline Lanes load_lanes(const float* p) {
  return _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(p));
}
LLAMA_TARGET_AVX512 inline Lanes load_lanes(const float* p, int64_t n) {  // n < 8 valid
  return _mm512_maskz_cvtps_pd(0xFF,
                               _mm256_maskz_loadu_ps(static_cast<__mmask8>((1u << n) - 1u), p));
}
LLAMA_TARGET_AVX512 inline Lanes fma_lanes(Lanes a, Lanes b, Lanes c) {
  return _mm512_fmadd_pd(a, b, c);
}
// (l0 + l4) + (l2 + l6), (l1 + l5) + (l3 + l7), then their sum: the portable
// version's tree.
LLAMA_TARGET_AVX512 inline double reduce_lanes(Lanes v) {
  const __m256d a = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xF, v, 0),
                                  _mm512_maskz_extractf64x4_pd(0xF, v, 1));
  const __m128d b = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(b, _mm_unpackhi_pd(b, b)));
}
template <int R, int T>
LLAMA_TARGET_AVX512 inline void dot_block(const float* w, int64_t ldw, const float* x, int64_t ldx,
                                          int64_t cols, float* out) {
  LLAMA_DOT_BLOCK_F64_BODY
}

}  // namespace llama::detail::dot_block_f64::avx512
#endif  // LLAMA_HAVE_X86_TARGETS
