// The AVX-512 VNNI kernel for Q3_K and Q2_K weights against q8_K activations
// (gguf_kquant.hpp's definition), decode and batch alike.
//
// A row's super-block is unpacked once into 4 registers of 64 codes (register
// j: runs 2j and 2j + 1 of 32 values in its 256-bit halves; Q3_K's codes
// biased by 4 to [0, 7], Q2_K's in [0, 3]), and then every vector of a group
// of up to 8 takes it: vpmaddubsw (code x value, int16 pairs: at most 2 x 7 x
// 127, no saturation; Q3_K subtracts 4 x value the same way) then vpdpwssd
// with the sub-block scales into 16 int32 lanes. The 256-bit halves of those
// lanes hold the same bytes of two 32-value runs, so their sum is the
// definition's 8 lanes exactly (integer sums, any order). The float steps
// (Q2_K's mins fma, then one fma per lane and block, the final sums) are the
// definition's, in its order: the same bits as the portable loops, and a
// (row, vector) result does not depend on the others.
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "kernels/x86/kquant_lanes.hpp"
#include "kernels/x86/kquant_scales.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"

namespace llama::detail {
namespace {

// A pair of 16-bit shift counts: a in the low 256 bits, b in the high ones.
LLAMA_KQUANT_VNNI inline __m512i shifts(int a, int b) {
  return _mm512_maskz_inserti64x4(0xFF, _mm512_set1_epi16(static_cast<int16_t>(a)),
                                  _mm256_set1_epi16(static_cast<int16_t>(b)), 1);
}

// The 32 bytes at p in both 256-bit halves.
LLAMA_KQUANT_VNNI inline __m512i twice(const uint8_t* p) {
  return _mm512_maskz_broadcast_i64x4(0xFF,
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

template <int N, bool kThree>
LLAMA_KQUANT_VNNI void row_vectors(const std::byte* row, const Q8KBatch& x, int64_t t0, float* out,
                                   int64_t out_stride) {
  using Block = std::conditional_t<kThree, BlockQ3_K, BlockQ2_K>;
  const int64_t blocks = x.cols / kQK_K, groups16 = x.cols / 16;
  const __m512i m3 = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1), four = _mm512_set1_epi8(4);
  __m512i code_shift[4], bit_shift[4];  // register j: runs 2j, 2j + 1
  for (int j = 0; j < 4; ++j) {
    code_shift[j] = shifts(4 * (j % 2), 4 * (j % 2) + 2);
    bit_shift[j] = shifts(2 * j, 2 * j + 1);
  }
  __m256 acc[N];
  for (int t = 0; t < N; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const auto* blk = reinterpret_cast<const Block*>(row + b * sizeof(Block));
    __m512i w[4], scale[4];
    __m256i mins16 = _mm256_setzero_si256();
    __m256i scales16;
    if constexpr (kThree) {
      scales16 = _mm256_cvtepi8_epi16(q3_k_scales(blk->scales));
    } else {
      const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales));
      const __m128i m4 = _mm_set1_epi8(0x0F);
      scales16 = _mm256_cvtepu8_epi16(_mm_and_si128(packed, m4));
      mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), m4));
    }
    for (int j = 0; j < 4; ++j) {
      const __m512i qs = twice(blk->qs + 32 * (j / 2));
      w[j] = _mm512_and_si512(_mm512_srlv_epi16(qs, code_shift[j]), m3);
      if constexpr (kThree) {  // bits 2j and 2j + 1 of hmask over the halves, as 4
        const __m512i hm = twice(blk->hmask);
        w[j] = _mm512_or_si512(
            w[j], _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(hm, bit_shift[j]), one), 2));
      }
      scale[j] = _mm512_permutexvar_epi16(spread_index(4 * j, 8), widen(scales16));
    }
    const float wd = _cvtsh_ss(blk->d);
    float wmin = 0.0f;
    if constexpr (!kThree) wmin = _cvtsh_ss(blk->dmin);
    for (int t = 0; t < N; ++t) {
      const int8_t* q = x.values + (t0 + t) * x.cols + b * kQK_K;
      __m512i s[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};  // two chains
      for (int j = 0; j < 4; ++j) {
        const __m512i v = _mm512_loadu_si512(q + 64 * j);
        __m512i p16 = _mm512_maddubs_epi16(w[j], v);
        if constexpr (kThree) p16 = _mm512_sub_epi16(p16, _mm512_maddubs_epi16(four, v));
        s[j % 2] = _mm512_dpwssd_epi32(s[j % 2], scale[j], p16);
      }
      const float d8 = x.d[(t0 + t) * blocks + b];
      if constexpr (!kThree) {
        const __m256i bsums = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(x.bsums + (t0 + t) * groups16 + 16 * b));
        const __m256i prod = _mm256_madd_epi16(mins16, bsums);
        acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(-d8 * wmin), _mm256_cvtepi32_ps(prod), acc[t]);
      }
      acc[t] =
          _mm256_fmadd_ps(_mm256_set1_ps(d8 * wd), lanes8(_mm512_add_epi32(s[0], s[1])), acc[t]);
    }
  }
  for (int t = 0; t < N; ++t) out[t * out_stride] = hsum8(acc[t]);
}

template <int N>
LLAMA_KQUANT_VNNI void kind_vectors(const BlockMatrix& w, const std::byte* row, const Q8KBatch& x,
                                    int64_t t0, float* out, int64_t out_stride) {
  if (w.kind == BlockKind::q3_k) {
    row_vectors<N, true>(row, x, t0, out, out_stride);
  } else {
    row_vectors<N, false>(row, x, t0, out, out_stride);
  }
}

constexpr Passes kPasses = make_passes([]<int N>() { return &kind_vectors<N>; });

}  // namespace

LLAMA_KQUANT_VNNI void low_kquant_rows_vnni(const BlockMatrix& w, const Q8KBatch& x, float* out,
                                            int64_t out_stride, int64_t row_begin,
                                            int64_t row_end) {
  rows_in_passes(kPasses, w, x, out, out_stride, row_begin, row_end);
}

}  // namespace llama::detail
