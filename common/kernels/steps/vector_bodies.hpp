// Private to the core: always-inline vector bodies that run.c's f32 kernels
// (steps/run_c.cpp) and runq.c's int8-path kernels (steps/runq_c.cpp) share; each file
// compiles them for every SimdLevel (x86/simd_target.hpp). Fma: whether the level
// fuses multiply-adds (fused_madd); runq.c's kernels pass true on every level,
// their std::fma being exact everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "llama/kernels/x86/simd_target.hpp"

namespace llama::bodies {

// out = w * (x / sqrt(ss / n + eps)) given ss, the sum of squares of x (each
// kernel sums it its own way). `out` may alias `x`.
LLAMA_ALWAYS_INLINE void rmsnorm_scale(std::span<float> out, std::span<const float> x,
                                       std::span<const float> w, float ss, float eps) {
  const size_t n = x.size();
  ss /= static_cast<float>(n);
  ss += eps;
  ss = 1.0f / std::sqrt(ss);
  for (size_t j = 0; j < n; ++j) out[j] = w[j] * (ss * x[j]);
}

// The rotary embedding of every head of vec. Pair i of a head is (i * stride,
// i * stride + step): (2i, 2i + 1) interleaved, (i, i + pairs) in halves
// (RopeTable::pair).
template <bool Fma>
LLAMA_ALWAYS_INLINE void rope(std::span<float> vec, int64_t head_size, int64_t stride, int64_t step,
                              std::span<const float> cos_v, std::span<const float> sin_v) {
  const auto n = static_cast<int64_t>(vec.size());
  const int64_t pairs = head_size / 2;
  for (int64_t h = 0; h < n; h += head_size) {
    float* v = vec.data() + h;
    for (int64_t i = 0; i < pairs; ++i) {
      float* a = v + i * stride;
      float* b = a + step;
      const auto at = static_cast<size_t>(i);
      const float v0 = *a, v1 = *b;
      *a = fused_madd<Fma>(v0, cos_v[at], -(v1 * sin_v[at]));
      *b = fused_madd<Fma>(v0, sin_v[at], v1 * cos_v[at]);
    }
  }
}

}  // namespace llama::bodies
