// AVX-512 matrix-vector kernels with f32 activations for Q4_K and Q6_K
// weights read in place (decode; F16 and BF16 rows: half_products_avx512.cpp).
// Each weight takes its exact value (gguf_blocks.hpp): integer codes are
// widened to f32 exactly and the block scales applied in f32, so the only
// rounding is the f32 summation's.
// Per block the codes' dot with x is taken first and the scales after, with the
// codes' offsets folded into per-block sums of x computed once per vector:
//   Q4_K:  d * sc * sum q x - dmin * m * sum x          (per 32 values)
//   Q6_K:  d * sc * (sum q x - 32 sum x)                 (per 16 values)
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/uninitialized_array.hpp"

#define LLAMA_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c")))

namespace llama::detail {
namespace {

using simd::hsum;
using simd::kFull16;

// 16 bytes widened to 16 int32 lanes.
LLAMA_AVX512 inline __m512i load16_u8(const uint8_t* p) {
  return _mm512_maskz_cvtepu8_epi32(kFull16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

LLAMA_AVX512 inline __m512 to_f32(__m512i v) { return _mm512_maskz_cvtepi32_ps(kFull16, v); }

// Q4_K: sx[s] = sum of x's 32-value sub-block s (8 per super-block).
LLAMA_AVX512 float row_q4_k(const BlockQ4_K* w, const float* x, const float* sx, int64_t blocks) {
  const __m512i low = _mm512_set1_epi32(0xF);
  __m512 acc = _mm512_setzero_ps();
  float corr = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    const BlockQ4_K& blk = w[b];
    const float d = _cvtsh_ss(blk.d), dmin = _cvtsh_ss(blk.dmin);
    const float* xb = x + 256 * b;
    for (int p = 0; p < 4; ++p) {  // 32 bytes: sub-blocks 2p (low nibbles), 2p + 1 (high)
      uint8_t sc0, m0, sc1, m1;
      q4_k_scale_min(blk.scales, 2 * p, sc0, m0);
      q4_k_scale_min(blk.scales, 2 * p + 1, sc1, m1);
      const __m512i v0 = load16_u8(blk.qs + 32 * p), v1 = load16_u8(blk.qs + 32 * p + 16);
      const float* xs = xb + 64 * p;
      __m512 t0 = _mm512_mul_ps(to_f32(_mm512_and_si512(v0, low)), _mm512_loadu_ps(xs));
      t0 = _mm512_fmadd_ps(to_f32(_mm512_and_si512(v1, low)), _mm512_loadu_ps(xs + 16), t0);
      __m512 t1 =
          _mm512_mul_ps(to_f32(_mm512_maskz_srli_epi32(kFull16, v0, 4)), _mm512_loadu_ps(xs + 32));
      t1 = _mm512_fmadd_ps(to_f32(_mm512_maskz_srli_epi32(kFull16, v1, 4)),
                           _mm512_loadu_ps(xs + 48), t1);
      acc = _mm512_fmadd_ps(t0, _mm512_set1_ps(d * sc0), acc);
      acc = _mm512_fmadd_ps(t1, _mm512_set1_ps(d * sc1), acc);
      corr = std::fma(dmin * m0, sx[8 * b + 2 * p], corr);
      corr = std::fma(dmin * m1, sx[8 * b + 2 * p + 1], corr);
    }
  }
  return hsum(acc) - corr;
}

// Q6_K: sx[s] = sum of x's 16-value sub-block s (16 per super-block).
LLAMA_AVX512 float row_q6_k(const BlockQ6_K* w, const float* x, const float* sx, int64_t blocks) {
  const __m512i low = _mm512_set1_epi32(0xF), two = _mm512_set1_epi32(3);
  __m512 acc = _mm512_setzero_ps();
  float corr = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    const BlockQ6_K& blk = w[b];
    const float d = _cvtsh_ss(blk.d);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = blk.ql + 64 * half;
      const uint8_t* qh = blk.qh + 32 * half;
      const int8_t* sc = blk.scales + 8 * half;
      const float* xh = x + 256 * b + 128 * half;
      for (int i = 0; i < 2; ++i) {  // l in [16 i, 16 i + 16): sub-blocks is = i
        const __m512i a = load16_u8(ql + 16 * i), c = load16_u8(ql + 32 + 16 * i);
        const __m512i h = load16_u8(qh + 16 * i);
        // q1..q4 of ggml's dequantize_row_q6_K, as 0..63 (the -32 is in corr).
        const __m512i q1 =
            _mm512_or_si512(_mm512_and_si512(a, low),
                            _mm512_maskz_slli_epi32(kFull16, _mm512_and_si512(h, two), 4));
        const __m512i q2 = _mm512_or_si512(
            _mm512_and_si512(c, low),
            _mm512_maskz_slli_epi32(
                kFull16, _mm512_and_si512(_mm512_maskz_srli_epi32(kFull16, h, 2), two), 4));
        const __m512i q3 = _mm512_or_si512(
            _mm512_maskz_srli_epi32(kFull16, a, 4),
            _mm512_maskz_slli_epi32(
                kFull16, _mm512_and_si512(_mm512_maskz_srli_epi32(kFull16, h, 4), two), 4));
        const __m512i q4 = _mm512_or_si512(
            _mm512_maskz_srli_epi32(kFull16, c, 4),
            _mm512_maskz_slli_epi32(kFull16, _mm512_maskz_srli_epi32(kFull16, h, 6), 4));
        const __m512i qs[4] = {q1, q2, q3, q4};
        for (int k = 0; k < 4; ++k) {
          const float s = d * static_cast<float>(sc[i + 2 * k]);
          const __m512 t = _mm512_mul_ps(to_f32(qs[k]), _mm512_loadu_ps(xh + 32 * k + 16 * i));
          acc = _mm512_fmadd_ps(t, _mm512_set1_ps(s), acc);
          corr = std::fma(s, sx[16 * b + 8 * half + 2 * k + i], corr);
        }
      }
    }
  }
  return hsum(acc) - 32.0f * corr;
}

// Sums of consecutive runs of `run` values of x.
LLAMA_AVX512 void run_sums(const float* x, int64_t n, int64_t run, float* out) {
  for (int64_t s = 0; s < n / run; ++s) {
    __m512 a = _mm512_setzero_ps();
    for (int64_t k = 0; k < run; k += 16) a = _mm512_add_ps(a, _mm512_loadu_ps(x + s * run + k));
    out[s] = hsum(a);
  }
}

}  // namespace

