// The graph backend's kernels on row-major f32 data. Matrix products take a
// row range so the executor can split them across threads; every row's result
// is independent of the split, so thread counts never change a bit.
#pragma once

#include <cstdint>
#include <span>

#include "llama/kernels/cpu_features.hpp"

namespace llama::graph {

// y[i] = W[i, :] . x (+ residual[i] when residual != nullptr) for rows [r0, r1).
// W f32 [*, cols]; the dot products accumulate in double lanes, rounded once.
void matvec_rows(float* y, const float* w, const float* x, int64_t cols, int64_t r0, int64_t r1,
                 const float* residual);
// The same with the kernel of `level` (the best below it the CPU runs): the
// same bits on every level. The overload above takes simd_level().
void matvec_rows(SimdLevel level, float* y, const float* w, const float* x, int64_t cols,
                 int64_t r0, int64_t r1, const float* residual);

// Rows of W per packed panel of matmul_rows: ranges that start at multiples of
// it and hold whole panels waste no lanes.
inline constexpr int64_t kMatmulPanelRows = 48;

// Y[t, i] = W[i, :] . X[t, :] (+ R[t, i]) for tokens [0, tokens) and rows [r0, r1):
// the batched form (GEMM blocking, W's packed panels reused across the tokens).
// Each sum is one f32 fused multiply-add chain in column order from zero (a
// fused_madd's double sum on the portable level), then + R once: not matvec_rows'
// bits (the batch is f32, decode double). The
// result depends neither on the row range nor on the token count. Y must not
// overlap X or R (it holds partial sums between column blocks). X f32
// [tokens, ldx], Y f32 [tokens, ldy], R f32 [tokens, ldr] or null.
void matmul_rows(float* y, int64_t ldy, const float* w, const float* x, int64_t ldx, int64_t cols,
                 int64_t tokens, int64_t r0, int64_t r1, const float* residual, int64_t ldr);
// The same with the kernel of `level` (the best below it the CPU runs):
// avx512 and avx2 give the same bits (FMA chains); portable the same but for
// rare double roundings (fused_madd in simd_target.hpp). The overload above takes simd_level().
void matmul_rows(SimdLevel level, float* y, int64_t ldy, const float* w, const float* x,
                 int64_t ldx, int64_t cols, int64_t tokens, int64_t r0, int64_t r1,
                 const float* residual, int64_t ldr);

// What W holds in the typed overload: f32, or bf16/f16 (uint16_t [*, cols])
// widened exactly while packed, so the sums are those on the upcast f32 W.
enum class GemmWeights { f32, bf16, f16 };
void matmul_rows(SimdLevel level, float* y, int64_t ldy, GemmWeights type, const void* w,
                 const float* x, int64_t ldx, int64_t cols, int64_t tokens, int64_t r0, int64_t r1,
                 const float* residual, int64_t ldr);

// out = w * x / sqrt(mean(x^2) + eps) (run.c's RMSNorm, sum of squares in double).
void rmsnorm_row(float* out, const float* x, const float* w, int64_t n, float eps);

// out = a + b; out may be a or b (element by element).
void add_row(float* out, const float* a, const float* b, int64_t n);

// out = silu(gate) * up, in run.c's operation order.
void swiglu_row(float* out, const float* gate, const float* up, int64_t n);

}  // namespace llama::graph
