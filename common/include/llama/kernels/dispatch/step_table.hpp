// The f32 steps around the products (RMSNorm, the rotary embedding, attention
// of one head) in the arithmetic of the reference implementation a model's
// weights call for, chosen once per model: run.c's for float weights (dot
// products and RMSNorm's sum of squares in double), runq.c's for llama2.c's
// Q8_0 weights (f32 FMAs in its reference build's order: an activation one
// rounding step from a .5 boundary quantizes differently, docs/formats.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "llama/kernels/steps/attend_token.hpp"
#include "llama/kernels/steps/rope.hpp"
#include "llama/weights.hpp"

namespace llama {

enum class StepArithmetic { run_c, runq_c };

// runq_c when any matrix is llama2.c's q8_0, else run_c.
StepArithmetic step_arithmetic(const ModelWeights& weights);

struct StepKernels {
  // out = w * x / sqrt(mean(x^2) + eps); `out` may alias `x`.
  void (*rmsnorm)(std::span<float> out, std::span<const float> x, std::span<const float> w,
                  float eps);
  // Rotates every head of `vec` by the angles of RopeTable::angles.
  void (*rope_rotate)(std::span<float> vec, const RopeTable& rope, std::span<const float> cos_v,
                      std::span<const float> sin_v);
  // One head over positions [0, n_pos) of a KV cache (steps/run_c.hpp's attend_head).
  void (*attend_head)(std::span<const float> q, const float* keys, const float* values,
                      int64_t stride, int64_t n_pos, std::span<float> scores, std::span<float> out);
  // attend_head for n queries of one head (a prompt): query i at q + i * q_ld,
  // position first_pos + i, attending [0, first_pos + i + 1), output at out +
  // i * out_ld; each query's result is attend_head's (runq.c's bit for bit;
  // run.c's but for a rare last bit of a score's double sum). `scratch` needs
  // attend_scratch_floats(head_size, first_pos + n) floats.
  void (*attend_queries)(const float* q, int64_t q_ld, int64_t n, int64_t first_pos,
                         int64_t head_size, const float* keys, const float* values, int64_t stride,
                         std::span<float> scratch, float* out, int64_t out_ld);
  // Query heads of one token at once (steps/attend_token.hpp), each head's
  // result attend_queries's bit for bit.
  void (*attend_token)(const TokenHeads& t, const float* keys, const float* values, int64_t stride,
                       int64_t n_pos, std::span<float> scratch);
  const char* name;  // "run.c's (sums in double)", "runq.c's (f32 FMAs)"
};

// Scratch floats for StepKernels::attend_queries over n_keys positions.
size_t attend_scratch_floats(int64_t head_size, int64_t n_keys);
const StepKernels& step_kernels(StepArithmetic arithmetic);

}  // namespace llama
