// The AVX-512 VNNI kernels for K-quant weights against q8_K activations
// (gguf_kquant.hpp's definition), decode and batch alike.
//
// A row's super-block is unpacked once into registers (Q4_K: 4 x 64 codes,
// low nibbles of a 32-byte run in the low half, high nibbles in the high half;
// Q5_K: the same with the bits of qh as 16;
// Q6_K: 4 x 64 codes of 6 bits), and then every vector of a group of up to 8
// takes it: vpmaddubsw (code x value, int16 pairs: at most 2 x 63 x 127, no
// saturation) then vpdpwssd with the sub-block scales into 16 int32 lanes.
// The 256-bit halves of those lanes hold the same bytes of two 32-value runs,
// so their sum is the definition's 8 lanes exactly (integer sums, any order).
// The float steps (one fma per lane and block, the mins' fma on 4 lanes, the
// final sums) are the definition's, in its order: the same bits as the
// portable loops, and a (row, vector) result does not depend on the others.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "kernels/x86/kquant_lanes.hpp"
#include "kernels/x86/kquant_scales.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"

namespace llama::detail {
namespace {

// Q4_K, and Q5_K (Block = BlockQ5_K: bit s of qh[i] adds 16 to value i of
// sub-block s; the mins enter whole per block, one scalar fma, as in the
// definition).
template <int N, typename Block>
LLAMA_KQUANT_VNNI void q4_5_k_row(const std::byte* row, const Q8KBatch& x, int64_t t0, float* out,
                                  int64_t out_stride) {
  const int64_t blocks = x.cols / kQK_K, groups32 = x.cols / 32;
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  const __m512i m4 = _mm512_set1_epi8(0x0F), one = _mm512_set1_epi8(1);
  const __m512i halves =
      _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  __m512i halves16[4];  // Q5_K: shifts 2j and 2j + 1 over the halves of register j
  for (int j = 0; j < 4; ++j) {
    halves16[j] = _mm512_maskz_inserti64x4(0xFF, _mm512_set1_epi16(static_cast<int16_t>(2 * j)),
                                           _mm256_set1_epi16(static_cast<int16_t>(2 * j + 1)), 1);
  }
  __m512i spread[4];  // sub-blocks 2j, 2j + 1 over the halves of register j
  for (int j = 0; j < 4; ++j) spread[j] = spread_index(2 * j, 16);
  __m256 acc[N];
  __m128 accm[N];
  float summs[N];  // Q5_K's mins
  for (int t = 0; t < N; ++t) {
    summs[t] = 0.0f;
    acc[t] = _mm256_setzero_ps();
    accm[t] = _mm_setzero_ps();
  }
  for (int64_t b = 0; b < blocks; ++b) {
    const auto* blk = reinterpret_cast<const Block*>(row + b * sizeof(Block));
    const __m128i sm = q4_k_scales_mins(blk->scales);
    const __m512i scales16 = widen(_mm256_cvtepu8_epi16(sm));
    const __m128i mins16 = _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8));
    __m512i w[4], scale[4];
    for (int j = 0; j < 4; ++j) {
      const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qs + 32 * j));
      w[j] =
          _mm512_and_si512(_mm512_srlv_epi16(_mm512_maskz_broadcast_i64x4(0xFF, qs), halves), m4);
      if constexpr (kFive) {  // bits 2j and 2j + 1 of qh over the halves, as 16
        const __m512i qh = _mm512_maskz_broadcast_i64x4(
            0xFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qh)));
        w[j] = _mm512_or_si512(
            w[j], _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, halves16[j]), one), 4));
      }
      scale[j] = _mm512_permutexvar_epi16(spread[j], scales16);
    }
    const float wd = _cvtsh_ss(blk->d), wmin = _cvtsh_ss(blk->dmin);
    for (int t = 0; t < N; ++t) {
      const int8_t* q = x.values + (t0 + t) * x.cols + b * kQK_K;
      __m512i s[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};  // two chains
      for (int j = 0; j < 4; ++j) {
        const __m512i p16 = _mm512_maddubs_epi16(w[j], _mm512_loadu_si512(q + 64 * j));
        s[j % 2] = _mm512_dpwssd_epi32(s[j % 2], scale[j], p16);
      }
      const float d8 = x.d[(t0 + t) * blocks + b];
      const float d = d8 * wd, dmin = -d8 * wmin;
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d), lanes8(_mm512_add_epi32(s[0], s[1])), acc[t]);
      const __m128i sums =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.sums + (t0 + t) * groups32 + 8 * b));
      const __m128i prod = _mm_madd_epi16(mins16, sums);
      if constexpr (kFive) {
        const __m128i p2 = _mm_add_epi32(prod, _mm_shuffle_epi32(prod, 0x4E));
        const int32_t total = _mm_cvtsi128_si32(_mm_add_epi32(p2, _mm_shuffle_epi32(p2, 0xB1)));
        summs[t] = std::fma(dmin, static_cast<float>(total), summs[t]);
      } else {
        accm[t] = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(prod), accm[t]);
      }
    }
  }
  for (int t = 0; t < N; ++t) {
    alignas(16) float m[4];
    _mm_store_ps(m, accm[t]);
    out[t * out_stride] =
        kFive ? hsum8(acc[t]) + summs[t] : hsum8(acc[t]) + ((m[0] + m[2]) + (m[1] + m[3]));
  }
}

