// The small vector kernels every backend shares: RMSNorm, SwiGLU and attention
// of one head over a KV cache (the rotary embedding is steps/rope.hpp). f32 values in
// the operation order of run.c, dot products summed in double
// (docs/architecture.md, numerics).
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama {

// out = w * x / sqrt(mean(x^2) + eps), the sum of squares in double, the
// rest in f32 (eps: float(Config::norm_eps)). `out` may alias `x`.
void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w, float eps);

// h1 = silu(h1) * h3, element-wise.
void swiglu(std::span<float> h1, std::span<const float> h3);
// out = silu(gate) * up, element-wise, the same bits; `out` may alias `gate`.
void swiglu(std::span<float> out, std::span<const float> gate, std::span<const float> up);

// One attention head over positions [0, n_pos): scores q.k_t / sqrt(head_size),
// softmax, out = sum_t p_t v_t. keys/values hold position t's head at
// t * stride. `scores` needs n_pos floats.
void attend_head(std::span<const float> q, const float* keys, const float* values, int64_t stride,
                 int64_t n_pos, std::span<float> scores, std::span<float> out);
// The same compiled for `level` (the best below it where the CPU lacks it).
// The kernels here run simd_level()'s code.
void attend_head_at_level(SimdLevel level, std::span<const float> q, const float* keys,
                          const float* values, int64_t stride, int64_t n_pos,
                          std::span<float> scores, std::span<float> out);

// attend_head for n queries of one head (a prompt): query i at q + i * q_ld,
// position first_pos + i, attending [0, first_pos + i + 1), output at out + i
// * out_ld. Blocks of 16 queries run in the lanes of a register (scores in
// double, softmax and value sums per lane in attend_head's order); each score's
// double sum adds attend_head's products in head order, so a query's output
// agrees with attend_head's but for a rare last-bit rounding of a double sum.
// `scratch` needs attend_scratch_floats(head_size, first_pos + n) floats (dispatch/step_table.hpp).
void attend_queries(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t head_size,
                    const float* keys, const float* values, int64_t stride,
                    std::span<float> scratch, float* out, int64_t out_ld);

// sum_i a[i] * b[i], vectorized.
float dot(const float* a, const float* b, int64_t n);

}  // namespace llama
