// The graph backend's kernels on row-major f32 data. Matrix products take a
// row range so the executor can split them across threads; every row's result
// is independent of the split, so thread counts never change a bit.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama::graph {

// y[i] = W[i, :] . x (+ residual[i] when residual != nullptr) for rows [r0, r1).
// W f32 [*, cols]; the dot products accumulate in double lanes, rounded once.
void matvec_rows(float* y, const float* w, const float* x, int64_t cols, int64_t r0, int64_t r1,
                 const float* residual);
// The same with the kernel of `level` (the best below it the CPU runs): the
// same bits on every level. The overload above takes simd_level().
void matvec_rows(SimdLevel level, float* y, const float* w, const float* x, int64_t cols,
                 int64_t r0, int64_t r1, const float* residual);

// Batches run the core's f32 GEMM (llama/kernels/gemm_f32.hpp).

// out = w * x / sqrt(mean(x^2) + eps) (run.c's RMSNorm, sum of squares in double).
void rmsnorm_row(float* out, const float* x, const float* w, int64_t n, float eps);

// out = a + b; out may be a or b (element by element).
void add_row(float* out, const float* a, const float* b, int64_t n);

// out = silu(gate) * up, in run.c's operation order.
void swiglu_row(float* out, const float* gate, const float* up, int64_t n);

}  // namespace llama::graph
