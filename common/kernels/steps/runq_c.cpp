// runq.c's f32 kernels with explicit FMAs (see steps/runq_c.hpp for why). std::fma
// is one instruction only where the compiler may use FMA, and a libm call per
// value on the x86-64-v2 baseline: each kernel's body is written once and
// compiled for every SimdLevel, picked at run time. std::fma is exact on every
// level, so every level gives the same bits. Attention is steps/runq_c_attention.cpp.
#include "llama/kernels/steps/runq_c.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/steps/vector_bodies.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/kernels/x86/simd_target.hpp"

namespace llama::q8 {
namespace {

template <bool Fma>
LLAMA_ALWAYS_INLINE void rmsnorm_body(std::span<float> out, std::span<const float> x,
                                      std::span<const float> w, float eps) {
  float ss = 0.0f;
  for (size_t j = 0; j < x.size(); ++j) ss = std::fma(x[j], x[j], ss);
  bodies::rmsnorm_scale(out, x, w, ss, eps);
}

// run.c's rotation with every multiply-add fused, on every level.
template <bool Fma>
LLAMA_ALWAYS_INLINE void rope_body(std::span<float> vec, int64_t head_size, int64_t stride,
                                   int64_t step, std::span<const float> cos_v,
                                   std::span<const float> sin_v) {
  bodies::rope<true>(vec, head_size, stride, step, cos_v, sin_v);
}

LLAMA_SIMD_VARIANTS(void, rmsnorm, rmsnorm_body,
                    (std::span<float> out, std::span<const float> x, std::span<const float> w,
                     float eps),
                    (out, x, w, eps))
LLAMA_SIMD_VARIANTS(void, rope, rope_body,
                    (std::span<float> vec, int64_t head_size, int64_t stride, int64_t step,
                     std::span<const float> cos_v, std::span<const float> sin_v),
                    (vec, head_size, stride, step, cos_v, sin_v))
}  // namespace

void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w, float eps) {
  LLAMA_SIMD_DISPATCH(simd_level(), rmsnorm, (out, x, w, eps));
}

void rope_rotate(std::span<float> vec, const RopeTable& rope, std::span<const float> cos_v,
                 std::span<const float> sin_v) {
  const bool halves = rope.layout() == RopeLayout::halves;
  const int64_t stride = halves ? 1 : 2, step = halves ? rope.pairs() : 1;
  LLAMA_SIMD_DISPATCH(simd_level(), rope, (vec, rope.head_dim(), stride, step, cos_v, sin_v));
}

}  // namespace llama::q8
