// Private to the x86 kernels: lane helpers shared by the AVX2 bodies of the
// K-quant dots (KernelSet::avx2), compiled for that level.
#pragma once

#include <immintrin.h>

#include "llama/kernels/x86/simd_target.hpp"

namespace llama::detail {

// ggml's hsum_float_8 of 8 lanes: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)).
LLAMA_TARGET_AVX2 inline float hsum8(__m256 v) {
  alignas(32) float a[8];
  _mm256_store_ps(a, v);
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// 32 bytes from p, unaligned.
LLAMA_TARGET_AVX2 inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

}  // namespace llama::detail
