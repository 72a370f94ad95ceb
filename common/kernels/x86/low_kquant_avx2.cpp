// The AVX2 kernel for Q3_K and Q2_K weights against q8_K activations
// (gguf_kquant.hpp's definition, products/low_kquant_dots.cpp), decode and batch alike
// (KernelSet::avx2; compiled again for KernelSet::avx_vnni by
// low_kquant_avxvnni.cpp, x86/avx2_body.hpp).
//
// Each 32-value run k of a super-block is one 256-bit register of codes (Q3_K's
// biased by 4 to [0, 7]: bit k of hmask adds 4; Q2_K's in [0, 3]): vpmaddubsw
// (code x value into int16 pairs: at most 2 x 7 x 128, no saturation; Q3_K
// subtracts 4 x value the same way), then vpmaddwd (AVX-VNNI: vpdpwssd) with the run's two
// sub-block scales gives int32 lane l = the sum over bytes 4l..4l+3 of the
// run, the definition's lane l exactly (integer sums, any order). The float
// steps (Q2_K's mins fma, then one fma per lane and block, the final sums)
// are the definition's, in its order: the same bits as the portable loops, and
// a (row, vector) result does not depend on the other vectors.
#include <immintrin.h>

#include <type_traits>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "kernels/x86/avx2_body.hpp"
#include "kernels/x86/kquant_scales.hpp"
#include "llama/kernels/numbers/low_kquant_blocks.hpp"

namespace llama::detail {
namespace {

// Q3_K (kThree) or Q2_K: row `row` against vector t.
template <bool kThree>
LLAMA_AVX2_BODY float row_dot(const std::byte* row, const Q8KBatch& x, int64_t t) {
  using Block = std::conditional_t<kThree, BlockQ3_K, BlockQ2_K>;
  const int64_t blocks = x.cols / kQK_K, groups16 = x.cols / 16;
  const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
  const __m256i four = _mm256_set1_epi8(4);
  const int8_t* xv = x.values + t * x.cols;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const auto* blk = reinterpret_cast<const Block*>(row + b * sizeof(Block));
    const float d8 = x.d[t * blocks + b];
    alignas(32) int16_t sc[16];  // the 16 sub-block scales
    if constexpr (kThree) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(sc),
                         _mm256_cvtepi8_epi16(q3_k_scales(blk->scales)));
    } else {
      const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales));
      const __m128i m4 = _mm_set1_epi8(0x0F);
      _mm256_store_si256(reinterpret_cast<__m256i*>(sc),
                         _mm256_cvtepu8_epi16(_mm_and_si128(packed, m4)));
      const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), m4));
      const __m256i bsums = load32(x.bsums + t * groups16 + 16 * b);
      const __m256i prod = _mm256_madd_epi16(mins16, bsums);
      const float dmin = -d8 * _cvtsh_ss(blk->dmin);
      acc = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(prod), acc);
    }
    const int8_t* q = xv + b * kQK_K;
    __m256i hm;
    if constexpr (kThree) hm = load32(blk->hmask);
    __m256i s[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};  // two chains
    for (int h = 0; h < 2; ++h) {
      const __m256i qs = load32(blk->qs + 32 * h);
      for (int j = 0; j < 4; ++j) {
        const int k = 4 * h + j;  // the run
        __m256i code = _mm256_and_si256(_mm256_srli_epi16(qs, 2 * j), m3);
        if constexpr (kThree) {
          code = _mm256_or_si256(
              code, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, k), one), 2));
        }
        const __m256i v = load32(q + 32 * k);
        __m256i p16 = _mm256_maddubs_epi16(code, v);
        if constexpr (kThree) p16 = _mm256_sub_epi16(p16, _mm256_maddubs_epi16(four, v));
        const __m256i scale = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_set1_epi16(sc[2 * k])), _mm_set1_epi16(sc[2 * k + 1]), 1);
        s[k % 2] = dot_i16(s[k % 2], p16, scale);
      }
    }
    const float d = d8 * _cvtsh_ss(blk->d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(_mm256_add_epi32(s[0], s[1])), acc);
  }
  return hsum8(acc);
}

}  // namespace

LLAMA_AVX2_BODY void LLAMA_AVX2_BODY_NAME(low_kquant_rows)(const BlockMatrix& w, const Q8KBatch& x,
                                                           float* out, int64_t out_stride,
                                                           int64_t row_begin, int64_t row_end) {
  const bool three = w.kind == BlockKind::q3_k;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const std::byte* row = w.row(r);
    for (int64_t t = 0; t < x.n; ++t) {
      out[t * out_stride + r - row_begin] =
          three ? row_dot<true>(row, x, t) : row_dot<false>(row, x, t);
    }
  }
}

}  // namespace llama::detail
