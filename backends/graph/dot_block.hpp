// Register-blocked dot products for decode (matvec_rows): R rows of W against
// T rows of X at once. Each (row, token) sum is kept in 8 double lanes (lane l
// holds columns j = l mod 8, fused multiply-adds in column order, a
// zero-padded tail) and reduced in one fixed tree, so every blocking gives the
// same bits for the same (row, token). Double, not f32: with f32 lanes here the
// mini32k-story parity case leaves run.c's stream (a near-tie in the nucleus
// flips). Batches do not come here: their products are f32 (the core's gemm_f32_rows),
// like the BLAS backend's sgemm prefill.
//
// Two versions with the same arithmetic: `avx512` (intrinsics, compiled for
// that level only: call it after simd_level() allows it) and `generic` (plain
// arrays, always inline, so the compiler vectorizes it for whatever level the
// caller is compiled for). A float product is exact in double, so an FMA and
// a multiply-then-add give the same double, and both versions the same bits.
#pragma once

#include <cmath>
#include <cstdint>

#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>
#endif

namespace llama::graph::detail {

inline constexpr int64_t kLanes = 8;

// out[r * T + t] = W[r, :] . X[t, :] for r < R, t < T, rounded to f32 once.
// The body of both versions (Lanes and its operations come from the namespace).
#define LLAMA_DOT_BLOCK_BODY                                                                    \
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

#if LLAMA_HAVE_X86_TARGETS
namespace avx512 {
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
// (l0 + l4) + (l2 + l6), (l1 + l5) + (l3 + l7), then their sum: generic's tree.
LLAMA_TARGET_AVX512 inline double reduce_lanes(Lanes v) {
  const __m256d a = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xF, v, 0),
                                  _mm512_maskz_extractf64x4_pd(0xF, v, 1));
  const __m128d b = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(b, _mm_unpackhi_pd(b, b)));
}
template <int R, int T>
LLAMA_TARGET_AVX512 inline void dot_block(const float* w, int64_t ldw, const float* x, int64_t ldx,
                                          int64_t cols, float* out) {
  LLAMA_DOT_BLOCK_BODY
}
}  // namespace avx512
#endif

namespace generic {
struct Lanes {
  double l[8];
};
inline Lanes zero_lanes() { return Lanes{}; }
inline Lanes load_lanes(const float* p) {
  Lanes v;
  for (int i = 0; i < 8; ++i) v.l[i] = p[i];
  return v;
}
inline Lanes load_lanes(const float* p, int64_t n) {
  Lanes v{};
  for (int64_t i = 0; i < n; ++i) v.l[i] = p[i];
  return v;
}
inline Lanes fma_lanes(Lanes a, Lanes b, Lanes c) {
  // Multiply then add (std::fma is a library call without hardware FMA): the
  // product of two floats is exact in double, so this rounds once, as an FMA.
  for (int i = 0; i < 8; ++i) c.l[i] += a.l[i] * b.l[i];
  return c;
}
inline double reduce_lanes(Lanes v) {
  double a[4];
  for (int i = 0; i < 4; ++i) a[i] = v.l[i] + v.l[i + 4];
  const double b0 = a[0] + a[2], b1 = a[1] + a[3];
  return b0 + b1;
}
template <int R, int T>
LLAMA_ALWAYS_INLINE void dot_block(const float* w, int64_t ldw, const float* x, int64_t ldx,
                                   int64_t cols, float* out) {
  LLAMA_DOT_BLOCK_BODY
}
}  // namespace generic

#undef LLAMA_DOT_BLOCK_BODY

}  // namespace llama::graph::detail
