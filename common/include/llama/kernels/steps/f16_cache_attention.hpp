// Attention over an f16 KV cache with ggml's rounding points (llama.cpp's
// default cache, `-ctk/-ctv f16`, without flash attention), one definition
// for every backend:
//   q_h   = f16(q)                          (ggml_mul_mat converts src1 to f16)
//   s_t   = (q_h . k_t) * (1 / sqrt(hs))    (products exact, f32 sums in 16 lanes,
//                                           the lanes added as a tree)
//   p_t   = f16(exp(s_t - max) * f32(1 / sum_t exp(...)))   (sum in double)
//   out_i = sum_t p_t v_t,i                 (f32 FMAs in position order)
// Every query's result depends only on its own inputs, so a prompt's block of
// queries and one-token decode give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama {

// Queries of one head that share each widened key and value row.
inline constexpr int64_t kAttendF16Queries = 8;

// Scratch floats attend_queries_f16 needs for n_queries (any number) over
// n_keys positions.
size_t attend_f16_scratch_floats(int64_t head_size, int64_t n_keys, int64_t n_queries);

// n queries of one head: query i at q + i * q_ld (f32 [head_size]) at
// position first_pos + i attends positions [0, first_pos + i + 1) of the
// cache; keys/values are f16 [positions, ...] with position t's head at
// t * stride; the output of query i goes to out + i * out_ld (f32
// [head_size]).
void attend_queries_f16(const float* q, int64_t q_ld, int64_t n, int64_t first_pos,
                        int64_t head_size, const uint16_t* keys, const uint16_t* values,
                        int64_t stride, std::span<float> scratch, float* out, int64_t out_ld);
// The same compiled for `level` (the best below it where the CPU lacks it).
void attend_queries_f16_at_level(SimdLevel level, const float* q, int64_t q_ld, int64_t n,
                                 int64_t first_pos, int64_t head_size, const uint16_t* keys,
                                 const uint16_t* values, int64_t stride, std::span<float> scratch,
                                 float* out, int64_t out_ld);

// One query over positions [0, n_pos) (decode).
void attend_head_f16(std::span<const float> q, const uint16_t* keys, const uint16_t* values,
                     int64_t stride, int64_t n_pos, std::span<float> scratch, std::span<float> out);


}  // namespace llama
