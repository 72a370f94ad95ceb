// The small vector kernels every backend shares: RMSNorm, rotary embedding,
// SwiGLU and attention of one head over a KV cache. f32 throughout, in the
// operation order of run.c.
#pragma once

#include <cstdint>
#include <span>

namespace llama {

inline constexpr float kRmsNormEps = 1e-5f;
inline constexpr float kRopeTheta = 10000.0f;

// out = w * x / sqrt(mean(x^2) + eps). `out` may alias `x`.
void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w);

// Rotary angles of position `pos` for the head_size/2 pairs of a head:
// cos_out[i], sin_out[i] for pair (2i, 2i+1).
void rope_angles(int64_t pos, int64_t head_size, std::span<float> cos_out,
                 std::span<float> sin_out);
// Rotates every head of `vec` (length a multiple of head_size) in place.
void rope_rotate(std::span<float> vec, int64_t head_size, std::span<const float> cos_v,
                 std::span<const float> sin_v);

// h1 = silu(h1) * h3, element-wise.
void swiglu(std::span<float> h1, std::span<const float> h3);

// One attention head over positions [0, n_pos): scores q.k_t / sqrt(head_size),
// softmax, out = sum_t p_t v_t. keys/values hold position t's head at
// t * stride. `scores` needs n_pos floats.
void attend_head(std::span<const float> q, const float* keys, const float* values, int64_t stride,
                 int64_t n_pos, std::span<float> scores, std::span<float> out);

// sum_i a[i] * b[i], vectorized.
float dot(const float* a, const float* b, int64_t n);

}  // namespace llama
