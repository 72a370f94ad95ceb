// Private to the core: a 16 x 16 f32 transpose in AVX-512 F registers, for
// kernels that need a value per lane from 16 strided rows (decode attention's
// keys, the Q8_0 decode kernel's scales). Compiled for AVX-512 F only, so it
// inlines into any kernel targeting more; the callers check the CPU.
#pragma once

#include <immintrin.h>

#define LLAMA_AVX512F __attribute__((target("avx512f")))

namespace llama::detail::avx512 {

// Full masks (see q8_vnni_ops.hpp for why the maskz forms).
constexpr __mmask16 kFull16 = 0xffff;
constexpr __mmask8 kFull8 = 0xff;

// r[i] lane j = r[j] lane i on return (a 16 x 16 transpose in 64 shuffles).
LLAMA_AVX512F inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int k = 0; k < 8; ++k) {  // 128-bit lane L of rows 2k, 2k+1 interleaved
    t[2 * k] = _mm512_maskz_unpacklo_ps(kFull16, r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_maskz_unpackhi_ps(kFull16, r[2 * k], r[2 * k + 1]);
  }
  // u[4k + m]'s 128-bit lane L: element 4L + m of rows 4k .. 4k+3.
  for (int k = 0; k < 4; ++k) {
    const __m512d a = _mm512_castps_pd(t[4 * k]), b = _mm512_castps_pd(t[4 * k + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * k + 2]), d = _mm512_castps_pd(t[4 * k + 3]);
    u[4 * k] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kFull8, a, c));
    u[4 * k + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kFull8, a, c));
    u[4 * k + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kFull8, b, d));
    u[4 * k + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kFull8, b, d));
  }
  for (int m = 0; m < 4; ++m) {
    // [rows 0-3, 0-3, 4-7, 4-7] (elements m, 8+m / 4+m, 12+m), then 8-15 alike.
    const __m512 v0 = _mm512_maskz_shuffle_f32x4(kFull16, u[m], u[4 + m], 0x88);
    const __m512 w0 = _mm512_maskz_shuffle_f32x4(kFull16, u[m], u[4 + m], 0xdd);
    const __m512 v1 = _mm512_maskz_shuffle_f32x4(kFull16, u[8 + m], u[12 + m], 0x88);
    const __m512 w1 = _mm512_maskz_shuffle_f32x4(kFull16, u[8 + m], u[12 + m], 0xdd);
    r[m] = _mm512_maskz_shuffle_f32x4(kFull16, v0, v1, 0x88);
    r[8 + m] = _mm512_maskz_shuffle_f32x4(kFull16, v0, v1, 0xdd);
    r[4 + m] = _mm512_maskz_shuffle_f32x4(kFull16, w0, w1, 0x88);
    r[12 + m] = _mm512_maskz_shuffle_f32x4(kFull16, w0, w1, 0xdd);
  }
}

}  // namespace llama::detail::avx512
