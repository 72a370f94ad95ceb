// A 16 x 16 transpose of 32-bit elements in AVX-512 F registers, for kernels
// that need a value per lane from 16 strided rows (decode attention's keys,
// the Q8_0 decode kernel's scales, the int8 batch kernel's tokens and
// results, graph's GEMM packing X^T). x86 only: include it where
// LLAMA_HAVE_X86_TARGETS (x86/simd_target.hpp; elsewhere it is empty). One algorithm for f32
// (__m512) and int32
// (__m512i) registers, each with its own domain's shuffles (crossing between
// the integer and float domains costs a bypass cycle on some cores).
// Compiled for AVX-512 F only, so it inlines into any kernel targeting more;
// the callers check the CPU.
#pragma once

#include "llama/kernels/x86/simd_target.hpp"

// Empty elsewhere: this header is installed, and a non-x86 user of the
// installed tree must still be able to include everything under llama/.
#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

#define LLAMA_AVX512F __attribute__((target("avx512f")))
#define LLAMA_AVX512F_INLINE LLAMA_AVX512F __attribute__((always_inline)) inline

namespace llama::detail::avx512 {

// Full masks (see x86/int8_vnni_ops.hpp for why the maskz forms).
constexpr __mmask16 kFull16 = 0xffff;
constexpr __mmask8 kFull8 = 0xff;

namespace shuffles {
// Interleave the low / high 32-bit (then 64-bit) elements of each 128-bit
// lane of a and b; lanes128<Imm>: vshuf[fi]32x4.
LLAMA_AVX512F_INLINE __m512 lo32(__m512 a, __m512 b) {
  return _mm512_maskz_unpacklo_ps(kFull16, a, b);
}
LLAMA_AVX512F_INLINE __m512 hi32(__m512 a, __m512 b) {
  return _mm512_maskz_unpackhi_ps(kFull16, a, b);
}
LLAMA_AVX512F_INLINE __m512 lo64(__m512 a, __m512 b) {
  return _mm512_castpd_ps(
      _mm512_maskz_unpacklo_pd(kFull8, _mm512_castps_pd(a), _mm512_castps_pd(b)));
}
LLAMA_AVX512F_INLINE __m512 hi64(__m512 a, __m512 b) {
  return _mm512_castpd_ps(
      _mm512_maskz_unpackhi_pd(kFull8, _mm512_castps_pd(a), _mm512_castps_pd(b)));
}
template <int Imm>
LLAMA_AVX512F_INLINE __m512 lanes128(__m512 a, __m512 b) {
  return _mm512_maskz_shuffle_f32x4(kFull16, a, b, Imm);
}
LLAMA_AVX512F_INLINE __m512i lo32(__m512i a, __m512i b) {
  return _mm512_maskz_unpacklo_epi32(kFull16, a, b);
}
LLAMA_AVX512F_INLINE __m512i hi32(__m512i a, __m512i b) {
  return _mm512_maskz_unpackhi_epi32(kFull16, a, b);
}
LLAMA_AVX512F_INLINE __m512i lo64(__m512i a, __m512i b) {
  return _mm512_maskz_unpacklo_epi64(kFull8, a, b);
}
LLAMA_AVX512F_INLINE __m512i hi64(__m512i a, __m512i b) {
  return _mm512_maskz_unpackhi_epi64(kFull8, a, b);
}
template <int Imm>
LLAMA_AVX512F_INLINE __m512i lanes128(__m512i a, __m512i b) {
  return _mm512_maskz_shuffle_i32x4(kFull16, a, b, Imm);
}
}  // namespace shuffles

// r[i] lane j = r[j] lane i on return (a 16 x 16 transpose in 64 shuffles);
// V is __m512 or __m512i.
template <class V>
LLAMA_AVX512F_INLINE void transpose16(V r[16]) {
  using namespace shuffles;
  V t[16], u[16];
  for (int k = 0; k < 8; ++k) {  // 128-bit lane L of rows 2k, 2k+1 interleaved
    t[2 * k] = lo32(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = hi32(r[2 * k], r[2 * k + 1]);
  }
  // u[4k + m]'s 128-bit lane L: element 4L + m of rows 4k .. 4k+3.
  for (int k = 0; k < 4; ++k) {
    u[4 * k] = lo64(t[4 * k], t[4 * k + 2]);
    u[4 * k + 1] = hi64(t[4 * k], t[4 * k + 2]);
    u[4 * k + 2] = lo64(t[4 * k + 1], t[4 * k + 3]);
    u[4 * k + 3] = hi64(t[4 * k + 1], t[4 * k + 3]);
  }
  for (int m = 0; m < 4; ++m) {
    // [rows 0-3, 0-3, 4-7, 4-7] (elements m, 8+m / 4+m, 12+m), then 8-15 alike.
    const V v0 = lanes128<0x88>(u[m], u[4 + m]);
    const V w0 = lanes128<0xdd>(u[m], u[4 + m]);
    const V v1 = lanes128<0x88>(u[8 + m], u[12 + m]);
    const V w1 = lanes128<0xdd>(u[8 + m], u[12 + m]);
    r[m] = lanes128<0x88>(v0, v1);
    r[8 + m] = lanes128<0xdd>(v0, v1);
    r[4 + m] = lanes128<0x88>(w0, w1);
    r[12 + m] = lanes128<0xdd>(w0, w1);
  }
}

}  // namespace llama::detail::avx512

#endif  // LLAMA_HAVE_X86_TARGETS
