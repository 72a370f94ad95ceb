// Whole rows of half-precision values converted, dispatched on the SIMD
// level: f16 / bf16 widened to f32 (half.hpp's span conversions) and f32
// rounded to f16 (round_to_f16). Here because both are written with
// intrinsics per level; the rounding is f16_rows.hpp's narrow, which the f16
// cache attention's rows use too.
//
// Widening: avx512 16 values a step (vcvtph2ps for f16; vpmovzxwd + vpslld for
// bf16), avx2 8 a step (F16C's vcvtph2ps; vpmovzxwd + vpslld), portable the
// scalar conversions of half.hpp / half.cpp, which branch on the exponent and
// normalise subnormals in a loop. Every level gives the scalar conversion's
// bits for all 65536 inputs: vcvtph2ps widens f16 subnormals exactly whatever
// MXCSR's DAZ says and quiets a signalling NaN by setting the top mantissa
// bit, as f16_to_f32(uint16_t) does (tests/test_half_convert.cpp checks every
// input at every level the CPU has). Callers: graph's GEMM at the
// avx2/portable levels (a bf16/f16 row tile per call), dequantize_rows and the
// block products' row dequantization, the reference backend's rows.
//
// Rounding: vcvtps2ph to nearest even on avx2 and avx512, f32_to_f16 for the
// rest of a row and on portable: the same bits (the KV cache's f16 rows).
#include <string>

#include "kernels/x86/f16_rows.hpp"
#include "llama/error.hpp"
#include "llama/kernels/numbers/half.hpp"
#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

#include "kernels/x86/simd.hpp"
#endif

namespace llama {
namespace {

// in/out: n values each (u16 [n] -> f32 [n]).
void f16_rows_portable(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = f16_to_f32(in[i]);
}
void bf16_rows_portable(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(in[i]);
}

#if LLAMA_HAVE_X86_TARGETS
// The maskz forms (simd.hpp's kFull16): GCC 12 warns that the plain forms'
// undefined source "may be used uninitialized".
using detail::simd::bf16_widen16;
using detail::simd::bf16_widen8;
using detail::simd::kFull16;
using detail::simd::tail_mask;

LLAMA_TARGET_AVX512 void f16_rows_avx512(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 16));
    _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(kFull16, a));
    _mm512_storeu_ps(out + i + 16, _mm512_maskz_cvtph_ps(kFull16, b));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(out + i, m,
                          _mm512_maskz_cvtph_ps(m, _mm256_maskz_loadu_epi16(m, in + i)));
  }
}

LLAMA_TARGET_AVX512 void bf16_rows_avx512(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 16));
    _mm512_storeu_ps(out + i, bf16_widen16(kFull16, a));
    _mm512_storeu_ps(out + i + 16, bf16_widen16(kFull16, b));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(out + i, m, bf16_widen16(m, _mm256_maskz_loadu_epi16(m, in + i)));
  }
}

LLAMA_TARGET_AVX2 void f16_rows_avx2(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(a));
    _mm256_storeu_ps(out + i + 8, _mm256_cvtph_ps(b));
  }
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  for (; i < n; ++i) out[i] = f16_to_f32(in[i]);  // under 8 left: the scalar values
}

LLAMA_TARGET_AVX2 void bf16_rows_avx2(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
    _mm256_storeu_ps(out + i, bf16_widen8(a));
    _mm256_storeu_ps(out + i + 8, bf16_widen8(b));
  }
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i,
                     bf16_widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  for (; i < n; ++i) out[i] = bf16_to_f32(in[i]);
}
#else
void f16_rows_avx2(const uint16_t* in, float* out, size_t n) { f16_rows_portable(in, out, n); }
void f16_rows_avx512(const uint16_t* in, float* out, size_t n) { f16_rows_portable(in, out, n); }
void bf16_rows_avx2(const uint16_t* in, float* out, size_t n) { bf16_rows_portable(in, out, n); }
void bf16_rows_avx512(const uint16_t* in, float* out, size_t n) { bf16_rows_portable(in, out, n); }
#endif

// f16 [n] <- f32 [n], rounded to nearest even.
void f16_round_rows_portable(const float* in, uint16_t* out, int64_t n) {
  detail::F16RowsPortable::narrow(in, out, n);
}
#if LLAMA_HAVE_X86_TARGETS
void f16_round_rows_avx2(const float* in, uint16_t* out, int64_t n) {
  detail::F16RowsAvx2::narrow(in, out, n);
}
void f16_round_rows_avx512(const float* in, uint16_t* out, int64_t n) {
  detail::F16RowsAvx512::narrow(in, out, n);
}
#else
void f16_round_rows_avx2(const float* in, uint16_t* out, int64_t n) {
  f16_round_rows_portable(in, out, n);
}
void f16_round_rows_avx512(const float* in, uint16_t* out, int64_t n) {
  f16_round_rows_portable(in, out, n);
}
#endif

void check_sizes(const char* what, std::span<const uint16_t> in, std::span<float> out) {
  if (out.size() < in.size()) {
    throw Error(std::string(what) + ": " + std::to_string(in.size()) + " values into " +
                std::to_string(out.size()) + " floats");
  }
}

}  // namespace

void f16_to_f32_at_level(SimdLevel level, std::span<const uint16_t> in, std::span<float> out) {
  check_sizes("f16_to_f32", in, out);
  LLAMA_SIMD_DISPATCH(runnable_level(level), f16_rows, (in.data(), out.data(), in.size()));
}

void bf16_to_f32_at_level(SimdLevel level, std::span<const uint16_t> in, std::span<float> out) {
  check_sizes("bf16_to_f32", in, out);
  LLAMA_SIMD_DISPATCH(runnable_level(level), bf16_rows, (in.data(), out.data(), in.size()));
}

void f16_to_f32(std::span<const uint16_t> in, std::span<float> out) {
  f16_to_f32_at_level(simd_level(), in, out);
}

void bf16_to_f32(std::span<const uint16_t> in, std::span<float> out) {
  bf16_to_f32_at_level(simd_level(), in, out);
}

void round_to_f16_at_level(SimdLevel level, const float* in, uint16_t* out, int64_t n) {
  LLAMA_SIMD_DISPATCH(runnable_level(level), f16_round_rows, (in, out, n));
}

void round_to_f16(const float* in, uint16_t* out, int64_t n) {
  round_to_f16_at_level(simd_level(), in, out, n);
}

}  // namespace llama
