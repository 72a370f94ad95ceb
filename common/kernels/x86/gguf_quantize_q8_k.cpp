// llama.cpp's q8_K activation quantization (quantize_activations_q8_k) with
// AVX-512, a block of 256 values at a time, lane by lane the portable loop's
// operations, so the same bits (tests/test_gguf_kquant.cpp compares them):
//   amax = max |x| (vmaxps keeps the running max when a value is NaN, as the
//          portable `>` does; max is exact, so the lanes' order does not matter)
//   max  = the first x whose |x| is amax, with its sign
//   v    = bits(iscale * x + 1.5 * 2^23) & 0x7fffff - 0x400000 (ggml's
//          nearest_int), at most 127; d = 1 / iscale
#include <immintrin.h>

#include <cstring>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"

namespace llama::detail {

#define LLAMA_Q8K_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

LLAMA_Q8K_AVX512 void quantize_q8_k_avx512(const float* x, int64_t blocks, int8_t* values,
                                           float* d) {
  constexpr int kVectors = kQK_K / 16;
  const __m512i mantissa = _mm512_set1_epi32(0x007fffff), bias = _mm512_set1_epi32(0x00400000);
  const __m512i top = _mm512_set1_epi32(127);
  const __m512 magic = _mm512_set1_ps(12582912.f);
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * kQK_K;
    int8_t* q = values + b * kQK_K;
    __m512 m = _mm512_setzero_ps();
    for (int v = 0; v < kVectors; ++v)
      m = _mm512_maskz_max_ps(0xFFFF, _mm512_abs_ps(_mm512_loadu_ps(xb + 16 * v)), m);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, m);
    float amax = 0.0f;
    for (float l : lanes) amax = amax < l ? l : amax;
    if (amax == 0.0f) {
      d[b] = 0.0f;
      std::memset(q, 0, kQK_K);
      continue;
    }
    const __m512 target = _mm512_set1_ps(amax);
    float max = 0.0f;
    for (int v = 0; v < kVectors; ++v) {
      const __mmask16 hit =
          _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(xb + 16 * v)), target, _CMP_EQ_OQ);
      if (hit != 0) {
        max = xb[16 * v + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m512 s = _mm512_set1_ps(iscale);
    for (int v = 0; v < kVectors; ++v) {
      const __m512 biased = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(xb + 16 * v), s), magic);
      const __m512i n =
          _mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(biased), mantissa), bias);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * v),
                       _mm512_maskz_cvtepi32_epi8(0xFFFF, _mm512_maskz_min_epi32(0xFFFF, n, top)));
    }
    d[b] = 1 / iscale;
  }
}

}  // namespace llama::detail
