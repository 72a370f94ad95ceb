// The core's f32 GEMM for batches (prefill): Y = X W^T over a row range, with
// W read in place, f32 or bf16/f16 widened exactly on the way in
// (kernels/products/gemm_f32.cpp says how it is blocked). Backends without a GEMM of
// their own for a dtype run it: graph for every float batch, the product
// table (dispatch/product_table.hpp) for bf16/f16 batches under exact numerics, so every
// backend's exact bf16 prefill sums on the upcast weights as an f32 GEMM does.
#pragma once

#include <cstdint>

#include "llama/kernels/dispatch/cpu_features.hpp"

namespace llama {

// What W holds: f32, or bf16/f16 (uint16_t [*, cols]) widened exactly while
// packed, so the sums are those on the upcast f32 W.
enum class GemmWeights { f32, bf16, f16 };

// Rows of W per row block worth giving a thread: ranges that start at
// multiples of it and hold whole blocks waste no lanes of the row tiles.
inline constexpr int64_t kGemmRowUnit = 48;

// Y[t, i] = W[i, :] . X[t, :] (+ R[t, i]) for tokens [0, tokens) and rows [r0, r1).
// Each sum is one f32 fused multiply-add chain in column order from zero (a
// fused_madd's double sum on the portable level), then + R once: not the
// decode kernels' bits. The result depends neither on the row range nor on
// the token count. Y must not overlap X or R. X f32 [tokens, ldx], Y f32
// [tokens, ldy], R f32 [tokens, ldr] or null, W [*, cols] of `type`.
// `level`: the kernels of that SimdLevel (the best below it the CPU runs):
// avx512 and avx2 give the same bits (FMA chains); portable the same but for
// rare double roundings (fused_madd in x86/simd_target.hpp).
void gemm_f32_rows(SimdLevel level, float* y, int64_t ldy, GemmWeights type, const void* w,
                   const float* x, int64_t ldx, int64_t cols, int64_t tokens, int64_t r0,
                   int64_t r1, const float* residual, int64_t ldr);
// f32 W at `level`, and f32 W at simd_level().
void gemm_f32_rows(SimdLevel level, float* y, int64_t ldy, const float* w, const float* x,
                   int64_t ldx, int64_t cols, int64_t tokens, int64_t r0, int64_t r1,
                   const float* residual, int64_t ldr);
void gemm_f32_rows(float* y, int64_t ldy, const float* w, const float* x, int64_t ldx, int64_t cols,
                   int64_t tokens, int64_t r0, int64_t r1, const float* residual, int64_t ldr);

}  // namespace llama
