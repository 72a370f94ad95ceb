// runq.c's activation quantization (quantize_activations, llama2c_int8.cpp)
// with AVX-512, 16 values at a time: std::round is a library call per value,
// so the avx512 level runs the same operations lane by lane, with the same
// bits. Here because it is written with intrinsics; the portable loop and the
// level choice stay in llama2c_int8.cpp.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/products/llama2c_int8_kernels.hpp"
#include "kernels/x86/simd.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {
namespace {

// One group of `gs` values: its values into `values`, returns its scale.
LLAMA_TARGET_AVX512 float quantize_group_avx512(const float* x, int64_t gs, int8_t* values) {
  using simd::kFull16;
  using simd::tail_mask;
  // vmaxps returns its second operand when either is NaN: std::max(wmax, NaN).
  __m512 lanes_max = _mm512_setzero_ps();
  for (int64_t i = 0; i < gs; i += 16) {
    lanes_max = _mm512_maskz_max_ps(
        kFull16, _mm512_abs_ps(_mm512_maskz_loadu_ps(tail_mask(gs - i), x + i)), lanes_max);
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, lanes_max);
  const float scale = *std::max_element(lanes, lanes + 16) / 127.0f;
  const __m512 vscale = _mm512_set1_ps(scale), half = _mm512_set1_ps(0.5f);
  const __m512 one = _mm512_set1_ps(1.0f), lo = _mm512_set1_ps(-127.0f),
               hi = _mm512_set1_ps(127.0f), zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < gs; i += 16) {
    const __mmask16 m = tail_mask(gs - i);
    const __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), vscale);
    // std::round (half away from zero): truncate, then step away from zero
    // when the exact remainder is at least 1/2 (q - trunc(q) is exact).
    const __m512 t = _mm512_maskz_roundscale_ps(kFull16, q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask16 away = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(q, t)), half, _CMP_GE_OQ);
    __m512 r = _mm512_mask_add_ps(t, away & _mm512_cmp_ps_mask(q, zero, _CMP_GT_OQ), t, one);
    r = _mm512_mask_sub_ps(r, away & _mm512_cmp_ps_mask(q, zero, _CMP_LT_OQ), r, one);
    // to_int8: NaN gives 0, the rest is clamped to [-127, 127].
    const __mmask16 number = _mm512_cmp_ps_mask(r, r, _CMP_ORD_Q);
    r = _mm512_maskz_min_ps(kFull16, _mm512_maskz_max_ps(kFull16, r, lo), hi);
    _mm512_mask_cvtepi32_storeu_epi8(values + i, m, _mm512_maskz_cvttps_epi32(number, r));
  }
  return scale;
}

}  // namespace

// Compiled for the build's baseline, as the portable loop it stands beside:
// each group is a call into the AVX-512 body above.
void quantize_groups_avx512(const float* x, int64_t groups, int64_t group_size, int8_t* values,
                            float* scales) {
  const auto gs = static_cast<size_t>(group_size);
  for (size_t g = 0; g < static_cast<size_t>(groups); ++g) {
    scales[g] = quantize_group_avx512(x + g * gs, group_size, values + g * gs);
  }
}

}  // namespace llama::detail
