// The f32 steps around the products (RMSNorm, the rotary embedding, attention
// of one head) in the arithmetic of the reference implementation a model's
// weights call for, chosen once per model: run.c's for float weights (dot
// products and RMSNorm's sum of squares in double), runq.c's for llama2.c's
// Q8_0 weights (f32 FMAs in its reference build's order: an activation one
// rounding step from a .5 boundary quantizes differently, docs/formats.md).
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/rope.hpp"
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
  // One head over positions [0, n_pos) of a KV cache (math.hpp's attend_head).
  void (*attend_head)(std::span<const float> q, const float* keys, const float* values,
                      int64_t stride, int64_t n_pos, std::span<float> scores, std::span<float> out);
  const char* name;  // "run.c's (sums in double)", "runq.c's (f32 FMAs)"
};
const StepKernels& step_kernels(StepArithmetic arithmetic);

}  // namespace llama
