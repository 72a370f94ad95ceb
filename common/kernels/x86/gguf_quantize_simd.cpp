// llama.cpp's x86 activation quantization for Q8_0 products
// (quantize_activations_q8_0_blocks) with AVX2 and AVX-512, a block of 32
// values at a time: lane by lane the portable loop's operations, so the same
// bits on every level (tests/test_gguf_products.cpp compares them).
//   amax  = max |x| (vmaxps returns its second operand, the running max, when
//           a value is NaN: std::max(amax, NaN) keeps amax too; max is exact,
//           so the lanes' order does not matter)
//   d     = f16(amax / 127) rounded to nearest even (vcvtps2ph, as f32_to_f16)
//   value = nearbyint(x * (127 / amax)) (vroundps to nearest even), clamped to
//           [-128, 127], NaN -> 0; a block of zeros has id 0 and values 0.
#include <immintrin.h>

#include "kernels/products/gguf_kernels.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {

#if LLAMA_HAVE_X86_TARGETS

namespace {

// A block's scale from its lanes' maxima of |x|: scale = f16(amax / 127) as
// f32, rounded to nearest even; returns 127 / amax, 0 for a block of zeros.
// f16c only, so it inlines into both levels' kernels.
template <int N>
__attribute__((target("f16c"))) LLAMA_ALWAYS_INLINE float block_scale(const float (&lanes)[N],
                                                                      float& scale) {
  float amax = 0.0f;
  for (float l : lanes) amax = amax < l ? l : amax;
  const __m128i d = _mm_cvtps_ph(_mm_set_ss(amax / 127.f), _MM_FROUND_TO_NEAREST_INT);
  scale = _mm_cvtss_f32(_mm_cvtph_ps(d));
  return amax != 0.0f ? 127.f / amax : 0.0f;
}

}  // namespace

LLAMA_TARGET_AVX512 void quantize_q8_0_blocks_avx512(const float* x, int64_t blocks, int8_t* values,
                                                     float* scales) {
  using simd::kFull16;
  const __m512 lo = _mm512_set1_ps(-128.0f), hi = _mm512_set1_ps(127.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
    const __m512 m =
        _mm512_maskz_max_ps(kFull16, _mm512_abs_ps(v0),
                            _mm512_maskz_max_ps(kFull16, _mm512_abs_ps(v1), _mm512_setzero_ps()));
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, m);
    const __m512 id = _mm512_set1_ps(block_scale(lanes, scales[b]));
    for (int h = 0; h < 2; ++h) {
      const __m512 q = _mm512_mul_ps(h == 0 ? v0 : v1, id);
      const __mmask16 number = _mm512_cmp_ps_mask(q, q, _CMP_ORD_Q);
      const __m512 r = _mm512_maskz_min_ps(
          kFull16,
          _mm512_maskz_max_ps(
              kFull16,
              _mm512_maskz_roundscale_ps(kFull16, q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
              lo),
          hi);
      const __m512i n = _mm512_maskz_cvtps_epi32(number, r);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(values + 32 * b + 16 * h),
                       _mm512_maskz_cvtepi32_epi8(kFull16, n));
    }
  }
}

LLAMA_TARGET_AVX2 void quantize_q8_0_blocks_avx2(const float* x, int64_t blocks, int8_t* values,
                                                 float* scales) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    __m256 v[4];
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(x + 32 * b + 8 * i);
      m = _mm256_max_ps(_mm256_andnot_ps(sign, v[i]), m);  // NaN: the second operand
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m);
    const __m256 id = _mm256_set1_ps(block_scale(lanes, scales[b]));
    __m256i n[4];
    for (int i = 0; i < 4; ++i) {
      const __m256 q = _mm256_mul_ps(v[i], id);
      const __m256 number = _mm256_cmp_ps(q, q, _CMP_ORD_Q);
      __m256 r = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      r = _mm256_and_ps(_mm256_min_ps(_mm256_max_ps(r, lo), hi), number);  // NaN -> +0
      n[i] = _mm256_cvtps_epi32(r);
    }
    // int32 -> int16 -> int8 with saturating packs (the values fit: exact),
    // then undo the packs' 128-bit lane interleave.
    const __m256i p =
        _mm256_packs_epi16(_mm256_packs_epi32(n[0], n[1]), _mm256_packs_epi32(n[2], n[3]));
    const __m256i ordered =
        _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(values + 32 * b), ordered);
  }
}

#endif

}  // namespace llama::detail
