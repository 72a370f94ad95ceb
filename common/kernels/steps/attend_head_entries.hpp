// The two public entry points of one attention arithmetic's attend_head:
// attend_head (the CPU's level, simd_level()) and attend_head_at_level (a
// level asked for, the best below it where the CPU lacks it), over the
// arithmetic's kernels KERNEL_avx512, KERNEL_avx2 and KERNEL_portable (one
// signature: q, keys, values, stride, n_pos, scores, out). Written once here
// for run.c's attention (steps/run_c.cpp, llama::) and runq.c's (steps/runq_c_attention.cpp,
// llama::q8::), which keep their own kernels; each file expands
// LLAMA_ATTEND_HEAD_ENTRIES(kernel) in its namespace, after its kernels.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/x86/simd_target.hpp"

#define LLAMA_ATTEND_HEAD_ENTRIES(KERNEL)                                                          \
  void attend_head_at_level(::llama::SimdLevel level, std::span<const float> q, const float* keys, \
                            const float* values, int64_t stride, int64_t n_pos,                    \
                            std::span<float> scores, std::span<float> out) {                       \
    LLAMA_SIMD_DISPATCH(::llama::runnable_level(level), KERNEL,                                    \
                        (q, keys, values, stride, n_pos, scores, out));                            \
  }                                                                                                \
  void attend_head(std::span<const float> q, const float* keys, const float* values,               \
                   int64_t stride, int64_t n_pos, std::span<float> scores, std::span<float> out) { \
    attend_head_at_level(::llama::simd_level(), q, keys, values, stride, n_pos, scores, out);      \
  }
