// Private to the core: f16 <-> f32 conversion of short rows (an attention
// head's, up to a few hundred values), one struct per SimdLevel: F16C's
// vcvtph2ps / vcvtps2ph 8 a step on avx2, 16 on avx512 (masked forms: GCC 12
// warns on the unmasked ones' undefined source), half.hpp's bit manipulation
// for the rest of a row and on portable; every level the same values. The
// f16 KV cache's attention (f16_cache_attention.cpp) converts its rows with
// these, and round_to_f16 (half_rows.cpp) rounds the cache's rows with the
// same narrow. Not always_inline: each carries its level's target and is
// inlined into that level's bodies only.
//
// half_rows.cpp's whole-row widening (half.hpp's f16_to_f32 over spans) is
// a separate loop, for rows of weights: 32 values a step with a masked tail
// on avx512, 16 then 8 on avx2.
#pragma once

#include <cstdint>

#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

#include "kernels/x86/simd.hpp"
#endif

namespace llama::detail {
// Internal linkage, as inside the attention's file: each includer compiles its
// own copy and calls it directly (an inline function of external linkage is
// reached through the PLT from the shared library).
namespace {

struct F16RowsPortable {
  static void widen(const uint16_t* in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f16_to_f32(in[i]);
  }
  static void narrow(const float* in, uint16_t* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f32_to_f16(in[i]);
  }
};

#if LLAMA_HAVE_X86_TARGETS
struct F16RowsAvx2 {
  LLAMA_TARGET_AVX2 static void widen(const uint16_t* in, float* out, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) out[i] = f16_to_f32(in[i]);
  }
  LLAMA_TARGET_AVX2 static void narrow(const float* in, uint16_t* out, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
    }
    for (; i < n; ++i) out[i] = f32_to_f16(in[i]);
  }
};

struct F16RowsAvx512 {
  LLAMA_TARGET_AVX512 static void widen(const uint16_t* in, float* out, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
      _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(simd::kFull16, h));
    }
    for (; i < n; ++i) out[i] = f16_to_f32(in[i]);
  }
  LLAMA_TARGET_AVX512 static void narrow(const float* in, uint16_t* out, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256i h =
          _mm512_maskz_cvtps_ph(simd::kFull16, _mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
    }
    for (; i < n; ++i) out[i] = f32_to_f16(in[i]);
  }
};
#endif

}  // namespace
}  // namespace llama::detail
