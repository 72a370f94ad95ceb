// Private to the core: the AVX-512 lane body of runq.c's softmax
// (steps/runq_c_softmax.hpp), the largest score in 16 lanes. Inline, so it
// compiles into the avx512 level of the attention that includes the softmax;
// here because it is written with intrinsics.
#pragma once

#include "llama/kernels/x86/simd_target.hpp"

#if LLAMA_HAVE_X86_TARGETS
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/simd.hpp"

namespace llama::q8::detail {

// The largest of x[0, n), n > 0. Equal to runq.c's running max except
// perhaps for the sign of a zero maximum, which x - max does not see.
LLAMA_TARGET_AVX512 inline float max_avx512(const float* x, int64_t n) {
  __m512 m = _mm512_set1_ps(x[0]);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    m = _mm512_maskz_max_ps(::llama::detail::simd::kFull16, m, _mm512_loadu_ps(x + i));
  if (i < n) {
    const auto tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    m = _mm512_mask_max_ps(m, tail, m, _mm512_maskz_loadu_ps(tail, x + i));
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, m);
  return *std::max_element(lanes, lanes + 16);
}

}  // namespace llama::q8::detail

#endif  // LLAMA_HAVE_X86_TARGETS