template <int N>
LLAMA_KQUANT_VNNI void q6_k_row(const std::byte* row, const Q8KBatch& x, int64_t t0, float* out,
                                int64_t out_stride) {
  const int64_t blocks = x.cols / kQK_K;
  const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(3);
  const __m512i m32 = _mm512_set1_epi8(32);
  // qh's shifts for the 4 runs of a half: runs 0 and 1 in a register, 2 and 3 in the next.
  const __m512i shift01 =
      _mm512_maskz_inserti64x4(0xFF, _mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  const __m512i shift23 =
      _mm512_maskz_inserti64x4(0xFF, _mm512_set1_epi16(4), _mm256_set1_epi16(6), 1);
  __m512i spread[4];  // register j: 16-value sub-blocks 4j .. 4j + 3
  for (int j = 0; j < 4; ++j) spread[j] = spread_index(4 * j, 8);
  __m256 acc[N];
  for (int t = 0; t < N; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const auto* blk = reinterpret_cast<const BlockQ6_K*>(row + b * sizeof(BlockQ6_K));
    const __m512i scales16 =
        widen(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales))));
    __m512i w[4], scale[4];
    for (int h = 0; h < 2; ++h) {
      const __m512i ql = _mm512_loadu_si512(blk->ql + 64 * h);
      const __m512i qh = _mm512_maskz_broadcast_i64x4(
          0xFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qh + 32 * h)));
      const __m512i hi01 = _mm512_and_si512(_mm512_srlv_epi16(qh, shift01), m3);
      const __m512i hi23 = _mm512_and_si512(_mm512_srlv_epi16(qh, shift23), m3);
      w[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_slli_epi16(hi01, 4));
      w[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                     _mm512_slli_epi16(hi23, 4));
    }
    for (int j = 0; j < 4; ++j) scale[j] = _mm512_permutexvar_epi16(spread[j], scales16);
    const float wd = _cvtsh_ss(blk->d);
    for (int t = 0; t < N; ++t) {
      const int8_t* q = x.values + (t0 + t) * x.cols + b * kQK_K;
      __m512i s[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};  // two chains
      for (int j = 0; j < 4; ++j) {
        const __m512i v = _mm512_loadu_si512(q + 64 * j);
        const __m512i p16 =
            _mm512_sub_epi16(_mm512_maddubs_epi16(w[j], v), _mm512_maddubs_epi16(m32, v));
        s[j % 2] = _mm512_dpwssd_epi32(s[j % 2], scale[j], p16);
      }
      const float d = x.d[(t0 + t) * blocks + b] * wd;
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d), lanes8(_mm512_add_epi32(s[0], s[1])), acc[t]);
    }
  }
  for (int t = 0; t < N; ++t) out[t * out_stride] = hsum8(acc[t]);
}

template <int N>
LLAMA_KQUANT_VNNI void row_vectors(const BlockMatrix& w, const std::byte* row, const Q8KBatch& x,
                                   int64_t t0, float* out, int64_t out_stride) {
  if (w.kind == BlockKind::q4_k) {
    q4_5_k_row<N, BlockQ4_K>(row, x, t0, out, out_stride);
  } else if (w.kind == BlockKind::q5_k) {
    q4_5_k_row<N, BlockQ5_K>(row, x, t0, out, out_stride);
  } else {
    q6_k_row<N>(row, x, t0, out, out_stride);
  }
}

constexpr Passes kPasses = make_passes([]<int N>() { return &row_vectors<N>; });

}  // namespace

LLAMA_KQUANT_VNNI void kquant_q8_k_rows_vnni(const BlockMatrix& w, const Q8KBatch& x, float* out,
                                             int64_t out_stride, int64_t row_begin,
                                             int64_t row_end) {
  rows_in_passes(kPasses, w, x, out, out_stride, row_begin, row_end);
}

}  // namespace llama::detail