LLAMA_AVX512 void blocks_matvec_rows_f32_avx512(std::span<float> out, const BlockMatrix& w,
                                                std::span<const float> x, int64_t row_begin,
                                                int64_t row_end) {
  const int64_t n = w.cols;
  const int64_t run = w.kind == BlockKind::q6_k ? 16 : 32;
  // Per-block sums of x, on the stack for rows up to 65536 values.
  alignas(64) float stack[4096];
  const bool sums = w.kind == BlockKind::q4_k || w.kind == BlockKind::q6_k;
  UninitializedArray<float> heap(sums && n / run > 4096 ? static_cast<size_t>(n / run) : 0);
  float* sx = heap.size() > 0 ? heap.data() : stack;
  if (sums) run_sums(x.data(), n, run, sx);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const std::byte* row = w.row(r);
    float v = 0.0f;
    switch (w.kind) {
      case BlockKind::q4_k:
        v = row_q4_k(reinterpret_cast<const BlockQ4_K*>(row), x.data(), sx, n / 256);
        break;
      case BlockKind::q6_k:
        v = row_q6_k(reinterpret_cast<const BlockQ6_K*>(row), x.data(), sx, n / 256);
        break;
      case BlockKind::f16:
      case BlockKind::bf16:
      case BlockKind::q8_0:
      case BlockKind::q4_0:
      case BlockKind::q4_1:
      case BlockKind::q5_0:
      case BlockKind::q5_1:
      case BlockKind::q5_k:
      case BlockKind::q3_k:
      case BlockKind::q2_k:
        break;  // the caller takes half_matvec_rows_avx512, or the portable path (q4_0: none)
    }
    out[static_cast<size_t>(r - row_begin)] = v;
  }
}

}  // namespace llama::detail
