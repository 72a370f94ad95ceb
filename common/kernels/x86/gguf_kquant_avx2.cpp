// The AVX2 kernels for K-quant weights against q8_K activations
// (gguf_kquant.hpp's definition), decode and batch alike (KernelSet::avx2;
// compiled again for KernelSet::avx_vnni by gguf_kquant_avxvnni.cpp,
// x86/avx2_body.hpp).
//
// Each 32-value run of a super-block is one 256-bit register of codes:
// vpmaddubsw (code x value into int16 pairs: at most 2 x 63 x 127, so no
// saturation; Q6_K subtracts 32 x value the same way), then vpmaddwd (AVX-VNNI:
// vpdpwssd) with the run's sub-block scales gives int32 lane l = the sum over bytes 4l..4l+3,
// the definition's lane l exactly (integer sums, any order). The float steps
// (one fma per lane and block, the mins' fma, the final sums) are the
// definition's, in its order: the same bits as the portable loops, and a
// (row, vector) result does not depend on the other vectors.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "kernels/x86/avx2_body.hpp"
#include "kernels/x86/kquant_scales.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"

namespace llama::detail {
namespace {

// int16 lanes 0..7 = lo, 8..15 = hi: the scales of a run's two 16-value halves.
LLAMA_AVX2_BODY inline __m256i scale_pair(int16_t lo, int16_t hi) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(lo)), _mm_set1_epi16(hi), 1);
}

// Q4_K, and Q5_K (Block = BlockQ5_K: bit s of qh[i] adds 16 to value i of
// sub-block s; the mins enter whole per block, one scalar fma, as in the
// definition; Q4_K's in 4 lanes).
template <typename Block>
LLAMA_AVX2_BODY float q4_5_k_row(const std::byte* row, const Q8KBatch& x, int64_t t) {
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  const int64_t blocks = x.cols / kQK_K, groups32 = x.cols / 32;
  const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
  const int8_t* xv = x.values + t * x.cols;
  __m256 acc = _mm256_setzero_ps();
  __m128 accm = _mm_setzero_ps();
  float summs = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    const auto* blk = reinterpret_cast<const Block*>(row + b * sizeof(Block));
    const __m128i sm = q4_k_scales_mins(blk->scales);
    alignas(16) uint8_t sc[16];  // 8 scales, then the 8 mins
    _mm_store_si128(reinterpret_cast<__m128i*>(sc), sm);
    const float d8 = x.d[t * blocks + b];
    const float d = d8 * _cvtsh_ss(blk->d), dmin = -d8 * _cvtsh_ss(blk->dmin);
    const __m128i sums =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.sums + t * groups32 + 8 * b));
    const __m128i prod = _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_srli_si128(sm, 8)), sums);
    if constexpr (kFive) {
      const __m128i p2 = _mm_add_epi32(prod, _mm_shuffle_epi32(prod, 0x4E));
      const int32_t total = _mm_cvtsi128_si32(_mm_add_epi32(p2, _mm_shuffle_epi32(p2, 0xB1)));
      summs = std::fma(dmin, static_cast<float>(total), summs);
    } else {
      accm = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(prod), accm);
    }
    const int8_t* q = xv + b * kQK_K;
    __m256i qh;
    if constexpr (kFive) qh = load32(blk->qh);
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();  // two chains
    for (int j = 0; j < 4; ++j) {
      const __m256i qs = load32(blk->qs + 32 * j);
      __m256i lo = _mm256_and_si256(qs, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(qs, 4), m4);
      if constexpr (kFive) {  // bits 2j and 2j + 1 of qh, as 16
        lo = _mm256_or_si256(
            lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4));
        hi = _mm256_or_si256(
            hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4));
      }
      const __m256i plo = _mm256_maddubs_epi16(lo, load32(q + 64 * j));
      const __m256i phi = _mm256_maddubs_epi16(hi, load32(q + 64 * j + 32));
      s0 = dot_i16(s0, plo, _mm256_set1_epi16(sc[2 * j]));
      s1 = dot_i16(s1, phi, _mm256_set1_epi16(sc[2 * j + 1]));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(s0, s1)), acc);
  }
  if constexpr (kFive) return hsum8(acc) + summs;
  alignas(16) float m[4];
  _mm_store_ps(m, accm);
  return hsum8(acc) + ((m[0] + m[2]) + (m[1] + m[3]));
}

LLAMA_AVX2_BODY float q6_k_row(const std::byte* row, const Q8KBatch& x, int64_t t) {
  const int64_t blocks = x.cols / kQK_K;
  const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
  const __m256i m32 = _mm256_set1_epi8(32);
  const int8_t* xv = x.values + t * x.cols;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const auto* blk = reinterpret_cast<const BlockQ6_K*>(row + b * sizeof(BlockQ6_K));
    const int8_t* q = xv + b * kQK_K;
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();  // two chains
    for (int h = 0; h < 2; ++h) {                                      // halves of 128 values
      const __m256i ql01 = load32(blk->ql + 64 * h), ql23 = load32(blk->ql + 64 * h + 32);
      const __m256i qh = load32(blk->qh + 32 * h);
      for (int k = 0; k < 4; ++k) {  // runs of 32 values
        const __m256i low = k % 2 == 0 ? ql01 : ql23;
        const __m256i nib = _mm256_and_si256(k < 2 ? low : _mm256_srli_epi16(low, 4), m4);
        const __m256i top = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), m3);
        const __m256i code = _mm256_or_si256(nib, _mm256_slli_epi16(top, 4));
        const __m256i v = load32(q + 128 * h + 32 * k);
        const __m256i p16 =
            _mm256_sub_epi16(_mm256_maddubs_epi16(code, v), _mm256_maddubs_epi16(m32, v));
        const int8_t* s = blk->scales + 8 * h + 2 * k;
        if (k % 2 == 0) {
          s0 = dot_i16(s0, p16, scale_pair(s[0], s[1]));
        } else {
          s1 = dot_i16(s1, p16, scale_pair(s[0], s[1]));
        }
      }
    }
    const float d = x.d[t * blocks + b] * _cvtsh_ss(blk->d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(s0, s1)), acc);
  }
  return hsum8(acc);
}

}  // namespace

LLAMA_AVX2_BODY void LLAMA_AVX2_BODY_NAME(kquant_q8_k_rows)(const BlockMatrix& w, const Q8KBatch& x,
                                                            float* out, int64_t out_stride,
                                                            int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const std::byte* row = w.row(r);
    for (int64_t t = 0; t < x.n; ++t) {
      float& o = out[t * out_stride + r - row_begin];
      switch (w.kind) {
        case BlockKind::q4_k:
          o = q4_5_k_row<BlockQ4_K>(row, x, t);
          break;
        case BlockKind::q5_k:
          o = q4_5_k_row<BlockQ5_K>(row, x, t);
          break;
        default:
          o = q6_k_row(row, x, t);
          break;
      }
    }
  }
}

}  // namespace llama::detail
