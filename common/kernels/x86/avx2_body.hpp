// Private to the x86 kernels: what KernelSet::avx2's bodies are written in.
// Each body source compiles as itself for AVX2 (FMA, F16C), and again through
// a one-line wrapper that sets LLAMA_AVX2_BODY_VNNI before including it: 1
// (x86/*_avxvnni.cpp) for AVX2 with AVX-VNNI (KernelSet::avx_vnni), 2 (a
// body's *_vnni.cpp) for 256-bit registers with AVX-512 VNNI's EVEX forms,
// where KernelSet::avx512_vnni has no 512-bit kernel of its own. GCC inlines
// no intrinsic across target attributes, so a body templated on its lane
// operations would still need one copy per target; the preprocessor makes
// that copy. The compilations differ only in dot_u8i8 and dot_i16, whose int32
// sums are exact either way: the same bits. Everything here has internal
// linkage, being compiled per target.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "llama/kernels/x86/simd_target.hpp"

#ifndef LLAMA_AVX2_BODY_VNNI
#define LLAMA_AVX2_BODY_VNNI 0
#endif

// The target of a body's functions, and its entry points' names.
#if LLAMA_AVX2_BODY_VNNI == 2
#define LLAMA_AVX2_BODY LLAMA_TARGET_AVX512_VNNI
#define LLAMA_AVX2_BODY_NAME(name) name##_vnni
#elif LLAMA_AVX2_BODY_VNNI == 1
#define LLAMA_AVX2_BODY LLAMA_TARGET_AVX2_VNNI
#define LLAMA_AVX2_BODY_NAME(name) name##_avxvnni
#else
#define LLAMA_AVX2_BODY LLAMA_TARGET_AVX2
#define LLAMA_AVX2_BODY_NAME(name) name##_avx2
#endif

namespace llama::detail {
namespace {

// ggml's hsum_float_8 of 8 lanes: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
LLAMA_AVX2_BODY inline float hsum8(__m256 v) {
  alignas(32) float a[8];
  _mm256_store_ps(a, v);
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// 32 bytes from p, unaligned.
LLAMA_AVX2_BODY inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// acc + in int32 lane l the products u[j] * x[j] (u8 x i8) over j in 4l .. 4l + 3.
// Each pair of products must fit in int16: AVX2 adds pairs there first
// (vpmaddubsw, saturating), then vpmaddwd by 1; AVX-VNNI's vpdpbusd does not.
LLAMA_AVX2_BODY inline __m256i dot_u8i8(__m256i acc, __m256i u, __m256i x) {
#if LLAMA_AVX2_BODY_VNNI == 2
  return _mm256_dpbusd_epi32(acc, u, x);
#elif LLAMA_AVX2_BODY_VNNI == 1
  return _mm256_dpbusd_avx_epi32(acc, u, x);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)));
#endif
}

// acc + in int32 lane l a[2l] * b[2l] + a[2l + 1] * b[2l + 1] (int16):
// vpmaddwd and vpaddd, or (AVX-)VNNI's vpdpwssd.
LLAMA_AVX2_BODY inline __m256i dot_i16(__m256i acc, __m256i a, __m256i b) {
#if LLAMA_AVX2_BODY_VNNI == 2
  return _mm256_dpwssd_epi32(acc, a, b);
#elif LLAMA_AVX2_BODY_VNNI == 1
  return _mm256_dpwssd_avx_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

// acc + in int32 lane l the products w[j] * x[j] (i8 x i8) over j in 4l .. 4l + 3:
// |w| (u8) times x with w's sign, so vpmaddubsw's pairs are at most
// 2 x 128 x 127 and never saturate. x must be within +-127.
LLAMA_AVX2_BODY inline __m256i dot_i8i8(__m256i acc, __m256i w, __m256i x) {
  return dot_u8i8(acc, _mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

// Lane i = the sum of v[i]'s 8 lanes: eight rows' dots into one register.
LLAMA_AVX2_BODY inline __m256i reduce8(const __m256i (&v)[8]) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                          _mm256_permute2x128_si256(a, b, 0x31));
}

// Bytes [from, to) of the rows a kernel takes next, into L2: a body reading
// 8 rows side by side (8 streams the hardware prefetchers follow badly)
// prefetches the next 8 in order, in the proportion each step covers.
inline void prefetch_next_rows(const void* next, int64_t from, int64_t to) {
  for (int64_t line = from; line < to; line += 64) {
    _mm_prefetch(static_cast<const char*>(next) + line, _MM_HINT_T2);
  }
}

}  // namespace
}  // namespace llama::detail
