// llama.cpp's q8_1 activation quantization (quantize_activations_q8_1_blocks,
// for Q4_1 and Q5_1 products) with AVX2 and AVX-512, a block of 32 at a time:
// the values and d are the q8_0 kernels' (gguf_quantize_simd.cpp); s =
// f16(amax / 127 * sum of the values) as f32, with amax the vector max of |x|
// (exact, and NaN passed over as the portable std::max does) and the sum an
// exact int32: the portable loop's bits on every level.
#include <immintrin.h>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/products/legacy_kernels.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {
namespace {

// s of a block: x f32 [32] and its values i8 [32].
LLAMA_TARGET_AVX2 inline float block_s(const float* x, const int8_t* v) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    m = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * i)), m);  // NaN: m
  }
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  const float amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
  const __m256i values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), values);
  const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
  const float s = amax / 127.f * static_cast<float>(_mm_cvtsi128_si32(s4));
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(s), _MM_FROUND_TO_NEAREST_INT)));
}

}  // namespace

LLAMA_TARGET_AVX512 void quantize_q8_1_blocks_avx512(const float* x, int64_t blocks, int8_t* values,
                                                     float* scales) {
  for (int64_t b = 0; b < blocks; ++b) {
    quantize_q8_0_blocks_avx512(x + 32 * b, 1, values + 32 * b, scales + 2 * b);
    scales[2 * b + 1] = block_s(x + 32 * b, values + 32 * b);
  }
}

LLAMA_TARGET_AVX2 void quantize_q8_1_blocks_avx2(const float* x, int64_t blocks, int8_t* values,
                                                 float* scales) {
  for (int64_t b = 0; b < blocks; ++b) {
    quantize_q8_0_blocks_avx2(x + 32 * b, 1, values + 32 * b, scales + 2 * b);
    scales[2 * b + 1] = block_s(x + 32 * b, values + 32 * b);
  }
}

}  // namespace llama::detail
