// Private to the core: run.c's argmax loop, and the same answer with AVX-512
// (x86/argmax_avx512.cpp), which falls back to the loop for short inputs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace llama {

// run.c's argmax loop: the first index whose value is greater than every
// value before it (a NaN never is, so a NaN at 0 stays the answer).
inline int32_t argmax_portable(const float* x, size_t n) {
  int32_t best = 0;
  for (size_t i = 1; i < n; ++i) {
    if (x[i] > x[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  return best;
}

// Call only where simd_level() is avx512.
int32_t argmax_avx512(const float* x, size_t n);

}  // namespace llama
