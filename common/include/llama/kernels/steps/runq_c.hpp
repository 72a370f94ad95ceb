// The f32 vector kernels of the Q8_0 forward pass, in runq.c's exact operation
// order as the reference build computes it (clang -O3 -march=native, which
// contracts `s += a * b` into a fused multiply-add). With int8 activations a
// last-bit difference can move a value across a rounding boundary, so the
// int8 path cannot borrow the f32 path's double accumulation (steps/run_c.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama::q8 {

// out = w * (x / sqrt(mean(x^2) + eps)), the sum of squares in f32 FMAs.
// `out` may alias `x`.
void rmsnorm(std::span<float> out, std::span<const float> x, std::span<const float> w, float eps);

// The rotary embedding in runq.c's arithmetic is q8::rope_rotate (steps/rope.hpp).

// One attention head over positions [0, n_pos): f32 FMA dot products,
// scores / sqrt(head_size), runq.c's softmax, out = sum_t p_t v_t by FMAs in
// position order. keys/values hold position t's head at t * stride; `scores`
// needs n_pos floats.
void attend_head(std::span<const float> q, const float* keys, const float* values, int64_t stride,
                 int64_t n_pos, std::span<float> scores, std::span<float> out);
// The same compiled for `level` (the best below it where the CPU lacks it);
// every level gives the same bits. The kernels above run simd_level()'s.
void attend_head_at_level(SimdLevel level, std::span<const float> q, const float* keys,
                          const float* values, int64_t stride, int64_t n_pos,
                          std::span<float> scores, std::span<float> out);

// runq.c's softmax exponentials: x[i] = std::exp(x[i] - shift), bit for bit,
// at `level` (the best below it where the CPU lacks it). The avx512 level
// runs glibc's expf algorithm in vector lanes where softmax_exp_vectorized()
// (its check against libm's expf, once per process) allows, std::exp per
// value otherwise.
void softmax_exp_at_level(SimdLevel level, std::span<float> x, float shift);
bool softmax_exp_vectorized();

// Queries per block of attend_queries (one per f32 lane of an AVX-512
// register): a backend splitting a prompt's attention hands out blocks of
// this many queries per head.
inline constexpr int64_t kAttendQueries = 16;

// attend_head for n queries of one head at once (a prompt): query i (q + i *
// q_ld, head_size floats) is at position first_pos + i and attends positions
// [0, first_pos + i + 1); its output goes to out + i * out_ld. Each query's
// result equals attend_head's bit for bit. `scratch` needs
// attend_queries_scratch(head_size, first_pos + n) floats.
void attend_queries(const float* q, int64_t q_ld, int64_t n, int64_t first_pos, int64_t head_size,
                    const float* keys, const float* values, int64_t stride,
                    std::span<float> scratch, float* out, int64_t out_ld);
size_t attend_queries_scratch(int64_t head_size, int64_t n_keys);
void attend_queries_at_level(SimdLevel level, const float* q, int64_t q_ld, int64_t n,
                             int64_t first_pos, int64_t head_size, const float* keys,
                             const float* values, int64_t stride, std::span<float> scratch,
                             float* out, int64_t out_ld);

}  // namespace llama::q8
