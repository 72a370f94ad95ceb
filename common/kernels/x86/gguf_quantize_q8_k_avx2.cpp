// llama.cpp's q8_K activation quantization (quantize_activations_q8_k) with
// AVX2, gguf_quantize_q8_k.cpp's steps in 256-bit registers, so the portable
// loop's bits (tests/test_gguf_kquant.cpp compares them). The int32 results
// become bytes by truncation, as the portable static_cast<int8_t> (and the
// AVX-512 vpmovdb) do: the low byte of each, then unsigned packs that keep
// 0..255 as they are.
#include <immintrin.h>

#include <cstring>

#include "kernels/products/gguf_kquant_kernels.hpp"
#include "llama/kernels/numbers/gguf_blocks.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {

LLAMA_TARGET_AVX2 void quantize_q8_k_avx2(const float* x, int64_t blocks, int8_t* values,
                                          float* d) {
  constexpr int kVectors = kQK_K / 8;
  const __m256 sign = _mm256_set1_ps(-0.0f), magic = _mm256_set1_ps(12582912.f);
  const __m256i mantissa = _mm256_set1_epi32(0x007fffff), bias = _mm256_set1_epi32(0x00400000);
  const __m256i top = _mm256_set1_epi32(127), low_byte = _mm256_set1_epi32(0xFF);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * kQK_K;
    int8_t* q = values + b * kQK_K;
    __m256 m = _mm256_setzero_ps();
    for (int v = 0; v < kVectors; ++v) {
      m = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + 8 * v)), m);  // NaN: m
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m);
    float amax = 0.0f;
    for (float l : lanes) amax = amax < l ? l : amax;
    if (amax == 0.0f) {
      d[b] = 0.0f;
      std::memset(q, 0, kQK_K);
      continue;
    }
    const __m256 target = _mm256_set1_ps(amax);
    float max = 0.0f;
    for (int v = 0; v < kVectors; ++v) {
      const int hit = _mm256_movemask_ps(
          _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + 8 * v)), target, _CMP_EQ_OQ));
      if (hit != 0) {
        max = xb[8 * v + __builtin_ctz(static_cast<unsigned>(hit))];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m256 s = _mm256_set1_ps(iscale);
    for (int v = 0; v < kVectors; v += 4) {
      __m256i n[4];
      for (int i = 0; i < 4; ++i) {
        const __m256 biased =
            _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 8 * (v + i)), s), magic);
        const __m256i k =
            _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(biased), mantissa), bias);
        n[i] = _mm256_and_si256(_mm256_min_epi32(k, top), low_byte);
      }
      // Per 128-bit lane: 4 bytes of each of n[0..3]; `order` puts them back.
      const __m256i bytes =
          _mm256_packus_epi16(_mm256_packus_epi32(n[0], n[1]), _mm256_packus_epi32(n[2], n[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 8 * v),
                          _mm256_permutevar8x32_epi32(bytes, order));
    }
    d[b] = 1 / iscale;
  }
}

}  // namespace llama::detail
