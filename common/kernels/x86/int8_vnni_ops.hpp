// Private to the core: AVX-512 VNNI building blocks shared by the int8
// matrix-vector kernel (llama2c_int8_vnni.cpp), the batch kernel
// (llama2c_int8_vnni_batch.cpp) and GGUF Q8_0's and Q4_0's (gguf_rows16_vnni.hpp).
// vpdpbusd multiplies unsigned by signed bytes; row_dot feeds it |w| and x
// with w's sign (x comes from quantize_activations, |x| <= 127, so negating it
// cannot overflow). Everything here is inline and compiled for VNNI only; the
// callers check the CPU.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/x86/simd.hpp"

#define LLAMA_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

namespace llama::detail::vnni {

// Full masks: the maskz intrinsics avoid GCC 12's spurious "may be used
// uninitialized" on the unmasked ones' undefined pass-through operand.
using simd::kFull16;
using simd::kFull8;

// Horizontal sum of 8 int32.
LLAMA_VNNI inline int32_t reduce_add256(__m256i v) {
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
  return _mm_cvtsi128_si32(s4);
}

// Horizontal sum (written out: GCC 12's _mm512_reduce_add_epi32 warns).
LLAMA_VNNI inline int32_t reduce_add(__m512i v) {
  const __m256i lo = _mm512_mask_extracti64x4_epi64(_mm256_setzero_si256(), kFull8, v, 0);
  const __m256i hi = _mm512_mask_extracti64x4_epi64(_mm256_setzero_si256(), kFull8, v, 1);
  return reduce_add256(_mm256_add_epi32(lo, hi));
}

// The first two steps of a transpose of adds over N vectors (N a multiple of
// 4): 128-bit lane L of s4[i] holds, in order, the sums of v[4i], v[4i + 1],
// v[4i + 2], v[4i + 3] over their own 128-bit lane L. The reductions below
// (and the GGUF block kernel's) finish it by how they combine the lanes.
template <int N>
LLAMA_VNNI inline void sum_quads(const __m512i v[N], __m512i s4[N / 4]) {
  __m512i s2[N / 2];
  for (int i = 0; i < N / 2; ++i) {
    s2[i] = _mm512_add_epi32(_mm512_maskz_unpacklo_epi32(kFull16, v[2 * i], v[2 * i + 1]),
                             _mm512_maskz_unpackhi_epi32(kFull16, v[2 * i], v[2 * i + 1]));
  }
  for (int i = 0; i < N / 4; ++i) {
    s4[i] = _mm512_add_epi32(_mm512_maskz_unpacklo_epi64(kFull8, s2[2 * i], s2[2 * i + 1]),
                             _mm512_maskz_unpackhi_epi64(kFull8, s2[2 * i], s2[2 * i + 1]));
  }
}

// Lane g of the result is the sum of the 16 lanes of v[g].
LLAMA_VNNI inline __m512i reduce16(const __m512i v[16]) {
  __m512i s4[4];
  sum_quads<16>(v, s4);
  const __m512i t0 = _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0x88),
                                      _mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0xdd));
  const __m512i t1 = _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kFull16, s4[2], s4[3], 0x88),
                                      _mm512_maskz_shuffle_i32x4(kFull16, s4[2], s4[3], 0xdd));
  return _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kFull16, t0, t1, 0x88),
                          _mm512_maskz_shuffle_i32x4(kFull16, t0, t1, 0xdd));
}

// The 256-bit halves of each v[i] summed apart: lo lane i = sum of v[i]'s
// lanes 0..7, hi lane i = sum of lanes 8..15 (two groups of 32 bytes per
// 64-byte vector, each half accumulated by vpdpbusd from its own 32 bytes).
LLAMA_VNNI inline void reduce16_halves(const __m512i v[16], __m512i& lo, __m512i& hi) {
  __m512i s4[4];
  sum_quads<16>(v, s4);
  // u: 128-bit lanes 0+1 (the low half) and 2+3 (the high half) added, giving
  // [rows 4i.. lo, rows 4i.. hi, rows 4i+4.. lo, rows 4i+4.. hi].
  const __m512i u0 = _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0x88),
                                      _mm512_maskz_shuffle_i32x4(kFull16, s4[0], s4[1], 0xdd));
  const __m512i u1 = _mm512_add_epi32(_mm512_maskz_shuffle_i32x4(kFull16, s4[2], s4[3], 0x88),
                                      _mm512_maskz_shuffle_i32x4(kFull16, s4[2], s4[3], 0xdd));
  lo = _mm512_maskz_shuffle_i32x4(kFull16, u0, u1, 0x88);
  hi = _mm512_maskz_shuffle_i32x4(kFull16, u0, u1, 0xdd);
}

// Mask of the first n (0..64) bytes.
inline __mmask64 first_bytes(int64_t n) {
  return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
}

// acc += w[0..64) . x[0..64) (masked to `m`), in 16 int32 lanes.
LLAMA_VNNI inline __m512i dot64(__m512i acc, const int8_t* w, const int8_t* x, __mmask64 m) {
  const __m512i wv = _mm512_maskz_loadu_epi8(m, w);
  const __m512i xv = _mm512_maskz_loadu_epi8(m, x);
  const __m512i xs = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), _mm512_setzero_si512(), xv);
  return _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(wv), xs);
}

LLAMA_VNNI inline int32_t dot_group(const int8_t* w, const int8_t* x, int64_t n) {
  __m512i acc = _mm512_setzero_si512();
  for (int64_t k = 0; k < n; k += 64) acc = dot64(acc, w + k, x + k, first_bytes(n - k));
  return reduce_add(acc);
}

// One row of W against one quantized vector: values x [cols], scales xs
// [cols / gs]. runq.c's int32 sum per group, then val = fma(ival * w_scale,
// x_scale, val) in group order, as q8.cpp's row_dot_portable.
LLAMA_VNNI inline float row_dot(const int8_t* wr, const float* ws, const int8_t* xv,
                                const float* xs, int64_t cols, int64_t gs) {
  const int64_t groups = cols / gs;
  // Groups of whole 64-byte vectors go 16 at a time, summed together and
  // reduced by one transpose of adds; the rest one by one.
  const int64_t blocked = gs % 64 == 0 ? groups - groups % 16 : 0;
  alignas(64) float scaled[16];
  float val = 0.0f;
  for (int64_t g0 = 0; g0 < blocked; g0 += 16) {
    __m512i acc[16];
    for (int j = 0; j < 16; ++j) {
      acc[j] = _mm512_setzero_si512();
      const int64_t at = (g0 + j) * gs;
      for (int64_t k = 0; k < gs; k += 64) {
        acc[j] = dot64(acc[j], wr + at + k, xv + at + k, ~__mmask64{0});
      }
    }
    // float(ival) * w_scale for 16 groups at once, then runq.c's FMA chain.
    _mm512_store_ps(scaled, _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kFull16, reduce16(acc)),
                                          _mm512_loadu_ps(ws + g0)));
    for (int j = 0; j < 16; ++j) val = std::fma(scaled[j], xs[g0 + j], val);
  }
  for (int64_t g = blocked; g < groups; ++g) {
    const int32_t ival = dot_group(wr + g * gs, xv + g * gs, gs);
    val = std::fma(static_cast<float>(ival) * ws[g], xs[g], val);
  }
  return val;
}

}  // namespace llama::detail::vnni
